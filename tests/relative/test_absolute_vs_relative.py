"""The same models in the absolute (descriptor) and the relative formulations agree
over 1 s (THEORY §5.9.2: (2.79) and (2.82) describe the same motion): a planar
pendulum chain, the same chain with a driven joint and spring-dampers, a spatial chain
of six revolutes, and a four-bar as a tree plus a cut joint (whose redundant planar
rows both forms drop).

Reference: the descriptor form of the same model.

* The equations: both forms integrated by the same high-order integrator (DOP853,
  rtol = atol = 1e-10, the accelerations from each form's saddle point
  ``[[M, G^T], [G, 0]]`` at every evaluation); body positions [m] and rotation
  matrices agree to 1e-8 at every 0.1 s of 1 s.
* The generalized-alpha runs: each form carries its own O(h^2) error (they integrate
  different coordinates), so their difference must fall as h^2 when h halves (ratio
  4 +- 0.6), and at h = 1 ms be below 1e-4.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import flexmbs as fm
from flexmbs.integrate.consistent import consistent_initial_conditions
from flexmbs.kinematics.rotation import A_of
from flexmbs.relative.dae import RelativeDAE
from flexmbs.simulate import prepare
from tests.relative.models import (
    driven_chain,
    four_bar,
    pendulum_chain,
    random_tree,
    spatial_chain,
    spherical_chain,
)

T_OUT = np.linspace(0.0, 1.0, 11)


def poses(q: np.ndarray, body_slices: dict) -> np.ndarray:
    """Positions and rotation matrices of every body at every row of ``q`` (free of the
    Euler parameters' sign)."""
    out = []
    for s in body_slices.values():
        out.append(q[:, s][:, :3])
        out.append(np.array([A_of(e).ravel() for e in q[:, s][:, 3:7]]))
    return np.hstack(out)


def saddle_accelerations(dae, mass, q, qd, t) -> np.ndarray:
    """``qdd`` of ``[[M, G^T], [G, 0]] [qdd; lam] = [f; -gamma]``, ``f = -r(q, qd, 0, 0)``
    (``mass(q)``: the DAE's ``M``; dense)."""
    n, m = dae.n_q, dae.n_lam
    f = -dae.residual(q, qd, np.zeros(n), np.zeros(m), t)
    G = dae.constraint_jacobian(q, t).toarray()
    gamma = dae.constraint_rates(q, qd, t)[1]
    A = np.block([[mass(q), G.T], [G, np.zeros((m, m))]])
    return np.linalg.solve(A, np.concatenate([f, -gamma]))[:n]


def dop853(dae, q0, qd0, mass) -> np.ndarray:
    """``q`` at :data:`T_OUT` of ``M qdd = f - G^T lam``, ``G qdd = -gamma`` (index 1)."""
    n = dae.n_q

    def rhs(t, y):
        return np.concatenate([y[n:], saddle_accelerations(dae, mass, y[:n], y[n:], t)])

    sol = solve_ivp(rhs, (0.0, 1.0), np.concatenate([q0, qd0]), method="DOP853",
                    rtol=1e-10, atol=1e-10, t_eval=T_OUT)
    assert sol.success
    return sol.y[:n].T


@pytest.mark.parametrize("make", [
    pendulum_chain, four_bar, driven_chain, pytest.param(spatial_chain, marks=pytest.mark.slow)])
def test_the_formulations_agree_over_one_second(make):
    absolute = prepare(make())
    asm = absolute.asm
    zq, zl = np.zeros(asm.n_q), np.zeros(asm.n_lam)
    q_abs = dop853(asm, absolute.initial.q, absolute.initial.qd,
                   lambda q: asm.tangent(q, zq, zq, zl, 0.0)[2].toarray())
    dae = RelativeDAE(make().validate())
    dae.drop_redundant(dae.initial_q())
    init = consistent_initial_conditions(dae, dae.initial_q(), dae.initial_qd())
    beta = dop853(dae, init.q, init.qd, dae.mass_matrix)
    q_rel = np.array([dae.absolute_coordinates(b)[0] for b in beta])
    slices = absolute.asm.body_slices
    assert np.ptp(q_abs, axis=0).max() > 0.05          # it moves
    diff = np.abs(poses(q_rel, slices) - poses(q_abs, slices)).max()
    print(f"{make.__name__}: max difference {diff:.2e}")
    assert diff < 1e-8


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
    """Same DAE, two formalisms (and two Newton matrices: the full tangent, the
    articulated bodies' with GMRES when it stalls): with Newton converged (1e-10) the
    trajectories agree to round-off amplified by the steps."""
    out = {}
    for f in ("relative", "recursive"):
        model = pendulum_chain()
        model.formulation = f
        r = fm.simulate(model, 0.3, 2e-3, output_dt=0.1, rho_inf=0.9,
                        integrator_options={"newton_rtol": 1e-10})
        out[f] = poses(r.q, r.bodies)
    assert np.abs(out["relative"] - out["recursive"]).max() < 1e-9


def euler_tree():
    """Six bodies on revolute, spherical, universal and free joints, two of them spherical
    and two free (four Euler rows)."""
    return random_tree(9, 6)


@pytest.mark.parametrize(("make", "extra"), [(four_bar, 0.5), (driven_chain, 0.5),
                                             (euler_tree, 0.5),
                                             (lambda: spherical_chain(6), 1.0)])
def test_recursive_modified_newton_equals_the_nonrecursive_run(make, extra, monkeypatch):
    """The recursive run's Newton matrix is the articulated bodies' ``[[Mbar, G^T], [G,
    0]]`` (the Euler normalisations eliminated joint by joint, a Schur complement on
    the rows of the cut joint and drive; a chain of spherical joints has none),
    the relative run's the full tangent: both converge to the same steps, so with Newton
    converged (1e-10) the trajectories agree to 1e-9, and at the default tolerance (1e-5
    of each step's first correction) they take about as many iterations (``extra`` more per step at most: the spherical
    chain, turning at 2 rad/s, takes one more, the gyroscopic ``c_C C`` the modified
    matrix drops)."""
    from flexmbs.relative import newton_factor
    made = []                       # the factors the recursive run used, by kind
    for kind in ("SchurFactor", "DenseFactor"):
        cls = getattr(newton_factor, kind)
        monkeypatch.setattr(cls, "__init__", lambda self, *a, _i=cls.__init__, _k=kind, **k:
                            (made.append(_k), _i(self, *a, **k))[1])
    out, its = {}, {}
    for f in ("relative", "recursive"):
        model = make()
        model.formulation = f
        r = fm.simulate(model, 0.3, 2e-3, output_dt=0.1, rho_inf=0.9)
        its[f] = r.stats.newton_iterations / r.stats.steps
        r = fm.simulate(model, 0.3, 2e-3, output_dt=0.1, rho_inf=0.9,
                        integrator_options={"newton_rtol": 1e-10})
        out[f] = poses(r.q, r.bodies)
    # the recursive run took the articulated route (a full matrix at most now and then)
    assert made.count("SchurFactor") > 2 * made.count("DenseFactor"), made
    assert np.ptp(out["relative"], axis=0).max() > 0.01          # it moves
    assert np.abs(out["relative"] - out["recursive"]).max() < 1e-9
    assert its["recursive"] < its["relative"] + extra, its
