"""Reactions, joint coordinates and energies of a recorded state from its rows evaluated
once (THEORY §1.5, §5.9): the fast paths of :func:`flexmbs.system.outputs.reactions`,
:func:`~flexmbs.system.outputs.joint_coordinates` and :func:`~flexmbs.system.outputs.
energy`, which stay the reference.

The generalized constraint force of joint ``j`` on the body ``B`` of its marker ``Q``
is ``-G_j^T lam_j`` restricted to ``B``'s coordinates: the entries of the active ``G``
(:class:`~flexmbs.system.output_rows.RowsAt`) of ``j``'s rows in ``B``'s columns, summed
for all joints in one ``bincount``.  Then, per joint (all joints at once),

    f = g_r,   m_O = 1/2 G(e) g_e  (a floating frame; 0 on a point mass),
    m_Q = m_O - (p_Q - r) x f,     reaction = (R_Q^T f, R_Q^T m_Q)   [N, N m],

negated (``sign = -1``) when ``Q`` is on the ground and the wrench is taken on ``P``'s
body: one compiled call for all joints (:func:`flexmbs.system.output_point_kernel.
joint_wrenches`; its numpy reference :func:`joint_wrenches`).  Joint coordinates are the joints' ``coordinate_values`` of the marker frames
``(p, R)`` (the values of their ``coordinates`` by the same arithmetic, without jets), or
their ``coordinates`` of value-only jets when a joint has no such values.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from flexmbs.bodies.flexible_set import FlexibleSet
from flexmbs.bodies.rigid_set import RigidSet, cross
from flexmbs.kinematics import frames as F
from flexmbs.kinematics.frames import FrameJet
from flexmbs.kinematics.jet import Jet
from flexmbs.compiled import arg, use_compiled
from flexmbs.constraints.cylindrical import Cylindrical
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.constraints.revolute import Revolute
from flexmbs.kinematics.rotation import G_BASIS
from flexmbs.system import output_point_kernel, outputs
from flexmbs.system.output_rows import RowsAt, StackedFrames, marker_frame

#: ``G(e) = sum_k e_k G_BASIS[k]`` as (4, 12): ``G(e)`` of the rows ``e`` (n, 4) is
#: ``(e @ TGk).reshape(n, 3, 4)``
TGk = G_BASIS.reshape(4, 12)


class ReactionPlan:
    """Per joint and drive block: the body that takes the wrench (its first coordinate
    ``start``, ``n`` coordinates, or ``n = 0``: none), ``sign``, the marker ``Q`` and
    whether it moves; per row of the system its joint (-1: normalisations)."""

    def __init__(self, layout):
        names, start, n, sign, Q_of, moving = [], [], [], [], [], []
        joint_of_row = np.full(layout.n_rows_all, -1, dtype=np.int64)
        for bi, blk in enumerate(layout.blocks):
            if blk.kind == "normalization":
                continue
            P, Q = blk.markers[:2]
            s, mk = 1.0, Q
            if blk.offsets[1] is None:
                s, mk = -1.0, P
            j = len(names)
            joint_of_row[layout.row_start[bi]:layout.row_start[bi + 1]] = j
            names.append(blk.name)
            on_body = blk.offsets[0 if s < 0 else 1] is not None
            sl = layout.body_slices[mk.body.name] if on_body else slice(0, 0)
            start.append(sl.start)
            n.append(sl.stop - sl.start)
            sign.append(s)
            Q_of.append(Q)
            moving.append(blk.offsets[1] is not None)
        self.names, self.Q, self.moving = names, Q_of, moving
        self.start = np.array(start, dtype=np.int64)
        self.n = np.array(n, dtype=np.int64)
        self.sign = np.array(sign)
        self.n_max = max(7, int(self.n.max(initial=0)))
        self.joint_of_row = joint_of_row
        self.rotates = self.n >= 7
        self.fixed_frames = {j: (np.array(Q.s, dtype=float), F.orientation(Q, None))
                             for j, Q in enumerate(Q_of) if not moving[j]}
        #: the frames of the markers ``Q``, those of the fixed ones filled in once
        self.p0, self.R0 = np.zeros((len(names), 3)), np.zeros((len(names), 3, 3))
        for j, (pj, Rj) in self.fixed_frames.items():
            self.p0[j], self.R0[j] = pj, Rj
        self.moving_Q = [(j, Q) for j, Q in enumerate(Q_of) if moving[j]]
        #: ``sign`` where a body takes the wrench, else 0
        self.on = (self.n > 0) * self.sign
        self._cols = (-1, None)

    def columns(self, n_q: int) -> np.ndarray:
        """``(J, n_max)``: the columns of each joint's body coordinates in ``q`` (clipped
        to ``n_q - 1`` past the body; those entries are not used)."""
        if self._cols[0] != n_q:
            self._cols = (n_q, np.minimum(self.start[:, None] + np.arange(self.n_max),
                                          n_q - 1))
        return self._cols[1]

    def entries(self, rr: np.ndarray, cc: np.ndarray, active: np.ndarray) -> tuple:
        """``(rows, cols, target)`` of the entries ``(rr, cc)`` of ``G`` that lie in the
        columns of their joint's body, at ``target = joint n_max + local column``."""
        j = self.joint_of_row[np.flatnonzero(active)][rr]
        local = cc - self.start[j]
        ok = (j >= 0) & (local >= 0) & (local < self.n[j])
        return rr[ok].astype(np.int64), cc[ok], j[ok] * self.n_max + local[ok]


