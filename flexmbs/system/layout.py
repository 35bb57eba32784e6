"""Where everything of a system sits in the flat arrays ``q`` and ``g`` (THEORY §1.5).

Generalized coordinates ``q`` stack the bodies' coordinates (rigid: ``[r, e]``, point
mass: ``r``, flexible: ``[r, e, q_e]``); ``body_slices[name]`` is a body's part of ``q``.
The constraint rows ``g`` stack, block by block, one Euler-parameter normalisation
``e.e - 1`` per body with a rotation, then every joint's rows, then every drive's row;
block ``b`` holds the rows ``row_start[b]:row_start[b + 1]`` of all rows, and the
``active`` ones (redundant rows dropped by the rank test) make ``g``.  Each joint,
drive and force element is evaluated on its local vector ``x = [q_i; q_j; t]``, the
coordinates ``idx`` of its markers' bodies plus time.

Force elements with internal states ``z`` (:mod:`flexmbs.forces.states`) add them as
first-order coordinates after all bodies' coordinates, ``q = [q_bodies; z_1; z_2; ...]``;
such an element's local vector is ``x = [q_i; q_j; z; t]`` (``ForceBlock.states`` is
the slice of ``z`` in it) and ``state_slices[name]`` its part of ``q``.  An element that
reads sensors (its ``feeds``, :mod:`flexmbs.forces.controllers`) has their markers after
its own, so their bodies' coordinates are in its local vector too; so has a drive fed
by a sensor (:mod:`flexmbs.constraints.drives`), after its joint's ``P``, ``Q``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.errors import ModelError
from flexmbs.kinematics import frames as F
from flexmbs.kinematics import jet as J


@dataclass(frozen=True)
class Block:
    """A group of scalar constraint rows evaluated together on one local vector."""

    name: str
    kind: str          # "normalization" | "joint" | "drive"
    labels: tuple
    markers: tuple     # resolved markers (P, Q) or ()
    idx: np.ndarray    # global coordinate indices of the local vector (without time)
    offsets: tuple     # offset of each marker's body in the local vector (None: ground)
    owner: object      # the joint/drive/body


@dataclass(frozen=True)
class ForceBlock:
    """A force element with its markers on its local vector (as :class:`Block`)."""

    element: object
    markers: tuple
    idx: np.ndarray
    offsets: tuple
    states: slice | None = None   # the element's internal states in the local vector
    n_own: int | None = None      # its own markers (those of the sensors it reads follow)


def local_indices(offsets_global, markers) -> tuple[np.ndarray, tuple]:
    """Local index vector and per-marker local offsets for a set of markers
    (``offsets_global``: {body id: first coordinate in ``q``})."""
    idx, local_off, seen = [], [], {}
    for mk in markers:
        body = mk.body
        if getattr(body, "is_ground", False):
            local_off.append(None)
            continue
        key = id(body)
        if key not in seen:
            seen[key] = len(idx)
            start = offsets_global[key]
            idx.extend(range(start, start + body.n_coords))
        local_off.append(seen[key])
    return np.array(idx, dtype=int), tuple(local_off)


def coordinate_jets(offsets, q_bodies, n: int, order: int) -> tuple:
    """The coordinates ``q_b`` of each marker's body as a jet on a block's local vector
    ``x`` (length ``n`` with time): ``v = q_b``, ``d = dq_b/dx`` (the identity in the
    body's columns ``offset ... offset + n_b``), ``h = 0`` at order 2; None for a ground
    marker (``offsets[k]`` None).  For a joint whose rows read its bodies' whole
    coordinates (``Joint.reads_coordinates``, e.g. all the modes of an elastic rim)."""
    out = []
    for off, q_b in zip(offsets, q_bodies):
        if off is None or q_b is None:
            out.append(None)
            continue
        nb = len(q_b)
        d = np.zeros((nb, n))
        d[np.arange(nb), off + np.arange(nb)] = 1.0
        out.append(J.Jet(np.asarray(q_b, dtype=float), d,
                         np.zeros((nb, n, n)) if order == 2 else None))
    return tuple(out)


def frame_jets(markers, offsets, q, idx, n, order, rot=None) -> list:
    """Frame jets of ``markers`` on the local vector of ``idx`` (size ``n`` with time);
    ``rot`` ({body id: (A, Te)}) shares the rotation data of a body between the markers
    of one evaluation."""
    out = []
    for mk, off in zip(markers, offsets):
        if off is None:
            out.append(F.frame_jet(mk, None, n, 0, order))
            continue
        nb = mk.body.n_coords
        qb = q[idx[off:off + nb]]
        r = None
        if rot is not None and nb >= 7:
            r = rot.get(id(mk.body))
            if r is None:
                r = rot[id(mk.body)] = F.rotation_data(qb[3:7])
        out.append(F.frame_jet(mk, qb, n, off, order, r))
    return out


class Layout:
    """Offsets and blocks of a validated :class:`~flexmbs.system.model.System`."""

    def __init__(self, model):
        self.gravity = np.asarray(model.gravity, dtype=float)
        self.bodies = list(model.bodies)
        #: {body id: first coordinate of the body in ``q``}
        self.offset = {}
        n = 0
        for b in self.bodies:
            self.offset[id(b)] = n
            n += b.n_coords
        self.n_q = n
        self.stateful = []      # force elements with internal states (filled below)
        self.body_slices = {b.name: slice(self.offset[id(b)], self.offset[id(b)] + b.n_coords)
                            for b in self.bodies}
        self.joint_markers = {}
        blocks = []
        for b in self.bodies:
            if b.n_coords >= 7:
                o = self.offset[id(b)]
                blocks.append(Block(b.name, "normalization", ("Euler normalisation",), (),
                                    np.arange(o + 3, o + 7), (), b))
        self._joint_of = {j.name: j for j in model.joints}
        for j in model.joints:
            P, Q = j.resolve()
            self.joint_markers[j.name] = (P, Q)
            idx, offs = self.local((P, Q))
            blocks.append(Block(j.name, "joint", tuple(j.labels), (P, Q), idx, offs, j))
        for d in model.drives:
            mks = self.joint_markers[d.joint]
            feed = getattr(d, "feed", None)
            if feed is not None:                       # the sensor's markers follow P, Q
                mks = mks + tuple(feed[0].resolve())
            idx, offs = self.local(mks)
            drive = d
            if getattr(d, "needs_initial", False) or feed is not None:
                frames = frame_jets(mks, offs, self.initial_q(), idx, len(idx) + 1, 1)
                if drive.needs_initial:
                    drive = drive.with_initial(drive.measure(*frames[:2]), 0.0)
                if feed is not None:
                    drive = drive.with_reading(float(drive.reading(frames[2:]).v))
                    why = drive.gradient_problem(frames, self._dependent_rows(
                        self._joint_of[d.joint], frames, mks, offs, idx))
                    if why:
                        raise ModelError(why)
            blocks.append(Block(d.name, "drive", tuple(drive.labels), mks, idx, offs, drive))
        self.blocks = blocks
        self.row_labels = [f"{b.kind} '{b.name}': {lab}" for b in blocks for lab in b.labels]
        self.n_rows_all = len(self.row_labels)
        #: block ``b`` holds the rows ``row_start[b]:row_start[b + 1]`` of all rows
        self.row_start = np.cumsum([0] + [len(b.labels) for b in blocks])
        self.force_blocks = []
        #: {force element name: its internal states' slice of ``q``}
        self.state_slices = {}
        for f in model.forces:
            mks = tuple(m for m in f.resolve() if m is not None)
            n_own = len(mks)
            for sensor, _ in getattr(f, "feeds", ()):     # the sensors it reads
                mks += tuple(sensor.resolve())
            idx, offs = self.local(mks)
            k = len(getattr(f, "state_names", ()))
            states = None
            if k:
                z0 = self.n_q
                self.state_slices[f.name] = slice(z0, z0 + k)
                self.stateful.append(f)
                states = slice(len(idx), len(idx) + k)
                idx = np.concatenate([idx, np.arange(z0, z0 + k)])
                self.n_q = z0 + k
            self.force_blocks.append(ForceBlock(f, mks, idx, offs, states, n_own))
        #: global indices of every internal state of the force elements in ``q``
        self.state_indices = np.concatenate(
            [np.arange(s.start, s.stop) for s in self.state_slices.values()]
        ).astype(int) if self.state_slices else np.zeros(0, dtype=int)
        self.sensors = list(model.sensors)
        self.sensor_markers = {s.name: tuple(s.resolve()) for s in self.sensors}
        #: columns of a block's rows in ascending global order (the CSR order of ``G``)
        self.perm = [np.argsort(b.idx, kind="stable") for b in blocks]
        self.active = np.ones(self.n_rows_all, dtype=bool)

    def _dependent_rows(self, joint, frames, markers, offsets, idx) -> np.ndarray:
        """Gradients (k, len(idx)) at ``frames`` of the rows a drive of ``joint`` must be
        independent of: the joint's and the Euler normalisations of the bodies in ``idx``."""
        n = len(idx) + 1
        rows = [e.d[:-1] for e in joint.equations(*frames[:2], J.Jet.variable(n - 1, 0.0, n, 1))]
        q0, seen = self.initial_q(), set()
        for mk, off in zip(markers, offsets, strict=True):
            if off is None or mk.body.n_coords < 7 or off in seen:
                continue
            seen.add(off)
            row = np.zeros(len(idx))
            row[off + 3:off + 7] = 2.0 * q0[idx[off + 3:off + 7]]
            rows.append(row)
        return np.array(rows).reshape(len(rows), len(idx))

    @property
    def active(self) -> np.ndarray:
        """Mask of the constraint rows in ``g`` (redundant rows dropped), read-only:
        assign a new mask (the memoised rows and patterns are keyed on it)."""
        return self._active

    @active.setter
    def active(self, mask) -> None:
        a = np.array(mask, dtype=bool)
        if a.shape != (self.n_rows_all,):
            raise ValueError(f"AssembledSystem.active: expected {self.n_rows_all} flags, "
                             f"got shape {a.shape}")
        a.setflags(write=False)
        self._active = a
        #: the active set as bytes (the key of every memo that depends on it)
        self.active_key = a.tobytes()
        #: number of active rows (the rows of ``g``, the multipliers)
        self.n_lam = int(a.sum())

    @property
    def active_row_labels(self) -> list[str]:
        """Labels of the active constraint rows (the rows of ``g``), in order."""
        return [lab for lab, a in zip(self.row_labels, self._active) if a]

    def local(self, markers) -> tuple[np.ndarray, tuple]:
        """:func:`local_indices` of ``markers`` in this system."""
        return local_indices(self.offset, markers)

    def block_of_row(self, row) -> int:
        """The block holding row ``row`` (an index into :attr:`row_labels`)."""
        return int(np.searchsorted(self.row_start, row, side="right") - 1)

    @property
    def coordinate_labels(self) -> list[str]:
        """One label per coordinate of ``q``: ``body 'arm' x`` ... ``body 'rod' q_e3``
        (positions, Euler parameters ``e0..e3``, elastic coordinates ``q_e1...``)."""
        out = []
        for b in self.bodies:
            names = ("x", "y", "z", "e0", "e1", "e2", "e3") if b.n_coords >= 7 else \
                ("x", "y", "z")[:b.n_coords]
            names += tuple(f"q_e{k}" for k in range(1, b.n_coords - len(names) + 1))
            out.extend(f"body '{b.name}' {c}" for c in names)
        for f in self.stateful:
            out.extend(f"force element '{f.name}' {c}" for c in f.state_names)
        return out

    def initial_q(self) -> np.ndarray:
        """The bodies' initial coordinates and the force elements' initial states."""
        parts = [b.initial_q() for b in self.bodies]
        parts += [np.asarray(f.initial_states(), dtype=float) for f in self.stateful]
        return np.concatenate(parts) if parts else np.zeros(0)

    def initial_qd(self) -> np.ndarray:
        """The bodies' initial velocities; the states' rates are zero here (made
        consistent, ``zd = f``, with the initial conditions)."""
        parts = [b.initial_qd() for b in self.bodies]
        parts += [np.zeros(len(f.state_names)) for f in self.stateful]
        return np.concatenate(parts) if parts else np.zeros(0)

    def normalize(self, q: np.ndarray) -> np.ndarray:
        """``q`` with every Euler-parameter quadruple scaled to unit norm (a copy)."""
        q = np.array(q, dtype=float)
        for b in self.bodies:
            if b.n_coords >= 7:
                o = self.offset[id(b)]
                q[o + 3:o + 7] /= np.linalg.norm(q[o + 3:o + 7])
        return q
