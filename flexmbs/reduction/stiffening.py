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

The cubic term in the pair form (:func:`pair_gram`, :func:`h3_pairs`,
:func:`h3_pairs_tangent`): with the Gram matrix ``H_p[p, r] = int P_p . C P_r dV`` of the
``n_p = n_q (n_q + 1) / 2`` pair strains ``P_p``, ``p = (a, b)``, ``a <= b``, and the pair
vector ``pi(q)_(b,c) = q_b q_c`` (twice that for ``b < c``),

    (K3 : q q q)_k = 1/2 sum_a q_a v_(a,k),      v = H_p pi(q),
    d(K3 : q q q)_k / dq_j = 1/2 v_(j,k) + sum_(a,c) q_a q_c H_p[(a,k), (j,c)],

``n_p^2 ~ n_q^4 / 4`` products per force instead of the ``n_q^4`` of ``K3``, and ``H_p``
has a quarter of ``K3``'s entries.  A
low-rank factor ``H_p = L L^T`` would make this ``O(r n_q^2)``, but on the shipped and
benchmark bodies the numerical rank ``r`` of ``H_p`` is near ``n_p`` (``benchmarks/
k3_rank.py``), so ``L`` would cost more than ``H_p``.
"""
from __future__ import annotations

from functools import lru_cache

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
    ia, ib, pair = pair_index(n_q)
    n_p = len(ia)
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


@lru_cache(maxsize=16)
def pair_index(n_q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ia, ib, pair)``: the pairs ``p = (ia[p], ib[p])``, ``ia <= ib``, in row-major
    upper-triangle order (``p = a n_q - a (a - 1) / 2 + b - a``), and ``pair[a, b] = p``
    (n_q x n_q, symmetric)."""
    ia, ib = np.triu_indices(n_q)
    pair = np.empty((n_q, n_q), dtype=np.int64)
    pair[ia, ib] = pair[ib, ia] = np.arange(len(ia))
    for a in (ia, ib, pair):
        a.flags.writeable = False
    return ia, ib, pair


def _n_q_of(H_p: np.ndarray, q: np.ndarray) -> int:
    """``n_q`` of ``q``, after checking that ``H_p`` is ``(n_p, n_p)``."""
    n = q.shape[0] if q.ndim == 1 else -1
    n_p = n * (n + 1) // 2
    if n < 0 or H_p.shape != (n_p, n_p):
        raise ValueError(f"pair Gram matrix H_p: expected shape ({n_p}, {n_p}) for q of "
                         f"shape ({n},), got H_p {H_p.shape} and q {q.shape}")
    return n


def pair_gram(K3: np.ndarray) -> np.ndarray:
    """``H_p[(a, k), (b, c)] = 2 K3[k, a, b, c]`` (n_p x n_p): ``K3`` is a gather of
    ``H_p`` (:func:`stiffening_tensors`), symmetric up to the round-off of its sums."""
    K3 = np.asarray(K3, dtype=float)
    n = K3.shape[0] if K3.ndim == 4 else -1
    if n < 0 or K3.shape != (n,) * 4:
        raise ValueError(f"K3: expected shape (n_q, n_q, n_q, n_q), got {K3.shape}")
    ia, ib, _ = pair_index(n)
    H_p = K3[ib[:, None], ia[:, None], ia[None, :], ib[None, :]]
    return H_p + H_p.T                 # 2 K3, symmetric to the last bit (quadrature sums)


def pair_vector(q: np.ndarray) -> np.ndarray:
    """``pi(q)_(a,b) = q_a q_b`` for ``a = b``, ``2 q_a q_b`` for ``a < b`` (n_p,)."""
    ia, ib, _ = pair_index(q.shape[0])
    return np.where(ia == ib, 1.0, 2.0) * q[ia] * q[ib]


def h3_pairs(H_p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``K3 : q q q = 1/2 sum_a q_a [H_p pi(q)]_(a,k)`` (n_q,) (module docstring)."""
    _, _, pair = pair_index(_n_q_of(H_p, q))
    return 0.5 * (H_p @ pair_vector(q))[pair] @ q


def h3_pairs_tangent(H_p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``d(K3 : q q q)/dq`` (n_q, n_q) ``= 1/2 v_(j,k) + sum_(a,c) q_a q_c H_p[(a,k),
    (j,c)]``, ``v = H_p pi(q)`` (module docstring)."""
    n = _n_q_of(H_p, q)
    _, _, pair = pair_index(n)
    v = H_p @ pair_vector(q)
    Z = np.stack([H_p[:, pair[j]] @ q for j in range(n)], axis=1)      # (p, j)
    return 0.5 * v[pair] + np.einsum("a,akj->kj", q, Z[pair])