class OutputPoint:
    """The fast outputs of a system's :class:`~flexmbs.system.layout.Layout` with its
    :class:`~flexmbs.system.constraint_rows.ConstraintRows` and joints."""

    def __init__(self, layout, rows, joints):
        self.layout, self.rows = layout, rows
        self.joints = [(j.name, layout.joint_markers[j.name]) for j in joints
                       if j.coordinate_names]
        self._joint_objects = {j.name: j for j in joints}
        self.plan = ReactionPlan(layout)
        self._entry_cache = None
        #: the rigid bodies whose energies are summed at once
        starts = [layout.body_slices[b.name].start for b in layout.bodies]
        self.rigid = RigidSet(layout.bodies, starts)
        #: the flexible bodies whose energies are one call each
        self.flexible = FlexibleSet(layout.bodies, starts)

    def reactions(self, q: np.ndarray, lam: np.ndarray, t: float,
                  at: RowsAt | None = None) -> dict:
        """``{name: (force, torque)}`` as :func:`flexmbs.system.outputs.reactions`."""
        return {name: (w[0:3], w[3:6]) for name, w in self.reaction_rows(q, lam, t, at).items()}

    def reaction_rows(self, q: np.ndarray, lam: np.ndarray, t: float,
                      at: RowsAt | None = None) -> dict:
        """``{name: [force, torque] (6,)}``: :meth:`reactions` as the rows recorded."""
        at = self.rows.at_state(q, t) if at is None else at
        plan, lay = self.plan, self.layout
        J = len(plan.names)
        if J == 0:
            return {}
        rr, cc, target = self._entries(at.G)
        p, R = plan.p0.copy(), plan.R0.copy()
        for j, Q in plan.moving_Q:
            p[j], R[j] = marker_frame(Q, q, lay, at.frames)
        fn = output_point_kernel.joint_wrenches if use_compiled() else joint_wrenches
        fm = fn(np.asarray(at.G[rr, cc], dtype=float).ravel(), arg(lam), rr, target, arg(q),
                plan.columns(q.size), plan.rotates, p, R, plan.on, TGk).reshape(J, 6)
        return dict(zip(plan.names, fm))

    def reaction_block(self, q: np.ndarray, lam: np.ndarray, ats: list) -> list | None:
        """:meth:`reaction_rows` of ``k`` states at once: ``q`` (k, n_q), ``lam``
        (k, n_lam) with their rows ``ats``, the entries of ``G`` and the markers' frames
        taken from the rows stacked once (the frames from the rows' stacked frames), then
        one call of :func:`~flexmbs.system.output_point_kernel.joint_wrenches` per row
        (the same arguments' values as :meth:`reaction_rows`: the same bits).  None when a
        row's ``G`` is not a dense ndarray of the first row's shape (then row by row)."""
        plan, lay = self.plan, self.layout
        k, J = len(ats), len(plan.names)
        if J == 0:
            return [{} for _ in range(k)]
        Gs = [at.G for at in ats]
        if k == 0 or any(type(G) is not np.ndarray or G.shape != Gs[0].shape for G in Gs):
            return None
        rr, cc, target = self._entries(Gs[0])
        v = np.ascontiguousarray(np.stack(Gs)[:, rr, cc], dtype=float)
        p = np.repeat(plan.p0[None], k, axis=0)
        R = np.repeat(plan.R0[None], k, axis=0)
        C = _stacked_C(ats)
        for j, Q in plan.moving_Q:
            p[:, j], R[:, j] = _stacked_frames(Q, q, lay, ats, C)
        q = np.ascontiguousarray(q, dtype=float)
        lam = np.ascontiguousarray(lam, dtype=float)
        fn = output_point_kernel.joint_wrenches if use_compiled() else joint_wrenches
        cols, rotates, on, names = plan.columns(q.shape[1]), plan.rotates, plan.on, plan.names
        return [dict(zip(names, fn(v[i], lam[i], rr, target, q[i], cols, rotates, p[i], R[i],
                                   on, TGk).reshape(J, 6))) for i in range(k)]

    def _entries(self, G) -> tuple:
        """The :meth:`ReactionPlan.entries` of ``G``: of its structure (:meth:`
        ConstraintRows.pattern <flexmbs.system.constraint_rows.ConstraintRows.pattern>`,
        memoised on the active set) when dense, of its stored entries when sparse."""
        lay = self.layout
        if sp.issparse(G):
            G = G.tocoo()
            return self.plan.entries(G.row, G.col, lay.active)
        c = self._entry_cache
        if c is None or c[0] != lay.active_key:
            indptr, indices = self.rows.pattern()
            rr = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
            c = self._entry_cache = (lay.active_key,
                                     self.plan.entries(rr, np.asarray(indices), lay.active))
        return c[1]

    def joint_coordinates(self, q: np.ndarray, t: float, at: RowsAt | None = None) -> dict:
        """``{joint name: [coordinates]}`` as :func:`flexmbs.system.outputs.
        joint_coordinates` (angles in rad, displacements in m)."""
        if not self.joints:
            return {}
        frames = (self.rows.at_state(q, t) if at is None else at).frames
        return {name: self._coordinates(name, markers, q, frames)
                for name, markers in self.joints}

    def _coordinates(self, name: str, markers: tuple, q: np.ndarray, frames) -> np.ndarray:
        """The coordinates of joint ``name`` (its ``markers``) at ``q`` with the marker
        ``frames`` of the rows' evaluation."""
        joint = self._joint_objects[name]
        P, Q = (marker_frame(mk, q, self.layout, frames) for mk in markers)
        values_of = getattr(joint, "coordinate_values", None)   # (not every joint)
        values = None if values_of is None else values_of(P, Q)
        if values is None:
            values = [float(c.v) for c in joint.coordinates(_value_jet(*P), _value_jet(*Q))]
        return np.array(values)

    def joint_coordinate_rows(self, q: np.ndarray, ats: list) -> list[dict]:
        """:meth:`joint_coordinates` of ``k`` states at once: ``q`` (k, n_q) with their
        rows ``ats`` (``RowsAt`` with frames each); the angles and offsets of revolute,
        prismatic and cylindrical joints for all rows in one call each (their values'
        dot products by the same ``dot`` as one row's: a stacked ``matmul`` of
        ``(1, 3) @ (3, 1)``; ``arctan2`` elementwise), the other joints row by row."""
        k = len(ats)
        out = [{} for _ in range(k)]
        if not self.joints or k == 0:
            return out
        lay = self.layout
        C = _stacked_C(ats)
        for name, markers in self.joints:
            joint = self._joint_objects[name]
            measures = _STACKED_VALUES.get(getattr(type(joint), "coordinate_values", None))
            if measures is None:        # (not one of the joints whose values stack)
                for i in range(k):
                    out[i][name] = self._coordinates(name, markers, q[i], ats[i].frames)
                continue
            P, Q = (_stacked_frames(mk, q, lay, ats, C) for mk in markers)
            cols = [_rotation_angles(P, Q) if m == "angle" else _offsets_along(P, Q, 2)
                    for m in measures]
            values = np.stack(cols, axis=1)
            for i in range(k):
                out[i][name] = values[i]
        return out


    def energy(self, forces, q: np.ndarray, qd: np.ndarray, t: float) -> dict:
        """The energies [J] of :func:`flexmbs.system.outputs.energy`, the rigid bodies'
        summed at once (:class:`~flexmbs.bodies.rigid_set.RigidSet`), the flexible
        bodies' in one call each (:class:`~flexmbs.bodies.flexible_set.FlexibleSet`)."""
        return outputs.energy(self.layout, forces, q, qd, t, rigid=self.rigid,
                              flexible=self.flexible)


