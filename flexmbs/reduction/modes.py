"""Reduction bases: free--free modes, Craig--Bampton modes, inertial static modes.

All bases are deterministic (fixed start vectors), M-orthonormal and sign-normalised
(largest-magnitude component positive).  The reference-frame condition is explicit:

* ``mean_axis``: the deformation is M-orthogonal to the six rigid modes, so
  ``C_t = 0`` and ``C_r0 = 0`` (Buckens / mean-axis condition);
* ``interface:NAME``: the frame is attached to interface NAME: its marker does not
  move elastically (``Phi = Psi = 0`` there); the modes are clamped-interface modes.

Craig--Bampton (THEORY §2.8.7): fixed-interface normal modes plus the 6 static
constraint modes of each interface marker; the rigid content is then removed by a
Rayleigh--Ritz eigen solve in the CB subspace (mean axis: drop its six zero-frequency
vectors; interface frame: that interface's constraint modes are left out).
Work is done in the interface coordinates ``z`` of ``u = T z`` (see ``interfaces``).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from flexmbs.reduction.eigen import eigh_sparse, factorize
from flexmbs.reduction.interfaces import InterfaceTransformation, tilde

log = logging.getLogger(__name__)

#: an inertial static response is dropped only if the part of it that the basis lacks
#: holds at most this share of its own strain-energy norm ``sqrt(s^T K s)``
#: (:func:`static_basis`).  The energy norm measures the stress a static mode carries: a
#: slender beam's centrifugal response lies almost in the span of its bending and axial
#: modes in the mass norm (5e-5 left) but not in the energy norm (1.5e-2 left), and
#: without that part the stiffening lost its convergence in the number of modes
#: (docs/stiffening.md).  1e-3 sits between the round-off of the static solves on the
#: ill-conditioned 8 m x 2 mm Kane strip (cond K ~ 1e13: 1e-4..5e-4 of the energy norm,
#: from two solver backends and from one step of iterative refinement) and its smallest
#: genuine content (1.5e-3).
STATIC_DROP_TOL = 1e-3


@dataclass(frozen=True)
class ModalBasis:
    """Reduction basis on the FE dofs.

    Phi : (n_dof, n_q)  M-orthonormal, ``Phi^T K Phi = diag(omega^2)``
    omega : (n_q,) [rad/s]  (Ritz) circular frequencies
    frame : 'mean_axis' or 'interface:NAME'
    method : 'free_free' or 'craig_bampton'
    n_static : number of inertial static modes added before the final Ritz solve
    """

    Phi: np.ndarray
    omega: np.ndarray
    frame: str
    method: str
    n_static: int = 0


def normalize_signs(X: np.ndarray, rel_tie: float = 1e-6) -> np.ndarray:
    """Flip each column so that its largest-magnitude component is positive.

    Symmetric parts have mirror nodes of equal magnitude; round-off decides which one
    ``argmax`` picks.  The pivot is therefore the *first* component within ``rel_tie``
    of the column's maximum, which is the same for every eigen backend.
    """
    A = np.abs(X)
    idx = np.argmax(A >= (1.0 - rel_tie) * A.max(axis=0), axis=0)
    s = np.sign(X[idx, np.arange(X.shape[1])])
    s[s == 0] = 1.0
    return X * s


def m_orthonormalize(X: np.ndarray, M: sp.spmatrix, against: np.ndarray | None = None,
                     drop_tol: float = 1e-8) -> np.ndarray:
    """Gram--Schmidt (twice) of the columns of ``X`` in the M inner product, first
    against the M-orthonormal ``against``; columns that lose all but ``drop_tol`` of
    their M-norm are dropped."""
    X = np.asarray(X, dtype=float)
    A = np.zeros((X.shape[0], 0)) if against is None else np.asarray(against, dtype=float)
    n_a = A.shape[1]
    B = np.zeros((X.shape[0], n_a + X.shape[1]))
    MB = np.zeros_like(B)
    B[:, :n_a], MB[:, :n_a] = A, M @ A if n_a else A
    k = n_a
    for x in X.T:
        x = x.copy()
        n0 = np.sqrt(x @ (M @ x))
        for _ in range(2):
            x -= B[:, :k] @ (MB[:, :k].T @ x)
        Mx = M @ x
        n1 = np.sqrt(max(x @ Mx, 0.0))
        if n0 > 0 and n1 > drop_tol * n0:
            B[:, k], MB[:, k] = x / n1, Mx / n1
            k += 1
    return B[:, n_a:k].copy()


def rigid_modes_z(tr: InterfaceTransformation, rigid_u: np.ndarray) -> np.ndarray:
    """Rigid modes in the interface coordinates z (``T R_z = R_u``)."""
    Rz = np.zeros((tr.T.shape[1], 6))
    Rz[: tr.n_kept] = rigid_u[tr.kept]
    for j, itf in enumerate(tr.interfaces):
        b = tr.n_kept + 6 * j
        Rz[b:b + 3, :3] = np.eye(3)
        Rz[b:b + 3, 3:] = -tilde(itf.R)
        Rz[b + 3:b + 6, 3:] = np.eye(3)
    return Rz


def ritz(V: np.ndarray, K: sp.spmatrix, M: sp.spmatrix) -> tuple[np.ndarray, np.ndarray]:
    """Rayleigh--Ritz in span(V): ``lam`` ascending, vectors ``V Y`` M-orthonormal."""
    Kr, Mr = V.T @ (K @ V), V.T @ (M @ V)
    lam, Y = sla.eigh(0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T))
    return lam, V @ Y


def free_free_modes(K, M, rigid: np.ndarray, n: int, *, backend: str = "auto"):
    """Lowest ``n`` elastic free--free modes (the six rigid modes removed).

    Shift-invert with a small negative shift ``sigma = -1e-8 tr(K)/tr(M)`` (any
    ``sigma < 0`` makes ``K - sigma M`` positive definite)."""
    sigma = -1e-8 * K.diagonal().sum() / M.diagonal().sum()
    lam, X = eigh_sparse(K, M, n + 6, sigma=sigma, backend=backend, near_null=rigid)
    Rn = m_orthonormalize(rigid, M)
    X = m_orthonormalize(X[:, 6:], M, against=Rn)
    return ritz(X, K, M)


def craig_bampton_basis(K_ii, M_ii, K_ib, tr: InterfaceTransformation, n_fixed: int,
                        frame: str, *, backend: str = "auto",
                        near_null: np.ndarray | None = None) -> np.ndarray:
    """CB basis in z: ``[[Phi_ii, -K_ii^-1 K_ib], [0, E]]`` (n_z, n_fixed + 6 n_b), the
    frame interface's constraint modes left out for ``frame='interface:NAME'``.

    ``K_ii, M_ii, K_ib`` are the blocks of ``T^T K T``, ``T^T M T``
    (:meth:`InterfaceTransformation.project`).  One factor of ``K_ii`` serves both the
    shift-invert eigen solve and the constraint modes and is released right after.
    """
    nk = tr.n_kept
    n_b = K_ib.shape[1]
    boundary = list(range(n_b))
    if frame.startswith("interface:"):
        sl = tr.marker_slice(frame.split(":", 1)[1])
        boundary = [b for b in boundary if not (sl.start <= nk + b < sl.stop)]
    rhs = -sp.csr_matrix(K_ib)[:, boundary].toarray() if boundary else None
    out = eigh_sparse(K_ii, M_ii, n_fixed, sigma=0.0, backend=backend, rhs=rhs,
                      near_null=near_null)
    lam, Phi_i = out[0], out[1]
    Xc = out[2] if boundary else np.zeros((nk, 0))
    log.info("fixed-interface frequencies [Hz]: %s",
             np.array2string(np.sqrt(np.abs(lam)) / 2 / np.pi, precision=4))
    V = np.zeros((nk + n_b, n_fixed + len(boundary)))
    V[:nk, :n_fixed] = Phi_i
    V[:nk, n_fixed:] = Xc
    V[nk + np.array(boundary, dtype=int), n_fixed + np.arange(len(boundary))] = 1.0
    return V


def inertial_loads(points: np.ndarray, dof_of_node: np.ndarray, M) -> np.ndarray:
    """Nodal loads ``M a`` (n_dof, 12) of the inertial load cases (THEORY §8.1): unit
    linear accelerations (3), unit angular accelerations ``e_j x X`` (3) and the
    centrifugal fields ``(sym(e_i e_j^T) - delta_ij E) X`` of ``omega_i omega_j``
    (6 pairs i <= j)."""
    X = np.asarray(points, dtype=float)
    fields = []
    for j in range(3):
        a = np.zeros_like(X)
        a[:, j] = 1.0
        fields.append(a)
    for j in range(3):
        fields.append(np.cross(np.eye(3)[j], X))
    for i in range(3):
        for j in range(i, 3):
            S = 0.5 * (np.outer(np.eye(3)[i], np.eye(3)[j]) + np.outer(np.eye(3)[j], np.eye(3)[i]))
            S -= (i == j) * np.eye(3)
            fields.append(X @ S.T)
    A = np.zeros((M.shape[0], len(fields)))
    for c, a in enumerate(fields):
        A[np.asarray(dof_of_node).ravel(), c] = a.ravel()
    return M @ A


def static_modes_z(Kz, Mz, Fz: np.ndarray, tr: InterfaceTransformation, frame: str,
                   Rz: np.ndarray, *, backend: str = "auto") -> np.ndarray:
    """Static responses ``K z = F`` with the reference-frame condition applied.

    mean_axis: saddle point ``[[K, M R], [R^T M, 0]] [z; lam] = [F; 0]`` (inertia relief,
    response M-orthogonal to the rigid modes).  interface:NAME: that marker clamped."""
    n = Kz.shape[0]
    if frame == "mean_axis":
        MR = sp.csr_matrix(Mz @ Rz)
        A = sp.bmat([[Kz, MR], [MR.T, None]], format="csc")
        rhs = np.vstack([Fz, np.zeros((6, Fz.shape[1]))])
        return factorize(A, backend=backend)(rhs)[:n]
    sl = tr.marker_slice(frame.split(":", 1)[1])
    free = np.setdiff1d(np.arange(n), np.arange(sl.start, sl.stop))
    Kf = sp.csr_matrix(Kz)[free][:, free].tocsc()
    Z = np.zeros_like(Fz)
    Z[free] = factorize(Kf, backend=backend, spd=True)(Fz[free])
    return Z


def nonzero_responses(S: np.ndarray, M, rel: float = 1e-8) -> np.ndarray:
    """The columns of ``S`` whose M-norm exceeds ``rel`` times the largest one.

    With inertia relief (mean axis) a uniform linear or angular acceleration of a free
    body is balanced by rigid-body inertia alone: its static response is zero up to
    round-off.  Normalised, such a column would put round-off noise into the basis (and
    a different noise into every computation of it), so it is dropped here."""
    norms = np.sqrt(np.maximum(np.einsum("ik,ik->k", S, M @ S), 0.0))
    keep = norms > rel * norms.max(initial=0.0)
    if not keep.all():
        log.info("%d of %d static responses vanish (inertia relief); dropped",
                 int((~keep).sum()), S.shape[1])
    return S[:, keep]


def static_basis(S: np.ndarray, M, K, against: np.ndarray | None = None, *,
                 drop_tol: float | None = None) -> np.ndarray:
    """M-orthonormal basis of what the static responses ``S`` add to ``against``.

    Each response ``s_j`` is M-orthogonalised against the M-orthonormal ``against`` (and
    against the vectors kept so far): ``r_j = (E - B B^T M) s_j``.  Its share of new
    content is measured in the energy norm, relative to the response itself,

        rho_j = sqrt(r_j^T K r_j) / sqrt(s_j^T K s_j),

    and Gram--Schmidt pivots on it: the response with the largest ``rho_j`` is kept next
    (``r_j / |r_j|_M``), until every remaining ``rho_j <= drop_tol`` (default
    :data:`STATIC_DROP_TOL`).  The choice does not depend on the order of the load
    cases.  ``M`` and ``K`` need only ``@`` on (n, k) arrays (sparse matrices or the
    distributed operators)."""
    drop_tol = STATIC_DROP_TOL if drop_tol is None else drop_tol
    S = np.asarray(S, dtype=float)
    n = S.shape[0]
    A = np.zeros((n, 0)) if against is None else np.asarray(against, dtype=float)
    k0 = np.sqrt(np.maximum(np.einsum("ik,ik->k", S, K @ S), 0.0))
    R = S[:, k0 > 0].copy()
    k0 = k0[k0 > 0]
    if A.shape[1]:
        MA = M @ A
        for _ in range(2):
            R -= A @ (MA.T @ R)
    kept = []
    free = np.ones(R.shape[1], dtype=bool)
    while free.any():
        rho = np.sqrt(np.maximum(np.einsum("ik,ik->k", R, K @ R), 0.0)) / k0
        rho[~free] = -1.0
        j = int(np.argmax(rho))
        if rho[j] <= drop_tol:
            break
        r = R[:, j:j + 1]
        b = r / np.sqrt(float(r[:, 0] @ (M @ r)[:, 0]))
        for _ in range(2):
            R -= b @ ((M @ b).T @ R)
        kept.append(b)
        free[j] = False
        log.debug("static response %d kept: %.2e of its energy norm new", j, rho[j])
    log.info("%d of %d static responses kept (new energy-norm share > %.0e)", len(kept),
             S.shape[1], drop_tol)
    return np.hstack(kept) if kept else np.zeros((n, 0))


def compute_basis(fe, interfaces: tuple, n_modes: int, frame: str = "mean_axis", *,
                  static_modes: bool = False, backend: str = "auto",
                  method: str = "auto") -> ModalBasis:
    """The reduction basis of ``fe`` (see module docstring).

    Without interfaces and with ``frame='mean_axis'``: the ``n_modes`` lowest free--free
    modes.  Otherwise Craig--Bampton with ``n_modes`` fixed-interface modes; the result
    has ``n_modes + 6 n_interfaces - 6`` vectors.  ``static_modes`` adds the inertial
    static modes (THEORY §8.1) computed with the frame condition, those of the 12 whose
    new content exceeds :data:`STATIC_DROP_TOL` of their energy norm
    (:func:`static_basis`), then re-diagonalises.

    ``method='free_free'`` keeps the free--free modes even with interfaces (mean axis
    only): the interfaces are then markers on the free body (``zbar = L u``, the RBE3
    fit), not Craig--Bampton boundaries, and the basis holds no constraint modes.  Their
    loads then need the residual flexibility (``flexmbs.reduction.residual``) for the
    stresses near them.
    """
    from flexmbs.reduction.interfaces import interface_transformation, rigid_modes
    points, dofs = np.asarray(fe.mesh.points), np.asarray(fe.dof_of_node)
    K, M = sp.csr_matrix(fe.K), sp.csr_matrix(fe.M)
    n_dof = K.shape[0]
    if frame != "mean_axis" and not frame.startswith("interface:"):
        raise ValueError(f"frame must be 'mean_axis' or 'interface:NAME', got {frame!r}")
    names = [i.name for i in interfaces]
    if frame.startswith("interface:") and frame.split(":", 1)[1] not in names:
        raise ValueError(f"frame {frame!r}: no such interface among {names}")
    if method not in ("auto", "free_free"):
        raise ValueError(f"method must be 'auto' or 'free_free', got {method!r}")
    if method == "free_free" and frame != "mean_axis":
        raise ValueError(f"method 'free_free' needs frame 'mean_axis', got {frame!r}")
    cb = bool(interfaces) and method != "free_free"
    tr = interface_transformation(n_dof, points, tuple(interfaces) if cb else ())
    rigid = rigid_modes(points, dofs, n_dof)
    Rn = m_orthonormalize(rigid, M)
    if not cb:
        method = "free_free"
        _, V = free_free_modes(K, M, rigid, n_modes, backend=backend)
    else:
        method = "craig_bampton"
        K_ii, K_ib, _ = tr.project(K, blocks=True)
        M_ii, _, _ = tr.project(M, blocks=True)
        Vz = craig_bampton_basis(K_ii, M_ii, K_ib, tr, n_modes, frame, backend=backend,
                                 near_null=rigid[tr.kept])
        del K_ii, M_ii, K_ib
        V = tr.T @ Vz
    n_static = 0
    if static_modes:
        F = inertial_loads(points, dofs, M)
        if cb:
            Kz, Mz = tr.project(K), tr.project(M)
            Z = static_modes_z(Kz, Mz, tr.T.T @ F, tr, frame, rigid_modes_z(tr, rigid),
                               backend=backend)
            S = tr.T @ Z
        else:
            S = static_modes_z(K, M, F, tr, frame, rigid, backend=backend)
        V0 = m_orthonormalize(V, M, against=Rn if frame == "mean_axis" else None)
        S = static_basis(nonzero_responses(S, M), M, K,
                         against=np.hstack([Rn, V0]) if frame == "mean_axis" else V0)
        n_static = S.shape[1]
        V = np.hstack([V0, S])
    # M-orthonormal before Rayleigh--Ritz: the constraint modes of RBE3 interfaces make
    # V^T M V ill-conditioned (cond ~ 4e4 on the conrod), which alone moved the lowest
    # Ritz values by 5e-8 relative under round-off
    V = m_orthonormalize(V, M, against=Rn if frame == "mean_axis" else None)
    lam, Phi = ritz(V, K, M)
    expected = (n_modes + (6 * len(interfaces) - 6 if cb else 0)) + n_static
    if Phi.shape[1] != expected:
        log.warning("basis has %d vectors, expected %d", Phi.shape[1], expected)
    if np.any(lam <= 0):
        raise ValueError(f"reduction basis has non-positive eigenvalues {lam[lam <= 0]}: "
                         "rigid-body content left (check interfaces and frame)")
    Phi = normalize_signs(Phi)
    return ModalBasis(Phi=Phi, omega=np.sqrt(lam), frame=frame, method=method,
                      n_static=n_static)
