"""The flexible slider-crank in the relative and the descriptor form agree once each
form's discretisation error is removed (docs/relative.md, "Flexible trees").

Reference: the two forms are two coordinate systems for the same equations of motion
(THEORY (2.79), (2.82)), so their generalized-alpha solutions differ by the difference
of their O(h^2) errors only.  The check: that difference falls at order 2 as h halves
(its ratio 4 between successive steps), and the forms' Richardson extrapolations
``x(h/2) + (x(h/2) - x(h)) / 3`` agree to 1e-9 m in the slider position and to 1e-8 in
the rod's modal coordinates (largest about 1e-3).

The rod's modes are damped at 0.7 of critical, so the motion is smooth on the scale of
the steps (undamped, a vibration near 1.75e4 rad/s needs steps of microseconds:
``test_flexible_agreement_undamped.py``).  This runs 0.1 s;
``benchmarks/relative_flexible.py --converge`` runs the same over 1 s.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from tests.scenarios.flexible.flexcase_models import (
    slider_crank_model,
    steel_rod,
)

STEPS = (1e-3, 5e-4, 2.5e-4)
T_END = 0.1


@pytest.fixture(scope="module")
def damped_rod(tmp_path_factory):
    """Steel rod 0.4 x 0.01 x 0.01 m, two fixed-interface modes, each damped at 0.7."""
    return steel_rod(tmp_path_factory.mktemp("rod"), damping=0.7)


def trajectory(rod, formulation: str, h: float) -> np.ndarray:
    """Slider x [m] and the rod's modal coordinates every 20 ms, Newton by SNES's own
    tests (as ``test_flexible_agreement_undamped.py``): with the increment test at 1e-10
    a few steps stop on round-off, are halved, and which ones depends on the residual's
    last bits (a bit-level change of the residual moved this run by 8e-7 m)."""
    model = slider_crank_model(rod, stiffening=False)
    model.formulation = formulation
    res = fm.simulate(model, T_END, h, rho_inf=0.9, output_dt=T_END / 5,
                      integrator_options={"newton_rtol": None})
    return np.column_stack([res.body_q("slider")[:, 0], res.body_q("rod")[:, 7:]])


@pytest.mark.slow
def test_forms_agree_after_extrapolation(damped_rod):
    x = {(f, h): trajectory(damped_rod, f, h)
         for f in ("absolute", "relative") for h in STEPS}
    apart = [np.abs(x["absolute", h] - x["relative", h]).max(axis=0) for h in STEPS]
    for a, b in zip(apart, apart[1:]):
        order_x, order_q = np.log2(a[0] / b[0]), np.log2(a[1:].max() / b[1:].max())
        print(f"forms apart: {a[0]:.2e} -> {b[0]:.2e} m (order {order_x:.2f}), "
              f"q_e {a[1:].max():.2e} -> {b[1:].max():.2e} (order {order_q:.2f})")
        assert 1.8 < order_x < 2.2 and 1.8 < order_q < 2.2
    h, h2 = STEPS[-2:]
    ext = {f: x[f, h2] + (x[f, h2] - x[f, h]) / 3.0 for f in ("absolute", "relative")}
    e = np.abs(ext["absolute"] - ext["relative"]).max(axis=0)
    print(f"extrapolated: slider x {e[0]:.2e} m, q_e {e[1:].max():.2e} "
          f"(largest |q_e| {np.abs(x['absolute', h2][:, 1:]).max():.2e})")
    assert e[0] < 1e-9 and e[1:].max() < 1e-8
