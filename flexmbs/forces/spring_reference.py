"""The numpy reference of :mod:`flexmbs.forces.spring_kernel` (same names, same
arguments; ``FLEXMBS_KERNELS=reference`` runs it): spring-dampers, torsion springs,
bushings, point forces, one-sided springs and joint stops on stacked marker frames, the
formulas of that module's docstring (the curve by :class:`scipy.interpolate.
CubicHermiteSpline`, the one-sided law by the Python elements' own
:func:`flexmbs.forces.stops.stop_law`)."""
from __future__ import annotations

import numpy as np
from scipy.interpolate import CubicHermiteSpline

from flexmbs.forces import spring_columns as col
from flexmbs.forces.stops import stop_law

_TH = ((3, 2), (1, 3), (2, 1))


def _dot(C, D, m1, i1, m2, i2):
    """``(C[m1, i1] . C[m2, i2], its gradient)``."""
    return C[m1, i1] @ C[m2, i2], C[m1, i1] @ D[m2, i2] + C[m2, i2] @ D[m1, i1]


def curve(s, tab, a, b):
    """``(F_c, dF_c/ds)`` of the Hermite curve of ``tab[a:b]``, linear beyond its ends."""
    if a == b:
        return 0.0, 0.0
    t = tab[a:b]
    end = t[0] if s < t[0, 0] else t[-1] if s > t[-1, 0] else None
    if end is not None:
        return end[1] + end[2] * (s - end[0]), end[2]
    h = CubicHermiteSpline(t[:, 0], t[:, 1], t[:, 2])
    return float(h(s)), float(h(s, 1))


def measures(e, C, D, sp_int, sp_par):
    """``(e, grad s)`` of the kernel's function."""
    row, par = sp_int[e], sp_par[e]
    kind, mP, mQ = row[col.I_KIND], row[col.I_MP], row[col.I_MQ]
    if kind == col.BUSHING:
        vals = []
        for k in range(3):
            a, ga = _dot(C, D, mP, 1 + k, mQ, 0)
            b, gb = _dot(C, D, mP, 1 + k, mP, 0)
            vals.append((a - b, ga - gb))
        for i, j in _TH:
            a, ga = _dot(C, D, mP, i, mQ, j)
            b, gb = _dot(C, D, mP, j, mQ, i)
            vals.append((0.5 * (a - b), 0.5 * (ga - gb)))
        s = np.array([v for v, _ in vals]) - par[col.P_S0:col.P_S0 + 6]
        return s, np.array([g for _, g in vals])
    if kind == col.SLIDE_STOP:
        a = 1 + int(par[col.P_AXIS])
        s, g = _dot(C, D, mP, a, mQ, 0)
        b, gb = _dot(C, D, mP, a, mP, 0)
        return np.array([s - b]), (g - gb)[None]
    if kind in (col.AXIAL, col.AXIAL_STOP):
        d = C[mQ, 0] - C[mP, 0]
        length = np.linalg.norm(d)
        if length < 1e-14:                       # direction undefined: NaN, as the kernel
            return np.full(1, np.nan), np.full((1, D.shape[3]), np.nan)
        s0 = 0.0 if kind == col.AXIAL_STOP else par[col.P_S0]
        return np.array([length - s0]), (d @ (D[mQ, 0] - D[mP, 0]) / length)[None]
    sv, gs = _dot(C, D, mP, 2, mQ, 1)
    cv, gc = _dot(C, D, mP, 1, mQ, 1)
    G = ((cv * gs - sv * gc) / (sv * sv + cv * cv))[None]
    if kind == col.ANGLE_STOP:
        return np.array([np.arctan2(sv, cv)]), G
    dev = np.arctan2(sv, cv) - par[col.P_S0]
    s = dev - 2.0 * np.pi * np.round(dev / (2.0 * np.pi))
    return np.array([s]), G


def laws(e, s, G, qd, sp_int, sp_par, sp_tab):
    """``(F, F_s, F_sd)`` of the kernel's function."""
    k = s.shape[0]
    if sp_int[e, col.I_KIND] in col.STOPS:
        p = sp_par[e]
        out = stop_law(float(s[0]), float(G[0] @ qd), p[col.P_LOWER], p[col.P_UPPER],
                       p[col.P_K], p[col.P_D], p[col.P_W])
        return tuple(np.array([x]) for x in out)
    K = sp_par[e, col.P_K:col.P_K + k]
    Dm = sp_par[e, col.P_D:col.P_D + k]
    c = np.array([curve(x, sp_tab, sp_int[e, col.I_TAB0], sp_int[e, col.I_TAB1]) for x in s])
    return K * s + Dm * (G @ qd) + c[:, 0], K + c[:, 1], Dm.copy()


def point_force(e, C, sp_int, sp_par):
    """The force of a ``FORCE`` element in inertial components."""
    F, mP = sp_par[e, 0:3], sp_int[e, col.I_MP]
    return F.copy() if sp_par[e, col.P_FRAME] == 0.0 else F @ C[mP, 1:4]


def spring_residual(r, q, qd, C, D, sp_int, sp_par, sp_tab):
    """``r -= Q`` of every element."""
    for e in range(sp_int.shape[0]):
        if sp_int[e, col.I_KIND] == col.FORCE:
            r -= D[sp_int[e, col.I_MP], 0].T @ point_force(e, C, sp_int, sp_par)
            continue
        s, G = measures(e, C, D, sp_int, sp_par)
        r += G.T @ laws(e, s, G, qd, sp_int, sp_par, sp_tab)[0]


def spring_newton(out, q, qd, C, D, sp_int, sp_par, sp_tab, cK, cC):
    """The Newton matrix terms of every element, added to ``out``."""
    n = q.shape[0]
    for e in range(sp_int.shape[0]):
        if sp_int[e, col.I_KIND] == col.FORCE:
            mP = sp_int[e, col.I_MP]
            if sp_par[e, col.P_FRAME] != 0.0:
                dF = np.einsum("k,kij->ij", sp_par[e, 0:3], D[mP, 1:4])
                out[:n, :n] -= cK * D[mP, 0].T @ dF
            continue
        s, G = measures(e, C, D, sp_int, sp_par)
        _, F_s, F_sd = laws(e, s, G, qd, sp_int, sp_par, sp_tab)
        out[:n, :n] += G.T @ ((cK * F_s + cC * F_sd)[:, None] * G)
