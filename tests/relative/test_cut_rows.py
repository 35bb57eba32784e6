"""The rows of the cut joints and drives of the recursive formulation by paths
(flexmbs.relative.cut_rows), without the dense velocity map ``T``.

Reference (independent of the paths): the dense route, ``G_c = C_b T`` with ``T`` the
n_qb x n_beta map of global Jacobians (``RelativeDAE.absolute_coordinates``, a forward
sweep of ``J_i = B_{p,i} J_p + [0 .. C_i .. 0]``), ``c(q_b)`` and ``gamma`` on its
``q_b``, ``qd_b = T betad``, ``Td betad``; on random rigid and mixed rigid/flexible
trees with cut joints (spherical loops, distances) and drives, at random states with
random rates, to round-off (1e-11 relative, ``gamma`` of flexible trees included: both
routes' velocity products ``ahat`` are complex steps of the twists along the motion,
exact to round-off).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import flexmbs as fm
from flexmbs.kinematics.rotation import G_of
from flexmbs.relative import cut_rows
from flexmbs.relative.dae import RelativeDAE
from tests.relative.models import random_tree
from tests.relative.test_flexible_recursive import mixed_tree, random_state
from tests.relative.test_flexible_tree import rod  # noqa: F401  (fixture)

TOL = 1e-11


def with_cuts(model, seed: int):
    """``model`` with two cut joints between random bodies (a spherical closing a loop,
    a distance to the ground) and a drive on its first revolute joint, if any."""
    rng = np.random.default_rng(seed + 1000)
    bodies = model.bodies

    def side(b):
        return b["hole_B"] if isinstance(b, fm.FlexibleBody) else b

    a, b = (bodies[k] for k in rng.choice(len(bodies), 2, replace=False))
    kw = ({} if isinstance(a, fm.FlexibleBody) or isinstance(b, fm.FlexibleBody)
          else {"at": rng.normal(0, 1.0, 3)})
    model.add(fm.Spherical("loop", side(a), side(b), **kw))
    c = bodies[int(rng.integers(len(bodies)))]
    model.add(fm.Distance("link", fm.ground, side(c), at=rng.normal(0, 1.0, 3),
                          **({} if isinstance(c, fm.FlexibleBody)
                             else {"second_at": rng.normal(0, 1.0, 3)})))
    revolutes = [j for j in model.joints if j.kind == "revolute"]
    if revolutes:
        model.add(fm.AngleDrive("drive", joint=revolutes[0].name,
                                angle=fm.Sine(amplitude=0.3, omega=3.0)))
    return model


def dense_rows(dae, beta, betad, t):
    """``(c, G_c, g_t, gamma)`` of the cut rows through the dense ``T``."""
    q_b, qd_b, T, Tdbd = dae.absolute_coordinates(beta, betad)
    rows = dae.cut_rows
    C_b = dae.absolute.constraint_jacobian(q_b, t).toarray()[rows]
    g_t, gamma = dae.absolute.constraint_rates(q_b, qd_b, t)
    c = np.asarray(dae.absolute.constraint(q_b, t))[rows]
    return c, C_b @ T, g_t[rows], gamma[rows] + C_b @ Tdbd


def check(dae, beta, betad, t, rng, gamma_tol=TOL):
    assert dae.by_path and len(dae.cut_rows)
    n_e = len(dae.tree.e_rows)
    c, G_c, g_t, gamma = dense_rows(dae, beta, betad, t)
    scale = 1.0 + np.abs(G_c).max()
    G = dae.constraint_jacobian(beta, t).toarray()
    assert np.abs(G[n_e:] - G_c).max() < TOL * scale
    assert np.abs(dae.constraint(beta, t)[n_e:] - c).max() < TOL * (1 + np.abs(c).max())
    g_t_p, gamma_p = dae.constraint_rates(beta, betad, t)
    assert np.abs(g_t_p[n_e:] - g_t).max() < TOL * (1 + np.abs(g_t).max())
    assert np.abs(gamma_p[n_e:] - gamma).max() < gamma_tol * (1 + np.abs(gamma).max())
    lam = rng.normal(size=dae.n_lam)
    GT_lam = dae.constraint_jacobian(beta, t).T @ lam
    assert np.abs(GT_lam - G.T @ lam).max() < TOL * scale * (1 + np.abs(lam).max())
    assert np.abs(GT_lam[:] - (G_c.T @ lam[n_e:] + G[:n_e].T @ lam[:n_e])).max() < (
        TOL * scale * (1 + np.abs(lam).max()))
    # the residual's G^T lam (formed without G) = the assembled G's
    qdd = rng.normal(size=dae.n_q)
    r_lam = dae.residual(beta, betad, qdd, lam, t) - dae.residual(beta, betad, qdd, 0 * lam, t)
    assert np.abs(r_lam - GT_lam).max() < TOL * scale * (1 + np.abs(lam).max())
    # the outputs' body coordinates, velocities and accelerations (no T)
    q_b, qd_b, T, Tdbd = dae.absolute_coordinates(beta, betad)
    betadd = rng.normal(size=dae.n_q)
    qdd_b = T @ betadd + Tdbd
    mine = dae.body_coordinates(beta, betad)
    assert np.abs(mine[0] - q_b).max() < TOL * (1 + np.abs(q_b).max())
    assert np.abs(mine[1] - qd_b).max() < TOL * (1 + np.abs(qd_b).max())
    assert np.abs(dae.body_accelerations(beta, betad, betadd) - qdd_b).max() < (
        gamma_tol * (1 + np.abs(qdd_b).max()))
    # the cut rows' wrenches on the bodies (reactions) by the sparse C_b^T lam
    q_b, qd_b = dae.absolute_coordinates(beta, betad)[:2]
    w = dae.applied_wrenches(beta, betad, t, lam[n_e:])
    Q = -dae.absolute.constraint_jacobian(q_b, t).toarray()[dae.cut_rows].T @ lam[n_e:]
    for fb, cc in dae.absolute.force_contributions(q_b, qd_b, t, 1):
        Q[fb.idx] += cc.Q[:-1]
    ref = [np.concatenate([0.5 * G_of(q_b[dae.absolute.body_slices[b.name]][3:7])
                           @ Q[dae.absolute.body_slices[b.name]][3:7],
                           Q[dae.absolute.body_slices[b.name]][:3]]) for b in dae.tree.bodies]
    for a, b in zip(w, ref, strict=True):
        assert np.abs(a - b).max() < TOL * (1 + np.abs(b).max())


@pytest.mark.parametrize("seed", range(6))
def test_rigid_trees_rows_equal_the_dense_route(seed):
    model = with_cuts(random_tree(seed, 7), seed).validate()
    dae = RelativeDAE(model, "recursive")
    rng = np.random.default_rng(seed)
    beta = dae.normalize(dae.initial_q() + rng.normal(0.0, 0.5, dae.n_q))
    betad = rng.normal(0.0, 2.0, dae.n_q)
    for s in dae.tree.e_rows:
        betad[s] -= (beta[s] @ betad[s]) * beta[s]
    check(dae, beta, betad, 0.37, rng)


@pytest.mark.parametrize("seed", range(4))
def test_flexible_trees_rows_equal_the_dense_route(rod, seed):  # noqa: F811
    model = with_cuts(mixed_tree(rod, seed, 5), seed).validate()
    dae = RelativeDAE(model, "recursive")
    assert dae.tree.flexible
    rng = np.random.default_rng(seed)
    beta, betad = random_state(dae, rng)
    check(dae, beta, betad, 0.37, rng)


def test_a_body_row_touches_only_its_path():
    """``T_i`` of a body of a branched tree has columns only on its path: the other
    branches' columns of the dense ``T`` are zero there, and its entries equal them."""
    model = random_tree(3, 9).validate()
    dae = RelativeDAE(model, "recursive")
    beta = dae.normalize(dae.initial_q() + 0.3)
    T = dae.absolute_coordinates(beta)[2]
    geo = dae.body_coordinates(beta)[3]
    for i, body in enumerate(dae.tree.bodies):
        cols, T_i = cut_rows.body_velocity_map(dae.tree, geo, i)
        s = dae.absolute.body_slices[body.name]
        rest = np.setdiff1d(np.arange(dae.n_q), cols)
        assert not np.any(T[s][:, rest])
        assert np.abs(T[s][:, cols] - T_i).max() < TOL * (1 + np.abs(T_i).max())
    assert sp.issparse(dae.constraint_jacobian(beta, 0.0))
