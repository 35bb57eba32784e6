"""Compiled (numba) energies of many rigid bodies at once: one call instead of some
twenty numpy calls on arrays of a few entries.  Its numpy reference is
:func:`flexmbs.bodies.rigid_set.rigid_energies` (same arguments;
``FLEXMBS_KERNELS=reference`` runs it; ``tests/system/test_output_point.py`` compares
them).  Rigid bodies ``b`` (columns ``cols[b] = start_b + 0..6`` of ``q = [r; e]``):

    omega' = 2 L(e) ed,   L(e) = sum_k e_k L_k,   A(e)_ij = sum_kl e_k e_l T_A[i, j, k, l],
    T = sum_b 1/2 m |rd|^2 + m rd . A(e) (omega' x c) + 1/2 omega' . I_O omega',
    V_g = sum_b -m g . (r + A(e) c).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def A_and_omega_into(e, ed, TLk, TAk, A, w):  # pragma: no cover
    """``A = A(e)`` (3, 3) and ``w = omega' = 2 L(e) ed`` (3,) from the tables ``TAk``,
    ``TLk`` (module docstring), written into ``A`` and ``w``."""
    for i in range(3):                          # omega' = 2 L(e) ed
        s = 0.0
        for l in range(4):
            Lil = 0.0
            for k in range(4):
                Lil += e[k] * TLk[k, 4 * i + l]
            s += Lil * ed[l]
        w[i] = 2.0 * s
    for ij in range(9):                         # A(e) = e . (e @ TAk)
        s = 0.0
        for l in range(4):
            t = 0.0
            for k in range(4):
                t += e[k] * TAk[k, 9 * l + ij]
            s += e[l] * t
        A[ij // 3, ij % 3] = s


@njit(cache=True)
def rigid_energies(q, qd, cols, m, c, I_O, gravity, TLk, TAk):  # pragma: no cover
    """``(T, V_g)`` [J] of the rigid bodies (module docstring; ``TLk`` (4, 12) the
    ``L_k``, ``TAk`` (4, 36) the ``T_A[:, :, k, l]`` over ``l``, as in :mod:`flexmbs.
    bodies.rigid_set`)."""
    T = 0.0
    V = 0.0
    e = np.empty(4)
    ed = np.empty(4)
    w = np.empty(3)
    A = np.empty((3, 3))
    for b in range(m.size):
        for k in range(4):
            e[k] = q[cols[b, 3 + k]]
            ed[k] = qd[cols[b, 3 + k]]
        A_and_omega_into(e, ed, TLk, TAk, A, w)
        wc0 = w[1] * c[b, 2] - w[2] * c[b, 1]
        wc1 = w[2] * c[b, 0] - w[0] * c[b, 2]
        wc2 = w[0] * c[b, 1] - w[1] * c[b, 0]
        for i in range(3):
            rd = qd[cols[b, i]]
            Awc = A[i, 0] * wc0 + A[i, 1] * wc1 + A[i, 2] * wc2
            Iw = I_O[b, i, 0] * w[0] + I_O[b, i, 1] * w[1] + I_O[b, i, 2] * w[2]
            T += 0.5 * m[b] * rd * rd + m[b] * rd * Awc + 0.5 * w[i] * Iw
            Ac = A[i, 0] * c[b, 0] + A[i, 1] * c[b, 1] + A[i, 2] * c[b, 2]
            V -= m[b] * (q[cols[b, i]] + Ac) * gravity[i]
    return T, V


def warm() -> None:
    """Compile :func:`rigid_energies` now with the one signature every call uses (no
    bodies, so no loop runs)."""
    z = np.zeros(1)
    rigid_energies(z, z, np.zeros((0, 7), dtype=np.int64), np.zeros(0), np.zeros((0, 3)),
                   np.zeros((0, 3, 3)), np.zeros(3), np.zeros((4, 12)), np.zeros((4, 36)))
