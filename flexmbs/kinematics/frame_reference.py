"""Numpy reference of :mod:`flexmbs.kinematics.frame_kernel` (same names, same arguments).

Marker frames ``V = [p; x; y; z] = U(q_e)^T A(e)^T + [r; 0; 0; 0]`` with
``U^T = U0^T + W12 q_e`` (THEORY §2.1, §3.3) and their derivatives

    dV_u/de = Te . U_u,   dV_u/dq_e = A W_u,   d2V_u/de2 = 2 Q(U_u),   d2V_u/de dq_e = Te . W_u,

(``Te`` from :mod:`flexmbs.kinematics.rotation_reference`, ``Q`` from the quadratic
form ``T_A`` of :mod:`flexmbs.kinematics.rotation`); the label rows of the constraints,
``g_r = alpha_r . beta_r`` with ``alpha = S_alpha C + k``, ``beta = S_beta C``, their
gradients ``alpha . dbeta + beta . dalpha`` and their Hessian sums
``sum_r mu_r d2g_r/dx2``.  Whole-array products (``einsum``) where the kernels loop, so
the two agree to round-off, not bitwise.
"""
from __future__ import annotations

import numpy as np

from flexmbs.kinematics.rotation_reference import rotation_and_derivative, rotation_matrix

__all__ = ["fill_frame", "label_hessian_sum", "label_rows", "rotation_and_derivative",
           "rotation_matrix", "stacked_hessian_sum", "stacked_rows"]


def fill_frame(q_b, U0T, W12, W_r, off, V, D) -> None:
    """Write ``V`` (4, 3) and the ``e`` and ``q_e`` columns of ``D`` (4, 3, n) of the
    module docstring (``D``'s ``dp/dr = E`` columns are the caller's template).
    ``U0T`` (12,) is ``[s, R]^T`` flattened ``[u l]``; ``W12`` (12, n_q), ``W_r``
    (3, 4 n_q); for a rigid marker ``n_q = 0``."""
    nq = W12.shape[1]
    A, Te = rotation_and_derivative(*q_b[3:7])
    UT = (U0T + W12 @ q_b[7:7 + nq]).reshape(4, 3)      # U^T, rows s, x, y, z
    V[:] = UT @ A.T
    V[0] += q_b[0:3]
    D[:, :, off + 3:off + 7] = np.einsum("kla,ul->uka", Te, UT)
    D[:, :, off + 7:off + 7 + nq] = (A @ W_r).reshape(3, 4, nq).transpose(1, 0, 2)


def _alpha_beta(Sa, Sb, kc, C, D):
    """``alpha``, ``beta`` (R, 3) and their derivatives (R, 3, n)."""
    return (Sa @ C + kc, Sb @ C, np.einsum("rv,vin->rin", Sa, D),
            np.einsum("rv,vin->rin", Sb, D))


def label_rows(Sa, Sb, kc, C, D) -> tuple[np.ndarray, np.ndarray]:
    """``g_r = alpha_r . beta_r`` (R,) and ``dg_r = alpha_r . dbeta_r + beta_r . dalpha_r``
    (R, n) over the frame vectors ``C`` (V, 3) and ``D`` (V, 3, n)."""
    al, be, dal, dbe = _alpha_beta(Sa, Sb, kc, C, D)
    g = np.einsum("ri,ri->r", al, be)
    dg = np.einsum("ri,rin->rn", al, dbe) + np.einsum("ri,rin->rn", be, dal)
    return g, dg


def _hessian_X_W(Sa, Sb, kc, C, D, mu):
    """``(X + X^T, W)``: ``X = sum_r mu_r dalpha_r^T dbeta_r`` (n, n) and
    ``W = S_beta^T (mu alpha) + S_alpha^T (mu beta)`` (V, 3)."""
    al, be, dal, dbe = _alpha_beta(Sa, Sb, kc, C, D)
    X = np.einsum("r,ria,rib->ab", mu, dal, dbe)
    W = Sb.T @ (mu[:, None] * al) + Sa.T @ (mu[:, None] * be)
    return X + X.T, W


