"""Compiled (numba) first-order constraint rows of a system of any size, sparse in ``q``
(:mod:`flexmbs.system.local_rows`).

Each marker ``m`` moves with the coordinates of one body only (``w_m`` of them from
``q[s_m]``; 3 on a point mass, 0 on ground), so its frame vectors and their derivatives
are kept on those local columns:

    C (M, 4, 3),   D_loc (M, 4, 3, L) = dV/dq_b,   L = max_m w_m,

filled by :func:`flexmbs.kinematics.frame_kernel.fill_frame` at offset 0.  A label row
``l`` (:mod:`flexmbs.constraints.rows`) reads the eight vectors of its two markers
``(P, Q)`` (its block's, :func:`_pair_frames`):

    alpha = S_alpha C_PQ + k,   beta = S_beta C_PQ,   p_l = alpha . beta,
    dp_l = sum_v (S_alpha[l, v] beta + S_beta[l, v] alpha) . D_loc[v]    (2 L columns).

The system rows (all, ``n_rows_all``) are then: a plain row ``p_src``; a drive
``w(t) . p + f(t)``; a normalisation ``e.e - 1`` with gradient ``2 e`` (on its slots
0..3).  ``G`` leaves in the CSR order of the system's pattern: ``data[k] = GL.flat[pos1[k]]
(+ GL.flat[pos2[k]])`` (two slots when both markers sit on one body).  The numpy reference
is the block-by-block evaluation of :class:`flexmbs.system.constraint_rows.ConstraintRows`
(``FLEXMBS_KERNELS=reference``; ``tests/system/test_local_rows.py`` compares them).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from flexmbs.kinematics.frame_kernel import fill_frame, label_hessian_sum, label_rows
from flexmbs.system.stacked_kernel import drive_rows


@njit(cache=True)
def local_frames(q, C0, D0, start, nq, U0T, W12, W_r, wptr):  # pragma: no cover
    """``C`` (M, 4, 3) and ``D_loc`` (M, 4, 3, L) of every marker (``start = -1``: ground,
    the template; ``start = -(o + 2)``: a point mass at ``q[o:o + 3]``, origin moved)."""
    M = C0.shape[0]
    C = C0.copy()
    D = D0.copy()
    for m in range(M):
        s = start[m]
        if s < 0:
            if s <= -2:
                for k in range(3):
                    C[m, 0, k] += q[-s - 2 + k]
            continue
        n = nq[m]
        fill_frame(q[s:s + 7 + n], U0T[m], W12[wptr[m] * 12:wptr[m + 1] * 12].reshape(12, n),
                   W_r[wptr[m] * 12:wptr[m + 1] * 12].reshape(3, 4 * n), np.int64(0), C[m], D[m])
    return C, D


@njit(cache=True)
def _pair_frames(C, D, mP, mQ, oP, oQ, n):  # pragma: no cover - compiled
    """The frames of a marker pair as one joint sees them: ``C_b`` (8, 3) and ``D_b``
    (8, 3, n) with P's local columns at ``oP`` and Q's at ``oQ`` (-1: ground, none)."""
    L = D.shape[3]
    Cb = np.empty((8, 3))
    Db = np.zeros((8, 3, n))
    for side in range(2):
        m, o = (mP, oP) if side == 0 else (mQ, oQ)
        for u in range(4):
            for i in range(3):
                Cb[4 * side + u, i] = C[m, u, i]
                if o >= 0:
                    for j in range(min(L, n - o)):
                        Db[4 * side + u, i, o + j] = D[m, u, i, j]
    return Cb, Db


@njit(cache=True)
def local_rows(q, C0, D0, start, nq, U0T, W12, W_r, wptr, e_lo, e_m, Sa, Sb, kc, src, dst,
               norm_rows, norm_idx, n_rows, wd_row, wd_lo, wd_n, wd_w, wd_f, act, pos1,
               pos2, g_out, data_out):  # pragma: no cover - compiled
    """The active rows ``g_out`` (len(act)) and ``G``'s CSR values ``data_out`` of the
    module docstring, from all ``n_rows`` rows of the system: label rows
    ``e_lo[e]:e_lo[e + 1]`` on the markers ``e_m[e]`` (``wd_*``: the drive rows of
    :meth:`flexmbs.system.stacked.StackedRows.drive_weights`)."""
    C, D = local_frames(q, C0, D0, start, nq, U0T, W12, W_r, wptr)
    L = D0.shape[3]
    p = np.zeros(Sa.shape[0])
    dp = np.zeros((Sa.shape[0], 2 * L))
    for e in range(e_lo.shape[0] - 1):        # label rows, block by block
        lo, hi = e_lo[e], e_lo[e + 1]
        Cb, Db = _pair_frames(C, D, e_m[e, 0], e_m[e, 1], np.int64(0), L, 2 * L)
        pb, dpb = label_rows(Sa[lo:hi], Sb[lo:hi], kc[lo:hi], Cb, Db)
        for i in range(hi - lo):          # by loops: no broadcast shape check (whose
            p[lo + i] = pb[i]             # error path, numba's formatting of the shapes,
            for j in range(2 * L):        # is most of a slice assignment's compile)
                dp[lo + i, j] = dpb[i, j]
    g = np.zeros(n_rows)
    GL = np.zeros((n_rows, 2 * L))
    for i in range(src.shape[0]):
        g[dst[i]] = p[src[i]]
        for j in range(2 * L):
            GL[dst[i], j] = dp[src[i], j]
    drive_rows(g, GL, p, dp, wd_row, wd_lo, wd_n, wd_w, wd_f)
    for b in range(norm_rows.shape[0]):      # e.e - 1, gradient 2 e on slots 0..3
        ee = 0.0
        for a in range(4):
            e = q[norm_idx[b, a]]
            ee += e * e
            GL[norm_rows[b], a] = 2.0 * e
        g[norm_rows[b]] = ee - 1.0
    for k in range(act.shape[0]):
        g_out[k] = g[act[k]]
    flat = GL.ravel()
    for k in range(pos1.shape[0]):
        v = flat[pos1[k]]
        if pos2[k] >= 0:
            v += flat[pos2[k]]
        data_out[k] = v


@njit(cache=True)
def _marker_args(q, m, o, start, nq, U0T, W12, wptr):  # pragma: no cover - compiled
    """``(U0T, W12, q_b, eo)`` of marker ``m`` at local offset ``o`` for
    :func:`~flexmbs.kinematics.frame_kernel.label_hessian_sum` (``eo = -1``: ground or a
    point mass, whose frame has no second derivatives)."""
    s = start[m]
    if o < 0 or s < 0:
        return np.zeros(12), np.zeros((12, 0)), np.zeros(0), -1
    n = nq[m]
    return (U0T[m].copy(), W12[wptr[m] * 12:wptr[m + 1] * 12].reshape(12, n).copy(),
            q[s:s + 7 + n].copy(), o + 3)


@njit(cache=True)
def local_hessian(q, mu_st, mu_norm, C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb, kc,
                  TA, b_kind, b_lo, b_nr, b_m, b_off, b_nb, b_ptr, vals):  # pragma: no cover
    """``sum_i mu_i d2g_i/dx2`` of every active block on its local vector (without time),
    row-major into ``vals[b_ptr[b]:]``: a normalisation (``b_kind = 0``, ``b_lo``: its
    index) ``2 mu E``; a label-row block (``b_kind = 1``: rows ``b_lo .. + b_nr`` with
    weights ``mu_st``, markers ``b_m[b]`` at local offsets ``b_off[b]``, -1 ground) by
    :func:`~flexmbs.kinematics.frame_kernel.label_hessian_sum` with the frames of
    :func:`local_frames` placed on the block's vector (its numpy reference:
    :meth:`flexmbs.system.constraint_hessian.ConstraintHessian.sums`)."""
    C, D = local_frames(q, C0, D0, start, nq, U0T, W12, W_r, wptr)
    L = D0.shape[3]
    for b in range(b_kind.shape[0]):
        nb, p0 = b_nb[b], b_ptr[b]
        if b_kind[b] == 0:
            for i in range(nb * nb):
                vals[p0 + i] = 0.0
            for a in range(4):
                vals[p0 + a * nb + a] = 2.0 * mu_norm[b_lo[b]]
            continue
        lo, nr = b_lo[b], b_nr[b]
        Cb, Db = _pair_frames(C, D, b_m[b, 0], b_m[b, 1], b_off[b, 0], b_off[b, 1], nb + 1)
        uP, wP, qP, eP = _marker_args(q, b_m[b, 0], b_off[b, 0], start, nq, U0T, W12, wptr)
        uQ, wQ, qQ, eQ = _marker_args(q, b_m[b, 1], b_off[b, 1], start, nq, U0T, W12, wptr)
        hs = label_hessian_sum(Sa[lo:lo + nr], Sb[lo:lo + nr], kc[lo:lo + nr], Cb, Db,
                               mu_st[lo:lo + nr], TA, uP, wP, qP, eP, uQ, wQ, qQ, eQ)
        for i in range(nb):
            for j in range(nb):
                vals[p0 + i * nb + j] = hs[i, j]



def _zeros(spec: str) -> tuple:
    """Empty arguments of the types in ``spec``: ``f1`` a float64 vector, ``i2`` an int64
    matrix, ..., ``i`` an int64 scalar."""
    out = []
    for s in spec.split():
        if s == "i":
            out.append(0)
        else:
            out.append(np.zeros((0,) * int(s[1]), dtype=np.float64 if s[0] == "f" else np.int64))
    return tuple(out)


def warm() -> None:
    """Compile :func:`local_rows` and :func:`local_hessian` now with the one signature
    every call uses (run once by the first import of an installation,
    :mod:`flexmbs.kernel_cache`; they otherwise compile at the first system above the
    stacked rows' size): empty arrays, so no loop runs and no entry is read."""
    local_rows(*_zeros("f1 f3 f4 i1 i1 f2 f1 f1 i1 i1 i2 f2 f2 f2 i1 i1 i1 i2 i i1 i1 i1 "
                       "f1 f1 i1 i1 i1 f1 f1"))
    local_hessian(*_zeros("f1 f1 f1 f3 f4 i1 i1 f2 f1 f1 i1 f2 f2 f2 f4 i1 i1 i1 i2 i2 i1 "
                          "i1 f1"))
