"""Compiled (numba) residual of a rigid floating-frame body (``n_q = 0``) in scalars:
the equations of :mod:`flexmbs.bodies.ffrf_kernel` with the elastic terms gone,

    residual = [ m (rdd - g) + A f_t;   2 L^T f_r ],
    f_t = m (alpha' x c + omega' x (omega' x c)),
    f_r = m c x (A^T (rdd - g)) + omega' x (I omega') + I alpha',

``omega' = 2 L(e) ed``, ``alpha' = 2 L(e) edd``, ``lin0 = [m c, I]`` (3 + 9).  No array is
allocated (the general kernel makes some thirty small ones per call, most of a rigid
body's time), and every sum is taken in the general kernel's order, zero terms
included, so both give the same bits; :func:`~flexmbs.bodies.ffrf_kernel.ffrf_residual`
at ``n_q = 0`` is its reference (``tests/bodies/test_compiled_kernels.py``).
The small helpers (``_cross``, ``_two_L``, :func:`tilde_to`, :func:`L_to`,
the last two also used by :mod:`flexmbs.bodies.ffrf_kernel`) are kernels of their own, compiled once
per process and linked where they are called (inlined in numba's IR, each call site was
typed and lowered again); :func:`centripetal_derivative_into`, called once from each
kernel with other argument types (scalars here, arrays there), stays inlined.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from flexmbs.kinematics.rotation_kernel import rotation_entries


@njit(cache=True)
def _cross(a0, a1, a2, b0, b1, b2):  # pragma: no cover - compiled
    """``a x b`` as three scalars."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def _two_L(e0, x, y, z, a, b, c, d):  # pragma: no cover - compiled
    """``2 L(e) v`` for ``v = (a, b, c, d)`` as three scalars."""
    return (2.0 * (-x * a + e0 * b + z * c - y * d), 2.0 * (-y * a - z * b + e0 * c + x * d),
            2.0 * (-z * a + y * b - x * c + e0 * d))


@njit(cache=True, inline="always")
def _state(q, qd, qdd, g, m, lin0, o):  # pragma: no cover - compiled
    """``(A, w, d, omega', alpha', c, I, f_t, f_r)`` of the body at ``q[o:o + 7]`` as
    tuples of scalars (``A``, ``I`` row by row), every sum in the general kernel's order."""
    e0, x, y, z = q[o + 3], q[o + 4], q[o + 5], q[o + 6]
    A = rotation_entries(e0, x, y, z)
    A00, A01, A02, A10, A11, A12, A20, A21, A22 = A
    w0, w1, w2 = qdd[o] - g[0], qdd[o + 1] - g[1], qdd[o + 2] - g[2]
    d0 = A00 * w0 + A10 * w1 + A20 * w2                # A^T (rdd - g)
    d1 = A01 * w0 + A11 * w1 + A21 * w2
    d2 = A02 * w0 + A12 * w1 + A22 * w2
    om0, om1, om2 = _two_L(e0, x, y, z, qd[o + 3], qd[o + 4], qd[o + 5], qd[o + 6])
    al0, al1, al2 = _two_L(e0, x, y, z, qdd[o + 3], qdd[o + 4], qdd[o + 5], qdd[o + 6])
    # lin = lin0 + 0 (the general kernel's lin0 + q_e lin_q with no q_e)
    c0, c1, c2 = (lin0[0] + 0.0) / m, (lin0[1] + 0.0) / m, (lin0[2] + 0.0) / m
    I00, I01, I02 = lin0[3] + 0.0, lin0[4] + 0.0, lin0[5] + 0.0
    I10, I11, I12 = lin0[6] + 0.0, lin0[7] + 0.0, lin0[8] + 0.0
    I20, I21, I22 = lin0[9] + 0.0, lin0[10] + 0.0, lin0[11] + 0.0
    Iw0 = I00 * om0 + I01 * om1 + I02 * om2
    Iw1 = I10 * om0 + I11 * om1 + I12 * om2
    Iw2 = I20 * om0 + I21 * om1 + I22 * om2
    Ia0 = I00 * al0 + I01 * al1 + I02 * al2
    Ia1 = I10 * al0 + I11 * al1 + I12 * al2
    Ia2 = I20 * al0 + I21 * al1 + I22 * al2
    Go = 0.0 * om0 + 0.0 * om1 + 0.0 * om2             # G_r omega' with G_r = 0
    occ0, occ1, occ2 = _cross(om0, om1, om2, c0, c1, c2)
    a0, a1, a2 = _cross(al0, al1, al2, c0, c1, c2)
    b0, b1, b2 = _cross(om0, om1, om2, occ0, occ1, occ2)
    v0, v1, v2 = _cross(om0, om1, om2, 0.0, 0.0, 0.0)
    ft0 = m * (a0 + b0) + 0.0 + 2.0 * v0
    ft1 = m * (a1 + b1) + 0.0 + 2.0 * v1
    ft2 = m * (a2 + b2) + 0.0 + 2.0 * v2
    x0, x1, x2 = _cross(c0, c1, c2, d0, d1, d2)
    y0, y1, y2 = _cross(om0, om1, om2, Iw0, Iw1, Iw2)
    r1 = m * x0 + y0 + Ia0 + 0.0 + Go
    r2 = m * x1 + y1 + Ia1 + 0.0 + Go
    r3 = m * x2 + y2 + Ia2 + 0.0 + Go
    return (A, (w0, w1, w2), (om0, om1, om2), (al0, al1, al2), (c0, c1, c2),
            (I00, I01, I02, I10, I11, I12, I20, I21, I22), (Iw0, Iw1, Iw2),
            (ft0, ft1, ft2), (r1, r2, r3))


