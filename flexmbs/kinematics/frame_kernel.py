"""Compiled (numba) first-order marker frames (THEORY §2.1, §3.3).

A marker on a body with ``q_b = [r, e, q_e]`` has the inertial frame vectors

    V = [p; x; y; z] = U(q_e)^T A(e)^T + [r; 0; 0; 0],   U = [s + Phi q_e, R + (Psi q_e) x R]

(rows ``s, x, y, z``; ``U`` is affine in ``q_e``: ``U^T = U0^T + W12 q_e``), and the
derivatives written into ``D = dV/dx`` (4, 3, n) at the body offset ``off``:

    dV_u/de_a = Te[:, :, a] U_u        (Te[k, l, a] = dA_kl/de_a in closed form)
    dV_u/dq_e = A W_u                  (W = dU/dq_e, laid out as W_r[l, u j])

The same numbers as :func:`flexmbs.kinematics.frames._fill_flexible` and ``_fill_rigid``
at order 1 (a rigid marker is the case ``n_q = 0``).  Also here: the label rows of the
constraints (:func:`label_rows`), their Hessian sums (:func:`label_hessian_sum`) and both
for all markers of a system at once (:func:`stacked_rows`, :func:`stacked_hessian_sum`;
the same sums, their terms with a zero selection weight and the columns outside each
marker's body left out, :func:`_span`).
:func:`stacked_rows_into` is a kernel of its own, compiled once per process and linked
into its callers, the step residual's callback (:mod:`flexmbs.integrate.step_kernel`,
at every Newton iteration) and :func:`stacked_rows` (the Newton matrix's rows at a new
``q``): inlined (numba IR) into both, it was typed, lowered and optimised twice.  The
two kernels it calls are inlined into it (their calls with 9 and 8 array arguments cost
about as much as their sums on a small rigid system).
The numpy reference beside it is :mod:`flexmbs.kinematics.frame_reference` (same names,
same arguments; ``tests/bodies/test_compiled_kernels.py`` compares them).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from flexmbs.kinematics.rotation_kernel import (rotation_and_derivative,
                                                rotation_and_derivative_into, rotation_matrix)

#: ``rotation_matrix`` and ``rotation_and_derivative`` stay importable from here (they
#: lived here before :mod:`flexmbs.kinematics.rotation_kernel`)
__all__ = ["fill_frame", "label_hessian_sum", "label_rows", "rotation_and_derivative",
           "rotation_matrix", "stacked_hessian_sum", "stacked_rows"]

#: length of the work array of :func:`fill_frame_into`: ``U^T`` (12), ``A`` (9), ``Te`` (36)
FRAME_WORK = 57


@njit(cache=True)
def fill_frame(q_b, U0T, W12, W_r, off, V, D):  # pragma: no cover - compiled
    """Write ``V`` (4, 3) and the ``e`` and ``q_e`` columns of ``D`` (4, 3, n) of the
    module docstring (``D``'s ``dp/dr = E`` columns are the caller's template).
    ``U0T`` (12,) is ``[s, R]^T`` flattened ``[u l]``; ``W12`` (12, n_q), ``W_r``
    (3, 4 n_q); for a rigid marker ``n_q = 0``."""
    fill_frame_into(q_b, U0T, W12, W_r, off, V, D, np.empty(FRAME_WORK))


@njit(cache=True, inline="always")
def fill_frame_into(q_b, U0T, W12, W_r, off, V, D, wk):  # pragma: no cover - compiled
    """:func:`fill_frame` with its arrays ``U^T``, ``A``, ``Te`` in the work array ``wk``
    (:data:`FRAME_WORK`): no allocation."""
    nq = W12.shape[1]
    UT = wk[0:12]
    A = wk[12:21].reshape(3, 3)
    Te = wk[21:57].reshape(3, 3, 4)
    rotation_and_derivative_into(q_b[3], q_b[4], q_b[5], q_b[6], A, Te)
    for i in range(12):                                 # U^T = U0^T + W12 q_e, [u l]
        UT[i] = U0T[i]
    for i in range(12):
        s = 0.0
        for j in range(nq):
            s += W12[i, j] * q_b[7 + j]
        UT[i] += s
    for u in range(4):
        for k in range(3):
            V[u, k] = A[k, 0] * UT[3 * u] + A[k, 1] * UT[3 * u + 1] + A[k, 2] * UT[3 * u + 2]
            for a in range(4):
                D[u, k, off + 3 + a] = (Te[k, 0, a] * UT[3 * u] + Te[k, 1, a] * UT[3 * u + 1]
                                        + Te[k, 2, a] * UT[3 * u + 2])
    for k in range(3):
        V[0, k] += q_b[k]
    for k in range(3):                                  # A W_u: [u, k, j]
        for col in range(4 * nq):
            s = A[k, 0] * W_r[0, col] + A[k, 1] * W_r[1, col] + A[k, 2] * W_r[2, col]
            D[col // nq, k, off + 7 + col % nq] = s


@njit(cache=True)
def label_rows(Sa, Sb, kc, C, D):  # pragma: no cover - compiled
    """``g_r = alpha_r . beta_r`` and ``dg_r`` (:mod:`flexmbs.constraints.rows`):
    ``alpha = S_alpha C + k``, ``beta = S_beta C``, ``dg = alpha . dbeta + beta . dalpha``
    over the frame vectors ``C`` (V, 3) and ``D`` (V, 3, n): one joint's pair (V = 8) or
    all markers of a system (:mod:`flexmbs.system.stacked`, V = 4 M)."""
    R, nv, n = Sa.shape[0], Sa.shape[1], D.shape[2]
    g = np.zeros(R)
    dg = np.zeros((R, n))
    al = np.empty(3)
    be = np.empty(3)
    for r in range(R):
        for i in range(3):
            sa = kc[r, i]
            sb = 0.0
            for v in range(nv):
                sa += Sa[r, v] * C[v, i]
                sb += Sb[r, v] * C[v, i]
            al[i], be[i] = sa, sb
        g[r] = al[0] * be[0] + al[1] * be[1] + al[2] * be[2]
        for v in range(nv):
            wa, wb = Sa[r, v], Sb[r, v]
            if wa == 0.0 and wb == 0.0:
                continue
            for i in range(3):
                ca, cb = wa * be[i], wb * al[i]          # beta . dalpha + alpha . dbeta
                f = ca + cb
                if f != 0.0:
                    for j in range(n):
                        dg[r, j] += f * D[v, i, j]
    return g, dg


@njit(cache=True)
def _contract_marker(Wk, U0T, W12, q_b, eo, TA, out):  # pragma: no cover - compiled
    """Add ``sum_(u,i) Wk[u, i] d2V_u,i/dx2`` of one rigid (``n_q = 0``) or flexible
    marker to ``out``: the ``e, e`` block ``2 sum_(k,l) M[k, l] T_A[k, l]`` with
    ``M = Wk^T U^T`` (``d2V/de2 = 2 Q(U)``) and, on a flexible marker, the ``e, q_e``
    blocks ``sum_(k,l) Te[k, l, a] N[k, l, j]`` with ``N = Wk^T W`` (``d2V/de dq_e = Te W``)."""
    _contract_marker_into(Wk, U0T, W12, q_b, eo, TA, out, np.empty(FRAME_WORK))


@njit(cache=True)
def _contract_marker_into(Wk, U0T, W12, q_b, eo, TA, out, wk):  # pragma: no cover
    """:func:`_contract_marker` with ``U^T``, ``A``, ``Te`` in the work array ``wk``
    (:data:`FRAME_WORK`): no allocation."""
    nq = W12.shape[1]
    UT = wk[0:12]
    for i in range(12):
        UT[i] = U0T[i]
    for i in range(12):
        for j in range(nq):
            UT[i] += W12[i, j] * q_b[7 + j]
    for k in range(3):
        for l in range(3):
            Mkl = 0.0
            for u in range(4):
                Mkl += Wk[u, k] * UT[3 * u + l]
            if Mkl != 0.0:
                for a in range(4):
                    for b in range(4):
                        out[eo + a, eo + b] += 2.0 * Mkl * TA[k, l, a, b]
    if nq == 0:
        return
    Te = wk[21:57].reshape(3, 3, 4)
    rotation_and_derivative_into(q_b[3], q_b[4], q_b[5], q_b[6], wk[12:21].reshape(3, 3), Te)
    qo = eo + 4
    for k in range(3):
        for l in range(3):
            for j in range(nq):
                Nklj = 0.0
                for u in range(4):
                    Nklj += Wk[u, k] * W12[3 * u + l, j]
                if Nklj != 0.0:
                    for a in range(4):
                        v = Te[k, l, a] * Nklj
                        out[eo + a, qo + j] += v
                        out[qo + j, eo + a] += v


@njit(cache=True)
def _hessian_X_W(Sa, Sb, kc, C, D, mu):  # pragma: no cover - compiled
    """``(X + X^T, W)`` of :func:`label_hessian_sum`: ``X = sum_r mu_r dalpha_r^T dbeta_r``
    (n, n) and ``W = S_beta^T (mu alpha) + S_alpha^T (mu beta)`` (V, 3)."""
    R, nv, n = Sa.shape[0], Sa.shape[1], D.shape[2]
    out = np.zeros((n, n))
    Wm = np.zeros((nv, 3))
    dal = np.zeros((3, n))
    dbe = np.zeros((3, n))
    for r in range(R):
        if mu[r] == 0.0:
            continue
        for i in range(3):
            al = kc[r, i]
            be = 0.0
            for v in range(nv):
                al += Sa[r, v] * C[v, i]
                be += Sb[r, v] * C[v, i]
            for v in range(nv):
                Wm[v, i] += mu[r] * (Sb[r, v] * al + Sa[r, v] * be)
        for i in range(3):
            for j in range(n):
                dal[i, j] = 0.0
                dbe[i, j] = 0.0
        for v in range(nv):
            wa, wb = Sa[r, v], Sb[r, v]
            if wa != 0.0 or wb != 0.0:
                for i in range(3):
                    for j in range(n):
                        dal[i, j] += wa * D[v, i, j]
                        dbe[i, j] += wb * D[v, i, j]
        for i in range(3):
            for a in range(n):
                x = mu[r] * dal[i, a]
                if x != 0.0:
                    for b in range(n):
                        y = x * dbe[i, b]
                        out[a, b] += y
                        out[b, a] += y
    return out, Wm


@njit(cache=True, inline="always")
def _span(v, start, nq):  # pragma: no cover - compiled
    """``[lo, hi)``: the columns where the derivatives ``D[v]`` of stacked frame vector
    ``v`` (marker ``v // 4``, vector ``v % 4``) can be nonzero: its body's coordinates
    ``q[s:s + 7 + n_q]``, a point mass's origin ``q[o:o + 3]`` (``start = -(o + 2)``, the
    other vectors constant), none on the ground (``start = -1``)."""
    s = start[v // 4]
    if s >= 0:
        return s, s + 7 + nq[v // 4]
    if s <= -2 and v % 4 == 0:
        return -s - 2, -s + 1
    return 0, 0


@njit(cache=True, inline="always")
def _stacked_label_rows(Sa, Sb, kc, C, D, start, nq, g, dg):  # pragma: no cover - compiled
    """:func:`label_rows` of the stacked frames (:func:`stacked_rows`) written into ``g``
    (R,), ``dg`` (R, n): the same sums in the same order, their terms with a zero weight
    ``S`` and the columns outside each vector's :func:`_span` (where ``D`` is zero) left
    out."""
    R, nv, n = Sa.shape[0], Sa.shape[1], D.shape[2]
    for r in range(R):                  # the fills by loops (no slice assignment)
        g[r] = 0.0
        for j in range(n):
            dg[r, j] = 0.0
    for r in range(R):
        a0, a1, a2 = kc[r, 0], kc[r, 1], kc[r, 2]
        b0, b1, b2 = 0.0, 0.0, 0.0
        for v in range(nv):
            wa, wb = Sa[r, v], Sb[r, v]
            if wa != 0.0:
                a0 += wa * C[v, 0]
                a1 += wa * C[v, 1]
                a2 += wa * C[v, 2]
            if wb != 0.0:
                b0 += wb * C[v, 0]
                b1 += wb * C[v, 1]
                b2 += wb * C[v, 2]
        g[r] = a0 * b0 + a1 * b1 + a2 * b2
        for v in range(nv):
            wa, wb = Sa[r, v], Sb[r, v]
            if wa == 0.0 and wb == 0.0:
                continue
            lo, hi = _span(v, start, nq)
            for i in range(3):
                f = wa * (b0 if i == 0 else b1 if i == 1 else b2) + \
                    wb * (a0 if i == 0 else a1 if i == 1 else a2)
                if f != 0.0:
                    for j in range(lo, hi):
                        dg[r, j] += f * D[v, i, j]


@njit(cache=True)
def _stacked_X_W(Sa, Sb, kc, C, D, mu, start, nq, out, Wm, dal, dbe):  # pragma: no cover
    """:func:`_hessian_X_W` of the stacked frames into ``out`` (n, n) and ``Wm`` (nv, 3),
    ``dal``, ``dbe`` (3, n) its work arrays: the same sums in the same order, the
    terms with a zero weight and the columns outside the :func:`_span` of the row's
    vectors (where ``dalpha``, ``dbeta`` are zero) left out."""
    R, nv, n = Sa.shape[0], Sa.shape[1], D.shape[2]
    for a in range(n):                  # the fills by loops (no slice assignment)
        for b in range(n):
            out[a, b] = 0.0
    for v in range(nv):
        for i in range(3):
            Wm[v, i] = 0.0
    for i in range(3):
        for j in range(n):
            dal[i, j] = 0.0
            dbe[i, j] = 0.0
    for r in range(R):
        if mu[r] == 0.0:
            continue
        for i in range(3):
            al = kc[r, i]
            be = 0.0
            for v in range(nv):
                if Sa[r, v] != 0.0:
                    al += Sa[r, v] * C[v, i]
                if Sb[r, v] != 0.0:
                    be += Sb[r, v] * C[v, i]
            for v in range(nv):
                if Sb[r, v] != 0.0 or Sa[r, v] != 0.0:
                    Wm[v, i] += mu[r] * (Sb[r, v] * al + Sa[r, v] * be)
        a_lo, a_hi, b_lo, b_hi = n, 0, n, 0
        for v in range(nv):
            wa, wb = Sa[r, v], Sb[r, v]
            if wa != 0.0 or wb != 0.0:
                lo, hi = _span(v, start, nq)
                if hi > lo:
                    if wa != 0.0:
                        a_lo, a_hi = min(a_lo, lo), max(a_hi, hi)
                    if wb != 0.0:
                        b_lo, b_hi = min(b_lo, lo), max(b_hi, hi)
        for i in range(3):
            for j in range(a_lo, a_hi):
                dal[i, j] = 0.0
            for j in range(b_lo, b_hi):
                dbe[i, j] = 0.0
        for v in range(nv):
            wa, wb = Sa[r, v], Sb[r, v]
            if wa != 0.0 or wb != 0.0:
                lo, hi = _span(v, start, nq)
                for i in range(3):
                    for j in range(lo, hi):
                        if wa != 0.0:
                            dal[i, j] += wa * D[v, i, j]
                        if wb != 0.0:
                            dbe[i, j] += wb * D[v, i, j]
        for i in range(3):
            for a in range(a_lo, a_hi):
                x = mu[r] * dal[i, a]
                if x != 0.0:
                    for b in range(b_lo, b_hi):
                        y = x * dbe[i, b]
                        out[a, b] += y
                        out[b, a] += y


@njit(cache=True)
def label_hessian_sum(Sa, Sb, kc, C, D, mu, TA, U0T_P, W12_P, q_P, eo_P, U0T_Q, W12_Q,
                      q_Q, eo_Q):  # pragma: no cover - compiled
    """``sum_r mu_r d2g_r/dx2`` (n, n) of label rows (:meth:`flexmbs.constraints.rows.
    LabelRows.hessian_sum`): ``W = S_beta^T (mu alpha) + S_alpha^T (mu beta)`` contracted
    with the frame Hessians of the markers P and Q (``eo < 0``: ground, no Hessian), plus
    ``X + X^T`` with ``X = sum_r mu_r dalpha_r^T dbeta_r``."""
    out, Wm = _hessian_X_W(Sa, Sb, kc, C, D, mu)
    if eo_P >= 0:
        _contract_marker(Wm[0:4], U0T_P, W12_P, q_P, eo_P, TA, out)
    if eo_Q >= 0:
        _contract_marker(Wm[4:8], U0T_Q, W12_Q, q_Q, eo_Q, TA, out)
    return out


@njit(cache=True)
def stacked_hessian_sum(q, C, D, start, nq, U0T, W12, wptr, Sa, Sb, kc, mu, TA, norm_idx,
                        mu_norm):  # pragma: no cover - compiled
    """``sum_i mu_i d2g_i/dq2`` (N, N) over all rows of a system at once
    (:mod:`flexmbs.system.stacked`): :func:`label_hessian_sum` with the frames ``C``
    (M, 4, 3), ``D`` (M, 4, 3, N) of all markers (``start < 0``: ground, or a point mass,
    whose frame is affine in ``q``: no second derivatives), and
    ``2 mu E`` on the ``e`` block of each normalisation ``e.e - 1``."""
    M, N = C.shape[0], q.shape[0]
    out = np.empty((N, N))
    stacked_hessian_sum_into(q, C, D, start, nq, U0T, W12, wptr, Sa, Sb, kc, mu, TA, norm_idx,
                             mu_norm, out, np.empty((4 * M, 3)), np.empty((3, N)),
                             np.empty((3, N)), np.empty(FRAME_WORK))
    return out


@njit(cache=True)
def stacked_hessian_sum_into(q, C, D, start, nq, U0T, W12, wptr, Sa, Sb, kc, mu, TA, norm_idx,
                             mu_norm, out, Wm, dal, dbe, wk):  # pragma: no cover - compiled
    """:func:`stacked_hessian_sum` written into ``out`` (N, N), with the work arrays
    ``Wm`` (4 M, 3), ``dal``, ``dbe`` (3, N) and ``wk`` (:data:`FRAME_WORK`): no
    allocation (the compiled Newton matrix, :mod:`flexmbs.integrate.step_kernel`)."""
    M, N = C.shape[0], q.shape[0]
    _stacked_X_W(Sa, Sb, kc, C.reshape(4 * M, 3), D.reshape(4 * M, 3, N), mu, start, nq, out,
                 Wm, dal, dbe)
    for m in range(M):
        s = start[m]
        if s >= 0:
            n = nq[m]
            _contract_marker_into(Wm[4 * m:4 * m + 4], U0T[m],
                                  W12[wptr[m] * 12:wptr[m + 1] * 12].reshape(12, n),
                                  q[s:s + 7 + n], s + 3, TA, out, wk)
    for b in range(norm_idx.shape[0]):
        for a in range(4):
            out[norm_idx[b, a], norm_idx[b, a]] += 2.0 * mu_norm[b]


@njit(cache=True)
def stacked_rows(q, C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb, kc, src, dst, norm_rows,
                 norm_idx, n_rows):  # pragma: no cover - compiled
    """All first-order rows of a system at once (:meth:`flexmbs.system.stacked.
    StackedRows.dense`): the frames ``C`` (M, 4, 3), ``D`` (M, 4, 3, N) of every marker
    (:func:`fill_frame`; ground markers, ``start = -1``, keep the template; markers on a
    point mass with coordinates at ``o``, ``start = -(o + 2)``, move the template's origin
    by ``q[o:o + 3]``, axes and ``D`` constant), the label rows
    :func:`label_rows` written to the system rows ``dst`` (from ``src``), and the
    normalisations ``e.e - 1`` with gradient ``2 e``.  Returns ``(g, G, C, D, p, dp)``
    with ``g`` (n_rows,) and ``G`` (n_rows, N) (rows not written are zero: the caller's,
    drives) and the label rows ``p``, ``dp`` themselves."""
    N, R = q.shape[0], Sa.shape[0]
    g, G, C, D = np.empty(n_rows), np.empty((n_rows, N)), np.empty(C0.shape), np.empty(D0.shape)
    p, dp = np.empty(R), np.empty((R, N))
    stacked_rows_into(q, C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb, kc, src, dst,
                      norm_rows, norm_idx, g, G, C, D, p, dp, np.empty(FRAME_WORK))
    return g, G, C, D, p, dp


@njit(cache=True)
def stacked_rows_into(q, C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb, kc, src, dst,
                      norm_rows, norm_idx, g, G, C, D, p, dp, wk):  # pragma: no cover
    """:func:`stacked_rows` written into ``g, G, C, D, p, dp`` (their shapes as returned
    there), with ``wk`` the work array of :func:`fill_frame_into`: no allocation (the
    step kernels' residual, :mod:`flexmbs.integrate.step_kernel`)."""
    M, N = C0.shape[0], q.shape[0]
    for m in range(M):               # C = C0, D = D0 by loops (no broadcast shape check)
        for i in range(4):
            for k in range(3):
                C[m, i, k] = C0[m, i, k]
        for i in range(4):
            for k in range(3):
                for j in range(D0.shape[3]):
                    D[m, i, k, j] = D0[m, i, k, j]
    for m in range(M):
        s = start[m]
        if s < 0:
            if s <= -2:                  # a point mass at q[-s - 2:]: the origin moves
                for k in range(3):
                    C[m, 0, k] += q[-s - 2 + k]
            continue
        n = nq[m]
        fill_frame_into(q[s:s + 7 + n], U0T[m],
                        W12[wptr[m] * 12:wptr[m + 1] * 12].reshape(12, n),
                        W_r[wptr[m] * 12:wptr[m + 1] * 12].reshape(3, 4 * n), s, C[m], D[m],
                        wk)
    _stacked_label_rows(Sa, Sb, kc, C.reshape(4 * M, 3), D.reshape(4 * M, 3, N), start, nq,
                        p, dp)
    for r in range(g.shape[0]):      # the fills by loops (no slice assignment)
        g[r] = 0.0
        for j in range(G.shape[1]):
            G[r, j] = 0.0
    for i in range(src.shape[0]):    # the rows by loops (no broadcast shape check)
        g[dst[i]] = p[src[i]]
        for j in range(N):
            G[dst[i], j] = dp[src[i], j]
    for b in range(norm_rows.shape[0]):
        r = norm_rows[b]
        s = -1.0
        for a in range(4):
            e = q[norm_idx[b, a]]
            s += e * e
            G[r, norm_idx[b, a]] = 2.0 * e
        g[r] = s
