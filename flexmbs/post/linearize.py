"""Linearisation of the constrained multibody DAE and its eigenvalue analysis.

About a reference motion ``(q*, qd*, qdd*, lam*)`` that satisfies
``r(q, qd, qdd, lam, t) = M qdd - f + G^T lam = 0`` and ``g(q, t) = 0``, a perturbation
``dq`` that keeps the constraints to first order lies in ``ker G``:
``dq = N z`` with ``N`` (n_q, n_f) an orthonormal basis of the null space of
``G = dg/dq`` (from the SVD of ``G``; redundant rows are harmless).  Projecting the
linearised residual with ``N^T`` removes the constraint forces (``N^T G^T = 0``):

    M_z z'' + C_z z' + K_z z = 0,    M_z = N^T M N,  C_z = N^T C N,  K_z = N^T K N,

with ``(K, C, M) = (dr/dq, dr/dqd, dr/dqdd)`` from :meth:`AssembledSystem.tangent`;
``K`` contains the geometric term ``d(G^T lam)/dq``, which is what makes a pendulum
swing about a pin.  The quadratic eigenproblem ``(s^2 M_z + s C_z + K_z) z = 0`` is
solved as the generalized state-space problem

    [[0, E], [-K_z, -C_z]] x = s [[E, 0], [0, M_z]] x,     x = [z; s z].

Each oscillatory eigenvalue ``s = -zeta w + i w sqrt(1 - zeta^2)`` gives the natural
frequency ``w / 2 pi = |s| / 2 pi`` [Hz] and the damping ratio ``zeta = -Re s / |s|``;
the mode shape in ``q`` is ``N z``.

For a steadily moving reference (a beam spun at constant rate by a drive), the state is
a *relative equilibrium*: the elastic coordinates are constant, ``qd_e = qdd_e = 0``, while
the rigid coordinates follow the prescribed motion.  :func:`steady_state` finds it by
Newton on ``q_e`` with the rigid part made consistent for each ``q_e``.
Because the elastic coordinates are resolved in the moving body frame, the projected
matrices are time invariant and the ordinary eigenanalysis applies (centrifugal
softening, geometric stiffening and the gyroscopic coupling ``C_z`` are all in the
tangent).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from flexmbs.errors import ConvergenceError

log = logging.getLogger(__name__)

__all__ = ["LinearModel", "ModalResult", "State", "elastic_indices", "equilibrium",
           "linearize", "modes", "null_space", "steady_state"]


def _ro(a) -> np.ndarray:
    a = np.array(a, copy=True)
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class State:
    """A consistent state ``(q, qd, qdd, lam)`` at time ``t``."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    t: float = 0.0

    def __post_init__(self):
        for k in ("q", "qd", "qdd", "lam"):
            object.__setattr__(self, k, _ro(np.asarray(getattr(self, k), dtype=float)))


@dataclass(frozen=True)
class LinearModel:
    """Projected linear model ``M_z z'' + C_z z' + K_z z = 0``, ``dq = N z``."""

    M_z: np.ndarray
    C_z: np.ndarray
    K_z: np.ndarray
    N: np.ndarray
    state: State

    def __post_init__(self):
        for k in ("M_z", "C_z", "K_z", "N"):
            object.__setattr__(self, k, _ro(getattr(self, k)))

    @property
    def n_dof(self) -> int:
        """Number of independent coordinates (dimension of ``ker G``)."""
        return self.N.shape[1]


@dataclass(frozen=True)
class ModalResult:
    """Eigenvalues ``s`` (complex), natural frequencies ``f = |s| / 2 pi`` [Hz], damping
    ratios ``zeta = -Re s / |s|``, damped frequencies ``Im s / 2 pi`` [Hz] and mode shapes
    in ``q`` (columns of ``shapes``, (n_q, n_modes), complex), sorted by ``|s|``."""

    s: np.ndarray
    frequencies: np.ndarray
    damping_ratios: np.ndarray
    damped_frequencies: np.ndarray
    shapes: np.ndarray

    def __post_init__(self):
        for k in ("s", "frequencies", "damping_ratios", "damped_frequencies", "shapes"):
            object.__setattr__(self, k, _ro(getattr(self, k)))


# --------------------------------------------------------------------------- linear algebra

