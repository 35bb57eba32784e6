"""Static modal derivatives: the membrane fields a bending basis needs (THEORY §2.5, §8.1).

The FE St. Venant--Kirchhoff internal force is a cubic polynomial without constant term,
``f(u) = K u + f2(u, u) + f3(u, u, u)`` (``flexmbs.fe.stress``).  A reduced basis of
bending vectors ``phi_i`` cannot carry the axial shortening ``-1/2 int w'^2`` that bending
forces on a slender body, so the reduced ``K2``, ``K3`` turn the quadratic membrane strain
of a bending deflection into spurious tension (membrane locking of nonlinear ROMs: a
tip deflection of a few % of L comes out several times too stiff).  The static modal
derivatives (Idelsohn & Cardona 1985; Weeger, Wever & Simeon 2016)

    theta_ij = d^2 u / dq_i dq_j = -K_c^-1 f2(phi_i, phi_j),        i <= j,

are exactly those fields: for a beam ``theta_ii`` is the inextensional shortening of
``phi_i``.  ``K_c`` is ``K`` with the reference-frame condition applied: the clamped dofs
removed (interface frame), or the mean-axis saddle point ``[[K, M R], [R^T M, 0]]`` with
the rigid modes ``R`` (inertia relief, as for the inertial static modes in ``modes``).

``f2`` is evaluated from the direct FE force by polarisation (exact for a cubic):
``f2(a, a) = [f(a) + f(-a)] / 2`` and
``f2(a, b) = [f(a + b) + f(-a - b) - f(a - b) - f(b - a)] / 8``.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from flexmbs.fe.stress import green_lagrange_internal_force
from flexmbs.reduction.eigen import factorize
from flexmbs.reduction.interfaces import rigid_modes
from flexmbs.reduction.modes import m_orthonormalize, normalize_signs, ritz

log = logging.getLogger(__name__)

#: displacement amplitude of the polarisation probes, as a fraction of the mesh size
PROBE_AMPLITUDE = 1e-2


def quadratic_force(fe, a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Symmetric bilinear part ``f2(a, b)`` (n_dof,) of the Green--Lagrange force.

    Polarisation of :func:`flexmbs.fe.stress.green_lagrange_internal_force` at probes
    scaled to :data:`PROBE_AMPLITUDE` of the mesh size (the cubic part cancels exactly,
    the linear part to round-off).  ``b=None`` means ``b = a``.
    """
    size = float(np.ptp(np.asarray(fe.mesh.points), axis=0).max())

    def scale(x):
        m = np.abs(x).max()
        return PROBE_AMPLITUDE * size / m if m > 0 else 1.0

    a = np.asarray(a, dtype=float)
    sa = scale(a)
    if b is None:
        x = sa * a
        return (green_lagrange_internal_force(fe, x) + green_lagrange_internal_force(fe, -x)) \
            / (2.0 * sa * sa)
    b = np.asarray(b, dtype=float)
    sb = scale(b)
    p, m = sa * a + sb * b, sa * a - sb * b
    f = green_lagrange_internal_force
    return (f(fe, p) + f(fe, -p) - f(fe, m) - f(fe, -m)) / (8.0 * sa * sb)


def quadratic_force_elements(basis, C: np.ndarray, a: np.ndarray,
                             b: np.ndarray | None = None) -> np.ndarray:
    """``f2(a, b)`` (n_dof,) by element quadrature over the elements of ``basis`` (an
    ``ElementBasis``, possibly restricted to a rank's elements: a partial sum).

    With ``H_x = grad x`` (``[m, j] = d x_m / d X_j``), ``E2 = (H_a^T H_b + H_b^T H_a) / 4``
    (the bilinear Green--Lagrange strain), ``tau_x = C : sym(H_x)`` and
    ``sigma2 = C : E2``, the quadratic part of the St. Venant--Kirchhoff force is

        f2_{a k} = int [sigma2 + (H_a tau_b + H_b tau_a) / 2]_{k j} dN_a / dX_j dV,

    the same polynomial part that :func:`quadratic_force` isolates by polarisation (a
    test checks both agree).  ``C`` is the 6x6 Voigt matrix (engineering shears)."""
    from flexmbs.reduction.quadrature import voigt_strain
    a = np.asarray(a, dtype=float)
    b = a if b is None else np.asarray(b, dtype=float)
    C = np.asarray(C, dtype=float)
    out = np.zeros(a.shape[0])
    U = np.column_stack([a, b])
    idx = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))

    def tensor(v):                       # Voigt (6, ...) -> symmetric (..., 3, 3)
        t = np.empty(v.shape[1:] + (3, 3))
        for c, (i, j) in enumerate(idx):
            t[..., i, j] = t[..., j, i] = v[c]
        return t

    for e in basis.chunks(basis.n_qp * (60 + 6 * basis.n_loc)):
        geo = basis.geometry(e)
        G = basis.grads(U, e, geo)                      # (n_e, n_qp, 3, 3, 2)
        Ha, Hb = G[..., 0], G[..., 1]                   # [m, j] = d x_m / d X_j
        E2 = 0.25 * (np.einsum("egmi,egmj->egij", Ha, Hb)
                     + np.einsum("egmi,egmj->egij", Hb, Ha))
        s2 = tensor(np.einsum("uv,vg->ug", C,
                              voigt_strain(E2.reshape(-1, 3, 3).transpose(1, 2, 0))))
        ta = tensor(np.einsum("uv,vg->ug", C,
                              voigt_strain(Ha.reshape(-1, 3, 3).transpose(1, 2, 0))))
        tb = tensor(np.einsum("uv,vg->ug", C,
                              voigt_strain(Hb.reshape(-1, 3, 3).transpose(1, 2, 0))))
        P = s2 + 0.5 * (np.matmul(Ha.reshape(-1, 3, 3), tb)
                        + np.matmul(Hb.reshape(-1, 3, 3), ta))
        P = P.reshape(len(e), basis.n_qp, 3, 3)
        fe_ = np.einsum("eg,egkj,egaj->eak", geo.dx, P, geo.G, optimize=True)
        np.add.at(out, basis.dofs(e).ravel(), fe_.ravel())
    return out