def _stacked_C(ats: list) -> tuple | None:
    """``(index, C (k, M, 4, 3))``: the marker frames of the rows ``ats`` stacked, when
    every row's are the :class:`~flexmbs.system.output_rows.StackedFrames` of one
    marker index (the stacked rows' evaluation); else None."""
    frames = [at.frames for at in ats]
    if not frames or not all(type(f) is StackedFrames for f in frames):
        return None
    index = frames[0].index
    if any(f.index is not index for f in frames):
        return None
    return index, np.stack([f.C for f in frames])


def _stacked_frames(marker, q: np.ndarray, layout, ats: list, C: tuple | None = None) -> tuple:
    """``(p (k, 3), R (k, 3, 3))`` of ``marker`` at the states ``q`` (k, n_q) with their
    rows ``ats`` (:func:`~flexmbs.system.output_rows.marker_frame` of each); from the
    stacked frames ``C`` (:func:`_stacked_C`) when they hold the marker: the same
    entries, ``p = C[:, m, 0]``, ``R = C[:, m, 1:4]^T``, without a look-up per row."""
    m = None if C is None else C[0].get(id(marker))
    if m is not None:
        Cm = C[1][:, m]
        return Cm[:, 0], Cm[:, 1:4].transpose(0, 2, 1)
    frames = [marker_frame(marker, q[i], layout, at.frames) for i, at in enumerate(ats)]
    return (np.array([f[0] for f in frames], dtype=float),
            np.array([f[1] for f in frames], dtype=float))


