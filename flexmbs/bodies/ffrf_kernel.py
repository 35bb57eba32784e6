"""Compiled (numba) residual and tangent of the floating-frame body (THEORY §2.7, §2.8).

The equations of :mod:`flexmbs.bodies.flexible` (see its docstring), written as loops
over the invariants laid out by ``FlexibleBody.kernel_args`` (a rigid body is the case
``n_q = 0``) so that one call replaces some fifty small numpy calls:

    residual = [ m (rdd - g) + A f_t;   2 L^T f_r;   f_e ],

    f_t = m (alpha' x c + omega' x (omega' x c)) + C_t^T qdd_e + 2 omega' x (C_t^T qd_e)
    f_r = m c x (A^T (rdd - g)) + omega' x (I omega') + I alpha' + C_r^T qdd_e + G_r omega'
    f_e = C_r alpha' + [omega'^T O_e^k omega']_k + C_t A^T (rdd - g) + G_e omega'
          + M_e qdd_e + h_e(q_e) + D_e qd_e,

with the invariants affine (``c``, ``C_r``, ``O_e``, ``G_r``, ``G_e``) or quadratic
(``I``) in ``q_e`` and ``h_e = K_e q_e + K2:q q + K3:q q q`` (stiffening) or ``K_e q_e``,
``K3`` in the pair form of :mod:`flexmbs.reduction.stiffening` (the pair Gram matrix
``H_p``, n_p x n_p, ``n_p = n_q (n_q + 1) / 2``).
``lin = lin0 + q_e lin_q`` holds ``[m c, I_0 + I_1 q, -dG_r/dqd / 2, [C_r | O_e]]``
(the coefficients of :mod:`flexmbs.reduction.invariants`).  The Euler-parameter algebra
comes from :mod:`flexmbs.kinematics.rotation_kernel`.  The numpy reference beside it is
:mod:`flexmbs.bodies.ffrf_reference` (same names, same arguments;
``tests/bodies/test_compiled_kernels.py`` compares them).
"""
from __future__ import annotations

import numpy as np
from numba import carray, njit, types

from flexmbs.bodies.rigid_kernel import (
    RIGID_WORK, L_to, centripetal_derivative_into, mm_into, mm_to, rigid_residual, rigid_tangent,
    tilde_to,
)
from flexmbs.compiled import f1, f8_pointer, i1, i2, i8_pointer, native
from flexmbs.kinematics.rotation_kernel import (
    rotation_and_derivative_into, rotation_matrix, two_L,
)


