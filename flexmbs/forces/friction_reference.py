"""The numpy reference of :mod:`flexmbs.forces.friction_kernel` (same names, same
arguments; ``FLEXMBS_KERNELS=reference`` runs it): joint friction on stacked marker
frames, the formulas of that module's docstring."""
from __future__ import annotations

import numpy as np

from flexmbs.forces import friction_columns as col
from flexmbs.forces.friction_law import FrictionLaw
from flexmbs.forces.lugre import lugre
from flexmbs.kinematics.rotation import tilde


def lugre_law(v, z, N, par):
    """:func:`flexmbs.forces.lugre.lugre` with the law and constants of a ``fr_par`` row,
    as a tuple ``(f, F, P, f_v, f_z, F_v, F_z, P_v, P_z, F_N)``."""
    law = FrictionLaw(par[col.P_MU_S], par[col.P_MU_K], par[col.P_V_S], par[col.P_C_V])
    st = lugre(law, v, z, N, par[col.P_SIGMA0], par[col.P_SIGMA1], par[col.P_EPS],
               par[col.P_V_D])
    return st.f, st.F, st.P, st.f_v, st.f_z, st.F_v, st.F_z, st.P_v, st.P_z, st.F_N


def lugre_force(v, z, N, par):
    """``(f, F, P, F_N)`` of :func:`lugre_law`."""
    f, F, P, *_, F_N = lugre_law(v, z, N, par)
    return f, F, P, F_N


def _angle_gradient(mP, mQ, C, D):
    s, c = C[mP, 2] @ C[mQ, 1], C[mP, 1] @ C[mQ, 1]
    ds = C[mQ, 1] @ D[mP, 2] + C[mP, 2] @ D[mQ, 1]
    dc = C[mQ, 1] @ D[mP, 1] + C[mP, 1] @ D[mQ, 1]
    return (c * ds - s * dc) / (s * s + c * c)


def _offset_gradient(mP, mQ, C, D):
    return (C[mQ, 0] - C[mP, 0]) @ D[mP, 3] + C[mP, 3] @ (D[mQ, 0] - D[mP, 0])


def slip_map(kind, r, mP, mQ, C, D):
    """``B`` (d, n) of the kernel module's docstring."""
    if kind == 0:
        return r * _angle_gradient(mP, mQ, C, D)[None]
    if kind == 1:
        return _offset_gradient(mP, mQ, C, D)[None]
    if kind == 2:
        return np.array([_offset_gradient(mP, mQ, C, D), r * _angle_gradient(mP, mQ, C, D)])
    w = sum(tilde(C[mQ, i]) @ D[mQ, i] - tilde(C[mP, i]) @ D[mP, i] for i in (1, 2, 3))
    return r * 0.5 * C[mP, 1:4] @ w


def normal_force(row, C, G, lam_all):
    """``(N, dN/dlam_j, depends)`` (``N_0`` not included) of the kernel's function."""
    r0, r1 = row[col.I_ROW0], row[col.I_ROW1]
    lam = lam_all[r0:r1]
    if not row[col.I_REACT] or not np.any(lam):
        return 0.0, np.zeros(r1 - r0), False
    df_dlam = row[col.I_SIGN] * G[r0:r1, row[col.I_COL]:row[col.I_COL] + 3].T
    f = df_dlam @ lam
    if row[col.I_KIND] != 3:
        a = C[row[col.I_MP], 3]
        f = f - (f @ a) * a
    size = float(np.linalg.norm(f))
    if size == 0.0:
        return 0.0, np.zeros(r1 - r0), False
    return size, (f / size) @ df_dlam, True


def _element(e, q, qd, lam_all, C, D, G, fr_int, fr_par):
    row, par = fr_int[e], fr_par[e]
    B = slip_map(row[col.I_KIND], par[col.P_R], row[col.I_MP], row[col.I_MQ], C, D)
    d = col.N_DIRECTIONS[row[col.I_KIND]]
    v = B @ qd
    N, N_lam, depends = normal_force(row, C, G, lam_all)
    law = lugre_law(v, q[row[col.I_Z]:row[col.I_Z] + d], N + par[col.P_N0], par)
    return B, v, N_lam, depends, law


def friction_residual(r, q, qd, lam_all, C, D, G, fr_int, fr_par):
    """``r -= Q`` of every element."""
    for e in range(fr_int.shape[0]):
        B, v, _, _, (f, F, P, *_) = _element(e, q, qd, lam_all, C, D, G, fr_int, fr_par)
        z0, d = fr_int[e, col.I_Z], B.shape[0]
        r += B.T @ F
        r[z0:z0 + d] -= f
        r[z0 + d] -= P


def friction_newton(out, q, qd, lam_all, lam_pos, C, D, G, fr_int, fr_par, cK, cC):
    """The Newton matrix terms of every element, added to ``out``."""
    n = q.shape[0]
    for e in range(fr_int.shape[0]):
        B, v, N_lam, depends, law = _element(e, q, qd, lam_all, C, D, G, fr_int, fr_par)
        _, _, _, f_v, f_z, F_v, F_z, P_v, P_z, F_N = law
        z0, d = fr_int[e, col.I_Z], B.shape[0]
        zs, w = slice(z0, z0 + d), z0 + d
        dQ_dq, dQ_dqd = np.zeros((n, n)), -(B.T @ F_v @ B)
        dQ_dq[:, zs] -= B.T @ F_z
        dQ_dq[zs, zs] += f_z
        dQ_dq[w, zs] += P_z
        dQ_dqd[zs] += f_v @ B
        dQ_dqd[w] += P_v @ B
        out[:n, :n] -= cK * dQ_dq + cC * dQ_dqd
        if depends:
            dQ_dN = -(B.T @ F_N)
            dQ_dN[w] += F_N @ v
            pos = lam_pos[fr_int[e, col.I_ROW0]:fr_int[e, col.I_ROW1]]
            keep = pos >= 0
            out[:n, n + pos[keep]] -= np.outer(dQ_dN, N_lam[keep])
