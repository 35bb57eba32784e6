"""Compiled (numba) reaction wrenches of the rows of an output block
(:meth:`flexmbs.system.output_point.OutputPoint.reaction_block`): one call for ``k``
recorded states instead of one call (and its Python) per state.  Each row is
:func:`flexmbs.system.output_point_kernel.joint_wrenches` of that row's arguments, so
the wrenches are those of one call per row to the last bit.  Its numpy reference is
:func:`flexmbs.system.output_point.joint_wrench_rows` (same arguments;
``FLEXMBS_KERNELS=reference`` runs it; ``tests/system/test_output_block.py`` compares
them).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from flexmbs.system.output_point_kernel import joint_wrenches


@njit(cache=True)
def joint_wrench_rows(v, lam, rr, target, q, cols, rotates, p, R, on, TGk):  # pragma: no cover
    """``(k, J, 2, 3)``: :func:`~flexmbs.system.output_point_kernel.joint_wrenches` of
    each row ``i`` of ``v`` (k, entries), ``lam`` (k, n_lam), ``q`` (k, n_q), ``p``
    (k, J, 3), ``R`` (k, J, 3, 3); ``rr``, ``target``, ``cols``, ``rotates``, ``on``,
    ``TGk`` shared."""
    k, J = v.shape[0], cols.shape[0]
    out = np.empty((k, J, 2, 3))
    for i in range(k):
        out[i] = joint_wrenches(v[i], lam[i], rr, target, q[i], cols, rotates, p[i], R[i],
                                on, TGk)
    return out


def warm() -> None:
    """Compile :func:`joint_wrench_rows` now with the one signature every call uses (no
    rows, so no loop runs)."""
    z, i0 = np.zeros((0, 1)), np.zeros(0, dtype=np.int64)
    joint_wrench_rows(np.zeros((0, 0)), z, i0, i0, z, np.zeros((0, 7), dtype=np.int64),
                      np.zeros(0, dtype=np.bool_), np.zeros((0, 0, 3)),
                      np.zeros((0, 0, 3, 3)), np.zeros(0), np.zeros((4, 12)))
