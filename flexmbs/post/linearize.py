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
Newton on the residual and the acceleration-level constraints with ``q_e`` unknown.
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

    Unknowns ``x = (q, qdd_r, lam)`` (``qdd_r`` the accelerations of the non-elastic
    coordinates; ``qdd_e = qd_e = 0``); equations

        g(q, t) = 0,    r(q, qd, qdd, lam, t) = 0,    G qdd + gamma(q, qd, t) = 0,

    with ``qd`` the minimum-norm consistent velocity of the rigid coordinates for the
    current ``q`` (``qd_e = 0``; rigid velocities from ``q0``/``qd0``).  Gauss–Newton with
    minimum-norm steps (``lstsq``), so rigid coordinates left free by the joints stay
    near their start.  Jacobian by forward differences on ``x`` except the exact
    ``dr/dq``, ``dr/dqdd`` (= ``M``) and ``dr/dlam`` (= ``G^T``).

    Raises ``ConvergenceError`` if the residual does not fall below ``tol`` (relative
    to the largest generalized force of the first evaluation).
    """
    from flexmbs.integrate.consistent import consistent_positions, project_velocities
    n, m = asm.n_q, asm.n_lam
    ie = elastic_indices(asm) if elastic is None else np.asarray(elastic, dtype=int)
    ir = np.setdiff1d(np.arange(n), ie)
    q = asm.initial_q() if q0 is None else np.asarray(q0, dtype=float).copy()
    qd_start = asm.initial_qd() if qd0 is None else np.asarray(qd0, dtype=float).copy()
    qd_start[ie] = 0.0
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
        # d/dq by forward differences (velocities and gamma depend on q as well)
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
        log.debug("steady_state: iteration %d, residual %.3e", it + 1, np.abs(res).max())
    else:
        if np.abs(res).max() > tol * scale:
            raise ConvergenceError(f"steady_state: Newton did not converge in {max_iter} "
                                   f"iterations (residual {np.abs(res).max():.3e})", t=t, step=0)
    return State(q, v, a, lam, t)

