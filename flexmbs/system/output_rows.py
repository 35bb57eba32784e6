"""The constraint rows of one recorded state, evaluated once (THEORY §5.9, §8.3).

An output point needs, at the recorded ``(q, t)``, of the active rows

    G = dg/dq (n_lam, n_q)   the velocity projection qd <- qd - G^T (G G^T)^-1 (G qd + g_t),
                             the reactions from G^T lam, the conditioning of G,
    g_t = dg/dt (n_lam,)     the projection,

and the values ``g_i`` of the rows dropped as redundant (the health check, THEORY
§5.9.1) and the inertial frames ``(p, R)`` of the joints' markers (reactions, joint
coordinates).  :func:`rows_at` evaluates all of them in one pass: for a system whose rows
:class:`~flexmbs.system.stacked.StackedRows` covers completely, one compiled call gives
``g`` and ``G`` of every row and the marker frames ``C``; ``g_t`` is zero on label rows
and normalisations and ``w'(t) . p + f'(t)`` on a drive row (``p = alpha . beta``, its
label rows, from ``C``).  Otherwise the rows come from
:class:`~flexmbs.system.constraint_rows.ConstraintRows` block by block as before.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics import frames as F


@dataclass(frozen=True)
class RowsAt:
    """The rows of one state (module docstring): ``G`` dense ndarray or CSR,
    ``g_t``, ``g_all`` (every row, active or not, ``row_labels`` order; None when not
    evaluated) and ``frames`` ``{id(marker): (p (3,), R (3, 3))}`` (None: not at hand)."""

    G: object
    g_t: np.ndarray
    g_all: np.ndarray | None
    frames: dict | None


def drive_rates(st, C: np.ndarray, t: float) -> dict:
    """``{system row: g_t}`` of the drive rows of :class:`~flexmbs.system.stacked.
    StackedRows` ``st`` at frames ``C`` (M, 4, 3): ``w'(t) . p + f'(t)`` over the drive's
    label rows ``p_r = (S_alpha C + k)_r . (S_beta C)_r``."""
    out = {}
    if not st.weighted:
        return out
    Cf = C.reshape(-1, 3)
    for _, rs, rows, r in st.weighted:
        p = np.einsum("ri,ri->r", st.S_alpha[rs] @ Cf + st.k[rs], st.S_beta[rs] @ Cf)
        _, w1, _, _, f1, _ = rows.weights(t)
        out[r] = float(w1 @ p + f1)
    return out


def stacked_frames(st, C: np.ndarray) -> StackedFrames:
    """``{id(marker): (p, R)}`` of the markers of ``st`` from their frames ``C`` (each
    made when looked up)."""
    return StackedFrames(st.marker_index, C)


class StackedFrames(Mapping):
    """``{id(marker): (p (3,), R (3, 3))}`` of the frames ``C`` (M, 4, 3) of the markers
    ``index`` ``{id(marker): m}``: ``(C[m, 0], C[m, 1:4].T)``, views made on look-up
    (an output point uses a few of a system's markers)."""

    __slots__ = ("index", "C")

    def __init__(self, index: dict, C: np.ndarray):
        self.index, self.C = index, C

    def __getitem__(self, key):
        m = self.index[key]
        return self.C[m, 0], self.C[m, 1:4].T

    def get(self, key, default=None):
        m = self.index.get(key)
        return default if m is None else (self.C[m, 0], self.C[m, 1:4].T)

    def __iter__(self):
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)


def rows_at(rows, q: np.ndarray, t: float) -> RowsAt:
    """The :class:`RowsAt` of :class:`~flexmbs.system.constraint_rows.ConstraintRows`
    ``rows`` at ``(q, t)`` (module docstring)."""
    lay = rows.layout
    st = rows.stacked()
    if st is not None and st.complete:
        g_all, G_all, C = _dense_aside(st, q, t)
        g_t = np.zeros(lay.n_rows_all)
        for r, v in drive_rates(st, C, t).items():
            g_t[r] = v
        act = lay.active
        if not act.all():
            G_all, g_t = G_all[act], g_t[act]
        return RowsAt(G_all, g_t, g_all, stacked_frames(st, C))
    G = rows.constraint_jacobian(q, t)
    return RowsAt(G, np.asarray(rows.constraint_time_derivative(q, t), dtype=float), None,
                  None)


def _dense_aside(st, q: np.ndarray, t: float) -> tuple:
    """``(g, G, C)`` of :meth:`StackedRows.dense <flexmbs.system.stacked.StackedRows.
    dense>` at ``(q, t)``, leaving the last evaluation that ``st`` holds for the
    integrator as it was (the step's own frames at that ``q`` agree only to round-off;
    an output must not change the trajectory by a bit)."""
    last, key = getattr(st, "last", None), st.last_key
    g, G = st.dense(q, t)
    C = st.last[0]
    if key is None:
        st.forget()
    else:
        st.remember(*last, *key)
    return g, G, C


def marker_frame(marker, q: np.ndarray, layout, frames: dict | None):
    """``(p, R)``: inertial position [m] and axes (columns) of ``marker`` at ``q``, from
    ``frames`` when it holds the marker."""
    if frames is not None:
        pr = frames.get(id(marker))
        if pr is not None:
            return pr
    body = marker.body
    qb = None if getattr(body, "is_ground", False) else q[layout.body_slices[body.name]]
    return F.position(marker, qb), F.orientation(marker, qb)