@njit(cache=True)
def _cross_to(a, b, v):  # pragma: no cover - compiled
    """``v = a x b`` in place (the sums of :func:`~flexmbs.kinematics.rotation_kernel.cross`)."""
    v[0] = a[1] * b[2] - a[2] * b[1]
    v[1] = a[2] * b[0] - a[0] * b[2]
    v[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def _state(q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd):  # pragma: no cover
    """The body-frame quantities of the module docstring at one state (compiled)."""
    n = q.shape[0] - 7
    e0, x, y, z = q[3], q[4], q[5], q[6]
    A = rotation_matrix(e0, x, y, z)
    w = np.empty(3)
    for i in range(3):
        w[i] = qdd[i] - g[i]
    d = np.empty(3)                                    # A^T (rdd - g)
    for j in range(3):
        d[j] = A[0, j] * w[0] + A[1, j] * w[1] + A[2, j] * w[2]
    om = two_L(e0, x, y, z, qd[3], qd[4], qd[5], qd[6])
    al = two_L(e0, x, y, z, qdd[3], qdd[4], qdd[5], qdd[6])

    lin = _vm(q[7:], lin_q)                            # lin0 + q_e lin_q
    for i in range(lin.shape[0]):
        lin[i] = lin0[i] + lin[i]
    V = np.empty((13, 3))       # the 3-vectors below, one allocation (the kernel's cost
    c = V[0]                    # is mostly the count of its allocations)
    for i in range(3):
        c[i] = lin[i] / m
    I9 = np.empty(9)                                   # I(q_e) = lin[3:12] + q I2 q
    for ab in range(9):
        I9[ab] = lin[3 + ab]
    for k in range(n):
        qk = q[7 + k]
        if qk == 0.0:
            continue
        for l in range(n):
            s = qk * q[7 + l]
            for ab in range(9):
                I9[ab] += s * I2[k, l * 9 + ab]
    o = 12 + 9 * n                                     # [C_r | O_e] (n, 12) from here
    Gr = np.zeros(9)                                   # G_r = -2 sum_m qd_m Gm[m]
    for mm in range(n):
        s = -2.0 * qd[7 + mm]
        for ij in range(9):
            Gr[ij] += s * lin[12 + 9 * mm + ij]
    lqd = _vm(qd[7:], lin_qd)                          # [C_t^T qd, C_r1 qd, D qd]
    lqdd = _vm(qdd[7:], lin_qdd)                       # [C_t^T qdd, M_e qdd]

    Iw, Ia, Go = V[1], V[2], V[3]
    for i in range(3):
        Iw[i] = I9[3 * i] * om[0] + I9[3 * i + 1] * om[1] + I9[3 * i + 2] * om[2]
        Ia[i] = I9[3 * i] * al[0] + I9[3 * i + 1] * al[1] + I9[3 * i + 2] * al[2]
        Go[i] = Gr[3 * i] * om[0] + Gr[3 * i + 1] * om[1] + Gr[3 * i + 2] * om[2]
    vt = lqd[0:3]
    occ, a_, b_, v_ = V[4], V[5], V[6], V[7]
    _cross_to(om, c, occ)
    _cross_to(al, c, a_)
    _cross_to(om, occ, b_)
    _cross_to(om, vt, v_)
    f_t = V[8]
    for i in range(3):
        f_t[i] = m * (a_[i] + b_[i]) + lqdd[i] + 2.0 * v_[i]
    x_, y_ = V[9], V[10]
    _cross_to(c, d, x_)
    _cross_to(om, Iw, y_)
    Crq = V[11]
    for j in range(3):
        Crq[j] = 0.0
    for k in range(n):
        for j in range(3):
            Crq[j] += qdd[7 + k] * lin[o + 12 * k + j]
    f_r = V[12]
    for i in range(3):
        f_r[i] = m * x_[i] + y_[i] + Ia[i] + Crq[i] + Go[i]
    return A, w, d, om, al, lin, c, I9, Gr, lqd, lqdd, Iw, f_t, f_r


@njit(cache=True)
def ffrf_residual(q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd, C_t, K_e, K2, H_p,
                  stiff):  # pragma: no cover - compiled; covered through its callers
    """``[m (rdd - g) + A f_t; 2 L^T f_r; f_e]`` (module docstring), shape (7 + n_q,)."""
    n = q.shape[0] - 7
    e0, x, y, z = q[3], q[4], q[5], q[6]
    A, w, d, om, al, lin, c, I9, Gr, lqd, lqdd, Iw, f_t, f_r = _state(
        q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd)
    o = 12 + 9 * n
    out = np.empty(7 + n)
    for i in range(3):
        out[i] = m * w[i] + A[i, 0] * f_t[0] + A[i, 1] * f_t[1] + A[i, 2] * f_t[2]
    r1, r2, r3 = f_r[0], f_r[1], f_r[2]
    out[3] = 2.0 * (-x * r1 - y * r2 - z * r3)         # 2 L(e)^T f_r
    out[4] = 2.0 * (e0 * r1 - z * r2 + y * r3)
    out[5] = 2.0 * (z * r1 + e0 * r2 - x * r3)
    out[6] = 2.0 * (-y * r1 + x * r2 + e0 * r3)

    zeta = np.empty(12)                                # [alpha'; vec(omega' omega'^T)]
    for i in range(3):
        zeta[i] = al[i]
    for i in range(3):
        for j in range(3):
            zeta[3 + 3 * i + j] = om[i] * om[j]
    for k in range(n):
        s = 0.0
        for j in range(12):
            s += lin[o + 12 * k + j] * zeta[j]
        for j in range(3):
            s += C_t[k, j] * d[j] + 2.0 * lqd[3 + 3 * k + j] * om[j]
        s += lqdd[3 + k] + lqd[3 + 3 * n + k]
        for j in range(n):
            s += K_e[k, j] * q[7 + j]
        out[7 + k] = s
    if stiff:
        _add_stiffening(q[7:], K2, H_p, out[7:])
    return out


@njit(cache=True, inline="always")
def _pair_start(a, n):  # pragma: no cover - compiled
    """Index of the pair ``(a, a)``: pair ``(a, b)``, ``a <= b``, is ``_pair_start(a) + b - a``."""
    return a * n - (a * (a - 1)) // 2


@njit(cache=True, fastmath={"reassoc", "contract"})
def _pair_product(qe, H_p):  # pragma: no cover - compiled
    """``v = H_p pi(q)``, ``pi(q)_(a,b) = q_a q_b`` (twice for ``a < b``), one dot product
    per row: a vectorised stream through all of ``H_p`` (reading only its upper triangle
    and scattering ``v_r += H_p[p, r] pi_p`` measured 2.5x slower at n_q = 64: the scatter
    is not vectorised)."""
    n = qe.shape[0]
    n_p = H_p.shape[0]
    pi = np.empty(n_p)
    for a in range(n):
        p0 = _pair_start(a, n)
        pi[p0] = qe[a] * qe[a]
        for b in range(a + 1, n):
            pi[p0 + b - a] = 2.0 * qe[a] * qe[b]
    v = np.empty(n_p)
    for p in range(n_p):
        s = 0.0
        for r in range(n_p):
            s += H_p[p, r] * pi[r]
        v[p] = s
    return v


@njit(cache=True, fastmath={"reassoc", "contract"})
def _add_stiffening(qe, K2, H_p, out):  # pragma: no cover - compiled
    """``out += K2:q q + K3:q q q`` with ``K2`` as (k a, b) and ``(K3:q q q)_k = 1/2 sum_a
    q_a v_(a,k)``, ``v = H_p pi(q)`` (:func:`_pair_product`); the sums may be reassociated
    (vectorised), which changes only the round-off."""
    n = qe.shape[0]
    v = _pair_product(qe, H_p)
    for k in range(n):
        s = 0.0
        for a in range(n):
            lo, hi = min(a, k), max(a, k)
            t2 = 0.5 * v[_pair_start(lo, n) + hi - lo]
            for b in range(n):
                t2 += K2[k * n + a, b] * qe[b]
            s += t2 * qe[a]
        out[k] += s


@njit(cache=True, fastmath={"reassoc", "contract"})
def _stiffening_tangent(qe, H_p):  # pragma: no cover - compiled
    """``d(K3:q q q)_k/dq_j = 1/2 v_(j,k) + sum_a q_a Z[(a,k), j]`` with ``Z[p, j] =
    sum_c H_p[p, (j,c)] q_c`` (n_q x n_q)."""
    n = qe.shape[0]
    n_p = H_p.shape[0]
    v = _pair_product(qe, H_p)
    Z = np.zeros((n_p, n))
    for p in range(n_p):
        for b in range(n):
            r0 = _pair_start(b, n) - b
            qb = qe[b]
            s = H_p[p, r0 + b] * qe[b]                 # the pair (b, b)
            for c in range(b + 1, n):
                h = H_p[p, r0 + c]
                s += h * qe[c]
                Z[p, c] += h * qb
            Z[p, b] += s
    T = np.empty((n, n))
    for k in range(n):
        for j in range(n):
            lo, hi = min(j, k), max(j, k)
            T[k, j] = 0.5 * v[_pair_start(lo, n) + hi - lo]
        for a in range(n):
            lo, hi = min(a, k), max(a, k)
            p = _pair_start(lo, n) + hi - lo
            qa = qe[a]
            for j in range(n):
                T[k, j] += qa * Z[p, j]
    return T


@njit(cache=True)
def _put(C, r0, c0, B):  # pragma: no cover - compiled
    """``C[r0:r0 + a, c0:c0 + b] = B`` (``B`` (a, b)) by loops: one signature, and no
    broadcasting (whose shape check compiles numba's error formatting)."""
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            C[r0 + i, c0 + j] = B[i, j]


@njit(cache=True)
def _transposed(B):  # pragma: no cover - compiled
    """``B^T`` as a new C-contiguous array, by loops (a transpose view would add a
    type signature to every kernel it is passed to)."""
    T = np.empty((B.shape[1], B.shape[0]))
    for i in range(B.shape[1]):
        for j in range(B.shape[0]):
            T[i, j] = B[j, i]
    return T


@njit(cache=True)
def _mv(A, x):  # pragma: no cover - compiled
    """``A x`` by loops."""
    y = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        s = 0.0
        for j in range(A.shape[1]):
            s += A[i, j] * x[j]
        y[i] = s
    return y


@njit(cache=True)
def _vm(x, A):  # pragma: no cover - compiled
    """``x A`` by loops."""
    y = np.zeros(A.shape[1])
    for i in range(A.shape[0]):
        a = x[i]
        if a != 0.0:
            for j in range(A.shape[1]):
                y[j] += a * A[i, j]
    return y


@njit(cache=True)
def ffrf_tangent(q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd, C_t, M_e, D_e, I1,
                 I2s_l, G2_m, C_r1_kl, C_r1_k, O_e1_kl, K_e, K2s, H_p,
                 stiff):  # pragma: no cover - compiled; covered through its callers
    """``(K, C, M)``: the exact derivatives of :func:`ffrf_residual` by ``q``, ``qd``,
    ``qdd`` (the chain rule of :meth:`flexmbs.bodies.flexible.FlexibleBody.tangent`:
    partial derivatives of ``[f_t; f_r; f_e]`` by ``(A^T (rdd - g), alpha', omega', qd_e,
    q_e, qdd_e)``, chained with ``d(A^T w)/de``, ``-2 L(edd)``, ``-2 L(ed)`` and the
    projection ``blockdiag(A, 2 L^T, E)``)."""
    n = q.shape[0] - 7
    e0, x, y, z = q[3], q[4], q[5], q[6]
    A, w, d, om, al, lin, c, I9, Gr9, lqd, lqdd, Iw, f_t, f_r = _state(
        q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd)
    S3 = np.empty((10, 3, 3))          # the 3 x 3 matrices below, one allocation
    ct, ot, Tq, oI, TI, S, oo, td, A_e = S3[0], S3[1], S3[2], S3[3], S3[4], S3[5], S3[6], \
        S3[7], S3[8]
    Te = np.empty((3, 3, 4))
    rotation_and_derivative_into(e0, x, y, z, A_e, Te)
    qe, qed, qedd = q[7:], qd[7:], qdd[7:]
    Iq = I9.reshape(3, 3)
    Gr = Gr9.reshape(3, 3)
    o = 12 + 9 * n
    N = 6 + n
    tilde_to(c[0], c[1], c[2], 1.0, ct)  # tilde(c), tilde(omega') (1.0 x: the same bits)
    tilde_to(om[0], om[1], om[2], 1.0, ot)
    C_tT = _transposed(C_t)
    # partial derivatives of f by (d, alpha', omega', qd_e, q_e) and by qdd_e
    f3 = np.zeros((3, N, 3))                          # (few allocations: the kernel's
    fn = np.zeros((3, N, n))                          # cost is mostly their count)
    f_d, f_al, f_om = f3[0], f3[1], f3[2]
    f_qd, f_q, f_qdd = fn[0], fn[1], fn[2]
    for i in range(3):
        for j in range(3):
            f_d[3 + i, j] = m * ct[i, j]
            f_al[i, j] = -m * ct[i, j]
    z0, i3, i6 = np.int64(0), np.int64(3), np.int64(6)   # (int64 offsets: one signature)
    _put(f_d, i6, z0, C_t)
    _put(f_al, i3, z0, Iq)
    centripetal_derivative_into(m, om, c, f_om)       # d(w x (w x c))/dw
    tilde_to(lqd[0], lqd[1], lqd[2], 1.0, Tq)
    for i in range(3):
        for j in range(3):
            f_om[i, j] -= 2.0 * Tq[i, j]
    mm_into(ot, Iq, oI)
    tilde_to(Iw[0], Iw[1], Iw[2], 1.0, TI)
    for i in range(3):
        for j in range(3):
            f_om[3 + i, j] = oI[i, j] - TI[i, j] + Gr[i, j]
    for k in range(n):
        for j in range(3):
            f_al[6 + k, j] = lin[o + 12 * k + j]          # C_r
            s = 2.0 * lqd[3 + 3 * k + j]                  # G_e
            for i in range(3):
                s += (lin[o + 12 * k + 3 + 3 * j + i] + lin[o + 12 * k + 3 + 3 * i + j]) * om[i]
            f_om[6 + k, j] = s
    mm_to(ot, C_tT, z0, f_qd, z0, z0)
    for i in range(3):
        for j in range(n):
            f_qd[i, j] *= 2.0
    for mm in range(n):
        for i in range(3):
            s = 0.0
            for j in range(3):
                s += lin[12 + 9 * mm + 3 * i + j] * om[j]
            f_qd[3 + i, mm] = -2.0 * s
    Cw = _mv(C_r1_kl, om)                                 # (k l)
    for k in range(n):
        for l in range(n):
            f_qd[6 + k, l] = 2.0 * Cw[k * n + l] + D_e[k, l]
    tilde_to(al[0], al[1], al[2], 1.0, S)
    mm_into(ot, ot, oo)
    for i in range(3):
        for j in range(3):
            S[i, j] += oo[i, j]
    mm_to(S, C_tT, z0, f_q, z0, z0)
    dI = _vm(qe, I2s_l).reshape(n, 9)                     # dI/dq_j (j, ab)
    for j in range(n):
        for ab in range(9):
            dI[j, ab] = I1[j, ab] + dI[j, ab]
    G2qd = _vm(qed, G2_m)                                  # (l, ij)
    Cq = _vm(qedd, C_r1_k)                                 # (l, j)
    tilde_to(d[0], d[1], d[2], 1.0, td)
    tdC = np.empty((3, n))
    mm_into(td, C_tT, tdC)
    for i in range(3):
        for j in range(n):
            tdC[i, j] = -tdC[i, j]
    dIal, dIom, G2o = S3[9, 0], S3[9, 1], S3[9, 2]
    for j in range(n):
        for a in range(3):
            sa, so, sg = 0.0, 0.0, 0.0
            for b in range(3):
                sa += dI[j, 3 * a + b] * al[b]
                so += dI[j, 3 * a + b] * om[b]
                sg += G2qd[9 * j + 3 * a + b] * om[b]
            dIal[a], dIom[a], G2o[a] = sa, so, sg
        for i in range(3):
            f_q[3 + i, j] = (tdC[i, j] + dIal[i] + ot[i, 0] * dIom[0] + ot[i, 1] * dIom[1]
                             + ot[i, 2] * dIom[2] + Cq[3 * j + i] - 2.0 * G2o[i])
    ww = np.empty(9)
    for i in range(3):
        for j in range(3):
            ww[3 * i + j] = om[i] * om[j]
    Ca = _mv(C_r1_kl, al)
    Ow = _mv(O_e1_kl, ww)
    for k in range(n):
        for l in range(n):
            f_q[6 + k, l] = Ca[k * n + l] + Ow[k * n + l] + K_e[k, l]
    if stiff:
        T2 = _mv(K2s, qe).reshape(n, n)
        T3 = _stiffening_tangent(qe, H_p)
        for k in range(n):
            for l in range(n):
                f_q[6 + k, l] += T2[k, l] + T3[k, l]
    _put(f_qdd, z0, z0, C_tT)
    for k in range(n):
        for j in range(3):
            f_qdd[3 + j, k] = lin[o + 12 * k + j]         # C_r^T
    _put(f_qdd, i6, z0, M_e)
    # derivatives of the body-frame variables by e
    L4 = np.empty((4, 3, 4))
    L2, dd_de, dal_de, dom_de = L4[0], L4[1], L4[2], L4[3]
    L_to(e0, x, y, z, 2.0, L2)
    for j in range(3):                                    # d(A^T w)/de
        for a in range(4):
            dd_de[j, a] = Te[0, j, a] * w[0] + Te[1, j, a] * w[1] + Te[2, j, a] * w[2]
    L_to(qdd[3], qdd[4], qdd[5], qdd[6], -2.0, dal_de)
    L_to(qd[3], qd[4], qd[5], qd[6], -2.0, dom_de)
    # one projection blockdiag(A, 2 L^T, E) of all column blocks
    nc = 7 + n
    X = np.empty((N, 3 + 4 + n + 4 + n + 4 + n))     # (the products written in place)
    At = _transposed(A)
    mm_to(f_d, At, z0, X, z0, z0)
    mm_to(f_al, L2, z0, X, z0, i3)
    _put(X, z0, np.int64(7), f_qdd)
    o1 = 7 + n
    mm_to(f_om, L2, z0, X, z0, o1)
    _put(X, z0, o1 + 4, f_qd)
    o2 = o1 + 4 + n
    P = np.empty((3, N, 4))
    mm_into(f_d, dd_de, P[0])
    mm_into(f_al, dal_de, P[1])
    mm_into(f_om, dom_de, P[2])
    for i in range(N):
        for a in range(4):
            X[i, o2 + a] = P[0, i, a] + P[1, i, a] + P[2, i, a]
    _put(X, z0, o2 + 4, f_q)
    Y = np.empty((nc, X.shape[1]))
    L2t = _transposed(L2)
    mm_to(A, X, z0, Y, z0, z0)
    mm_to(L2t, X, i3, Y, i3, z0)
    for i in range(6, N):
        for j in range(X.shape[1]):
            Y[i + 1, j] = X[i, j]
    MCK = np.zeros((3, nc, nc))
    M, Cm, K = MCK[0], MCK[1], MCK[2]
    for i in range(nc):                                   # the column blocks of Y
        for j in range(7 + n):                            # [M | C_e | K_e] ...
            M[i, j] = Y[i, j]
        for j in range(4 + n):
            Cm[i, 3 + j] = Y[i, o1 + j]
            K[i, 3 + j] = Y[i, o2 + j]
    for i in range(3):
        M[i, i] += m
    for k in range(3):                                    # d(A f_t)/de at fixed f_t
        for a in range(4):
            K[k, 3 + a] += Te[k, 0, a] * f_t[0] + Te[k, 1, a] * f_t[1] + Te[k, 2, a] * f_t[2]
    a_, b_, c_ = f_r[0], f_r[1], f_r[2]                  # 2 R_L(f_r), L^T v = R_L(v) e
    R = ((0.0, -a_, -b_, -c_), (a_, 0.0, c_, -b_), (b_, -c_, 0.0, a_), (c_, b_, -a_, 0.0))
    for i in range(4):
        for j in range(4):
            K[3 + i, 3 + j] += 2.0 * R[i][j]
    return K, Cm, M


@njit(cache=True)
def bodies_residual(q, qd, qdd, g, off, nq, m, stiff, ptr, lin0, lin_q, I2, lin_qd, lin_qdd,
                    C_t, K_e, K2, H_p):  # pragma: no cover - compiled
    """The residuals of all floating-frame bodies of a system in one call: body ``b`` has
    coordinates ``q[off[b]:off[b] + 7 + nq[b]]`` (``nq[b] = -4``: a point mass, ``m (rdd -
    g)`` on its 3 coordinates) and its constant arrays of
    :func:`ffrf_residual` flattened in ``lin0 ... H_p`` from ``ptr[b, k]`` to
    ``ptr[b + 1, k]`` (``k`` the array, in argument order); a rigid body (``nq[b] = 0``)
    by :func:`~flexmbs.bodies.rigid_kernel.rigid_residual`."""
    out = np.empty(q.shape[0])
    bodies_residual_into(out, q, qd, qdd, g, off, nq, m, stiff, ptr, lin0, lin_q, I2, lin_qd,
                         lin_qdd, C_t, K_e, K2, H_p)
    return out


@njit(cache=True)
def bodies_residual_into(out, q, qd, qdd, g, off, nq, m, stiff, ptr, lin0, lin_q, I2, lin_qd,
                         lin_qdd, C_t, K_e, K2, H_p):  # pragma: no cover - compiled
    """:func:`bodies_residual` written into ``out`` (n,): no allocation for rigid bodies
    and point masses (a flexible body's :func:`ffrf_residual` makes its own arrays)."""
    for b in range(off.shape[0]):
        n = nq[b]
        o, nc = off[b], 7 + nq[b]
        if n < 0:                      # a point mass (3 coordinates): m (rdd - g)
            for i in range(3):
                out[o + i] = m[b] * (qdd[o + i] - g[i])
            continue
        p0, p1 = ptr[b], ptr[b + 1]
        if n == 0:                     # a rigid body: the same sums in scalars
            rigid_residual(q, qd, qdd, g, m[b], lin0[p0[0]:p1[0]], out, o)
            continue
        L = 12 + 21 * n
        n_p = n * (n + 1) // 2 if stiff[b] else 0
        r = ffrf_residual(
            q[o:o + nc], qd[o:o + nc], qdd[o:o + nc], g, m[b], lin0[p0[0]:p1[0]],
            lin_q[p0[1]:p1[1]].reshape(n, L), I2[p0[2]:p1[2]].reshape(n, 9 * n),
            lin_qd[p0[3]:p1[3]].reshape(n, 3 + 4 * n), lin_qdd[p0[4]:p1[4]].reshape(n, 3 + n),
            C_t[p0[5]:p1[5]].reshape(n, 3), K_e[p0[6]:p1[6]].reshape(n, n),
            K2[p0[7]:p1[7]].reshape(n * n if stiff[b] else 0, n if stiff[b] else 0),
            H_p[p0[8]:p1[8]].reshape(n_p, n_p),
            stiff[b])
        for i in range(nc):
            out[o + i] = r[i]


@njit(cache=True, inline="always")
def bodies_newton_values(q, qd, qdd, g, cK, cC, cM, off, nq, m, stiff, ptr, lin0, lin_q, I2,
                         lin_qd, lin_qdd, tptr, C_t, M_e, D_e, I1, I2s_l, G2_m, C_r1_kl,
                         C_r1_k, O_e1_kl, K_e, K2s, H_p):  # pragma: no cover - compiled
    """``c_K K + c_C C + c_M M`` (:func:`ffrf_tangent`) of every body, each block row-major,
    concatenated in body order; the residual's arrays as in :func:`bodies_residual`, the
    tangent's own flattened from ``tptr[b, k]`` (``k`` the array, in argument order); a
    rigid body (``nq[b] = 0``) by :func:`~flexmbs.bodies.rigid_kernel.rigid_tangent`.
    Inlined (numba IR) into :func:`bodies_newton_values_c`, through which every compiled
    caller calls it: compiled on its own, its code (the longest compile of the package)
    would be optimised and emitted once more."""
    B = off.shape[0]
    total, n_work = 0, 0
    for b in range(B):
        total += (7 + nq[b]) ** 2
        if nq[b] == 0:
            n_work = RIGID_WORK
    out = np.empty(total)
    W = np.empty(n_work)               # the rigid bodies' work array, one for all
    pos = np.int64(0)                  # (not ``0``: one signature of rigid_tangent)
    for b in range(B):
        n = nq[b]
        o, nc = off[b], 7 + n
        if n < 0:                      # a point mass: K = C = 0, M = m I
            for i in range(3):
                for j in range(3):
                    out[pos] = cK * 0.0 + cC * 0.0 + cM * (m[b] if i == j else 0.0)
                    pos += 1
            continue
        if n == 0:                     # a rigid body: the same sums without allocation
            p0, p1 = ptr[b], ptr[b + 1]
            rigid_tangent(q, qd, qdd, g, m[b], lin0[p0[0]:p1[0]], cK, cC, cM, W, out, o, pos)
            pos += 49
            continue
        L = 12 + 21 * n
        p0, p1 = ptr[b], ptr[b + 1]
        t0, t1 = tptr[b], tptr[b + 1]
        s = stiff[b]
        n_p = n * (n + 1) // 2 if s else 0
        K, Cm, M = ffrf_tangent(
            q[o:o + nc], qd[o:o + nc], qdd[o:o + nc], g, m[b], lin0[p0[0]:p1[0]],
            lin_q[p0[1]:p1[1]].reshape(n, L), I2[p0[2]:p1[2]].reshape(n, 9 * n),
            lin_qd[p0[3]:p1[3]].reshape(n, 3 + 4 * n), lin_qdd[p0[4]:p1[4]].reshape(n, 3 + n),
            C_t[t0[0]:t1[0]].reshape(n, 3), M_e[t0[1]:t1[1]].reshape(n, n),
            D_e[t0[2]:t1[2]].reshape(n, n), I1[t0[3]:t1[3]].reshape(n, 9),
            I2s_l[t0[4]:t1[4]].reshape(n, 9 * n), G2_m[t0[5]:t1[5]].reshape(n, 9 * n),
            C_r1_kl[t0[6]:t1[6]].reshape(n * n, 3), C_r1_k[t0[7]:t1[7]].reshape(n, 3 * n),
            O_e1_kl[t0[8]:t1[8]].reshape(n * n, 9), K_e[t0[9]:t1[9]].reshape(n, n),
            K2s[t0[10]:t1[10]].reshape(n * n if s else 0, n if s else 0),
            H_p[t0[11]:t1[11]].reshape(n_p, n_p), s)
        for i in range(nc):
            for j in range(nc):
                out[pos] = cK * K[i, j] + cC * Cm[i, j] + cM * M[i, j]
                pos += 1
    return out


#: rows of a body pack's table (:meth:`flexmbs.bodies.pack.BodyPack.table`): the number
#: ``n_b`` of coordinates the bodies span (a value), then the arguments of
#: :func:`bodies_newton_values` after ``cM`` in order (``off`` ... ``lin_qdd``, ``tptr``
#: and the tangents' twelve flattened arrays)
N_PACK_TABLE = 24


@native(types.int32(types.intp, types.intp, types.intp))
def bodies_newton_values_c(vals, s, ctx):  # pragma: no cover - compiled
    """:func:`bodies_newton_values` as a C function ``int (double *vals, const double *s,
    void *ctx)``: ``s = [q; qd; qdd; g; c_K; c_C; c_M]`` (``q``... the first ``n_b``
    coordinates), ``ctx`` the pack's table (:data:`N_PACK_TABLE`); the values into
    ``vals``.  The compiled Newton matrix calls it by its address, so that its compile
    does not link in (and optimise again) the bodies' tangents; Python calls it too
    (:meth:`flexmbs.bodies.pack.BodyPack.newton_values`)."""
    t = carray(i8_pointer(ctx), (N_PACK_TABLE, 5))
    nb = t[0, 0]
    sv = carray(f8_pointer(s), 3 * nb + 6)
    k = 3 * nb
    out = bodies_newton_values(
        sv[:nb], sv[nb:2 * nb], sv[2 * nb:k], sv[k:k + 3], sv[k + 3], sv[k + 4], sv[k + 5],
        i1(t, 1), i1(t, 2), f1(t, 3), i1(t, 4), i2(t, 5), f1(t, 6), f1(t, 7), f1(t, 8),
        f1(t, 9), f1(t, 10), i2(t, 11), f1(t, 12), f1(t, 13), f1(t, 14), f1(t, 15),
        f1(t, 16), f1(t, 17), f1(t, 18), f1(t, 19), f1(t, 20), f1(t, 21), f1(t, 22),
        f1(t, 23))
    vals_out = carray(f8_pointer(vals), out.shape[0])
    for i in range(out.shape[0]):
        vals_out[i] = out[i]
    return 0