def null_space(G, *, rtol: float = 1e-9) -> np.ndarray:
    """Orthonormal basis ``N`` (n_q, n_q - rank G) of ``ker G`` from the SVD of ``G``.

    Singular values below ``rtol * max(sigma)`` count as zero, so redundant constraint
    rows do not reduce the dimension twice."""
    Gd = G.toarray() if hasattr(G, "toarray") else np.asarray(G, dtype=float)
    n = Gd.shape[1]
    if Gd.shape[0] == 0:
        return np.eye(n)
    _, sig, Vt = np.linalg.svd(Gd, full_matrices=True)
    tol = rtol * (sig[0] if sig.size else 0.0)
    rank = int(np.sum(sig > tol))
    return Vt[rank:].T.copy()


def linearize(asm, state: State, *, rtol: float = 1e-9) -> LinearModel:
    """Linearise the assembled DAE ``asm`` about ``state`` and project onto ``ker G``.

    ``state`` must be consistent (residual and constraints zero); use
    :func:`equilibrium` or :func:`steady_state` to get one.
    """
    q, qd, qdd, lam, t = state.q, state.qd, state.qdd, state.lam, state.t
    if q.shape != (asm.n_q,):
        raise ValueError(f"linearize: q must have shape ({asm.n_q},), got {q.shape}")
    if lam.shape != (asm.n_lam,):
        raise ValueError(f"linearize: lam must have shape ({asm.n_lam},), got {lam.shape}")
    K, C, M = (A.toarray() for A in asm.tangent(q, qd, qdd, lam, t))
    N = null_space(asm.constraint_jacobian(q, t), rtol=rtol)
    return LinearModel(M_z=N.T @ M @ N, C_z=N.T @ C @ N, K_z=N.T @ K @ N, N=N, state=state)


def modes(lin: LinearModel, *, n_modes: int | None = None, oscillatory_only: bool = True,
          tol: float = 1e-8) -> ModalResult:
    """Eigenvalues and modes of ``(s^2 M_z + s C_z + K_z) z = 0`` (module doc).

    Each complex-conjugate pair is reported once (``Im s > 0``).  With
    ``oscillatory_only`` the real eigenvalues (rigid-body drift, ``s = 0``, overdamped
    modes) are dropped; otherwise they are listed with damped frequency 0.
    """
    n = lin.n_dof
    if n == 0:
        z = np.zeros(0)
        return ModalResult(z.astype(complex), z, z, z, np.zeros((lin.N.shape[0], 0), complex))
    E = np.eye(n)
    Z = np.zeros((n, n))
    A = np.block([[Z, E], [-lin.K_z, -lin.C_z]])
    B = np.block([[E, Z], [Z, lin.M_z]])
    s, X = sla.eig(A, B)
    ok = np.isfinite(s)
    s, X = s[ok], X[:, ok]
    scale = max(np.abs(s).max(initial=0.0), 1.0)
    osc = s.imag > tol * scale
    real = np.abs(s.imag) <= tol * scale
    keep = osc | (real & (not oscillatory_only))
    s, X = s[keep], X[:n, keep]
    order = np.argsort(np.abs(s), kind="stable")
    s, X = s[order], X[:, order]
    if n_modes is not None:
        s, X = s[:n_modes], X[:, :n_modes]
    w = np.abs(s)
    with np.errstate(invalid="ignore", divide="ignore"):
        zeta = np.where(w > 0, -s.real / np.where(w > 0, w, 1.0), 0.0)
    shapes = lin.N @ X
    # normalise each shape to unit max-abs with a real largest entry
    for k in range(shapes.shape[1]):
        i = np.argmax(np.abs(shapes[:, k]))
        if abs(shapes[i, k]) > 0:
            shapes[:, k] /= shapes[i, k]
    return ModalResult(s=s, frequencies=w / (2 * np.pi), damping_ratios=zeta,
                       damped_frequencies=np.abs(s.imag) / (2 * np.pi), shapes=shapes)


# --------------------------------------------------------------------------- reference states

