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

from flexmbs.reduction.quadrature import voigt_strain


def stiffening_tensors(basis, C: np.ndarray, Phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``K2`` (n_q, n_q, n_q) and ``K3`` (n_q, n_q, n_q, n_q) by element quadrature.

    ``P_ab = P_ba``, so only the ``n_p = n_q (n_q + 1) / 2`` pairs ``a <= b`` are formed:
    ``T[k, p] = int sig_k . P_p dV`` gives both terms of ``K2`` and the Gram matrix
    ``H[p, r] = int P_p . C P_r dV`` (n_p x n_p) all of ``K3``, a quarter of the work of
    the full ``n_q^2 x n_q^2`` product.
    """
    n_q = Phi.shape[1]
    C = np.asarray(C, dtype=float)
    ia, ib = np.triu_indices(n_q)
    n_p = len(ia)
    pair = np.empty((n_q, n_q), dtype=int)
    pair[ia, ib] = pair[ib, ia] = np.arange(n_p)
    T = np.zeros((n_q, n_p))
    H = np.zeros((n_p, n_p))
    for e in basis.chunks(basis.n_qp * (30 * n_q + 16 * n_p)):
        geo = basis.geometry(e)
        G = basis.grads(Phi, e, geo)                        # (n_e, n_qp, 3, 3, n_q)
        w = geo.dx.ravel()                                  # (g,)
        G = G.reshape(-1, 3, 3, n_q)                        # (g, m, i, a)
        eps = voigt_strain(G.transpose(1, 2, 0, 3))         # (6, g, n_q)
        sig = np.einsum("uv,vgk->ugk", C, eps)              # (6, g, n_q)
        # F[g, (i, a), (j, b)] = (G_a^T G_b)_ij = sum_m G[g, m, i, a] G[g, m, j, b]
        A = G.reshape(-1, 3, 3 * n_q)
        F = np.matmul(A.transpose(0, 2, 1), A).reshape(-1, 3, n_q, 3, n_q)
        F = F[:, :, ia, :, ib]                              # (n_p, g, i, j)
        P = voigt_strain(F.transpose(2, 3, 1, 0))           # (6, g, n_p) sym(G_a^T G_b)
        del F
        Pw = (P * w[None, :, None]).reshape(-1, n_p)        # ((u, g), p)
        T += sig.reshape(-1, n_q).T @ Pw
        H += Pw.T @ np.einsum("uv,vgp->ugp", C, P).reshape(-1, n_p)
    # K2[k, a, b] = 1/2 int sig_k . P_ab + int P_ak . sig_b
    K2 = 0.5 * T[:, pair] + T[:, pair].transpose(2, 1, 0)
    # K3[k, a, b, c] = 1/2 int P_ak . C P_bc
    K3 = 0.5 * H[pair[:, :, None, None], pair[None, None, :, :]].transpose(1, 0, 2, 3)
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