@njit(cache=True)
def rigid_residual(q, qd, qdd, g, m, lin0, out, o):  # pragma: no cover - compiled
    """The residual of the module docstring of the body with coordinates ``q[o:o + 7]``
    written into ``out[o:o + 7]``."""
    e0, x, y, z = q[o + 3], q[o + 4], q[o + 5], q[o + 6]
    A, w, _, _, _, _, _, ft, fr = _state(q, qd, qdd, g, m, lin0, o)
    for i in range(3):
        out[o + i] = m * w[i] + A[3 * i] * ft[0] + A[3 * i + 1] * ft[1] + A[3 * i + 2] * ft[2]
    r1, r2, r3 = fr
    out[o + 3] = 2.0 * (-x * r1 - y * r2 - z * r3)     # 2 L(e)^T f_r
    out[o + 4] = 2.0 * (e0 * r1 - z * r2 + y * r3)
    out[o + 5] = 2.0 * (z * r1 + e0 * r2 - x * r3)
    out[o + 6] = 2.0 * (-y * r1 + x * r2 + e0 * r3)

#: Length of the work array :func:`rigid_tangent` fills (its caller allocates it once).
RIGID_WORK = 512


@njit(cache=True)
def mm_into(A, B, C):  # pragma: no cover - compiled
    """``C = A B`` into the given ``C`` by loops (faster than a BLAS call at these sizes,
    any memory layout; zero ``A`` entries skipped)."""
    n, k = A.shape
    m = B.shape[1]
    for i in range(n):
        for j in range(m):
            C[i, j] = 0.0
    for i in range(n):
        for p in range(k):
            a = A[i, p]
            if a != 0.0:
                for j in range(m):
                    C[i, j] += a * B[p, j]


@njit(cache=True)
def mm_to(A, B, b0, C, r0, c0):  # pragma: no cover - compiled
    """``C[r0:r0 + a, c0:c0 + m] = A B[b0:b0 + k]`` (``A`` (a, k), ``m`` the columns of
    ``B``) by the loops of :func:`mm_into` (the same sums): whole C-contiguous arrays and
    int64 offsets, one type signature for every call (a column slice passed to
    :func:`mm_into` would compile it for a second, ``A``-layout signature)."""
    n, k = A.shape
    m = B.shape[1]
    for i in range(n):
        for j in range(m):
            C[r0 + i, c0 + j] = 0.0
    for i in range(n):
        for p in range(k):
            a = A[i, p]
            if a != 0.0:
                for j in range(m):
                    C[r0 + i, c0 + j] += a * B[b0 + p, j]