def equilibrium(asm, q=None, qd=None, t: float = 0.0) -> State:
    """A consistent state at ``q`` (default: the initial one) and ``qd`` (default:
    ``asm.initial_qd()``): positions and velocities made consistent, ``qdd`` and ``lam``
    from the index-1 system (THEORY §8.3).  For a body at rest in static equilibrium
    ``qdd`` comes out zero; the state is *not* searched for equilibrium (use
    :func:`flexmbs.integrate.solve_static` for that)."""
    from flexmbs.integrate.consistent import consistent_initial_conditions
    q = asm.initial_q() if q is None else np.asarray(q, dtype=float)
    qd = asm.initial_qd() if qd is None else np.asarray(qd, dtype=float)
    cs = consistent_initial_conditions(asm, q, qd, t)
    return State(cs.q, cs.qd, cs.qdd, cs.lam, t)


def elastic_indices(asm) -> np.ndarray:
    """Global indices of the elastic coordinates ``q_e`` of all flexible bodies
    (a body's coordinates beyond its ``[r, e]``, i.e. ``n_coords > 7``)."""
    idx = []
    for b in asm.bodies:
        s = asm.body_slices[b.name]
        if b.n_coords > 7:
            idx.extend(range(s.start + 7, s.stop))
    return np.array(idx, dtype=int)


def steady_state(asm, *, t: float = 0.0, q0=None, qd0=None, elastic=None,
                 tol: float = 1e-10, max_iter: int = 30) -> State:
    """Relative equilibrium: elastic coordinates constant in their body frames.

    With ``qd_e = qdd_e = 0`` (``e``: the elastic coordinates, ``elastic`` or
    :func:`elastic_indices`; ``r``: all others) the state satisfies

        g(q, t) = 0,    G qd + g_t = 0,    G qdd + gamma(q, qd, t) = 0,
        r(q, qd, qdd, lam, t) = M qdd - f(q, qd, t) + G^T lam = 0.

    It is solved in two layers (:func:`_elastic_newton`):

    1. the rigid part for the current ``q_e`` (held): positions by minimum-norm Newton on
       ``g = 0`` from ``q0``, velocities as the minimum-norm change of ``qd0`` onto the
       velocity constraint (THEORY §8.3), then ``qdd_r`` and ``lam`` from the index-1
       system with the elastic accelerations locked,
       ``[[M_rr, G_r^T], [G_r, 0]] [qdd_r; lam] = [f_r; -gamma]``;
    2. Newton on ``q_e`` for the elastic rows ``r_e(q_e) = M_er qdd_r - f_e + G_e^T lam = 0``.
       Its matrix is the analytic tangent of ``(r_e, r_r, G qdd + gamma)`` in
       ``(q_e, qdd_r, lam)``, ``[[K_ee, M_er, G_e^T], [K_re, M_rr, G_r^T], [0, G_r, 0]]``
       (``K = dr/dq`` from :meth:`AssembledSystem.tangent`, centrifugal softening and
       geometric stiffening included), reduced to ``q_e`` by its Schur complement.  It is
       exact when the joints do not act on elastic coordinates (``G_e = 0``, e.g. a beam
       clamped at its frame interface): then it converges in a few iterations at any
       speed, also where the tangent at ``q_e = 0`` is indefinite (centrifugal softening
       above the first bending frequency, before the stretch stiffens it).

    Where that does not apply (joints on elastic coordinates: a loop that cannot close
    with ``q_e`` held, or no convergence), a Gauss--Newton on ``(q, qdd_r, lam)`` is
    tried (:func:`_gauss_newton`).  Rigid coordinates left free by the joints stay at
    ``q0``/``qd0``.  Raises ``ConvergenceError`` naming the equations and coordinates
    left unsolved if the residual does not fall below ``tol`` relative to the largest
    generalized force ``max |f|`` (at least 1).
    """
    ie = elastic_indices(asm) if elastic is None else np.asarray(elastic, dtype=int)
    q = asm.initial_q() if q0 is None else np.asarray(q0, dtype=float).copy()
    qd = asm.initial_qd() if qd0 is None else np.asarray(qd0, dtype=float).copy()
    qd[ie] = 0.0
    try:
        return _elastic_newton(asm, q, qd, ie, t, tol, max_iter)
    except ConvergenceError as exc:
        first = exc.reason
    except (np.linalg.LinAlgError, FloatingPointError) as exc:
        first = f"Newton on the elastic coordinates failed: {exc}"
    log.info("steady_state: %s; trying Gauss-Newton on (q, qdd_r, lam)", first)
    try:
        return _gauss_newton(asm, q, qd, ie, t, tol, max_iter)
    except ConvergenceError as exc:
        raise ConvergenceError(f"steady_state: {first}; the Gauss-Newton fallback did not "
                               f"converge either: {exc.reason}", t=t, step=0) from None


