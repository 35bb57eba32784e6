"""Residual flexibility of the interface loads: the static correction of the stresses
(modal acceleration method).

A wrench ``W = [F; M]`` (body frame, [N] and [N m]) at interface ``I`` is conjugate to
the marker motion ``zbar = L_I u`` (fit matrix, ``flexmbs.reduction.interfaces``), so it
loads the nodes with ``f = L_I^T W``: each node ``i`` of the set gets ``w_i F`` and
``w_i (A^-1 M) x r_i`` (the RBE3 spread); on a Craig--Bampton RBE2 interface the
elimination ``u = T z`` carries it as the rigid spider does.

The static response of the body, with its frame condition, is ``u_s = G f``: mean axis,
inertia relief ``[[K, M R], [R^T M, 0]] [u_s; mu] = [f; 0]``; ``interface:NAME``, that
marker clamped.  The basis holds the part ``Phi K_e^-1 Phi^T f`` of it (the
K-orthogonal projection onto span ``Phi``; ``Phi^T f = P_I^T W`` with the marker rows
``P_I = [Phi_I; Psi_I] = L_I Phi``).  What it lacks, per unit wrench component, is the
residual flexibility

    R_I = G L_I^T - Phi K_e^-1 P_I^T                      (n_dof, 6)  [m/N, m/(N m)]

(with M-orthonormal modes ``K_e = diag(omega^2)``: ``G - sum_j phi_j phi_j^T / omega_j^2``
applied to ``f``), and its nodal stresses ``S_I = S R_I`` (N, 6, 6) [Pa/N, Pa/(N m)].
The modal acceleration method then recovers

    u = Phi q + sum_I R_I W_I,      sigma = S Phi q + sum_I S_I W_I,

exact (for the interface loads) at a static equilibrium, where ``K_e q = sum_I P_I^T W_I``.
A Craig--Bampton basis holds the static response to its interfaces' loads (constraint
modes), so there ``R_I`` vanishes up to round-off; a free--free basis with interfaces
as markers (``method='free_free'``) is where it matters.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from flexmbs.reduction.interfaces import Interface, interface_transformation, rigid_modes
from flexmbs.reduction.modes import rigid_modes_z, static_modes_z


def residual_flexibility(fe, itfs: tuple[Interface, ...], Phi: np.ndarray, K_e: np.ndarray,
                         frame: str, *, craig_bampton: bool,
                         backend: str = "auto") -> dict[str, np.ndarray]:
    """``{name: R_I}`` (n_dof, 6) for every interface but the frame's (see module doc).

    ``craig_bampton``: the interfaces are Craig--Bampton boundaries (RBE2 sets rigid),
    so the static solves use their elimination ``u = T z``; otherwise the free body."""
    points, dofs = np.asarray(fe.mesh.points), np.asarray(fe.dof_of_node)
    K, M = sp.csr_matrix(fe.K), sp.csr_matrix(fe.M)
    n_dof = K.shape[0]
    tr = interface_transformation(n_dof, points, tuple(itfs) if craig_bampton else ())
    loaded = [itf for itf in itfs if frame != f"interface:{itf.name}"]
    if not loaded:
        return {}
    L = [itf.fit_matrix(n_dof) for itf in loaded]
    Fz = np.hstack([(Li @ tr.T).T.toarray() for Li in L])          # (n_z, 6 n_I)
    rigid = rigid_modes(points, dofs, n_dof)
    Z = static_modes_z(tr.project(K), tr.project(M), Fz, tr, frame,
                       rigid_modes_z(tr, rigid), backend=backend)
    U = tr.T @ Z                                                    # G L^T, (n_dof, 6 n_I)
    P = np.vstack([Li @ Phi for Li in L])                           # (6 n_I, n_q)
    U -= Phi @ np.linalg.solve(K_e, P.T)
    return {itf.name: U[:, 6 * k:6 * k + 6] for k, itf in enumerate(loaded)}


def residual_stress_modes(fe, R: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``{name: S R_I}`` (N, 6, 6): nodal-averaged stress [Pa] per unit wrench component
    ``[F_x, F_y, F_z, M_x, M_y, M_z]`` (body frame) at interface ``name``."""
    from flexmbs.fe.stress import nodal_stress_modes
    return {name: nodal_stress_modes(fe, RI) for name, RI in R.items()}