@njit(cache=True, inline="always")
def centripetal_derivative_into(m, om, c, F):  # pragma: no cover - compiled
    """``F[0:3, 0:3] = m d(w x (w x c))/dw = m (w c^T - 2 c w^T + (w.c) E)``."""
    oc = om[0] * c[0] + om[1] * c[1] + om[2] * c[2]
    for i in range(3):
        for j in range(3):
            Dij = om[i] * c[j] - 2.0 * c[i] * om[j]
            if i == j:
                Dij += oc
            F[i, j] = m * Dij


@njit(cache=True)
def L_to(e0, x, y, z, s, L):  # pragma: no cover - compiled
    """``L = s L(e)`` (3, 4), ``s`` times every entry of ``L_matrix``."""
    L[0, 0], L[0, 1], L[0, 2], L[0, 3] = s * -x, s * e0, s * z, s * -y
    L[1, 0], L[1, 1], L[1, 2], L[1, 3] = s * -y, s * -z, s * e0, s * x
    L[2, 0], L[2, 1], L[2, 2], L[2, 3] = s * -z, s * y, s * -x, s * e0


@njit(cache=True)
def tilde_to(a0, a1, a2, s, T):  # pragma: no cover - compiled
    """``T = s tilde(a)`` (3, 3)."""
    T[0, 0], T[0, 1], T[0, 2] = s * 0.0, s * -a2, s * a1
    T[1, 0], T[1, 1], T[1, 2] = s * a2, s * 0.0, s * -a0
    T[2, 0], T[2, 1], T[2, 2] = s * -a1, s * a0, s * 0.0


