"""Compiled (numba) reaction wrenches of the joints of one output point
(:mod:`flexmbs.system.output_point`): one call instead of some fifteen numpy calls on
arrays of a few entries.  Its numpy reference is :func:`flexmbs.system.output_point.
joint_wrenches` (same arguments; ``FLEXMBS_KERNELS=reference`` runs it;
``tests/system/test_output_point.py`` compares them).  Joint ``j`` (rows ``rr`` of the
entries of ``G`` in its body's columns, their values ``v``, at ``target = j n_max +
local column``; ``cols[j]`` the columns of its body's coordinates ``[r; e; ...]``):

    gen_j = -sum v lam_rr,   f = gen[0:3],   m_O = 1/2 G(e) gen[3:7] (rotating bodies),
    m_Q = m_O - (p_Q - r) x f,   wrench_j = on_j (R_Q^T f, R_Q^T m_Q).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def joint_wrenches(v, lam, rr, target, q, cols, rotates, p, R, on, TGk):  # pragma: no cover
    """``(J, 2, 3)``: each joint's reaction force and torque in its marker ``Q``'s frame
    (module docstring; ``TGk`` (4, 12) the ``G_k``)."""
    J, n_max = cols.shape
    gen = np.zeros(J * n_max)
    for k in range(v.size):
        gen[target[k]] += v[k] * lam[rr[k]]
    out = np.zeros((J, 2, 3))
    f = np.empty(3)
    mq = np.empty(3)
    for j in range(J):
        o = j * n_max
        for i in range(3):
            f[i] = -gen[o + i]
        for i in range(3):
            s = 0.0
            if rotates[j]:                       # m_O = 1/2 G(e) g_e
                for l in range(4):
                    Gil = 0.0
                    for k in range(4):
                        Gil += q[cols[j, 3 + k]] * TGk[k, 4 * i + l]
                    s += Gil * -gen[o + 3 + l]
                s *= 0.5
            mq[i] = s
        d0 = p[j, 0] - q[cols[j, 0]]
        d1 = p[j, 1] - q[cols[j, 1]]
        d2 = p[j, 2] - q[cols[j, 2]]
        mq[0] -= d1 * f[2] - d2 * f[1]
        mq[1] -= d2 * f[0] - d0 * f[2]
        mq[2] -= d0 * f[1] - d1 * f[0]
        for i in range(3):
            out[j, 0, i] = on[j] * (f[0] * R[j, 0, i] + f[1] * R[j, 1, i] + f[2] * R[j, 2, i])
            out[j, 1, i] = on[j] * (mq[0] * R[j, 0, i] + mq[1] * R[j, 1, i]
                                    + mq[2] * R[j, 2, i])
    return out


def warm() -> None:
    """Compile :func:`joint_wrenches` now with the one signature every call uses (no
    joints, so no loop runs)."""
    z, i0 = np.zeros(1), np.zeros(0, dtype=np.int64)
    joint_wrenches(np.zeros(0), z, i0, i0, z, np.zeros((0, 7), dtype=np.int64),
                   np.zeros(0, dtype=np.bool_), np.zeros((0, 3)), np.zeros((0, 3, 3)),
                   np.zeros(0), np.zeros((4, 12)))
