"""Common machinery of joints (THEORY §5.5).

A joint ``g`` connects body ``i`` at marker ``P`` and body ``j`` at marker ``Q`` and
imposes ``u_g`` scalar equations ``g_g(p_i, p_j, t) = 0`` (2.44).  Each joint class
only states its equations as jets of the marker frames (see
``flexmbs.kinematics.frames``); Jacobians ``G_gi, G_gj`` (2.45), the acceleration
term and ``d(G^T lam)/dq`` follow from the jets.

Placement: each side is a body or a marker.  ``at`` (inertial point, m) and ``axis``
(inertial direction, or "x", "-y", ...) describe the joint frame in the initial
configuration; a side given as a body gets a marker there, a side given as a marker
keeps its position and, if ``axis`` is given, takes the joint axes.  The joint frame's
z axis is the joint axis.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import body_of, initial_pose
from flexmbs.bodies.marker import Marker
from flexmbs.constraints.rows import LabelRows
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.frames import FrameJet
from flexmbs.kinematics.rotation import frame_from_axis

_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def parse_axis(axis, who: str) -> np.ndarray:
    """``"x"``, ``"-z"`` or a 3-vector -> unit vector; ValueError naming ``who``."""
    if isinstance(axis, str):
        key = axis.strip().lower()
        sign = -1.0 if key.startswith("-") else 1.0
        key = key.lstrip("+-")
        if key not in _AXES:
            raise ValueError(f"{who}: axis must be 'x', 'y', 'z' (optionally signed) or a "
                             f"3-vector, got '{axis}'")
        return sign * np.array(_AXES[key])
    a = np.asarray(axis, dtype=float)
    if a.shape != (3,):
        raise ValueError(f"{who}: axis must have shape (3,), got {a.shape}")
    nrm = np.linalg.norm(a)
    if not np.isfinite(nrm) or nrm < 1e-12:
        raise ValueError(f"{who}: axis must be a non-zero vector, got {a.tolist()}")
    return a / nrm


#: the key of a value that has none (then nothing is kept)
_UNKEYED = object()


def _value_key(v):
    """A hashable copy of ``at`` / ``axis``: None, a string, or the float array's bytes
    and shape (``_UNKEYED`` when it is none of these)."""
    if v is None or isinstance(v, str):
        return v
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return _UNKEYED
    return (a.shape, a.tobytes())


@dataclass(frozen=True, eq=False)
class Joint:
    """Base of all joints: ``name``, sides ``first`` (P) and ``second`` (Q), placement."""

    name: str
    first: object
    second: object
    at: object = None
    axis: object = None
    kind = None  # the case-file ``type`` of a subclass; None: not in case files
    labels = ()  # one label per scalar equation, for redundancy reports
    coordinate_names = ()  # joint coordinates (e.g. ("angle",)), for sensors
    #: True: the rows read the markers' bodies' whole coordinates, not only the marker
    #: frames; ``equations`` then takes ``coordinates=(q_P, q_Q)``, the bodies'
    #: coordinates as jets on the local vector (None for the ground;
    #: :func:`flexmbs.system.layout.coordinate_jets`)
    reads_coordinates = False

    @property
    def n_eq(self) -> int:
        return len(self.labels)

    @property
    def bodies(self):
        return body_of(self.first), body_of(self.second)

    def problems(self) -> list[str]:
        out = []
        who = f"{type(self).__name__} '{self.name}'"
        if self.axis is not None:
            try:
                parse_axis(self.axis, who)
            except ValueError as exc:
                out.append(str(exc))
        if self.at is not None:
            at = np.asarray(self.at, dtype=float)
            if at.shape != (3,) or not np.all(np.isfinite(at)):
                out.append(f"{who}: 'at' must be a finite point of shape (3,), got {self.at}")
        if body_of(self.first) is body_of(self.second):
            out.append(f"{who}: connects body '{body_of(self.first).name}' to itself")
        if (self.at is None and not isinstance(self.first, Marker)
                and not isinstance(self.second, Marker)):
            out.append(f"{who}: give 'at' (a point [m]) or attach at least one side to a marker")
        return out

    # -- placement -------------------------------------------------------------------
    def resolve(self) -> tuple[Marker, Marker]:
        """The two markers ``(P, Q)`` of the joint frame in the initial configuration.

        The joint, its bodies and markers are immutable; ``at`` and ``axis`` may be
        arrays the caller still holds, so the markers are kept with the values of those
        two they were made from and made again when either changed."""
        key = (_value_key(self.at), _value_key(self.axis))
        kept = self.__dict__.get("_resolved")
        if kept is not None and key[0] is not _UNKEYED and key[1] is not _UNKEYED \
                and kept[0] == key:
            return kept[1]
        out = self._resolve()
        self.__dict__["_resolved"] = (key, out)
        return out

    def _resolve(self) -> tuple[Marker, Marker]:
        who = f"{type(self).__name__} '{self.name}'"
        R_joint = None
        if self.axis is not None:
            R_joint = frame_from_axis(parse_axis(self.axis, who))
        if self.at is not None:
            at = np.asarray(self.at, dtype=float)
        else:
            anchor = self.first if isinstance(self.first, Marker) else self.second
            r0, A0 = initial_pose(anchor.body)
            at = r0 + A0 @ anchor.s
        if R_joint is None:
            anchor = self.first if isinstance(self.first, Marker) else (
                self.second if isinstance(self.second, Marker) else None)
            if anchor is None:
                R_joint = np.eye(3)
            else:
                _, A0 = initial_pose(anchor.body)
                R_joint = A0 @ anchor.R
        return (self._place(self.first, at, R_joint, "P"),
                self._place(self.second, at, R_joint, "Q"))

    def _place(self, side, at, R_joint, tag) -> Marker:
        body = body_of(side)
        r0, A0 = initial_pose(body)
        if isinstance(side, Marker):
            R = side.R if self.axis is None else A0.T @ R_joint
            return Marker(side.name, body, side.s, R, side.Phi, side.Psi)
        return Marker(f"{self.name}.{tag}", body, A0.T @ (at - r0), A0.T @ R_joint)

    # -- equations ---------------------------------------------------------------------
    #: The rows are those named by ``labels`` (dot products of the marker vectors, see
    #: :mod:`flexmbs.constraints.rows`); the assembler then evaluates them vectorised.
    label_rows = False

    @classmethod
    def rows(cls) -> LabelRows | None:
        """The :class:`~flexmbs.constraints.rows.LabelRows` of a ``label_rows`` joint."""
        if not cls.label_rows:
            return None
        cached = cls.__dict__.get("_rows_cache")
        if cached is None:
            cached = LabelRows(cls.labels)
            cls._rows_cache = cached
        return cached

    def equations(self, P: FrameJet, Q: FrameJet, t: J.Jet) -> list[J.Jet]:
        """The ``u_g`` scalar constraint jets."""
        rows = self.rows()
        if rows is None:
            raise NotImplementedError
        return rows.jets(P, Q)

    def coordinates(self, P: FrameJet, Q: FrameJet) -> list[J.Jet]:
        """Joint coordinates (angle [rad] / displacement [m]) as jets; may be empty."""
        return []

    def coordinate_values(self, P: tuple, Q: tuple) -> list[float] | None:
        """The values of :meth:`coordinates` from the frames ``P = (p, R)``, ``Q``
        (``R``: axes as columns) without jets, or None: not available (use the jets)."""
        return None


# -- building blocks shared by the joint files -------------------------------------------
# (the relative measures offset_along and rotation_angle: flexmbs.kinematics.relative)
def coincident(P: FrameJet, Q: FrameJet) -> list[J.Jet]:
    """Spherical condition ``r_Q - r_P = 0`` (3 equations, inertial components)."""
    d = Q.p - P.p
    return [d[0], d[1], d[2]]

