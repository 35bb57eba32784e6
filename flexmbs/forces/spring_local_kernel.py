"""Compiled (numba) force elements on marker frames kept sparse, on each marker's own body
(systems above the dense stacked rows' size, :class:`flexmbs.system.spring_pack.
LocalSprings`).

The frames are those of :func:`flexmbs.system.local_rows_kernel.local_frames`: ``C``
(M, 4, 3) rows ``p, x, y, z`` of every marker and ``D_loc`` (M, 4, 3, L) their
derivatives on the marker's own body's coordinates only.  Element ``e`` with markers
``(P, Q) = pm[e]`` sees them as the pair

    C_e (2, 4, 3) = [C_P, C_Q],   D_e (2, 4, 3, 2 L) = [[D_P, 0], [0, D_Q]],

over the 2 L local slots whose global columns are ``cols[e]`` (-1: none).  On the pair the
measures, laws and forces are those of :mod:`flexmbs.forces.spring_kernel` (the same
functions, with ``sp_int``'s markers set to 0 and 1), so

    Q_e = -sum_i F_i grad s_i  (point force: (dp_P/dq)^T F),    r[cols[e]] -= Q_e,

slot by slot (two slots on one column -- both markers on one body -- add up, the chain
rule).

:func:`spring_local_newton` writes each element's ``-(c_K dQ/dq + c_C dQ/dqd)``
of :func:`flexmbs.forces.spring_kernel.spring_newton` (without the curvature of the
measures) as a dense block on its force block's coordinates ``idx`` (slot ``j`` at
position ``pos[e, j]`` of ``idx``, -1: none), row-major into ``vals[ptr[e]:ptr[e + 1]]``.
The numpy reference is :func:`flexmbs.forces.spring_reference.spring_residual` (and
``spring_newton``) on the frames scattered dense over ``q`` (:meth:`LocalSprings.dense_frames
<flexmbs.system.spring_pack.LocalSprings.dense_frames>`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from flexmbs.forces.friction_kernel import nonzero_columns
from flexmbs.forces.spring_columns import FORCE, I_KIND, N_PAR, P_FRAME
from flexmbs.forces.spring_kernel import (follower_gradient, laws, measures, newton_weights,
                                          point_force)


@njit(cache=True)
def pair(C, D, mP, mQ):  # pragma: no cover - compiled
    """``(C_e, D_e)`` of the markers ``mP``, ``mQ`` (module docstring)."""
    L = D.shape[3]
    Ce = np.empty((2, 4, 3))
    De = np.zeros((2, 4, 3, 2 * L))
    for u in range(4):
        for i in range(3):
            Ce[0, u, i] = C[mP, u, i]
            Ce[1, u, i] = C[mQ, u, i]
            for j in range(L):
                De[0, u, i, j] = D[mP, u, i, j]
                De[1, u, i, L + j] = D[mQ, u, i, j]
    return Ce, De


@njit(cache=True, inline="always")
def slot_rates(qd, ce):  # pragma: no cover - compiled
    """The rates ``qd[ce[j]]`` of an element's local slots (0 where ``ce[j] = -1``)."""
    n = ce.shape[0]
    qde = np.zeros(n)
    for j in range(n):
        if ce[j] >= 0:
            qde[j] = qd[ce[j]]
    return qde


@njit(cache=True)
def spring_local_residual(r, qd, C, D, pm, cols, sp_int, sp_par, sp_tab):  # pragma: no cover
    """``r -= Q`` of every element (module docstring; ``sp_int``'s markers 0 and 1)."""
    for e in range(sp_int.shape[0]):
        Ce, De = pair(C, D, pm[e, 0], pm[e, 1])
        ce = cols[e]
        n = ce.shape[0]
        if sp_int[e, I_KIND] == FORCE:
            F = point_force(e, Ce, sp_int, sp_par)
            for j in range(n):
                if ce[j] >= 0:
                    r[ce[j]] -= De[0, 0, 0, j] * F[0] + De[0, 0, 1, j] * F[1] \
                        + De[0, 0, 2, j] * F[2]
            continue
        s, G = measures(e, Ce, De, sp_int, sp_par)
        F, _, _ = laws(e, s, G, slot_rates(qd, ce), sp_int, sp_par, sp_tab)
        for i in range(s.shape[0]):
            for j in range(n):
                if ce[j] >= 0:
                    r[ce[j]] += F[i] * G[i, j]


@njit(cache=True)
def spring_local_newton(vals, qd, C, D, pm, cols, pos, ptr, sp_int, sp_par, sp_tab, cK,
                        cC):  # pragma: no cover - compiled
    """Each element's Newton block into ``vals`` (module docstring; ``ptr[e + 1] -
    ptr[e] = n_b^2``, ``n_b`` the size of its ``idx``)."""
    for e in range(sp_int.shape[0]):
        p0 = ptr[e]
        nb = int(np.round(np.sqrt(ptr[e + 1] - p0)))
        for i in range(ptr[e + 1] - p0):
            vals[p0 + i] = 0.0
        Ce, De = pair(C, D, pm[e, 0], pm[e, 1])
        ce, pe = cols[e], pos[e]
        if sp_int[e, I_KIND] == FORCE:
            if sp_par[e, P_FRAME] == 0.0:
                continue
            Dp, dF = De[0, 0], follower_gradient(sp_par[e], De[0])
            for a in nonzero_columns(Dp):
                for b in nonzero_columns(dF):
                    if pe[a] >= 0 and pe[b] >= 0:
                        vals[p0 + pe[a] * nb + pe[b]] -= cK * (
                            Dp[0, a] * dF[0, b] + Dp[1, a] * dF[1, b] + Dp[2, a] * dF[2, b])
            continue
        G, w, nz = newton_weights(e, Ce, De, slot_rates(qd, ce), sp_int, sp_par, sp_tab,
                                  cK, cC)
        for i in range(w.shape[0]):
            if w[i] == 0.0:
                continue
            for a in nz:
                if pe[a] < 0:
                    continue
                ga = w[i] * G[i, a]
                for b in nz:
                    if pe[b] >= 0:
                        vals[p0 + pe[a] * nb + pe[b]] += ga * G[i, b]


def warm() -> None:
    """Compile :func:`spring_local_residual` and :func:`spring_local_newton` now with the
    one signature every call uses (no elements, so no loop runs)."""
    z = np.zeros(1)
    C, D = np.zeros((1, 4, 3)), np.zeros((1, 4, 3, 1))
    i2 = np.zeros((0, 2), dtype=np.int64)
    spring_local_residual(z, z, C, D, i2, i2, np.zeros((0, 5), dtype=np.int64),
                          np.zeros((0, N_PAR)), np.zeros((0, 3)))
    spring_local_newton(z, z, C, D, i2, i2, i2, np.zeros(1, dtype=np.int64),
                        np.zeros((0, 5), dtype=np.int64), np.zeros((0, N_PAR)),
                        np.zeros((0, 3)), 1.0, 1.0)
