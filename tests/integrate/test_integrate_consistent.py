"""Consistent initial conditions (THEORY §8.3) and failure reporting."""
import numpy as np
import pytest
import scipy.sparse as sp
from int_models import Blowup, Pendulum

from flexmbs.errors import ConvergenceError
from flexmbs.integrate import consistent_initial_conditions, integrate


def test_pendulum_projected():
    """Off the circle: the minimum-norm Newton moves q radially onto |q| = L (closed
    form q0 L/|q0|); qd loses its radial part; at rest lam = m g cos(theta) / (2 L)."""
    dae = Pendulum(L=1.0)
    q0 = np.array([0.9, -0.6])
    cs = consistent_initial_conditions(dae, q0, [1.0, 1.0])
    np.testing.assert_allclose(cs.q, q0 / np.linalg.norm(q0), atol=1e-10)
    n = cs.q
    np.testing.assert_allclose(cs.qd, np.array([1.0, 1.0]) - (n @ [1.0, 1.0]) * n, atol=1e-12)
    assert cs.max_dq == pytest.approx(np.max(np.abs(cs.q - q0)))
    assert "max|dq|" in cs.report()
    rest = consistent_initial_conditions(dae, cs.q, [0.0, 0.0])
    cos_theta = -rest.q[1]
    assert rest.lam[0] == pytest.approx(9.81 * cos_theta / 2.0, rel=1e-9)
    # accelerations satisfy the acceleration-level constraint G qdd + gamma = 0
    assert abs(2 * rest.q @ rest.qdd) < 1e-12


def test_fixed_coordinate_kept():
    """With x fixed at 0.6 the solution is y = -0.8 (3-4-5 triangle)."""
    cs = consistent_initial_conditions(Pendulum(), [0.6, -0.5], [0.0, 0.0],
                                       fixed_positions=[0])
    assert cs.q[0] == 0.6
    assert cs.q[1] == pytest.approx(-0.8, abs=1e-10)


class Redundant(Pendulum):
    """The pendulum constraint given twice: G has rank 1."""

    n_lam = 2

    def residual(self, q, qd, qdd, lam, t):
        return super().residual(q, qd, qdd, np.array([lam.sum()]), t)

    def tangent(self, q, qd, qdd, lam, t):
        return super().tangent(q, qd, qdd, np.array([lam.sum()]), t)

    def constraint(self, q, t):
        return np.repeat(super().constraint(q, t), 2)

    def constraint_jacobian(self, q, t):
        return sp.vstack([super().constraint_jacobian(q, t)] * 2, format="csr")

    def constraint_rates(self, q, qd, t):
        g_t, gamma = super().constraint_rates(q, qd, t)
        return np.repeat(g_t, 2), np.repeat(gamma, 2)


def test_redundant_constraints_minimum_norm_lambda():
    """Rank-deficient G: the minimum-norm multipliers split the single tension equally."""
    cs = consistent_initial_conditions(Redundant(), [0.6, -0.8], [0.0, 0.0])
    assert cs.lam[0] == pytest.approx(cs.lam[1], rel=1e-10)
    assert cs.lam.sum() == pytest.approx(9.81 * 0.8 / 2.0, rel=1e-10)
    tr = integrate(Redundant(), [0.6, -0.8], [0.0, 0.0], 0.1, h=0.01,
                   petsc_options={"pc_factor_mat_solver_type": "mumps",
                                  "mat_mumps_icntl_24": 1})
    assert np.all(np.isfinite(tr.q))


class TwoRods(Pendulum):
    """A point held by two rods of length L to (0, 0) and (D, 0): impossible if D > 2L."""

    n_lam = 2

    def __init__(self, D):
        super().__init__()
        self.D = D

    def constraint(self, q, t):
        d = q - [self.D, 0.0]
        return np.array([q @ q - 1.0, d @ d - 1.0])

    def constraint_jacobian(self, q, t):
        return sp.csr_matrix(np.array([2 * q, 2 * (q - [self.D, 0.0])]))

    def constraint_rates(self, q, qd, t):
        return np.zeros(2), np.full(2, 2.0 * qd @ qd)


def test_impossible_constraint_raises():
    with pytest.raises(ConvergenceError, match="initial conditions cannot be assembled"):
        consistent_initial_conditions(TwoRods(D=3.0), [1.5, -0.2], [0.0, 0.0])
    ok = consistent_initial_conditions(TwoRods(D=1.2), [0.6, -0.5], [0.0, 0.0])
    np.testing.assert_allclose(ok.q, [0.6, -0.8], atol=1e-10)


def test_blowup_gives_convergence_error_not_traceback():
    """qdd = exp(q / 0.01) blows up in finite time: ConvergenceError with t and step."""
    with pytest.raises(ConvergenceError) as info:
        integrate(Blowup(), [0.0], [1.0], 1.0, h=0.01)
    assert info.value.t is not None and info.value.step is not None
    assert "residual norm" in str(info.value) and "iterations" in str(info.value)


def test_nan_residual_names_t_and_step():
    with pytest.raises(ConvergenceError) as info:
        integrate(Blowup(s=1e3, t_nan=0.5), [0.0], [0.0], 1.0, h=0.1)
    err = info.value
    assert err.step == 6 and 0.5 < err.t <= 0.6 + 1e-12
    assert "DIVERGED_FNORM_NAN" in str(err) and "t = " in str(err)


@pytest.mark.parametrize("log_cond", [0, 4, 8, 11, 13, 15])
def test_saddle_lu_condition_estimate_against_the_svd(log_cond):
    """The initial saddle system is accepted from its LU when LAPACK's 1-norm condition
    estimate (``gecon`` on the factors) is below ``SADDLE_COND_MAX``: the estimate stays
    within a factor ``n`` of the 2-norm condition (numpy's SVD, the earlier test) on
    matrices of known condition, and a singular matrix gives 0 (least squares then)."""
    from flexmbs.integrate import consistent as C
    rng = np.random.default_rng(log_cond)
    n = 13
    U, _ = np.linalg.qr(rng.normal(size=(n, n)))
    V, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = U @ np.diag(np.logspace(0, -log_cond, n)) @ V.T
    b = rng.normal(size=n)
    x, rcond = C._lu_solve(A, b)
    cond2 = np.linalg.cond(A)
    assert cond2 / n <= 1.0 / rcond <= n * cond2 * 1.01
    if log_cond <= 8:
        assert np.allclose(A @ x, b, atol=1e-12 * cond2)
    S = A.copy()
    S[-1] = S[0]                         # exactly dependent rows
    assert C._lu_solve(S, b)[1] <= 1.0 / C.SADDLE_COND_MAX