def _contract_marker(Wk, U0T, W12, q_b, eo, TA, out) -> None:
    """Add ``sum_(u,i) Wk[u, i] d2V_u,i/dx2`` of one marker to ``out``: the ``e, e``
    block ``2 sum_(k,l) M[k, l] T_A[k, l]`` with ``M = Wk^T U^T`` and, on a flexible
    marker, the ``e, q_e`` blocks ``sum_(k,l) Te[k, l, a] N[k, l, j]`` with
    ``N[k, l, j] = sum_u Wk[u, k] W[u, l, j]``."""
    nq = W12.shape[1]
    UT = (U0T + W12 @ q_b[7:7 + nq]).reshape(4, 3)
    out[eo:eo + 4, eo:eo + 4] += 2.0 * np.einsum("kl,klab->ab", Wk.T @ UT, TA)
    if nq == 0:
        return
    _, Te = rotation_and_derivative(*q_b[3:7])
    N = np.einsum("uk,ulj->klj", Wk, W12.reshape(4, 3, nq))
    mixed = np.einsum("kla,klj->aj", Te, N)
    out[eo:eo + 4, eo + 4:eo + 4 + nq] += mixed
    out[eo + 4:eo + 4 + nq, eo:eo + 4] += mixed.T


def label_hessian_sum(Sa, Sb, kc, C, D, mu, TA, U0T_P, W12_P, q_P, eo_P, U0T_Q, W12_Q,
                      q_Q, eo_Q) -> np.ndarray:
    """``sum_r mu_r d2g_r/dx2`` (n, n) of one joint's label rows: ``X + X^T`` plus ``W``
    contracted with the frame Hessians of the markers P and Q (``eo < 0``: ground)."""
    out, W = _hessian_X_W(Sa, Sb, kc, C, D, mu)
    if eo_P >= 0:
        _contract_marker(W[0:4], U0T_P, W12_P, q_P, eo_P, TA, out)
    if eo_Q >= 0:
        _contract_marker(W[4:8], U0T_Q, W12_Q, q_Q, eo_Q, TA, out)
    return out


def _W12(W12, wptr, m, n) -> np.ndarray:
    return W12[wptr[m] * 12:wptr[m + 1] * 12].reshape(12, n)


def stacked_hessian_sum(q, C, D, start, nq, U0T, W12, wptr, Sa, Sb, kc, mu, TA, norm_idx,
                        mu_norm) -> np.ndarray:
    """``sum_i mu_i d2g_i/dq2`` (N, N) over all rows of a system: the label rows' Hessian
    sum over the frames ``C`` (M, 4, 3), ``D`` (M, 4, 3, N) of all markers (``start < 0``:
    ground or point mass, no second derivatives) plus ``2 mu E`` on the ``e`` block of
    each normalisation ``e.e - 1``."""
    M, N = C.shape[0], q.shape[0]
    out, W = _hessian_X_W(Sa, Sb, kc, C.reshape(4 * M, 3), D.reshape(4 * M, 3, N), mu)
    for m in range(M):
        s = int(start[m])
        if s >= 0:
            n = int(nq[m])
            _contract_marker(W[4 * m:4 * m + 4], U0T[m], _W12(W12, wptr, m, n),
                             q[s:s + 7 + n], s + 3, TA, out)
    for b in range(norm_idx.shape[0]):
        idx = norm_idx[b]
        out[idx, idx] += 2.0 * mu_norm[b]
    return out


def stacked_rows(q, C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb, kc, src, dst, norm_rows,
                 norm_idx, n_rows):
    """All first-order rows of a system: the frames ``C`` (M, 4, 3), ``D`` (M, 4, 3, N) of
    every marker (:func:`fill_frame`; ``start = -1``: ground, the template; ``start =
    -(o + 2)``: a point mass at ``q[o:o + 3]``, the template's origin moved), the label
    rows :func:`label_rows` written to the system rows ``dst`` (from ``src``) and the
    normalisations ``e.e - 1`` with gradient ``2 e``.  Returns ``(g, G, C, D, p, dp)``."""
    M, N = C0.shape[0], q.shape[0]
    C = C0.copy()
    D = D0.copy()
    for m in range(M):
        s = int(start[m])
        if s < 0:
            if s <= -2:
                C[m, 0] += q[-s - 2:-s + 1]
            continue
        n = int(nq[m])
        fill_frame(q[s:s + 7 + n], U0T[m], _W12(W12, wptr, m, n),
                   W_r[wptr[m] * 12:wptr[m + 1] * 12].reshape(3, 4 * n), s, C[m], D[m])
    p, dp = label_rows(Sa, Sb, kc, C.reshape(4 * M, 3), D.reshape(4 * M, 3, N))
    g = np.zeros(n_rows)
    G = np.zeros((n_rows, N))
    g[dst] = p[src]
    G[dst] = dp[src]
    e = q[norm_idx]                                      # (B, 4)
    g[norm_rows] = np.sum(e * e, axis=1) - 1.0
    G[norm_rows[:, None], norm_idx] = 2.0 * e
    return g, G, C, D, p, dp
