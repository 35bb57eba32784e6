"""Geometric stiffening of the reduced body, exact for the reduced basis (THEORY §2.5, §2.8.5).

With ``G_k = grad phi_k`` at a quadrature point, ``H = sum q_k G_k``, the Green--Lagrange
strain ``E = sym(H) + H^T H / 2`` and the virtual strain ``dE_k = sym(G_k) + sym(H^T G_k)``.
Writing ``eps_k = sym(G_k)``, ``sig_k = C eps_k`` and ``P_ab = sym(G_a^T G_b)`` (Voigt,
engineering shears), the St. Venant--Kirchhoff elastic force
``h_k = int dE_k : C : E dV`` is the polynomial

    h_e(q) = K_e q + K2 : q q + K3 : q q q,
    K2[k, a, b]    = int ( sig_k . P_ab / 2 + P_ak . sig_b ) dV,
    K3[k, a, b, c] = int P_ak . C P_bc / 2 dV,

integrated with the FE quadrature, so ``h_e(q) = Phi^T f_GL(Phi q)`` holds to round-off.
"""
from __future__ import annotations

import numpy as np

from flexmbs.reduction.quadrature import element_chunks, grads_at_qp, voigt_strain


def stiffening_tensors(basis, C: np.ndarray, Phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``K2`` (n_q, n_q, n_q) and ``K3`` (n_q, n_q, n_q, n_q) by element quadrature."""
    n_q = Phi.shape[1]
    C = np.asarray(C, dtype=float)
    n_el, n_qp = basis.dx.shape
    K2 = np.zeros((n_q, n_q, n_q))
    K3 = np.zeros((n_q, n_q, n_q, n_q))
    for e in element_chunks(n_el, n_qp * (30 * n_q + 30 * n_q * n_q)):
        G = grads_at_qp(basis, Phi, e)                      # (3, 3, n_e, n_qp, n_q)
        w = basis.dx[e].ravel()                             # (g,)
        G = G.reshape(3, 3, -1, n_q)                        # (3, 3, g, n_q)
        eps = voigt_strain(G)                               # (6, g, n_q)
        sig = np.einsum("uv,vgk->ugk", C, eps)              # (6, g, n_q)
        # F[i, j, g, a, b] = (G_a^T G_b)_ij = sum_m G[m, i, g, a] G[m, j, g, b]  (batched matmul)
        A = G.transpose(2, 0, 1, 3).reshape(-1, 3, 3 * n_q)         # (g, m, (i, a))
        F = np.matmul(A.transpose(0, 2, 1), A).reshape(-1, 3, n_q, 3, n_q)
        F = F.transpose(1, 3, 0, 2, 4)                              # (i, j, g, a, b)
        P = voigt_strain(F)                                 # sym(G_a^T G_b), eng. Voigt
        CP = np.einsum("uv,vgab->ugab", C, P)
        Pw = P * w[None, :, None, None]
        # K2 term 1: 1/2 sum_g w sig_k . P_ab
        K2 += 0.5 * np.einsum("ugk,ugab->kab", sig, Pw, optimize=True)
        # K2 term 2: sum_g w P_ak . sig_b
        K2 += np.einsum("ugak,ugb->kab", Pw, sig, optimize=True)
        # K3: 1/2 sum_g w P_ak . C P_bc  (as one matrix product)
        A = Pw.reshape(-1, n_q * n_q).T                     # ((a,k), (u,g))
        B = CP.reshape(-1, n_q * n_q)                       # ((u,g), (b,c))
        K3 += 0.5 * (A @ B).reshape(n_q, n_q, n_q, n_q).transpose(1, 0, 2, 3)
    return K2, K3


def h_e(K_e: np.ndarray, K2: np.ndarray, K3: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Elastic force ``K_e q + K2:qq + K3:qqq`` (n_q,)."""
    Kq2 = np.einsum("kab,b->ka", K2, q)
    Kq3 = np.einsum("kabc,b,c->ka", K3, q, q, optimize=True)
    return K_e @ q + Kq2 @ q + Kq3 @ q


def h_e_tangent(K_e: np.ndarray, K2: np.ndarray, K3: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``dh_e/dq`` (n_q, n_q) ``= K_e + (K2_kjb + K2_kbj) q_b
    + (K3_kjbc + K3_kbjc + K3_kbcj) q_b q_c``."""
    T2 = np.einsum("kjb,b->kj", K2, q) + np.einsum("kbj,b->kj", K2, q)
    T3 = (np.einsum("kjbc,b,c->kj", K3, q, q, optimize=True)
          + np.einsum("kbjc,b,c->kj", K3, q, q, optimize=True)
          + np.einsum("kbcj,b,c->kj", K3, q, q, optimize=True))
    return K_e + T2 + T3
