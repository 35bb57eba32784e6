"""The tangent of a tree with flexible bodies (flexmbs/relative/flexible_tangent.py: the
descriptor form's analytic tangent carried through ``T``, with differences of ``T``)
against the reference: central differences of the relative residual itself (five
points, steps of 1e-3 in the joint angles and rates, scaled down for the modal
coordinates by the size of their columns of ``T``), at random deformed
states with random rates, accelerations and multipliers of the cut joint and drive.

The rod's tangent in the descriptor form is exact for the linear elastic model (no
geometric stiffening), which the models here use, so the two must agree to the
accuracy of the differences.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.relative.dae import RelativeDAE
from tests.relative.test_flexible_tree import in_plane_state, open_crank_chain, pendulum
from tests.relative.test_flexible_tree import rod as rod  # noqa: F401 (the fixture)
from tests.scenarios.flexible.flexcase_models import slider_crank_model


def closed_crank(rod):
    """The flexible slider-crank: crank driven at 150 rad/s, the loop closed by the
    prismatic cut joint."""
    return slider_crank_model(rod, stiffening=False, damping=False)


def five_point(f, x, h) -> np.ndarray:
    """``df/dx`` by the five-point central difference with steps ``h`` (columns; exact for
    polynomials of degree 4, so large steps keep the round-off of the large elastic
    forces in ``r`` small)."""
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h[k]
        cols.append((8.0 * (f(x + e) - f(x - e)) - f(x + 2 * e) + f(x - 2 * e)) / (12 * h[k]))
    return np.column_stack(cols)


def column_error(A, B) -> float:
    """Largest difference per column relative to the column's size (columns below
    1e-6 of the largest entry count as of that size)."""
    size = np.abs(B).max(axis=0)
    return float(np.max(np.abs(A - B).max(axis=0) / np.maximum(size, 1e-6 * size.max())))


@pytest.mark.parametrize("make", [pendulum, open_crank_chain, closed_crank])
def test_tangent_equals_differences_of_the_residual(rod, make):
    rng = np.random.default_rng(11)
    dae = RelativeDAE(make(rod).validate())
    dae.drop_redundant(dae.initial_q())
    for _ in range(2):
        beta, betad = in_plane_state(dae, rng)
        betadd = rng.normal(0.0, 50.0, dae.n_q)
        lam = rng.normal(0.0, 10.0, dae.n_lam)
        t = 0.01
        K, C, M = (x.toarray() for x in dae.tangent(beta, betad, betadd, lam, t))
        h = 1e-3 / np.maximum(np.abs(dae.absolute_coordinates(beta)[2]).max(axis=0), 1.0)
        K_fd = five_point(lambda x: dae.residual(x, betad, betadd, lam, t), beta, h)
        C_fd = five_point(lambda x: dae.residual(beta, x, betadd, lam, t), betad, 1e3 * h)
        M_fd = five_point(lambda x: dae.residual(beta, betad, x, lam, t), betadd, 1e3 * h)
        errs = [column_error(*p) for p in ((K, K_fd), (C, C_fd), (M, M_fd))]
        print(f"{make.__name__}: K, C, M against differences: "
              + ", ".join(f"{e:.1e}" for e in errs))
        assert max(errs) < 1e-5


def test_constraint_jacobians_equal_differences(rod):
    """``d(G^T mu)/dbeta`` and ``d(G v)/dbeta`` of the slider-crank's cut joint and
    drive against central differences of ``G`` (it holds no elastic forces: small steps)."""
    rng = np.random.default_rng(5)
    dae = RelativeDAE(closed_crank(rod).validate())
    dae.drop_redundant(dae.initial_q())
    beta = in_plane_state(dae, rng)[0]
    mu, v = rng.normal(0.0, 10.0, dae.n_lam), rng.normal(0.0, 3.0, dae.n_q)
    G = lambda x: dae.constraint_jacobian(x, 0.0).toarray()  # noqa: E731
    h = 1e-4 / np.maximum(np.abs(dae.absolute_coordinates(beta)[2]).max(axis=0), 1.0)
    F_fd = five_point(lambda x: G(x).T @ mu, beta, h)
    V_fd = five_point(lambda x: G(x) @ v, beta, h)
    F = dae.constraint_force_jacobian(beta, mu, 0.0).toarray()
    V = dae.constraint_velocity_jacobian(beta, v, 0.0).toarray()
    errs = column_error(F, F_fd), column_error(V, V_fd)
    print(f"d(G^T mu)/dbeta, d(G v)/dbeta against differences: {errs[0]:.1e}, {errs[1]:.1e}")
    assert max(errs) < 1e-6