def _coordinate(asm, i: int) -> str:
    """``"q[12] (body 'beam', coordinate 12)"`` for the global coordinate ``i``."""
    for name, s in asm.body_slices.items():
        if s.start <= i < s.stop:
            return f"q[{i}] (body '{name}', coordinate {i - s.start})"
    return f"q[{i}]"


def _locked_rigid_state(asm, q, qd0, ie, ir, t):
    """``(q, qd, qdd, lam, f)`` consistent with the elastic coordinates of ``q`` held and
    ``qd_e = qdd_e = 0`` (step 1 of :func:`steady_state`); ``f = -r(q, qd, 0, 0, t)``."""
    from flexmbs.integrate.consistent import consistent_positions, project_velocities
    n, m = asm.n_q, asm.n_lam
    q, _ = consistent_positions(asm, q, t, fixed=ie)
    qd = np.array(project_velocities(asm, q, qd0, t, fixed=ie), dtype=float)
    qd[ie] = 0.0
    z, zl = np.zeros(n), np.zeros(m)
    f = -asm.residual(q, qd, z, zl, t)
    M = asm.tangent(q, qd, z, zl, t)[2].toarray()
    G = asm.constraint_jacobian(q, t).toarray()
    _, gamma = asm.constraint_rates(q, qd, t)
    x = _solve(_locked_matrix(M, G, ir), np.concatenate([f[ir], -np.asarray(gamma, float)]))
    qdd = np.zeros(n)
    qdd[ir] = x[:ir.size]
    return q, qd, qdd, x[ir.size:], f


def _locked_matrix(M, G, ir) -> np.ndarray:
    """The index-1 matrix ``[[M_rr, G_r^T], [G_r, 0]]`` with ``qdd_e = 0``."""
    m = G.shape[0]
    return np.block([[M[np.ix_(ir, ir)], G[:, ir].T], [G[:, ir], np.zeros((m, m))]])


