"""Compiled (numba) helpers of the stacked rows (:mod:`flexmbs.system.stacked`).

* :func:`drive_rows`: the drive rows ``g_d = w(t) . p + f(t)`` and their gradients from
  the stacked label rows ``p``; its numpy reference is the drive loop of
  :meth:`flexmbs.system.stacked.StackedRows.dense`.
* :func:`stacked_mu`: the weights ``mu`` of
  :func:`flexmbs.kinematics.frame_kernel.stacked_hessian_sum` from the multipliers of the
  active rows; its reference is the block-by-block Hessian sum of
  :meth:`flexmbs.system.constraint_hessian.ConstraintHessian.sums` (the tests compare
  the two, ``tests/system/test_dense_rows.py``).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def drive_rows(g, G, p, dp, wd_row, wd_lo, wd_n, wd_w, wd_f):  # pragma: no cover
    """The drive rows ``g[row_d] = w(t) . p + f(t)`` with gradients ``G[row_d] += w . dp``
    over their label rows ``p[lo_d:lo_d + n_d]`` (weights ``w`` end to end)."""
    o = 0
    for d in range(wd_row.shape[0]):
        row = wd_row[d]
        g[row] = wd_f[d]
        for j in range(wd_n[d]):
            wj = wd_w[o + j]
            g[row] += wj * p[wd_lo[d] + j]
            for c in range(dp.shape[1]):
                G[row, c] += wj * dp[wd_lo[d] + j, c]
        o += wd_n[d]


@njit(cache=True)
def stacked_mu(lam, act, n_rows, n_label, src, dst, wd_row, wd_lo, wd_n, wd_w,
               norm_rows):  # pragma: no cover - compiled
    """The weights of :func:`~flexmbs.kinematics.frame_kernel.stacked_hessian_sum` from the
    multipliers ``lam`` of the active rows ``act``: ``mu`` on the label rows (a drive row's
    ``mu`` times its weights ``w_j`` on its label rows) and on the normalisations."""
    mu_st, mu_norm = np.empty(n_label), np.empty(norm_rows.shape[0])
    stacked_mu_into(lam, act, src, dst, wd_row, wd_lo, wd_n, wd_w, norm_rows,
                    np.empty(n_rows), mu_st, mu_norm)
    return mu_st, mu_norm


@njit(cache=True)
def stacked_mu_into(lam, act, src, dst, wd_row, wd_lo, wd_n, wd_w, norm_rows, mu, mu_st,
                    mu_norm):  # pragma: no cover - compiled
    """:func:`stacked_mu` written into ``mu_st`` (n_label,) and ``mu_norm``, ``mu``
    (n_rows,) its work array: no allocation (the compiled Newton matrix)."""
    for i in range(mu.shape[0]):        # the fills by loops (no slice assignment)
        mu[i] = 0.0
    for k in range(act.shape[0]):
        mu[act[k]] = lam[k]
    for i in range(mu_st.shape[0]):
        mu_st[i] = 0.0
    for i in range(src.shape[0]):
        mu_st[src[i]] = mu[dst[i]]
    o = 0
    for d in range(wd_row.shape[0]):
        for j in range(wd_n[d]):
            mu_st[wd_lo[d] + j] += mu[wd_row[d]] * wd_w[o + j]
        o += wd_n[d]
    for b in range(norm_rows.shape[0]):
        mu_norm[b] = mu[norm_rows[b]]