def _dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a_i . b_i`` of the rows of ``a``, ``b`` (k, 3), each by the ``dot`` of two
    vectors (``matmul`` of ``(1, 3) @ (3, 1)`` calls it): the bits of ``a_i @ b_i``."""
    return np.matmul(np.ascontiguousarray(a)[:, None, :],
                     np.ascontiguousarray(b)[:, :, None])[:, 0, 0]


def _rotation_angles(P: tuple, Q: tuple) -> np.ndarray:
    """:func:`~flexmbs.kinematics.relative.rotation_angle_value` of stacked frames."""
    RP, RQ = P[1], Q[1]
    return np.arctan2(_dots(RP[:, :, 1], RQ[:, :, 0]), _dots(RP[:, :, 0], RQ[:, :, 0]))


def _offsets_along(P: tuple, Q: tuple, k: int) -> np.ndarray:
    """:func:`~flexmbs.kinematics.relative.offset_along_value` of stacked frames."""
    return _dots(P[1][:, :, k], Q[0] - P[0])


#: the joints whose coordinate values stack over rows (``joint_coordinate_rows``): their
#: ``coordinate_values`` and the measures it returns, in order
_STACKED_VALUES = {Revolute.coordinate_values: ("angle",),
                   Prismatic.coordinate_values: ("offset",),
                   Cylindrical.coordinate_values: ("angle", "offset")}


def _value_jet(p: np.ndarray, R: np.ndarray) -> FrameJet:
    """The frame ``(p, R)`` as jets over a single dummy coordinate (values only)."""
    z = np.zeros((3, 1))
    return FrameJet(Jet(p, z, None), Jet(R[:, 0], z, None), Jet(R[:, 1], z, None),
                    Jet(R[:, 2], z, None))


def joint_wrenches(v, lam, rr, target, q, cols, rotates, p, R, on, TGk) -> np.ndarray:
    """``(J, 2, 3)``: each joint's reaction force and torque in its marker ``Q``'s frame
    (module docstring) from the values ``v`` of the entries ``rr`` of ``G`` at ``target``
    (:meth:`ReactionPlan.entries`), the columns ``cols`` of the joints' bodies
    (:meth:`ReactionPlan.columns`), the frames ``(p, R)`` of the markers ``Q`` and the
    signs ``on`` (0: no body takes the wrench), in numpy: the reference of
    :func:`flexmbs.system.output_point_kernel.joint_wrenches`."""
    J, n_max = cols.shape
    gen = -np.bincount(target, weights=v * lam[rr], minlength=J * n_max).reshape(J, n_max)
    qb = q[cols]
    f = gen[:, 0:3]
    Ge = (qb[:, 3:7] @ TGk).reshape(J, 3, 4)                 # G(e) of each joint
    m = np.where(rotates[:, None], 0.5 * (Ge @ gen[:, 3:7, None])[:, :, 0], 0.0)
    m = m - cross(p - qb[:, 0:3], f)
    fm = np.empty((J, 2, 3))
    fm[:, 0], fm[:, 1] = f, m
    return on[:, None, None] * (fm @ R)                        # rows R^T f, R^T m_Q