def constrained_solver(fe, fixed_dofs: np.ndarray | None = None, *,
                       backend: str = "auto") -> Callable[[np.ndarray], np.ndarray]:
    """``solve(F)`` -> ``u`` (n_dof, ...) with ``K_c u = F`` (one sparse factorisation).

    ``fixed_dofs`` given: those dofs are held at zero (``K_ff u_f = F_f``).  ``None``: the
    mean-axis saddle point ``[[K, M R], [R^T M, 0]] [u; lam] = [F; 0]`` (the response is
    M-orthogonal to the rigid modes ``R``; the unbalanced part of ``F`` is relieved by
    rigid-body inertia).
    """
    K, M = sp.csr_matrix(fe.K), sp.csr_matrix(fe.M)
    n = K.shape[0]
    if fixed_dofs is None:
        R = rigid_modes(np.asarray(fe.mesh.points), np.asarray(fe.dof_of_node), n)
        MR = sp.csr_matrix(M @ R)
        solve_z = factorize(sp.bmat([[K, MR], [MR.T, None]], format="csc"), backend=backend)

        def solve(F):
            F = np.asarray(F, dtype=float)
            pad = np.zeros((6,) + F.shape[1:])
            return solve_z(np.concatenate([F, pad]))[:n]
        return solve
    fixed = np.unique(np.asarray(fixed_dofs, dtype=int).ravel())
    free = np.setdiff1d(np.arange(n), fixed)
    solve_f = factorize(K[free][:, free].tocsc(), backend=backend, spd=True)

    def solve(F):
        F = np.asarray(F, dtype=float)
        u = np.zeros_like(F)
        u[free] = solve_f(F[free])
        return u
    return solve


def modal_derivatives(fe, Phi_full: np.ndarray, which: Sequence[tuple[int, int]], *,
                      fixed_dofs: np.ndarray | None = None,
                      K_factor: Callable[[np.ndarray], np.ndarray] | None = None,
                      dup_tol: float = 1e-3, backend: str = "auto", M=None,
                      f2: Callable | None = None) -> np.ndarray:
    """Static modal derivatives ``theta_ij = -K_c^-1 f2(phi_i, phi_j)`` (n_dof, k).

    ``M`` (default ``fe.M``) and ``f2(a, b)`` (default :func:`quadratic_force`) may be
    given as operators, e.g. the distributed ones of ``flexmbs.reduction.distributed``.

    Parameters
    ----------
    fe : FEModel
    Phi_full : (n_dof, n_q) basis on the FE dofs (e.g. ``ModalBasis.Phi``)
    which : index pairs ``(i, j)`` of columns of ``Phi_full``
    fixed_dofs : dofs held at zero (clamped interface frame); ``None``: mean-axis frame
    K_factor : a ready ``solve(F) -> u`` of :func:`constrained_solver` (reused, not rebuilt)
    dup_tol : a derivative whose M-norm falls below ``dup_tol`` after M-projection onto the
        derivatives kept before it is dropped (near-duplicate); zero fields are dropped too

    Returns
    -------
    Theta : (n_dof, k), ``k <= len(which)``, each column of unit mass norm
    ``theta^T M theta = 1``, sign-normalised (largest component positive), in the order
    of ``which``.
    """
    Phi_full = np.asarray(Phi_full, dtype=float)
    pairs = [(int(i), int(j)) for i, j in which]
    n_q = Phi_full.shape[1]
    bad = [p for p in pairs if not (0 <= p[0] < n_q and 0 <= p[1] < n_q)]
    if bad:
        raise ValueError(f"modal_derivatives: pairs {bad} out of range for a basis of "
                         f"{n_q} vectors")
    if not pairs:
        return np.zeros((Phi_full.shape[0], 0))
    solve = K_factor or constrained_solver(fe, fixed_dofs, backend=backend)
    f2 = f2 or (lambda a, b: quadratic_force(fe, a, b))
    F2 = np.column_stack([f2(Phi_full[:, i], None if i == j else Phi_full[:, j])
                          for i, j in pairs])
    if fixed_dofs is not None:
        F2[np.asarray(fixed_dofs, dtype=int).ravel()] = 0.0
    Theta = -solve(F2)
    M = sp.csr_matrix(fe.M) if M is None else M
    norms = np.sqrt(np.maximum(np.einsum("ik,ik->k", Theta, M @ Theta), 0.0))
    keep, kept_orth = [], np.zeros((Theta.shape[0], 0))
    for k, (i, j) in enumerate(pairs):
        if norms[k] <= 1e-12 * max(norms.max(), 1e-300):
            log.info("modal derivative (%d, %d) vanishes; dropped", i, j)
            continue
        x = Theta[:, k] / norms[k]
        o = m_orthonormalize(x[:, None], M, against=kept_orth, drop_tol=dup_tol)
        if o.shape[1] == 0:
            log.info("modal derivative (%d, %d) duplicates earlier ones; dropped", i, j)
            continue
        kept_orth = np.hstack([kept_orth, o])
        keep.append(x)
    return normalize_signs(np.column_stack(keep))