@njit(cache=True)
def rigid_tangent(q, qd, qdd, g, m, lin0, cK, cC, cM, W, out, o, pos):  # pragma: no cover
    """``c_K K + c_C C + c_M M`` of the body with coordinates ``q[o:o + 7]``, row-major
    into ``out[pos:pos + 49]``: :func:`~flexmbs.bodies.ffrf_kernel.ffrf_tangent` at
    ``n_q = 0``, the derivatives of the module docstring's residual by ``q``, ``qd``,
    ``qdd`` (partial derivatives of ``[f_t; f_r]`` by ``(A^T (rdd - g), alpha', omega')``
    chained with ``d(A^T w)/de``, ``-2 L(edd)``, ``-2 L(ed)`` and projected by
    ``blockdiag(A, 2 L^T)``, plus ``dA/de f_t`` and ``2 R_L(f_r)``).  The same sums in
    the same order as the general kernel, its zero blocks left out; every matrix lives in
    the work array ``W`` (length :data:`RIGID_WORK`), nothing is allocated."""
    e0, x, y, z = q[o + 3], q[o + 4], q[o + 5], q[o + 6]
    A9, (w0, w1, w2), om, _, c, I9, Iw, ft, fr = _state(q, qd, qdd, g, m, lin0, o)
    om0, om1, om2 = om
    c0, c1, c2 = c
    ft0, ft1, ft2 = ft
    fr0, fr1, fr2 = fr
    A = W[0:9].reshape((3, 3))
    Iq = W[45:54].reshape((3, 3))
    for kl in range(9):
        A[kl // 3, kl % 3] = A9[kl]
        Iq[kl // 3, kl % 3] = I9[kl]
    Te = W[9:45].reshape((3, 3, 4))                    # dA_kl/de_a
    rows = ((e0, x, -y, -z), (-z, y, x, -e0), (y, z, e0, x),
            (z, y, x, e0), (e0, -x, y, -z), (-x, -e0, z, y),
            (-y, z, -e0, x), (x, e0, z, y), (e0, -x, -y, z))
    for kl in range(9):
        r = rows[kl]
        for a in range(4):
            Te[kl // 3, kl % 3, a] = 2.0 * r[a]
    # partial derivatives of [f_t; f_r] by d, alpha', omega' (rows 0:3 of f_d are zero)
    f_d = W[54:63].reshape((3, 3))                     # rows 3:6 of f_d: m tilde(c)
    f_al = W[63:81].reshape((6, 3))
    f_om = W[81:99].reshape((6, 3))
    tilde_to(c0, c1, c2, m, f_d)
    tilde_to(c0, c1, c2, -m, f_al[0:3])
    for i in range(3):
        for j in range(3):
            f_al[3 + i, j] = Iq[i, j]
    centripetal_derivative_into(m, om, c, f_om)
    f_om[0, 1] += 0.0                                  # - 2 tilde(0) of the general kernel
    f_om[1, 2] += 0.0
    f_om[2, 0] += 0.0
    ot = W[99:108].reshape((3, 3))
    tilde_to(om0, om1, om2, 1.0, ot)
    P = W[108:117].reshape((3, 3))
    mm_into(ot, Iq, P)
    TI = W[117:126].reshape((3, 3))
    tilde_to(Iw[0], Iw[1], Iw[2], 1.0, TI)
    for i in range(3):
        for j in range(3):
            f_om[3 + i, j] = P[i, j] - TI[i, j] + 0.0
    # derivatives of the body-frame variables by e
    L2 = W[126:138].reshape((3, 4))
    L_to(e0, x, y, z, 2.0, L2)
    dd_de = W[138:150].reshape((3, 4))                 # d(A^T w)/de
    for j in range(3):
        for a in range(4):
            dd_de[j, a] = Te[0, j, a] * w0 + Te[1, j, a] * w1 + Te[2, j, a] * w2
    dal_de = W[150:162].reshape((3, 4))
    L_to(qdd[o + 3], qdd[o + 4], qdd[o + 5], qdd[o + 6], -2.0, dal_de)
    dom_de = W[162:174].reshape((3, 4))
    L_to(qd[o + 3], qd[o + 4], qd[o + 5], qd[o + 6], -2.0, dom_de)
    # X = [f_d A^T, f_al L2, f_om L2, f_d dd_de + f_al dal_de + f_om dom_de] (6, 15)
    X = W[174:264].reshape((6, 15))
    AT = W[264:273].reshape((3, 3))
    for i in range(3):
        for j in range(3):
            AT[i, j] = A[j, i]
            X[i, j] = 0.0
    z0, i3, i7 = np.int64(0), np.int64(3), np.int64(7)   # (int64 offsets: one signature)
    mm_to(f_d, AT, z0, X, i3, z0)
    mm_to(f_al, L2, z0, X, z0, i3)
    mm_to(f_om, L2, z0, X, z0, i7)
    T1 = W[273:285].reshape((3, 4))
    T2 = W[285:309].reshape((6, 4))
    T3 = W[309:333].reshape((6, 4))
    mm_into(f_d, dd_de, T1)
    mm_into(f_al, dal_de, T2)
    mm_into(f_om, dom_de, T3)
    for i in range(6):
        for a in range(4):
            t1 = T1[i - 3, a] if i >= 3 else 0.0
            X[i, 11 + a] = t1 + T2[i, a] + T3[i, a]
    # Y = blockdiag(A, 2 L^T) X (7, 15)
    Y = W[333:438].reshape((7, 15))
    mm_to(A, X, z0, Y, z0, z0)
    L2T = W[438:450].reshape((4, 3))
    for i in range(3):
        for a in range(4):
            L2T[a, i] = L2[i, a]
    mm_to(L2T, X, i3, Y, i3, z0)
    # K, C, M: columns 0:3 of K and C are zero, dA/de f_t and 2 R_L(f_r) added to K
    R = ((0.0, -fr0, -fr1, -fr2), (fr0, 0.0, fr2, -fr1), (fr1, -fr2, 0.0, fr0),
         (fr2, fr1, -fr0, 0.0))
    p = pos
    for i in range(7):
        for j in range(3):
            Mij = Y[i, j] + m if i == j else Y[i, j]
            out[p] = cK * 0.0 + cC * 0.0 + cM * Mij
            p += 1
        for a in range(4):
            Kia = Y[i, 11 + a]
            if i < 3:
                Kia += Te[i, 0, a] * ft0 + Te[i, 1, a] * ft1 + Te[i, 2, a] * ft2
            else:
                Kia += 2.0 * R[i - 3][a]
            out[p] = cK * Kia + cC * Y[i, 7 + a] + cM * Y[i, 3 + a]
            p += 1
