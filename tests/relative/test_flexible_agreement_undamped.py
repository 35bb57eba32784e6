"""The UNDAMPED flexible slider-crank in the relative and the descriptor form agree far
below each form's own discretisation error (docs/relative.md, "Checks").

Reference: the two forms are two coordinate systems for the same equations of motion
(THEORY (2.79), (2.82)), so their generalized-alpha solutions differ by the difference
of their discretisation errors only.  Undamped, the rod's vibration near 1.75e4 rad/s
dominates each form's error (its phase error grows as ``omega^3 t h^2 / 12``), so the
steps are microseconds and the run is short (4 ms).  The check: each form converges at
order 2 (observed from h, h/2, h/4: the ratio of its successive changes), and the forms'
Richardson extrapolations ``x(h/4) + (x(h/4) - x(h/2)) / 3`` differ by less than a
thousandth of each form's own error at h/4 (``(x(h/2) - x(h/4)) / 3``), in the slider
position, the crank pivot's reaction force and the rod's modal coordinates.
``benchmarks/relative_flexible.py --agreement`` runs the same over 0.02 s.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from tests.scenarios.flexible.flexcase_models import (
    slider_crank_model,
    steel_rod,
)

STEPS = (2e-5, 1e-5, 5e-6)
T_END = 4e-3
#: compared quantities: columns of :func:`trajectory`
COLUMNS = {"slider x": slice(0, 1), "reaction F_J1": slice(1, 4), "rod q_e": slice(4, None)}


@pytest.fixture(scope="module")
def undamped_rod(tmp_path_factory):
    """Steel rod 0.4 x 0.01 x 0.01 m, two fixed-interface modes, no damping."""
    return steel_rod(tmp_path_factory.mktemp("rod"))


def trajectory(rod, formulation: str, h: float) -> np.ndarray:
    """Slider x [m], the reaction force of J1 [N] and the rod's modal coordinates every
    1 ms, rho_inf = 0.9, Newton by SNES's own tests (residual to 1e-10 of the first; the
    increment test ``newton_rtol`` stops on its round-off criteria, the same iterates at
    1e-10 and 1e-13, and its remainders add up over thousands of steps)."""
    model = slider_crank_model(rod, stiffening=False)
    model.formulation = formulation
    res = fm.simulate(model, T_END, h, rho_inf=0.9, output_dt=T_END / 4,
                      integrator_options={"newton_rtol": None})
    return np.column_stack([res.body_q("slider")[:, 0], res.reactions["J1"][:, :3],
                            res.body_q("rod")[:, 7:]])


@pytest.mark.slow
def test_undamped_forms_agree_after_extrapolation(undamped_rod):
    x = {(f, h): trajectory(undamped_rod, f, h)
         for f in ("absolute", "relative") for h in STEPS}
    ext = {f: x[f, STEPS[2]] + (x[f, STEPS[2]] - x[f, STEPS[1]]) / 3.0
           for f in ("absolute", "relative")}
    for name, c in COLUMNS.items():
        own = []
        for f in ("absolute", "relative"):
            d = [np.abs(x[f, a][:, c] - x[f, b][:, c]).max() for a, b in zip(STEPS, STEPS[1:])]
            order = np.log2(d[0] / d[1])
            print(f"{name}, {f}: changes {d[0]:.2e}, {d[1]:.2e} (order {order:.2f})")
            assert 1.6 < order < 2.4
            own.append(d[1] / 3.0)
        e = np.abs(ext["absolute"][:, c] - ext["relative"][:, c]).max()
        print(f"{name}: extrapolated forms apart {e:.2e}, own error {min(own):.2e}")
        assert e < min(own) / 1000.0
