"""A tighter ``newton_rtol`` gives a tighter solution, down to round-off, at small steps
(docs/solver.md, "The Newton stopping test").

Reference: the same run with Newton by SNES's own tests taken far below the increment
test's tolerances (``snes_rtol = 1e-14``, ``snes_stol = 1e-16``), a converged solution
of the same discrete equations; the round-off level is how far the same run with SNES's
default tests (``snes_rtol = 1e-10``) lies from it.  The model: the undamped flexible
slider-crank of ``benchmarks/relative_flexible.py --agreement`` (steel rod, two
fixed-interface modes, no damping; the rod vibrates near 1.75e4 rad/s) at h = 2 us,
where the first Newton correction (the predictor error) is some 1e-10 m: the residual
floor and the floor of the first correction, not the tolerance, once stopped every
solve there (the same iterates from 1e-5 to 1e-13, 1.7e-9 from the reference).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.fe.material import material_from_name
from tests.scenarios.flexible.flexcase_models import (
    box_beam_mesh,
    reduce_cb,
    slider_crank_model,
)

H, T_END = 2e-6, 4e-3


@pytest.fixture(scope="module")
def slider_crank(tmp_path_factory):
    mesh = box_beam_mesh(tmp_path_factory.mktemp("rod") / "rod.msh", (0.4, 0.01, 0.01),
                         (20, 1, 1), faces=("hole_A", "hole_B"))
    rod = reduce_cb(mesh, material_from_name("steel"), 2, interfaces=("hole_A", "hole_B"),
                    static_modes=False, name="rod", damping=0.0, stiffening=False)
    return slider_crank_model(rod, stiffening=False)


def trajectory(model, newton_rtol, petsc_options=None) -> np.ndarray:
    """Slider x [m] and the rod's modal coordinates at five times."""
    res = fm.simulate(model, T_END, H, rho_inf=0.9, output_dt=T_END / 4,
                      petsc_options=petsc_options,
                      integrator_options={"newton_rtol": newton_rtol})
    return np.column_stack([res.body_q("slider")[:, 0], res.body_q("rod")[:, 7:]])


def test_newton_error_shrinks_with_newton_rtol(slider_crank):
    ref = trajectory(slider_crank, None, {"snes_rtol": 1e-14, "snes_stol": 1e-16,
                                          "snes_max_it": 50})
    roundoff = np.abs(trajectory(slider_crank, None) - ref).max()
    err = {k: np.abs(trajectory(slider_crank, k) - ref).max() for k in (1e-5, 1e-7, 1e-9)}
    print(f"round-off level {roundoff:.2e}; errors " +
          ", ".join(f"{k:g}: {e:.2e}" for k, e in err.items()))
    assert err[1e-5] > err[1e-7] > err[1e-9]          # each tightening tells
    assert err[1e-5] > 20.0 * err[1e-9]
    assert err[1e-9] <= 2.0 * roundoff                # ... down to round-off


@pytest.mark.parametrize("bad", [0.0, -1e-5, float("nan")])
def test_a_newton_tolerance_that_is_not_positive_is_refused(bad):
    """A zero or negative newton_rtol would make the residual floor negative (it never
    stops Newton) and the increment test unsatisfiable: one line naming the option."""
    import flexmbs as fm
    model = fm.System(gravity=(0, -9.81, 0))
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    model.add(fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))
    with pytest.raises(ValueError, match="newton_rtol must be a number > 0"):
        fm.simulate(model, 0.01, 1e-3, integrator_options={"newton_rtol": bad})
