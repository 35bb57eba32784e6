"""The same models in the absolute (descriptor) and the relative formulations agree
over 1 s (THEORY §5.9.2: (2.79) and (2.82) describe the same motion).

Reference: the descriptor form of the same model, integrated by the same
generalized-α scheme (rho_inf = 0.9).  Both runs carry their own O(h^2)
discretisation error (they integrate different coordinates); each is extrapolated to
h -> 0 by Richardson over h = 2, 1, 0.5 ms (``x_1 = (4 x_{h/2} - x_h) / 3``, then
``(8 x_1(h/2) - x_1(h)) / 7``), and the extrapolated body positions [m] and rotation
matrices must agree to 1e-8 at every output (0.1 s apart).  The difference of the
raw runs must fall as h^2 (ratio 4 +- 0.6 when h halves), so the extrapolation does not
hide a difference of the formulations.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.kinematics.rotation import A_of
from tests.relative.models import four_bar, pendulum_chain, spatial_chain

DT = 2e-3


def poses(result) -> np.ndarray:
    """Positions and rotation matrices of every body at every output (sign-free)."""
    out = []
    for name in result.bodies:
        q = result.body_q(name)
        out.append(q[:, :3])
        out.append(np.array([A_of(e).ravel() for e in q[:, 3:7]]))
    return np.hstack(out)


def runs(make, formulation) -> list:
    out = []
    for h in (DT, DT / 2, DT / 4):
        model = make()
        model.formulation = formulation
        out.append(poses(fm.simulate(model, 1.0, h, output_dt=0.1, rho_inf=0.9)))
    return out


def richardson(x: list) -> np.ndarray:
    x1 = [(4 * x[k + 1] - x[k]) / 3 for k in (0, 1)]
    return (8 * x1[1] - x1[0]) / 7


@pytest.mark.slow
@pytest.mark.parametrize("make", [pendulum_chain, four_bar, spatial_chain])
def test_absolute_and_relative_agree_over_one_second(make):
    x_abs, x_rel = runs(make, "absolute"), runs(make, "relative")
    assert x_abs[0].shape == x_rel[0].shape == (11, x_abs[0].shape[1])
    d = [np.abs(a - b).max() for a, b in zip(x_rel, x_abs)]
    assert 3.4 < d[0] / d[1] < 4.6 and 3.4 < d[1] / d[2] < 4.6, d
    assert np.abs(richardson(x_rel) - richardson(x_abs)).max() < 1e-8


def test_recursive_run_equals_the_nonrecursive_run():
    """Same DAE, two formalisms: the trajectories agree to the Newton tolerance."""
    out = {}
    for f in ("relative", "recursive"):
        model = pendulum_chain()
        model.formulation = f
        out[f] = poses(fm.simulate(model, 0.3, DT, output_dt=0.1, rho_inf=0.9))
    assert np.abs(out["relative"] - out["recursive"]).max() < 1e-9