def _solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LU solve; minimum-norm least squares if ``A`` is singular (redundant rows)."""
    try:
        if np.linalg.cond(A) < 1e12:
            return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        pass
    return np.linalg.lstsq(A, b, rcond=None)[0]


def _elastic_newton(asm, q, qd0, ie, t, tol, max_iter) -> State:
    """Steps 1 and 2 of :func:`steady_state`.  The Newton matrix of step 2 is used in
    its Schur complement on ``q_e`` (the rigid rows and the acceleration constraints hold
    exactly after step 1):

        S = K_ee - [M_er, G_e^T] A^-1 [K_re; 0],    A = [[M_rr, G_r^T], [G_r, 0]],

    so the stiff elastic block is never scaled against the rigid inertia."""
    ir = np.setdiff1d(np.arange(asm.n_q), ie)
    q, qd, qdd, lam, f = _locked_rigid_state(asm, q, qd0, ie, ir, t)
    scale = max(np.abs(f).max(initial=0.0), 1.0)
    for it in range(max_iter + 1):
        r = asm.residual(q, qd, qdd, lam, t)
        res = np.abs(r).max(initial=0.0)
        log.debug("steady_state: Newton iteration %d, max |r| = %.3e", it, res)
        if res <= tol * scale:
            return State(q, qd, qdd, lam, t)
        if it == max_iter or ie.size == 0 or not np.isfinite(res):
            break
        K, _, M = asm.tangent(q, qd, qdd, lam, t)
        K, M = K.toarray(), M.toarray()
        G = asm.constraint_jacobian(q, t).toarray()
        A = _locked_matrix(M, G, ir)
        B = np.hstack([M[np.ix_(ie, ir)], G[:, ie].T])
        Y = _solve(A, np.vstack([K[np.ix_(ir, ie)], np.zeros((asm.n_lam, ie.size))]))
        _, gamma = asm.constraint_rates(q, qd, t)
        y = _solve(A, np.concatenate([r[ir], G[:, ir] @ qdd[ir] + gamma]))
        S = K[np.ix_(ie, ie)] - B @ Y
        try:
            dq_e = np.linalg.solve(S, -(r[ie] - B @ y))
        except np.linalg.LinAlgError:
            dq_e = np.linalg.lstsq(S, -(r[ie] - B @ y), rcond=None)[0]
        q = q.copy()
        q[ie] += dq_e
        q, qd, qdd, lam, _ = _locked_rigid_state(asm, q, qd0, ie, ir, t)
    i = int(np.argmax(np.abs(r))) if np.all(np.isfinite(r)) else int(np.argmax(~np.isfinite(r)))
    raise ConvergenceError(
        f"the elastic equilibrium did not converge in {it} Newton iterations: "
        f"max |r| = {res:.3e} at {_coordinate(asm, i)}, tolerance {tol * scale:.3e}",
        t=t, step=0)


def _gauss_newton(asm, q, qd_start, ie, t, tol, max_iter) -> State:
    """Gauss--Newton on ``x = (q, qdd_r, lam)`` for ``g = 0``, ``r = 0``,
    ``G qdd + gamma = 0`` with minimum-norm steps (``lstsq``); ``qd`` the minimum-norm
    consistent velocity for the current ``q`` (``qd_e = 0``).  Jacobian by forward
    differences in ``q`` (the velocities and ``gamma`` depend on it), exact in ``qdd``
    (``M``) and ``lam`` (``G^T``).  The fallback of :func:`steady_state`."""
    from flexmbs.integrate.consistent import consistent_positions, project_velocities
    n, m = asm.n_q, asm.n_lam
    ir = np.setdiff1d(np.arange(n), ie)
    q, _ = consistent_positions(asm, q, t, fixed=ie)

    def velocities(qq):
        v = np.array(project_velocities(asm, qq, qd_start, t, fixed=ie), dtype=float)
        v[ie] = 0.0
        return v

    def F(qq, a_r, lam):
        v = velocities(qq)
        a = np.zeros(n)
        a[ir] = a_r
        r = asm.residual(qq, v, a, lam, t)
        g = asm.constraint(qq, t)
        G = asm.constraint_jacobian(qq, t)
        _, gamma = asm.constraint_rates(qq, v, t)
        return np.concatenate([r, g, G @ a + gamma]), v, a

    a_r = np.zeros(ir.size)
    lam = np.zeros(m)
    res, v, a = F(q, a_r, lam)
    scale = max(np.abs(res).max(), 1.0)
    for it in range(max_iter):
        if np.abs(res).max() <= tol * scale:
            break
        K, _, M = asm.tangent(q, v, a, lam, t)
        G = asm.constraint_jacobian(q, t).toarray()
        J = np.zeros((n + 2 * m, n + ir.size + m))
        hq = 1e-7 * max(1.0, np.abs(q).max())
        for j in range(n):
            dq = np.zeros(n)
            dq[j] = hq
            J[:, j] = (F(q + dq, a_r, lam)[0] - res) / hq
        J[:n, n:n + ir.size] = M.toarray()[:, ir]
        J[n + m:, n:n + ir.size] = G[:, ir]
        J[:n, n + ir.size:] = G.T
        dx = np.linalg.lstsq(J, -res, rcond=None)[0]
        q = asm.normalize(q + dx[:n])
        a_r = a_r + dx[n:n + ir.size]
        lam = lam + dx[n + ir.size:]
        res, v, a = F(q, a_r, lam)
        log.debug("steady_state: Gauss-Newton iteration %d, residual %.3e", it + 1,
                  np.abs(res).max())
    else:
        if np.abs(res).max() > tol * scale:
            i = int(np.argmax(np.abs(res)))
            where = (_coordinate(asm, i) if i < n else
                     f"constraint row {i - n}" if i < n + m else
                     f"acceleration constraint row {i - n - m}")
            raise ConvergenceError(f"Gauss-Newton on (q, qdd_r, lam): max residual "
                                   f"{np.abs(res).max():.3e} at {where} after {max_iter} "
                                   f"iterations, tolerance {tol * scale:.3e}", t=t, step=0)
    return State(q, v, a, lam, t)
