"""Compiled (numba) force elements on stacked marker frames: point-to-point and torsion
spring-dampers (linear, or with a tabulated force-deflection curve), bushings, point
forces, and the one-sided springs and joint stops, for the compiled whole step
(:mod:`flexmbs.integrate.step_kernel`).

The frames are those of :func:`flexmbs.kinematics.frame_kernel.stacked_rows`: ``C``
(M, 4, 3) rows ``p, x, y, z`` of every marker (rigid, or floating-frame elastic
``p = r + A (s + Phi q_e)`` with axes turned by ``Psi q_e``), ``D = dC/dq`` (M, 4, 3, n)
over the global coordinates.  Per element (tables of :mod:`flexmbs.forces.spring_columns`)
scalar measures ``s_i`` of the two marker frames,

    AXIAL     l = |p_Q - p_P|                                  (THEORY §5.7.1 (2.59))
    ANGLE     phi = atan2(y_P . x_Q, x_P . x_Q)                (2.63)
    BUSHING   u_k = a_k^P . (p_Q - p_P),  theta = 1/2 (z_P . y_Q - y_P . z_Q,
              x_P . z_Q - z_P . x_Q,  y_P . x_Q - x_P . y_Q)   (:mod:`~flexmbs.forces.bushing`)

with deflections ``e_i = s_i - s0_i`` (the torsion spring's wrapped to (-pi, pi]) and
the laws ``F_i = K_i e_i + D_i sd_i + F_c(e_i)`` (``sd_i = grad s_i . qd``, ``F_c`` the
PCHIP curve, linear beyond its ends, :class:`~flexmbs.forces.curves.TabulatedCurve`),

    Q = -sum_i F_i grad s_i;

a point force ``F`` (inertial, or ``F = sum_k F'_k a_k^P`` in P's axes) gives
``Q = (dp_P/dq)^T F``.  The one-sided kinds take the measure itself, ``s = l``
(``AXIAL_STOP``: rope, compression spring), ``s = phi`` unwrapped in (-pi, pi]
(``ANGLE_STOP``) or ``s = a_k^P . (p_Q - p_P)`` (``SLIDE_STOP``), and the law of
:func:`flexmbs.forces.stops.stop_law` with the ramp ``r`` and indicator ``c = r'`` of
:func:`~flexmbs.forces.stops.ramp` (smoothed over ``w``),

    F = k r(s - upper) + d c(s - upper) sd                        above the range,
    F = -k r(lower - s) + d c(lower - s) sd                       below it, else 0,
    F_s = k c +- d c' sd,    F_sd = d c                            (the same branches),

statement for statement the Python elements' law (the measures equal theirs to
round-off).

:func:`spring_residual` adds ``r -= Q``; :func:`spring_newton` adds
``-(c_K dQ/dq + c_C dQ/dqd)`` with

    dQ/dq ~ -sum_i F_s,i grad s_i grad s_i^T   (follower force: (dp/dq)^T dF/dq),
    dQ/dqd = -sum_i F_sd,i grad s_i grad s_i^T,

like the joint friction kernel without the curvature of the measures (``F_i d2s_i/dq2``,
and ``d2p/dq2 . F``): Newton's matrix only steers the iteration, the residual is exact.
The numpy reference is :mod:`flexmbs.forces.spring_reference` (same names, same
arguments).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from flexmbs.forces.friction_kernel import angle_gradient, nonzero_columns
from flexmbs.forces.spring_columns import (
    ANGLE,
    ANGLE_STOP,
    AXIAL,
    AXIAL_STOP,
    BUSHING,
    FORCE,
    I_KIND,
    I_MP,
    I_MQ,
    I_TAB0,
    I_TAB1,
    N_PAR,
    P_AXIS,
    P_D,
    P_FRAME,
    P_K,
    P_LOWER,
    P_S0,
    P_UPPER,
    P_W,
    SLIDE_STOP,
)

#: the bushing's rotation measures: theta_k = 1/2 (a_i^P . a_j^Q - a_j^P . a_i^Q)
_TH = np.array([[3, 2], [1, 3], [2, 1]], dtype=np.int64)


@njit(cache=True, inline="always")
def _dot_grad(C, D, m1, i1, m2, i2, w, out):  # pragma: no cover - compiled
    """``out += w grad(C[m1, i1] . C[m2, i2])``; returns ``w C[m1, i1] . C[m2, i2]``."""
    v = 0.0
    for k in range(3):
        v += C[m1, i1, k] * C[m2, i2, k]
    for j in range(D.shape[3]):
        acc = 0.0
        for k in range(3):
            acc += C[m1, i1, k] * D[m2, i2, k, j] + C[m2, i2, k] * D[m1, i1, k, j]
        out[j] += w * acc
    return w * v


@njit(cache=True)
def curve(s, tab, a, b):  # pragma: no cover - compiled
    """``(F_c, dF_c/ds)`` of the cubic Hermite curve of ``tab[a:b]`` (rows ``s_i, F_i,
    F'_i``) at ``s``, linear beyond its ends; ``(0, 0)`` when ``a == b``."""
    if a == b:
        return 0.0, 0.0
    if s < tab[a, 0]:
        return tab[a, 1] + tab[a, 2] * (s - tab[a, 0]), tab[a, 2]
    if s > tab[b - 1, 0]:
        return tab[b - 1, 1] + tab[b - 1, 2] * (s - tab[b - 1, 0]), tab[b - 1, 2]
    i = a
    while i < b - 2 and s > tab[i + 1, 0]:
        i += 1
    h = tab[i + 1, 0] - tab[i, 0]
    t = (s - tab[i, 0]) / h
    y0, y1, m0, m1 = tab[i, 1], tab[i + 1, 1], h * tab[i, 2], h * tab[i + 1, 2]
    t2 = t * t
    F = (2 * t2 * t - 3 * t2 + 1) * y0 + (t2 * t - 2 * t2 + t) * m0 \
        + (3 * t2 - 2 * t2 * t) * y1 + (t2 * t - t2) * m1
    dF = (6 * t2 - 6 * t) * (y0 - y1) + (3 * t2 - 4 * t + 1) * m0 + (3 * t2 - 2 * t) * m1
    return F, dF / h


@njit(cache=True)
def ramp(z, w):  # pragma: no cover - compiled
    """``(r, r', r'')`` of the (smoothed) ramp of :func:`flexmbs.forces.stops.ramp`."""
    if z <= 0.0:
        return 0.0, 0.0, 0.0
    if w > 0.0 and z < w:
        return z * z / (2.0 * w), z / w, 1.0 / w
    return z - (0.5 * w if w > 0.0 else 0.0), 1.0, 0.0


@njit(cache=True)
def stop_law(s, sd, lower, upper, k, d, w):  # pragma: no cover - compiled
    """``(F, F_s, F_sd)`` of :func:`flexmbs.forces.stops.stop_law` (module docstring)."""
    r, c, dc = ramp(s - upper, w)
    if c > 0.0 or r > 0.0:
        return k * r + d * c * sd, k * c + d * dc * sd, d * c
    r, c, dc = ramp(lower - s, w)
    return -k * r + d * c * sd, k * c - d * dc * sd, d * c


@njit(cache=True)
def measures(e, C, D, sp_int, sp_par):  # pragma: no cover - compiled
    """``(e, grad s)``: the deflections ``s - s0`` (k,) of element ``e`` (module
    docstring; k = 1, or 6 for a bushing; the measure itself for the one-sided kinds)
    and the gradients (k, n) of the measures."""
    row, par = sp_int[e], sp_par[e]
    kind, mP, mQ = row[I_KIND], row[I_MP], row[I_MQ]
    n = D.shape[3]
    if kind == SLIDE_STOP:
        s, G = np.empty(1), np.zeros((1, n))
        a = 1 + int(par[P_AXIS])
        s[0] = _dot_grad(C, D, mP, a, mQ, 0, 1.0, G[0]) \
            + _dot_grad(C, D, mP, a, mP, 0, -1.0, G[0])
        return s, G
    if kind == BUSHING:
        s, G = np.empty(6), np.zeros((6, n))
        for k in range(3):
            s[k] = _dot_grad(C, D, mP, 1 + k, mQ, 0, 1.0, G[k]) \
                + _dot_grad(C, D, mP, 1 + k, mP, 0, -1.0, G[k]) - par[P_S0 + k]
            i, j = _TH[k, 0], _TH[k, 1]
            s[3 + k] = _dot_grad(C, D, mP, i, mQ, j, 0.5, G[3 + k]) \
                + _dot_grad(C, D, mP, j, mQ, i, -0.5, G[3 + k]) - par[P_S0 + 3 + k]
        return s, G
    s, G = np.empty(1), np.zeros((1, n))
    if kind == AXIAL or kind == AXIAL_STOP:
        d = np.empty(3)
        for k in range(3):
            d[k] = C[mQ, 0, k] - C[mP, 0, k]
        length = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        if length < 1e-14:        # direction undefined (the element raises): NaN, which the
            s[0] = np.nan         # caller's finite test reports by the element's name
            G[0, :] = np.nan
            return s, G
        for j in range(n):
            acc = 0.0
            for k in range(3):
                acc += d[k] * (D[mQ, 0, k, j] - D[mP, 0, k, j])
            G[0, j] = acc / length
        s[0] = length if kind == AXIAL_STOP else length - par[P_S0]
        return s, G
    sv, cv = angle_gradient(mP, mQ, C, D, 1.0, G[0])       # ANGLE, ANGLE_STOP
    if kind == ANGLE_STOP:
        s[0] = np.arctan2(sv, cv)
        return s, G
    dev = np.arctan2(sv, cv) - par[P_S0]
    s[0] = dev - 2.0 * np.pi * np.round(dev / (2.0 * np.pi))
    return s, G


@njit(cache=True)
def laws(e, s, G, qd, sp_int, sp_par, sp_tab):  # pragma: no cover - compiled
    """``(F, F_s, F_sd)`` (k,) of the measures of element ``e`` at deflections ``s``."""
    k = s.shape[0]
    par = sp_par[e]
    a, b = sp_int[e, I_TAB0], sp_int[e, I_TAB1]
    F, F_s, F_sd = np.empty(k), np.empty(k), np.empty(k)
    kind = sp_int[e, I_KIND]
    for i in range(k):
        sd = 0.0
        for j in range(G.shape[1]):
            sd += G[i, j] * qd[j]
        if kind == AXIAL_STOP or kind == ANGLE_STOP or kind == SLIDE_STOP:
            F[i], F_s[i], F_sd[i] = stop_law(s[i], sd, par[P_LOWER], par[P_UPPER],
                                             par[P_K], par[P_D], par[P_W])
            continue
        Fc, dFc = curve(s[i], sp_tab, a, b)
        F[i] = par[P_K + i] * s[i] + par[P_D + i] * sd + Fc
        F_s[i] = par[P_K + i] + dFc
        F_sd[i] = par[P_D + i]
    return F, F_s, F_sd


@njit(cache=True)
def point_force(e, C, sp_int, sp_par):  # pragma: no cover - compiled
    """The force ``F`` (3,) [N] of a ``FORCE`` element, inertial components."""
    par, mP = sp_par[e], sp_int[e, I_MP]
    F = np.empty(3)
    for k in range(3):
        if par[P_FRAME] == 0.0:
            F[k] = par[k]
        else:
            F[k] = par[0] * C[mP, 1, k] + par[1] * C[mP, 2, k] + par[2] * C[mP, 3, k]
    return F


@njit(cache=True, inline="always")
def follower_gradient(par, Dm):  # pragma: no cover - compiled
    """``dF/dq = sum_k F'_k da_k/dq`` (3, n) of a point force ``F = sum_k F'_k a_k^P`` in
    P's axes (``F'_k = par[k]``), ``Dm`` (4, 3, n) the derivatives of P's rows ``p, x, y,
    z``; the Newton block of the force is ``-c_K (dp_P/dq)^T dF/dq``."""
    dF = np.zeros_like(Dm[0])
    for k in range(3):
        dF += par[k] * Dm[1 + k]
    return dF


@njit(cache=True, inline="always")
def newton_weights(e, C, D, qd, sp_int, sp_par, sp_tab, cK, cC):  # pragma: no cover
    """``(G, w, cols)`` of element ``e`` (not a point force): the gradients ``G`` (k, n)
    of its measures, the weights ``w_i = c_K F_s,i + c_C F_sd,i`` of its Newton block
    ``-(c_K dQ/dq + c_C dQ/dqd) = sum_i w_i grad s_i grad s_i^T`` (module docstring) and
    the columns where ``G`` is not zero."""
    s, G = measures(e, C, D, sp_int, sp_par)
    _, F_s, F_sd = laws(e, s, G, qd, sp_int, sp_par, sp_tab)
    for i in range(s.shape[0]):
        F_s[i] = cK * F_s[i] + cC * F_sd[i]
    return G, F_s, nonzero_columns(G)


@njit(cache=True)
def spring_residual(r, q, qd, C, D, sp_int, sp_par, sp_tab):  # pragma: no cover
    """``r -= Q`` of every element (module docstring)."""
    n = D.shape[3]
    for e in range(sp_int.shape[0]):
        if sp_int[e, I_KIND] == FORCE:
            F, mP = point_force(e, C, sp_int, sp_par), sp_int[e, I_MP]
            for j in range(n):
                r[j] -= D[mP, 0, 0, j] * F[0] + D[mP, 0, 1, j] * F[1] + D[mP, 0, 2, j] * F[2]
            continue
        s, G = measures(e, C, D, sp_int, sp_par)
        F, _, _ = laws(e, s, G, qd, sp_int, sp_par, sp_tab)
        for i in range(s.shape[0]):
            for j in range(n):
                r[j] += F[i] * G[i, j]


@njit(cache=True)
def spring_newton(out, q, qd, C, D, sp_int, sp_par, sp_tab, cK, cC):  # pragma: no cover
    """Add ``-(c_K dQ/dq + c_C dQ/dqd)`` of every element (module docstring) to
    ``out[:n, :n]`` of a dense Newton matrix ``out``."""
    for e in range(sp_int.shape[0]):
        if sp_int[e, I_KIND] == FORCE:
            mP = sp_int[e, I_MP]
            if sp_par[e, P_FRAME] == 0.0:
                continue
            Dp, dF = D[mP, 0], follower_gradient(sp_par[e], D[mP])
            cols, colsF = nonzero_columns(Dp), nonzero_columns(dF)
            for a in cols:
                for b in colsF:
                    out[a, b] -= cK * (Dp[0, a] * dF[0, b] + Dp[1, a] * dF[1, b]
                                       + Dp[2, a] * dF[2, b])
            continue
        G, w, cols = newton_weights(e, C, D, qd, sp_int, sp_par, sp_tab, cK, cC)
        for i in range(w.shape[0]):
            if w[i] == 0.0:
                continue
            for a in cols:
                ga = w[i] * G[i, a]
                for b in cols:
                    out[a, b] += ga * G[i, b]


def warm() -> None:
    """Compile :func:`spring_residual` and :func:`spring_newton` now with the one
    signature every Python call uses (run once by the first import of an installation,
    :mod:`flexmbs.kernel_cache`): no elements, so no loop runs."""
    z = np.zeros(1)
    C, D = np.zeros((1, 4, 3)), np.zeros((1, 4, 3, 1))
    sp_int, sp_par = np.zeros((0, 5), dtype=np.int64), np.zeros((0, N_PAR))
    spring_residual(z, z, z, C, D, sp_int, sp_par, np.zeros((0, 3)))
    spring_newton(np.zeros((1, 1)), z, z, C, D, sp_int, sp_par, np.zeros((0, 3)), 1.0, 1.0)