def derivative_pairs(indices: Sequence[int]) -> list[tuple[int, int]]:
    """All pairs ``(i, j)``, ``i <= j`` (in the order given) of ``indices``."""
    idx = [int(i) for i in indices]
    return [(i, j) for a, i in enumerate(idx) for j in idx[a:]]


def dominant_axis_modes(fe, Phi_full: np.ndarray, axis: int, n: int,
                        share: float = 0.5, *, M=None) -> list[int]:
    """Indices of the first ``n`` columns of ``Phi_full`` whose displacement component
    ``axis`` (0, 1, 2 = x, y, z) carries more than ``share`` of the mass norm, e.g. the
    in-plane bending vectors (``axis=1``) of a strip bending about z."""
    Phi_full = np.asarray(Phi_full, dtype=float)
    M = sp.csr_matrix(fe.M) if M is None else M
    mask = np.zeros(Phi_full.shape[0])
    mask[np.asarray(fe.dof_of_node)[:, axis]] = 1.0
    Pa = Phi_full * mask[:, None]
    frac = np.einsum("ik,ik->k", Pa, M @ Pa) / np.einsum("ik,ik->k", Phi_full, M @ Phi_full)
    out = [int(k) for k in np.flatnonzero(frac > share)[:n]]
    if len(out) < n:
        log.warning("only %d of %d requested vectors are dominated by axis %d", len(out), n,
                    axis)
    return out


def enrich_basis(fe, Phi_full: np.ndarray, n_d: int | Sequence[int], *,
                 fixed_dofs: np.ndarray | None = None,
                 K_factor: Callable[[np.ndarray], np.ndarray] | None = None,
                 dup_tol: float = 1e-3, drop_tol: float = 1e-6,
                 backend: str = "auto", M=None, K=None,
                 f2: Callable | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``Phi_full`` enriched with the modal derivatives of its vectors ``n_d``.

    ``n_d``: an int means the first ``n_d`` columns, a sequence those column indices; the
    derivatives of all pairs ``i <= j`` among them are added (:func:`modal_derivatives`),
    M-orthogonalised against ``Phi_full`` (and the rigid modes in the mean-axis frame,
    ``fixed_dofs=None``); derivatives that lose all but ``drop_tol`` of their M-norm are
    dropped.  The enlarged space is re-diagonalised by Rayleigh--Ritz, as in
    :func:`flexmbs.reduction.modes.compute_basis`.

    Returns
    -------
    Phi : (n_dof, n_q + k) M-orthonormal, ``Phi^T K Phi = diag(omega^2)``, sign-normalised
    omega : (n_q + k,) [rad/s] Ritz frequencies, ascending
    """
    Phi_full = np.asarray(Phi_full, dtype=float)
    idx = list(range(int(n_d))) if np.isscalar(n_d) else [int(i) for i in n_d]
    M = sp.csr_matrix(fe.M) if M is None else M
    K = sp.csr_matrix(fe.K) if K is None else K
    Theta = modal_derivatives(fe, Phi_full, derivative_pairs(idx), fixed_dofs=fixed_dofs,
                              K_factor=K_factor, dup_tol=dup_tol, backend=backend, M=M,
                              f2=f2)
    against = None
    if fixed_dofs is None:
        R = rigid_modes(np.asarray(fe.mesh.points), np.asarray(fe.dof_of_node), fe.n_dof)
        against = m_orthonormalize(R, M)
    V0 = m_orthonormalize(Phi_full, M, against=against)
    A = V0 if against is None else np.hstack([against, V0])
    S = m_orthonormalize(Theta, M, against=A, drop_tol=drop_tol)
    log.info("modal derivatives: %d pairs of %d vectors -> %d kept, %d added", len(idx) *
             (len(idx) + 1) // 2, len(idx), Theta.shape[1], S.shape[1])
    lam, Phi = ritz(np.hstack([V0, S]), K, M)
    if np.any(lam <= 0):
        raise ValueError(f"enriched basis has non-positive eigenvalues {lam[lam <= 0]}: "
                         "rigid-body content (check fixed_dofs and the frame)")
    return normalize_signs(Phi), np.sqrt(lam)
