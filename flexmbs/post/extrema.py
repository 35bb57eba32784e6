"""Per-node maxima over time of a nodal field (durability screening).

For a nodal field ``f_i(t_k)`` at the output times ``t_k`` (von Mises stress
``sig_vM,i(t_k) = von_mises(S_i q_e(t_k))`` for :func:`von_mises_maximum`):

    f_max,i = max_k f_i(t_k),        t_max,i = t_k*  with  k* = min argmax_k f_i(t_k)

(the first time the maximum is reached), and the peak over the nodes at each time
(:func:`von_mises_peak`)

    p_k = max_i f_i(t_k),        i_k = min argmax_i f_i(t_k).
  The field is evaluated a block of times at a
time, so memory stays ``O(block N)`` for long runs.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from flexmbs.post.recovery import von_mises_stress

__all__ = ["FieldMaximum", "max_over_time", "von_mises_maximum", "von_mises_peak"]

#: output times evaluated at once
BLOCK = 64


@dataclass(frozen=True)
class FieldMaximum:
    """``value`` (N,) the largest value of a nodal field over time, ``time`` (N,) [s] the
    first output time at which each node reaches it."""

    value: np.ndarray
    time: np.ndarray

    def __post_init__(self):
        for k in ("value", "time"):
            a = np.array(getattr(self, k), dtype=float)
            a.setflags(write=False)
            object.__setattr__(self, k, a)


def max_over_time(t, field: Callable[[slice], np.ndarray]) -> FieldMaximum:
    """The maximum over the times ``t`` (n,) [s] of a nodal field; ``field(block)`` returns
    the field at ``t[block]`` as an (n_block, N) array."""
    t = np.asarray(t, dtype=float)
    if t.size == 0:
        raise ValueError("max_over_time: expected at least one output time, got none")
    value = time = None
    for start in range(0, len(t), BLOCK):
        block = slice(start, min(start + BLOCK, len(t)))
        f = np.asarray(field(block), dtype=float)
        k = np.argmax(f, axis=0)
        f_k = f[k, np.arange(f.shape[1])]
        if value is None:
            value, time = f_k, t[block][k]
        else:
            later = f_k > value                     # strictly: keep the first time
            value = np.where(later, f_k, value)
            time = np.where(later, t[block][k], time)
    return FieldMaximum(value, time)


def von_mises_maximum(body, t, q_e, wrenches=None) -> FieldMaximum:
    """``max_k sig_vM(t_k)`` per node [Pa] and its time [s] of a reduced flexible body
    (:class:`~flexmbs.io.bodyfile.ReducedBody`) with elastic coordinates ``q_e`` (n, n_q);
    ``wrenches`` ``{marker: (n, 6)}``: the interface loads of the static correction
    (:func:`flexmbs.post.recovery.nodal_stress`)."""
    q_e = np.atleast_2d(np.asarray(q_e, dtype=float))
    W = wrenches or {}
    return max_over_time(t, lambda block: von_mises_stress(
        body, q_e[block], {k: np.asarray(v)[block] for k, v in W.items()}))


def von_mises_peak(body, q_e, wrenches=None) -> tuple[np.ndarray, np.ndarray]:
    """``(p, i)``: the largest von Mises stress over the nodes of a reduced flexible body
    at each of the ``n`` rows of ``q_e`` [Pa] (n,) and the node that carries it (n,)
    (arguments as :func:`von_mises_maximum`)."""
    q_e = np.atleast_2d(np.asarray(q_e, dtype=float))
    W = wrenches or {}
    p, i = np.empty(len(q_e)), np.empty(len(q_e), dtype=np.int64)
    for start in range(0, len(q_e), BLOCK):
        block = slice(start, min(start + BLOCK, len(q_e)))
        f = np.asarray(von_mises_stress(body, q_e[block],
                                        {k: np.asarray(v)[block] for k, v in W.items()}))
        i[block] = np.argmax(f, axis=1)
        p[block] = f[np.arange(len(f)), i[block]]
    return p, i
