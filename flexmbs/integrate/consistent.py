"""Consistent initial conditions of the index-3 DAE (THEORY §8.3).

1. positions: Gauss–Newton with minimum-norm corrections on ``g(q0, t0) = 0``,
   ``q <- q - G_F^+ g`` over the free coordinates ``F`` (user-fixed ones stay);
2. velocities: the minimum-norm change onto ``G qd = -g_t``,
   ``qd <- qd - G_F^+ (G qd + g_t)``;
3. accelerations and multipliers from the index-1 saddle system

       [[M, G^T], [G, 0]] [qdd; lam] = [f; -gamma].

With velocity rows ``c = A qd + a = 0`` (:class:`~.protocol.VelocityConstraints`) the
velocities are projected onto both, ``[G; A] qd = [-g_t; -a]``, and step 3 holds their
time derivative ``A qdd + B qd + c_t = 0`` (``B = dc/dq``) with the multipliers
``[lam; mu]``.

First-order coordinates ``z`` (:class:`~.protocol.FirstOrderStates`: internal states of
force elements, rows ``zd - f(z, q, qd, t) = 0``) keep their given values; their rates
are set to ``zd = f`` before step 3, where their rows read ``zdd = df/dt`` along the
motion (a central difference of ``f`` along ``(qd, qdd, 1)``, step ``1e-6`` of the
time scale), so the generalized-alpha start ``a0 = qdd0`` is consistent for them too.

Pseudo-inverses (least squares, minimum norm) make redundant constraints (a
rank-deficient ``G``) work; the multipliers are then the minimum-norm ones.
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.linalg.lapack import dgecon as gecon
from scipy.linalg.lapack import dpotrf as potrf
from scipy.linalg.lapack import dpotrs as potrs

from flexmbs.compiled import use_compiled
from flexmbs.errors import ConvergenceError

from . import projection_kernel
from .protocol import ConstraintTimeDerivative, FirstOrderStates, Labelled, velocity_rows

__all__ = ["ConsistentState", "accelerations", "consistent_initial_conditions",
           "consistent_positions", "minimum_norm", "project_velocities", "tangent_mass"]

_DENSE_MAX = 3000  # up to this size the pseudo-inverses are dense SVD-based lstsq
#: The saddle system of the accelerations is solved by LU when its condition is below
#: this (else by least squares: redundant rows make it singular)
SADDLE_COND_MAX = 1e12
#: Up to this size the saddle system is solved by scipy's LU: numpy's ``solve`` wakes
#: its BLAS thread pool, 10-30 ms on a loaded machine for a 13 x 13 system (0.1 ms here).
_SMALL_LU = 200


def lstsq(A: sp.spmatrix | np.ndarray, b: np.ndarray) -> np.ndarray:
    """Minimum-norm least-squares solution of ``A x = b`` (dense SVD, or LSMR if large)."""
    if A.shape[0] == 0 or A.shape[1] == 0:
        return np.zeros(A.shape[1])
    if max(A.shape) <= _DENSE_MAX:
        Ad = A.toarray() if sp.issparse(A) else np.asarray(A)
        return np.linalg.lstsq(Ad, b, rcond=None)[0]
    return spla.lsmr(sp.csr_matrix(A), b, atol=1e-14, btol=1e-14, maxiter=20 * max(A.shape))[0]


def _jacobian(dae, q: np.ndarray, t: float, sparse: bool = False):
    """``G`` (n_lam, n_q): dense (read-only) from the system's dense constraint rows when
    it has them (:meth:`ConstraintRows.dense_rows <flexmbs.system.constraint_rows.
    ConstraintRows.dense_rows>`, small systems) and ``sparse`` is false, else CSR."""
    if not sparse:
        dense_rows = getattr(getattr(dae, "constraint_rows", None), "dense_rows", None)
        dense = dense_rows(q, t) if dense_rows is not None else None
        if dense is not None:
            G = dense[1].view()
            G.flags.writeable = False
            return G
    return sp.csr_matrix(dae.constraint_jacobian(q, t))


def _free(n: int, fixed: Sequence[int]) -> np.ndarray:
    mask = np.ones(n, dtype=bool)
    mask[np.asarray(list(fixed), dtype=int)] = False
    return np.flatnonzero(mask)


def consistent_positions(dae, q0: np.ndarray, t: float = 0.0, *, fixed: Sequence[int] = (),
                         tol: float = 1e-10, max_iter: int = 50) -> tuple[np.ndarray, int]:
    """Solve ``g(q, t) = 0`` from ``q0`` by minimum-norm Newton; returns ``(q, iterations)``.

    Raises ``ConvergenceError`` if ``max|g| > tol`` after ``max_iter`` iterations or when
    the iteration stagnates (no solution: the least-squares minimum is not zero).
    """
    q = np.array(q0, dtype=float)
    free = _free(q.size, fixed)
    g = np.asarray(dae.constraint(q, t), dtype=float)
    it = 0
    while True:
        res = float(np.max(np.abs(g))) if g.size else 0.0
        if not np.isfinite(res):
            break
        if res <= tol:
            return q, it
        if it >= max_iter:
            break
        G = _jacobian(dae, q, t)[:, free]
        dq = -lstsq(G, g)
        q[free] += dq
        g_new = np.asarray(dae.constraint(q, t), dtype=float)
        it += 1
        # stagnation: the step no longer moves q and the residual stays
        if np.max(np.abs(dq), initial=0.0) <= 1e-14 * (1.0 + np.max(np.abs(q))) \
                and np.max(np.abs(g_new)) > tol:
            g = g_new
            break
        g = g_new
    res = float(np.max(np.abs(g)))
    row = int(np.argmax(np.abs(g))) if np.isfinite(res) else int(np.argmax(~np.isfinite(g)))
    labels = dae.active_row_labels if isinstance(dae, Labelled) else None
    name = labels[row] if labels is not None and row < len(labels) else f"constraint row {row}"
    raise ConvergenceError(
        f"initial conditions cannot be assembled: residual max|g| = {res:.3e} "
        f"({name}) after {it} iterations, tolerance {tol:.1e}; "
        "the constraints have no solution near the initial guess (a loop that cannot "
        "close, or drives that contradict each other)", t=t, step=0)


def project_velocities(dae, q: np.ndarray, qd0: np.ndarray, t: float = 0.0, *,
                       fixed: Sequence[int] = (), method: str = "cholesky") -> np.ndarray:
    """Minimum-norm change of ``qd0`` (over the free entries) onto ``G qd = -g_t`` (and
    ``A qd = -a`` of velocity rows).

    ``method``: ``"cholesky"`` solves ``qd <- qd - G^T (G G^T)^-1 (G qd + g_t)``
    (:func:`minimum_norm`; rows of full rank, as the active rows are after the rank
    test; least squares when ``G G^T`` is not positive definite), ``"lstsq"`` the SVD
    least squares of :func:`lstsq` (rank-deficient rows: the initial conditions, before
    the rank test), evaluating ``G`` and ``g_t`` as the initial conditions always have
    (the run then starts from the same bits).  With ``"cholesky"`` a system whose constraint rows
    evaluate one state once (:meth:`ConstraintRows.at_state <flexmbs.system.
    constraint_rows.ConstraintRows.at_state>`) shares ``G`` and ``g_t`` of that
    evaluation with its other outputs, and a dense ``G`` (no velocity rows, nothing
    fixed) is projected in one compiled call (:func:`projected_dense`), the least
    squares when its factor fails."""
    qd = np.array(qd0, dtype=float)
    n_mu = velocity_rows(dae)
    if dae.n_lam == 0 and not n_mu:
        return qd
    fast = method == "cholesky"
    solve = minimum_norm if fast else lstsq
    at_state = getattr(getattr(dae, "constraint_rows", None), "at_state", None)
    if fast and not n_mu and at_state is not None:
        at = at_state(q, t)
        G, g_t = at.G, at.g_t
    else:
        G = sp.csr_matrix(dae.constraint_jacobian(q, t))     # (its G qd: the bits of CSR)
        g_t = dae.constraint_time_derivative(q, t) \
            if isinstance(dae, ConstraintTimeDerivative) \
            else dae.constraint_rates(q, qd, t)[0]       # (only g_t: no second derivatives)
    if fast and not n_mu and len(fixed) == 0 and type(G) is np.ndarray \
            and G.dtype == np.float64 and 0 < max(G.shape) <= _DENSE_MAX:
        out, ok = _projected(G, g_t, qd)
        if ok:
            return out
    rhs = G @ qd + np.asarray(g_t, dtype=float)
    if n_mu:            # c = A qd + a is linear in qd: one projection holds it exactly
        A = dae.velocity_jacobians(q, qd, t)[0]
        G = sp.vstack([G, A], format="csr")
        rhs = np.concatenate([rhs, dae.velocity_constraint(q, qd, t)])
    if len(fixed) == 0:
        return qd - solve(G, rhs)
    free = _free(qd.size, fixed)
    qd[free] -= solve(G[:, free], rhs)
    return qd


#: ``min diag(L) / max diag(L)`` of the Cholesky factor below this: ``G G^T`` too close
#: to singular for the normal equations (their condition is that of ``G`` squared)
CHOLESKY_RATIO = 1e-6


def minimum_norm(A: sp.spmatrix | np.ndarray, b: np.ndarray) -> np.ndarray:
    """Minimum-norm solution ``x = A^T (A A^T)^-1 b`` of ``A x = b`` for ``A`` of full
    row rank, by a Cholesky factor ``A A^T = L L^T``; :func:`lstsq` when ``A A^T`` is not
    positive definite or is nearly singular (:data:`CHOLESKY_RATIO`) or ``A`` is large."""
    if A.shape[0] == 0 or A.shape[1] == 0:
        return np.zeros(A.shape[1])
    if max(A.shape) > _DENSE_MAX:
        return lstsq(A, b)
    Ad = A if type(A) is np.ndarray and A.dtype == np.float64 else \
        A.toarray() if sp.issparse(A) else np.asarray(A, dtype=float)
    L, info = potrf(Ad @ Ad.T, lower=1, clean=0)
    d = L.diagonal()
    if info != 0 or not d.min() > CHOLESKY_RATIO * d.max():
        return lstsq(Ad, b)
    return Ad.T @ potrs(L, b, lower=1)[0]


def projected_dense(G: np.ndarray, g_t: np.ndarray, qd: np.ndarray,
                    ratio: float) -> tuple[np.ndarray, bool]:
    """``(qd - G^T (G G^T)^-1 (G qd + g_t), ok)`` of a dense ``G`` by the Cholesky factor
    ``G G^T = L L^T`` of :func:`minimum_norm`; ``ok`` False (the result unused) when
    ``G G^T`` is not positive definite or ``min diag(L) <= ratio max diag(L)``: the
    numpy reference of :func:`flexmbs.integrate.projection_kernel.projected_dense`."""
    if G.shape[0] == 0:
        return qd.copy(), True
    L, info = potrf(G @ G.T, lower=1, clean=0)
    d = L.diagonal()
    if info != 0 or not d.min() > ratio * d.max():
        return qd.copy(), False
    return qd - G.T @ potrs(L, G @ qd + g_t, lower=1)[0], True


#: ``m^2 n`` of ``G`` (m, n) above which the compiled projection's scalar loops for
#: ``G G^T`` are slower than BLAS (review: 48x189 38.5 -> 176 us): the numpy route then
_KERNEL_MAX = 30000


def _projected(G: np.ndarray, g_t, qd: np.ndarray) -> tuple[np.ndarray, bool]:
    """:func:`projected_dense` of the switch's backend (``flexmbs.compiled``); the numpy
    reference (LAPACK, main's bits) when ``m^2 n > _KERNEL_MAX``."""
    g_t = np.asarray(g_t, dtype=float)
    if use_compiled() and G.shape[0] ** 2 * G.shape[1] <= _KERNEL_MAX:
        return projection_kernel.projected_dense(np.ascontiguousarray(G), g_t, qd,
                                                 CHOLESKY_RATIO)
    return projected_dense(G, g_t, qd, CHOLESKY_RATIO)


def state_accelerations(dae, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                        t: float) -> np.ndarray:
    """``zdd = d f(z, q, qd, t)/dt`` along ``(qd, qdd, 1)`` by central differences."""
    h = 1e-6 * max(1.0, abs(t))
    fp = dae.state_rates(q + h * qd, qd + h * qdd, t + h)
    fm = dae.state_rates(q - h * qd, qd - h * qdd, t - h)
    return (fp - fm) / (2.0 * h)


def tangent_mass(dae, q, qd, qdd, lam, t):
    """``M = dr/dqdd`` of the DAE: its ``tangent_mass`` when it has one (no ``K``, ``C``
    assembled), else the third matrix of its ``tangent``."""
    if hasattr(dae, "tangent_mass"):
        return dae.tangent_mass(q, qd, qdd, lam, t)
    return dae.tangent(q, qd, qdd, lam, t)[2]


def accelerations(dae, q: np.ndarray, qd: np.ndarray, t: float, *,
                  first_order: np.ndarray = ()) -> tuple[np.ndarray, np.ndarray]:
    """``(qdd, lam)`` from ``[[M, G^T], [G, 0]] [qdd; lam] = [f; -gamma]``, ``f = -r(q,qd,0,0,t)``.

    ``first_order``: indices of first-order coordinates (rates consistent already); their
    ``qdd`` is :func:`state_accelerations`."""
    n, m = dae.n_q, dae.n_lam + velocity_rows(dae)
    zq, zl = np.zeros(n), np.zeros(m)
    f = -np.asarray(dae.residual(q, qd, zq, zl, t), dtype=float)
    M = tangent_mass(dae, q, qd, zq, zl, t)
    z = np.asarray(first_order, dtype=int)
    if z.size == 0:
        return _saddle(dae, q, qd, t, M, f)
    # no mass in the rows of z: solve with the rows zdd = 0, then zdd = df/dt
    f[z] = 0.0
    M = sp.csr_matrix(M) + sp.csr_matrix((np.ones(z.size), (z, z)), shape=(n, n))
    qdd, lam = _saddle(dae, q, qd, t, M, f)
    qdd[z] = state_accelerations(dae, q, qd, qdd, t)
    return qdd, lam


def _saddle(dae, q, qd, t, M, f) -> tuple[np.ndarray, np.ndarray]:
    """``(qdd, lam)`` of ``[[M, G^T], [G, 0]] [qdd; lam] = [f; -gamma]`` (velocity rows:
    ``G`` and ``gamma`` extended by ``A`` and ``B qd + c_t``, ``lam`` by ``mu``)."""
    n_mu = velocity_rows(dae)
    n, m = dae.n_q, dae.n_lam + n_mu
    zl = np.zeros(m)
    if m == 0:
        return _solve(sp.csr_matrix(M), f), zl
    G = _jacobian(dae, q, t, sparse=bool(n_mu))
    _, gamma = dae.constraint_rates(q, qd, t)
    if n_mu:
        A, B, c_t = dae.velocity_jacobians(q, qd, t)
        G = sp.vstack([sp.csr_matrix(G, shape=(dae.n_lam, n)), A], format="csr")
        gamma = np.concatenate([np.asarray(gamma, dtype=float), B @ qd + c_t])
    b = np.concatenate([f, -np.asarray(gamma, dtype=float)])
    if n + m <= _DENSE_MAX:
        Md = M.toarray() if sp.issparse(M) else np.asarray(M, dtype=float)
        Gd = G.toarray() if sp.issparse(G) else np.asarray(G, dtype=float)
        A = np.zeros((n + m, n + m))
        A[:n, :n], A[:n, n:], A[n:, :n] = Md, Gd.T, Gd
        try:  # LU first (fast); SVD least squares if singular (redundant constraints)
            x, rcond = _lu_solve(A, b)
            if np.all(np.isfinite(x)) and rcond > 1.0 / SADDLE_COND_MAX:
                return x[:n], x[n:]
        except np.linalg.LinAlgError:
            pass
        x = np.linalg.lstsq(A, b, rcond=None)[0]
        return x[:n], x[n:]
    G = sp.csr_matrix(G)
    A = sp.bmat([[sp.csr_matrix(M), G.T], [G, None]], format="csr")
    x = _solve(A, b)
    return x[:n], x[n:]


def _lu_solve(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """``(A^{-1} b, 1 / cond(A))`` by LU with partial pivoting; the solution non-finite if
    ``A`` is singular.  Small systems: scipy's LU (without its singular-matrix warning)
    and LAPACK's estimate of the 1-norm condition from the factors (``gecon``); larger:
    numpy's solve and the 2-norm condition (SVD)."""
    if A.shape[0] > _SMALL_LU:
        return np.linalg.solve(A, b), 1.0 / np.linalg.cond(A)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        lu = sla.lu_factor(A, check_finite=False)
        x = sla.lu_solve(lu, b, check_finite=False)
    if not np.all(np.isfinite(lu[0])):
        return x, 0.0
    rcond, info = gecon(lu[0], float(np.abs(A).sum(axis=0).max()), norm="1")
    return x, float(rcond) if info == 0 else 0.0


def _solve(A: sp.csr_matrix, b: np.ndarray) -> np.ndarray:
    """Direct solve; least squares (minimum norm) if ``A`` is singular."""
    if A.shape[0] > _DENSE_MAX:
        try:
            x = spla.splu(sp.csc_matrix(A)).solve(b)
            if np.all(np.isfinite(x)) and np.linalg.norm(A @ x - b) <= 1e-10 * (
                    1.0 + np.linalg.norm(b)):
                return x
        except RuntimeError:  # exactly singular
            pass
    return lstsq(A, b)


@dataclasses.dataclass(frozen=True)
class ConsistentState:
    """Consistent ``q, qd, qdd, lam`` and what moved to get there."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    max_dq: float       # max |q - q_guess|
    i_dq: int           # where
    max_dqd: float      # max |qd - qd_guess|
    i_dqd: int
    iterations: int     # Newton iterations of the position problem

    def __post_init__(self):
        for f in ("q", "qd", "qdd", "lam"):
            a = np.array(getattr(self, f), dtype=float)
            a.flags.writeable = False
            object.__setattr__(self, f, a)

    def report(self) -> str:
        return (f"consistent initial conditions: max|dq| = {self.max_dq:.3e} at q[{self.i_dq}], "
                f"max|dqd| = {self.max_dqd:.3e} at qd[{self.i_dqd}], "
                f"{self.iterations} Newton iterations")


def consistent_initial_conditions(dae, q0: np.ndarray, qd0: np.ndarray, t0: float = 0.0, *,
                                  fixed_positions: Sequence[int] = (),
                                  fixed_velocities: Sequence[int] = (),
                                  tol: float = 1e-10, max_iter: int = 50) -> ConsistentState:
    """Positions, velocities, accelerations and multipliers consistent at ``t0`` (§8.3)."""
    q0 = np.asarray(q0, dtype=float)
    qd0 = np.asarray(qd0, dtype=float)
    if q0.shape != (dae.n_q,) or qd0.shape != (dae.n_q,):
        raise ValueError(f"initial conditions: q0 and qd0 must have shape ({dae.n_q},), "
                         f"got {q0.shape} and {qd0.shape}")
    q, it = consistent_positions(dae, q0, t0, fixed=fixed_positions, tol=tol, max_iter=max_iter)
    qd = project_velocities(dae, q, qd0, t0, fixed=fixed_velocities, method="lstsq")
    z = dae.state_indices if isinstance(dae, FirstOrderStates) else np.zeros(0, dtype=int)
    if z.size:
        qd[z] = dae.state_rates(q, qd, t0)
    qdd, lam = accelerations(dae, q, qd, t0, first_order=z)
    dq, dqd = np.abs(q - q0), np.abs(qd - qd0)
    dqd[z] = 0.0        # the states' rates are set by their ODEs, not moved by constraints
    return ConsistentState(t=float(t0), q=q, qd=qd, qdd=qdd, lam=lam,
                           max_dq=float(dq.max(initial=0.0)), i_dq=int(np.argmax(dq)),
                           max_dqd=float(dqd.max(initial=0.0)), i_dqd=int(np.argmax(dqd)),
                           iterations=it)
