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
        print(f"{make.__name__}: K, C, M against differences: " + ", ".join(f"{e:.1e}" for e in errs))
        assert max(errs) < 1e-5
