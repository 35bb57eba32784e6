"""Compiled (numba) joint friction on stacked marker frames: the LuGre bristle law
(:mod:`flexmbs.forces.lugre`), the slip map of a revolute, prismatic, cylindrical or
spherical joint and the normal force from the joint's multipliers
(:mod:`flexmbs.forces.joint_friction`), for the compiled whole step
(:mod:`flexmbs.integrate.step_kernel`).

The frames are those of :func:`flexmbs.kinematics.frame_kernel.stacked_rows`: ``C``
(M, 4, 3) rows ``p, x, y, z`` of every marker, ``D = dC/dq`` (M, 4, 3, n) over the global
coordinates.  Per element (tables of :mod:`flexmbs.forces.friction_columns`):

    v = B qd,   B rows: r grad theta (revolute), grad s (prismatic), [grad s; r grad theta]
                (cylindrical), r omega map (spherical, on P's axes),
    theta = atan2(y_P . x_Q, x_P . x_Q),   s = z_P . (p_Q - p_P),
    omega = 1/2 R_P^T sum_i (a_i^Q x da_i^Q - a_i^P x da_i^P),
    f = sign G_j[:, col:col + 3]^T lam_j,  N = |f - (f . z_P) z_P| + N_0  (spherical |f|),
    Q = -B^T F,  Q_z = zd-rate f,  Q_W = P = F . v,

added to a residual as ``r -= Q`` (:func:`friction_residual`), and the Newton matrix
terms ``-(c_K dQ/dq + c_C dQ/dqd)`` and ``-dQ/dN dN/dlam`` (:func:`friction_newton`;
like the element's own tangent, without ``dN/dq``, and here also without the curvature
of the slip measures, ``dB/dq qd``: Newton's matrix only steers the iteration).
The numpy reference is :mod:`flexmbs.forces.friction_reference` (same names, same
arguments).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from flexmbs.forces.friction_columns import (
    I_COL,
    I_KIND,
    I_MP,
    I_MQ,
    I_REACT,
    I_ROW0,
    I_ROW1,
    I_SIGN,
    I_Z,
    N_DIRECTIONS,
    N_INT,
    N_PAR,
    P_C_V,
    P_EPS,
    P_MU_K,
    P_MU_S,
    P_N0,
    P_R,
    P_SIGMA0,
    P_SIGMA1,
    P_V_D,
    P_V_S,
)

_ND = np.array(N_DIRECTIONS, dtype=np.int64)


@njit(cache=True, inline="always")
def _speed_terms(v, par):  # pragma: no cover - compiled
    """``(root, a, g, dg/dv / v, sigma1(a), dsigma1/da)`` of the slip speed
    ``a = root - eps``, ``g = a / mu(a)``."""
    mu_s, mu_k, v_s = par[P_MU_S], par[P_MU_K], par[P_V_S]
    sigma1, eps, v_d = par[P_SIGMA1], par[P_EPS], par[P_V_D]
    vv = 0.0
    for i in range(v.shape[0]):
        vv += v[i] * v[i]
    root = np.sqrt(vv + eps * eps)
    a = root - eps
    if v_s <= 0.0:
        mu = mu_s if a == 0.0 else mu_k
        mu_a = 0.0
    else:
        u = a / v_s
        e = np.exp(-u * u)
        mu = mu_k + (mu_s - mu_k) * e
        mu_a = -2.0 * u / v_s * (mu_s - mu_k) * e
    s1, s1_a = sigma1, 0.0
    if v_d > 0.0:
        s1 = sigma1 * np.exp(-(a / v_d) ** 2)
        s1_a = -2.0 * a / (v_d * v_d) * s1
    return root, a, a / mu, (1.0 / mu - a * mu_a / (mu * mu)) / root, s1, s1_a


@njit(cache=True)
def lugre_force(v, z, N, par):  # pragma: no cover - compiled
    """``(f, F, P, F_N)`` of :func:`lugre_law` (the residual's part)."""
    d = v.shape[0]
    _, _, g, _, s1, _ = _speed_terms(v, par)
    sigma0, c_v = par[P_SIGMA0], par[P_C_V]
    f, F, F_N = np.empty(d), np.empty(d), np.empty(d)
    P = 0.0
    for i in range(d):
        f[i] = v[i] - sigma0 * g * z[i]
        F_N[i] = sigma0 * z[i] + s1 * f[i]
        F[i] = N * F_N[i] + c_v * v[i]
        P += F[i] * v[i]
    return f, F, P, F_N


@njit(cache=True)
def lugre_law(v, z, N, par):  # pragma: no cover - compiled
    """``(f, F, P, f_v, f_z, F_v, F_z, P_v, P_z, F_N)`` of :func:`flexmbs.forces.lugre.
    lugre` at slip ``v`` (d,), bristles ``z`` (d,), normal force ``N``; ``par`` a row of
    ``fr_par``."""
    d = v.shape[0]
    root, _, g, g_fac, s1, s1_a = _speed_terms(v, par)
    sigma0, c_v = par[P_SIGMA0], par[P_C_V]
    f, F, P, F_N = lugre_force(v, z, N, par)
    f_v, f_z, F_v, F_z = np.empty((d, d)), np.empty((d, d)), np.empty((d, d)), np.empty((d, d))
    for i in range(d):
        for j in range(d):
            eye = 1.0 if i == j else 0.0
            f_v[i, j] = eye - sigma0 * z[i] * g_fac * v[j]
            f_z[i, j] = -sigma0 * g * eye
            F_v[i, j] = N * (s1 * f_v[i, j] + s1_a * f[i] * v[j] / root) + c_v * eye
            F_z[i, j] = N * (sigma0 * eye + s1 * f_z[i, j])
    P_v, P_z = F.copy(), np.zeros(d)
    for j in range(d):
        for i in range(d):
            P_v[j] += F_v[i, j] * v[i]
            P_z[j] += F_z[i, j] * v[i]
    return f, F, P, f_v, f_z, F_v, F_z, P_v, P_z, F_N


@njit(cache=True, inline="always")
def angle_gradient(mP, mQ, C, D, scale, out):  # pragma: no cover - compiled
    """``out = scale grad theta``, ``theta = atan2(y_P . x_Q, x_P . x_Q)``; returns
    ``(y_P . x_Q, x_P . x_Q)``."""
    s = c = 0.0
    for k in range(3):
        s += C[mP, 2, k] * C[mQ, 1, k]
        c += C[mP, 1, k] * C[mQ, 1, k]
    w = scale / (s * s + c * c)
    for j in range(D.shape[3]):
        ds = dc = 0.0
        for k in range(3):
            ds += D[mP, 2, k, j] * C[mQ, 1, k] + C[mP, 2, k] * D[mQ, 1, k, j]
            dc += D[mP, 1, k, j] * C[mQ, 1, k] + C[mP, 1, k] * D[mQ, 1, k, j]
        out[j] = w * (c * ds - s * dc)
    return s, c


@njit(cache=True, inline="always")
def _offset_gradient(mP, mQ, C, D, out):  # pragma: no cover - compiled
    """``out = grad s``, ``s = z_P . (p_Q - p_P)``."""
    for j in range(D.shape[3]):
        acc = 0.0
        for k in range(3):
            acc += D[mP, 3, k, j] * (C[mQ, 0, k] - C[mP, 0, k]) \
                + C[mP, 3, k] * (D[mQ, 0, k, j] - D[mP, 0, k, j])
        out[j] = acc


@njit(cache=True)
def slip_map(kind, r, mP, mQ, C, D):  # pragma: no cover - compiled
    """``B`` (d, n) of the module docstring for the joint ``kind`` (a code of
    :data:`~flexmbs.forces.friction_columns.KIND_CODES`), pin radius ``r``."""
    n = D.shape[3]
    B = np.zeros((_ND[kind], n))
    if kind == 0:
        angle_gradient(mP, mQ, C, D, r, B[0])
    elif kind == 1:
        _offset_gradient(mP, mQ, C, D, B[0])
    elif kind == 2:
        _offset_gradient(mP, mQ, C, D, B[0])
        angle_gradient(mP, mQ, C, D, r, B[1])
    else:
        w = np.zeros((3, n))
        for m, sgn in ((mQ, 0.5), (mP, -0.5)):
            for i in range(1, 4):
                a = C[m, i]
                for j in range(n):
                    w[0, j] += sgn * (a[1] * D[m, i, 2, j] - a[2] * D[m, i, 1, j])
                    w[1, j] += sgn * (a[2] * D[m, i, 0, j] - a[0] * D[m, i, 2, j])
                    w[2, j] += sgn * (a[0] * D[m, i, 1, j] - a[1] * D[m, i, 0, j])
        for k in range(3):
            for j in range(n):
                B[k, j] = r * (C[mP, 1 + k, 0] * w[0, j] + C[mP, 1 + k, 1] * w[1, j]
                               + C[mP, 1 + k, 2] * w[2, j])
    return B


@njit(cache=True)
def normal_force(row, C, G, lam_all):  # pragma: no cover - compiled
    """``(N, dN/dlam_j, depends)`` of one element (``row`` its row of ``fr_int``; ``N_0``
    is added by the caller): ``dN/dlam_j`` over the joint's rows, ``depends`` False when
    ``N`` does not depend on ``lam`` (no reaction, or all its multipliers zero)."""
    r0, r1 = row[I_ROW0], row[I_ROW1]
    N_lam = np.zeros(r1 - r0)
    if row[I_REACT] == 0:
        return 0.0, N_lam, False
    nonzero = False
    for i in range(r0, r1):
        if lam_all[i] != 0.0:
            nonzero = True
    if not nonzero:
        return 0.0, N_lam, False
    col, sign = row[I_COL], float(row[I_SIGN])
    f = np.zeros(3)
    for i in range(r0, r1):
        for k in range(3):
            f[k] += sign * G[i, col + k] * lam_all[i]
    if row[I_KIND] != 3:                       # the transverse part
        mP = row[I_MP]
        fz = f[0] * C[mP, 3, 0] + f[1] * C[mP, 3, 1] + f[2] * C[mP, 3, 2]
        for k in range(3):
            f[k] -= fz * C[mP, 3, k]
    size = np.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
    if size == 0.0:
        return 0.0, N_lam, False
    for i in range(r0, r1):
        for k in range(3):
            N_lam[i - r0] += f[k] / size * sign * G[i, col + k]
    return size, N_lam, True


@njit(cache=True)
def _slip(e, q, qd, lam_all, C, D, G, fr_int, fr_par):  # pragma: no cover - compiled
    """Slip map ``B``, slip ``v``, bristles ``z``, normal force ``N`` (with ``N_0``),
    ``dN/dlam_j`` and whether ``N`` depends on ``lam`` of element ``e``."""
    row, par = fr_int[e], fr_par[e]
    B = slip_map(row[I_KIND], par[P_R], row[I_MP], row[I_MQ], C, D)
    d, n = B.shape
    v = np.zeros(d)
    for i in range(d):
        for j in range(n):
            v[i] += B[i, j] * qd[j]
    N, N_lam, depends = normal_force(row, C, G, lam_all)
    return B, v, q[row[I_Z]:row[I_Z] + d], N + par[P_N0], N_lam, depends


@njit(cache=True)
def friction_residual(r, q, qd, lam_all, C, D, G, fr_int, fr_par):  # pragma: no cover
    """``r -= Q`` of every element (module docstring); ``lam_all`` the multipliers of all
    rows (dropped rows 0)."""
    for e in range(fr_int.shape[0]):
        B, v, z, N, _, _ = _slip(e, q, qd, lam_all, C, D, G, fr_int, fr_par)
        f, F, P, _ = lugre_force(v, z, N, fr_par[e])
        d, n = B.shape
        for j in range(n):
            acc = 0.0
            for i in range(d):
                acc += B[i, j] * F[i]
            r[j] += acc
        z0 = fr_int[e, I_Z]
        for i in range(d):
            r[z0 + i] -= f[i]
        r[z0 + d] -= P


@njit(cache=True, inline="always")
def nonzero_columns(B):  # pragma: no cover - compiled
    """The columns of ``B`` with a nonzero entry (the coordinates of the joint's bodies)."""
    d, n = B.shape
    cols = np.empty(n, dtype=np.int64)
    k = 0
    for j in range(n):
        for i in range(d):
            if B[i, j] != 0.0:
                cols[k] = j
                k += 1
                break
    return cols[:k]


@njit(cache=True, inline="always")
def _dot_col(a, B, b):  # pragma: no cover - compiled
    """``a . B[:, b]``."""
    acc = 0.0
    for k in range(a.shape[0]):
        acc += a[k] * B[k, b]
    return acc


@njit(cache=True)
def friction_newton(out, q, qd, lam_all, lam_pos, C, D, G, fr_int, fr_par, cK,
                    cC):  # pragma: no cover - compiled
    """Add ``-(c_K dQ/dq + c_C dQ/dqd)`` to ``out[:n, :n]`` and ``-dQ/dlam`` to the
    columns ``n + lam_pos[row]`` of the active rows (``lam_pos`` -1 for dropped rows) of
    a dense Newton matrix ``out`` (module docstring)."""
    for e in range(fr_int.shape[0]):
        B, v, z, N, N_lam, depends = _slip(e, q, qd, lam_all, C, D, G, fr_int, fr_par)
        law = lugre_law(v, z, N, fr_par[e])
        f_v, f_z, F_v, F_z, P_v, P_z, F_N = law[3], law[4], law[5], law[6], law[7], \
            law[8], law[9]
        d, n = B.shape
        z0 = fr_int[e, I_Z]
        w = z0 + d
        BtFv = np.zeros((n, d))                 # dQ/dqd = -B^T F_v B
        cols = nonzero_columns(B)
        for j in cols:
            for k in range(d):
                for i in range(d):
                    BtFv[j, k] += B[i, j] * F_v[i, k]
        for a in cols:
            for b in cols:
                acc = 0.0
                for k in range(d):
                    acc += BtFv[a, k] * B[k, b]
                out[a, b] += cC * acc
            for c in range(d):                  # dQ/dz = -B^T F_z
                acc = 0.0
                for k in range(d):
                    acc += B[k, a] * F_z[k, c]
                out[a, z0 + c] += cK * acc
        for i in range(d):
            for c in range(d):
                out[z0 + i, z0 + c] -= cK * f_z[i, c]
            out[w, z0 + i] -= cK * P_z[i]
            for b in cols:                      # df/dqd = f_v B, dP/dqd = P_v B
                out[z0 + i, b] -= cC * _dot_col(f_v[i], B, b)
        for b in cols:
            out[w, b] -= cC * _dot_col(P_v, B, b)
        if depends:                             # -dQ/dN dN/dlam
            dQ_dN = np.zeros(n)
            for j in cols:
                for i in range(d):
                    dQ_dN[j] -= B[i, j] * F_N[i]
            for i in range(d):
                dQ_dN[w] += F_N[i] * v[i]
            r0 = fr_int[e, I_ROW0]
            for k in range(N_lam.shape[0]):
                p = lam_pos[r0 + k]
                if p < 0:
                    continue
                for j in cols:
                    out[j, n + p] -= dQ_dN[j] * N_lam[k]
                out[w, n + p] -= dQ_dN[w] * N_lam[k]


def warm() -> None:
    """Compile :func:`friction_residual` and :func:`friction_newton` now with the one
    signature every call uses (a feature, :data:`flexmbs.kernel_cache.FEATURES`: the
    first import leaves it to the first model with joint friction): no elements, so no
    loop runs."""
    z = np.zeros(1)
    C, D, G = np.zeros((1, 4, 3)), np.zeros((1, 4, 3, 1)), np.zeros((1, 1))
    fr_int, fr_par = np.zeros((0, N_INT), dtype=np.int64), np.zeros((0, N_PAR))
    friction_residual(z, z, z, z, C, D, G, fr_int, fr_par)
    friction_newton(np.zeros((1, 1)), z, z, z, np.zeros(1, dtype=np.int64), C, D, G, fr_int,
                    fr_par, 1.0, 1.0)
