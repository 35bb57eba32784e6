"""The Newton matrix of a flexible tree in the recursive formulation: the analytic tangent
``(K, C, M)`` (flexmbs/relative/flexible_tangent.py, the descriptor form's tangent carried
through ``T``) and the matrix-free product of GMRES (``RelativeDAE._newton_product``,
directional differences of the recursive residual) against converged differences of the
residual, at moving, deformed states.

References (independent of the tangent's formula and of the product's steps):

* ``M = dr/dbetadd``: the residual is linear in ``betadd``, a central difference is
  exact at any step (1 here);
* ``C = dr/dbetad``: the residual is quadratic in ``betad`` (inertia, linear damping)
  but for the velocity products' own differences (terms O(s^2), 1e-8 at steps of 1):
  central differences at steps 0.1 and 0.05 (times ``1 + |betad_k|``), Richardson
  extrapolated.  Large steps keep the round-off of the velocity products (differences of
  ``J`` along the motion, ~1e-10 of ``ahat``) negligible; a small step is no reference
  (that round-off divided by a step of 1e-7 is ~1e-3 of ``C``);
* ``K = dr/dbeta``: five-point central differences at steps ``h`` and ``h/2``, Richardson
  extrapolated (error O(h^6)), their difference the accuracy claimed;
* ``W v``: the dense ``[[c_K K + c_C C + c_M M, G^T], [G, 0]]`` so checked.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.integrate import GeneralizedAlpha, consistent_initial_conditions
from flexmbs.integrate.genalpha import GenAlphaParameters
from flexmbs.relative.dae import RelativeDAE
from tests.relative.test_flexible_articulated import damped_tree
from tests.relative.test_flexible_recursive import random_state
from tests.relative.test_flexible_tree import rod  # noqa: F401  (the fixture)
from tests.scenarios.flexible.flexcase_models import slider_crank_model

H, RHO = 5e-4, 0.9


def coefficients(h=H):
    p = GenAlphaParameters.from_rho_inf(RHO)
    return 1.0 / p.beta_prime(h), p.gamma_prime(h) / p.beta_prime(h), 1.0


def five_point(f, x, h) -> np.ndarray:
    """``df/dx`` by five-point central differences with steps ``h`` (columns)."""
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h[k]
        cols.append((8.0 * (f(x + e) - f(x - e)) - f(x + 2 * e) + f(x - 2 * e)) / (12 * h[k]))
    return np.column_stack(cols)


def central(f, x, h) -> np.ndarray:
    """``df/dx`` by central differences with steps ``h`` (exact for quadratic ``f``)."""
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h[k]
        cols.append((f(x + e) - f(x - e)) / (2 * h[k]))
    return np.column_stack(cols)


def rel_err(a, b) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def random_tree_state(rod, seed, n):
    """A random damped tree (rigid bodies and rods, joints on the rods' elastic
    interfaces, spherical and free joints) at a random deformed state in motion."""
    dae = RelativeDAE(damped_tree(rod, seed, n).validate(), "recursive")
    dae.drop_redundant(dae.initial_q())
    rng = np.random.default_rng(seed)
    beta, betad = random_state(dae, rng)
    betadd = rng.normal(0.0, 50.0, dae.n_q)
    lam = rng.normal(0.0, 10.0, dae.n_lam)
    return dae, beta, betad, betadd, lam, 0.01


def moving_slider_crank(rod):
    """The flexible slider-crank (cut joint and drive) 5 ms into a run at 150 rad/s."""
    dae = RelativeDAE(slider_crank_model(rod).validate(), "recursive")
    q0 = dae.initial_q()
    dae.drop_redundant(q0)
    init = consistent_initial_conditions(dae, q0, dae.initial_qd(), 0.0)
    integ = GeneralizedAlpha(dae, rho_inf=RHO)
    try:
        tr = integ.run(init.q, init.qd, init.qdd, init.lam, 0.0, 0.005, h=H)
    finally:
        integ.destroy()
    return dae, tr.q[-1], tr.qd[-1], tr.qdd[-1], tr.lam[-1], float(tr.t[-1])


STATES = [pytest.param(lambda rod: random_tree_state(rod, 0, 4), id="tree0"),
          pytest.param(lambda rod: random_tree_state(rod, 3, 7), id="tree3"),
          pytest.param(moving_slider_crank, id="slider_crank")]


@pytest.mark.parametrize("state", STATES)
def test_the_tangent_equals_converged_differences_of_the_residual(rod, state):
    dae, q, qd, qdd, lam, t = state(rod)
    K, C, M = (x.toarray() for x in dae.tangent(q, qd, qdd, lam, t))
    r = lambda x, y, z: dae.residual(x, y, z, lam, t)  # noqa: E731
    # C: the residual is quadratic in the rates but for the velocity products' steps
    # (terms O(s^2) of 1e-8 at steps of 1): steps 0.1 and 0.05, Richardson extrapolated
    step = 0.1 * (1.0 + np.abs(qd))
    C_s, C_s2 = (central(lambda y: r(q, y, qdd), qd, s) for s in (step, step / 2))
    C_ref = (4.0 * C_s2 - C_s) / 3.0
    M_ref = central(lambda z: r(q, qd, z), qdd, 1.0 + np.abs(qdd))
    # K: five-point at h and h/2, Richardson extrapolated
    h = 1e-3 / np.maximum(np.abs(dae.absolute_coordinates(q)[2]).max(axis=0), 1.0)
    K_h, K_h2 = (five_point(lambda x: r(x, qd, qdd), q, s) for s in (h, h / 2))
    K_ref = (64.0 * K_h2 - K_h) / 63.0
    errs = rel_err(K, K_ref), rel_err(C, C_ref), rel_err(M, M_ref)
    accuracy = rel_err(K_h2, K_ref), rel_err(C_s2, C_ref)
    print("differences' accuracy (K, C) {:.1e}, {:.1e}; K, C, M against them: {:.1e}, "
          "{:.1e}, {:.1e}".format(*accuracy, *errs))
    assert max(accuracy) < 1e-8
    assert max(errs) < 1e-7


@pytest.mark.parametrize("state", STATES)
def test_the_newton_product_equals_the_dense_matrix(rod, state):
    """GMRES's product ``W v`` (directional differences of the residual, O(n)) equals the
    dense Newton matrix of the tangent checked above, on random ``v`` (its truncation in
    ``beta``, 6e-7 on the random trees, 1e-10 on the slider-crank; it was 1e-3)."""
    dae, q, qd, qdd, lam, t = state(rod)
    c_K, c_C, c_M = coefficients()
    W = dae._dense_newton(q, qd, qdd, lam, t, c_K, c_C, c_M)
    G_c = dae._flexible_factor(q, t, c_K, c_C, c_M).G_c
    A = dae._newton_product(q, qd, qdd, lam, t, c_K, c_C, c_M, G_c)
    rng = np.random.default_rng(4)
    errs = []
    for _ in range(3):
        v = rng.standard_normal(len(W))
        errs.append(np.linalg.norm(A(v) - W @ v) / np.linalg.norm(W @ v))
    print("W v, product against dense: " + ", ".join(f"{e:.1e}" for e in errs))
    assert max(errs) < 1e-6
