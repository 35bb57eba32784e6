"""The same models in the absolute (descriptor) and the relative formulations agree
over 1 s (THEORY §5.9.2: (2.79) and (2.82) describe the same motion): a planar
pendulum chain, a spatial chain of six revolutes, and a four-bar as a tree plus a cut
joint (whose redundant planar rows both forms drop).

Reference: the descriptor form of the same model.

* The equations: both forms integrated by the same high-order integrator (DOP853,
  rtol = atol = 1e-10, accelerations and multipliers from each form's saddle point at
  every evaluation); body positions [m] and rotation matrices agree to 1e-8 at every
  0.1 s of 1 s.
* The generalized-α runs: each form carries its own O(h^2) error (they integrate
  different coordinates), so their difference must fall as h^2 when h halves (ratio
  4 +- 0.6), and at h = 1 ms be below 1e-4.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import flexmbs as fm
from flexmbs.integrate.consistent import accelerations, consistent_initial_conditions
from flexmbs.kinematics.rotation import A_of
from flexmbs.relative.dae import RelativeDAE
from flexmbs.simulate import prepare
from tests.relative.models import four_bar, pendulum_chain, spatial_chain

T_OUT = np.linspace(0.0, 1.0, 11)


def poses(q: np.ndarray, body_slices: dict) -> np.ndarray:
    """Positions and rotation matrices of every body at every row of ``q`` (free of the
    Euler parameters' sign)."""
    out = []
    for s in body_slices.values():
        out.append(q[:, s][:, :3])
        out.append(np.array([A_of(e).ravel() for e in q[:, s][:, 3:7]]))
    return np.hstack(out)


def dop853(dae, q0, qd0) -> np.ndarray:
    """``q`` at :data:`T_OUT` of ``M qdd = f - G^T lam``, ``G qdd = -gamma`` (index 1)."""
    n = dae.n_q

    def rhs(t, y):
        qdd, _ = accelerations(dae, y[:n], y[n:], t)
        return np.concatenate([y[n:], qdd])

    sol = solve_ivp(rhs, (0.0, 1.0), np.concatenate([q0, qd0]), method="DOP853",
                    rtol=1e-10, atol=1e-10, t_eval=T_OUT)
    assert sol.success
    return sol.y[:n].T


@pytest.mark.slow
@pytest.mark.parametrize("make", [pendulum_chain, four_bar, spatial_chain])
def test_the_formulations_agree_over_one_second(make):
    absolute = prepare(make())
    q_abs = dop853(absolute.asm, absolute.initial.q, absolute.initial.qd)
    dae = RelativeDAE(make().validate())
    dae.drop_redundant(dae.initial_q())
    init = consistent_initial_conditions(dae, dae.initial_q(), dae.initial_qd())
    beta = dop853(dae, init.q, init.qd)
    q_rel = np.array([dae.absolute_coordinates(b)[0] for b in beta])
    slices = absolute.asm.body_slices
    assert np.ptp(q_abs, axis=0).max() > 0.05          # it moves
    assert np.abs(poses(q_rel, slices) - poses(q_abs, slices)).max() < 1e-8


def test_generalized_alpha_runs_converge_to_each_other():
    d = []
    for h in (2e-3, 1e-3):
        x = {}
        for f in ("absolute", "relative"):
            model = pendulum_chain()
            model.formulation = f
            r = fm.simulate(model, 1.0, h, output_dt=0.1, rho_inf=0.9)
            x[f] = poses(r.q, r.bodies)
        d.append(np.abs(x["relative"] - x["absolute"]).max())
    assert 3.4 < d[0] / d[1] < 4.6, d
    assert d[1] < 1e-4


def test_recursive_run_equals_the_nonrecursive_run():
    """Same DAE, two formalisms: the trajectories agree to the Newton tolerance."""
    out = {}
    for f in ("relative", "recursive"):
        model = pendulum_chain()
        model.formulation = f
        r = fm.simulate(model, 0.3, 2e-3, output_dt=0.1, rho_inf=0.9)
        out[f] = poses(r.q, r.bodies)
    assert np.abs(out["relative"] - out["recursive"]).max() < 1e-9
