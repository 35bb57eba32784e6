"""The UNDAMPED flexible slider-crank: the relative and the descriptor form's EQUATIONS
agree (docs/relative.md, "Checks"), compared through each form's index-1 ODE.

Reference: the two forms are two coordinate systems for the same equations of motion
(THEORY (2.79), (2.82)).  Each form's ODE ``(q, qd)' = (qd, qdd)``, ``qdd`` and ``lam``
of its saddle system ``[[M, G^T], [G, 0]]`` (:mod:`flexmbs.integrate.ode_reference`), is
integrated by DOP853 to a tight tolerance from the same consistent state (the relative
form's, mapped to the bodies): no discretisation of the DAE is compared, so the forms
must agree to the integrator's tolerance.  Checked: slider x [m] to 1e-8, the crank
pivot's reaction force (J1) to 1e-8 of its largest, the rod's modal coordinates to 1e-8
of their largest; and the descriptor form's reference converges as rtol tightens (its
change from rtol ``R`` to ``R / 100`` falls at least tenfold), so that the agreement is
that of two accurate solutions, not of two equally loose ones.
``benchmarks/relative_flexible.py --ode`` runs the same over 1 s.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.relative.dae import RelativeDAE
from tests.scenarios.flexible.flexcase_models import (
    slider_crank_model,
    steel_rod,
)

T_OUT = np.linspace(0.0, 0.005, 6)
#: the relative form's accelerations carry the round-off of a central difference (about
#: 1e-10 relative, :mod:`flexmbs.relative.flexible_kinematics`): below this DOP853's
#: steps shrink on that noise; at 1e-9 the reaction force, whose acceleration terms
#: carry the rod's vibration at omega^2 q_e, is 1.6e-8 apart over 10 ms
RTOL = 1e-10

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import relative_flexible  # noqa: E402  (benchmarks/relative_flexible.py: the forms' ODEs)


@pytest.fixture(scope="module")
def dae(tmp_path_factory):
    """The relative DAE of the slider-crank with the undamped rod (two fixed-interface
    modes), its redundant rows dropped."""
    rod = steel_rod(tmp_path_factory.mktemp("rod"))
    rel = RelativeDAE(slider_crank_model(rod, stiffening=False, damping=False).validate())
    rel.drop_redundant(rel.initial_q())
    return rel


def trajectory(rel, formulation: str, rtol: float) -> np.ndarray:
    """Columns ``[slider x, F_J1 (3), rod q_e]`` at :data:`T_OUT` of the form's ODE
    (``relative_flexible.ode_of``: ``atol`` rtol times 1 for positions, angles and rates,
    1e-3 for the modal coordinates); the constraint drift below 1e-9."""
    ref = relative_flexible.ode_of(rel, formulation, rtol, T_OUT)
    print(f"{formulation}, rtol {rtol:g}: {ref['evaluations']} evaluations, "
          f"{ref['cpu']:.1f} s CPU, max |g| {ref['drift']:.1e}")
    assert ref["drift"] < 1e-9
    return ref["x"]


def apart(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """Largest differences: slider x [m], F_J1 and q_e relative to their largest."""
    return (np.abs(a[:, 0] - b[:, 0]).max(),
            np.abs(a[:, 1:4] - b[:, 1:4]).max() / np.abs(a[:, 1:4]).max(),
            np.abs(a[:, 4:] - b[:, 4:]).max() / np.abs(a[:, 4:]).max())


@pytest.mark.slow
def test_the_forms_odes_agree(dae):
    x_abs = trajectory(dae, "absolute", RTOL)
    x_rel = trajectory(dae, "relative", RTOL)
    assert np.abs(x_abs[:, 4:]).max() > 1e-5            # the rod vibrates
    d = apart(x_abs, x_rel)
    print("forms apart: slider x {:.1e} m, F_J1 {:.1e}, q_e {:.1e}".format(*d))
    assert max(d) < 1e-8
    # the reference converges: its changes as rtol falls 100-fold shrink at least 10-fold
    x_loose = trajectory(dae, "absolute", 100.0 * RTOL)
    x_tight = trajectory(dae, "absolute", RTOL / 100.0)
    d1, d2 = apart(x_loose, x_abs), apart(x_abs, x_tight)
    print("absolute form, changes with rtol: {:.1e}, {:.1e}, {:.1e}".format(*d1),
          "then {:.1e}, {:.1e}, {:.1e}".format(*d2))
    assert all(b < a / 10.0 for a, b in zip(d1, d2))
