"""Joints whose two markers sit at different points or have different axes.

A lower pair has one joint frame, placed on both bodies (:class:`~flexmbs.constraints.
base.Joint`).  Distance constraints, gear pairs and rack-and-pinion pairs relate two
frames that differ: P at ``at`` with z axis ``axis``, Q at ``second_at`` with z axis
``second_axis`` (inertial, initial configuration).  ``second_at`` defaults to ``at``
and ``second_axis`` to ``axis``; a side given as a marker keeps its position (and its
axes unless an axis is given), as for the lower pairs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import body_of, initial_pose, initial_state
from flexmbs.bodies.marker import Marker
from flexmbs.constraints.base import Joint, parse_axis
from flexmbs.kinematics.rotation import frame_from_axis


@dataclass(frozen=True, eq=False)
class TwoPointJoint(Joint):
    """Base of joints with a point and an axis per side (module docstring)."""

    second_at: object = None
    second_axis: object = None

    @property
    def title(self) -> str:
        """``"GearPair 'mesh'"``: how messages name the joint."""
        return f"{type(self).__name__} '{self.name}'"

    def problems(self) -> list[str]:
        out, who = [], self.title
        for key in ("axis", "second_axis"):
            if getattr(self, key) is not None:
                try:
                    parse_axis(getattr(self, key), f"{who}: {key}")
                except ValueError as exc:
                    out.append(str(exc))
        for key in ("at", "second_at"):
            val = getattr(self, key)
            if val is not None:
                a = np.asarray(val, dtype=float)
                if a.shape != (3,) or not np.all(np.isfinite(a)):
                    out.append(f"{who}: '{key}' must be a finite point of shape (3,) [m], "
                               f"got {val}")
        if self.at is None and not isinstance(self.first, Marker):
            out.append(f"{who}: give 'at' (the point of the first side [m]) or attach the "
                       "first side to a marker")
        if self.second_at is None and self.at is None and not isinstance(self.second, Marker):
            out.append(f"{who}: give 'second_at' (the point of the second side [m]) or "
                       "attach the second side to a marker")
        if body_of(self.first) is body_of(self.second):
            out.append(f"{who}: connects body '{body_of(self.first).name}' to itself")
        return out

    def initial_frames(self) -> tuple[tuple, tuple]:
        """``((p_P, A_P), (p_Q, A_Q))``: inertial position [m] and axes (columns) of both
        markers in the initial configuration (cached)."""
        cached = self.__dict__.get("_initial_frames")
        if cached is None:
            P, Q = self.resolve()
            cached = self.__dict__["_initial_frames"] = (initial_state(P), initial_state(Q))
        return cached

    def resolve(self) -> tuple[Marker, Marker]:
        """The markers ``(P, Q)`` in the initial configuration (module docstring)."""
        second_at = self.at if self.second_at is None else self.second_at
        second_axis = self.axis if self.second_axis is None else self.second_axis
        return (self._place_side(self.first, self.at, self.axis, "P"),
                self._place_side(self.second, second_at, second_axis, "Q"))

    def _place_side(self, side, at, axis, tag) -> Marker:
        body = body_of(side)
        r0, A0 = initial_pose(body)
        R_joint = None if axis is None else frame_from_axis(parse_axis(axis, self.title))
        if isinstance(side, Marker):
            R = side.R if R_joint is None else A0.T @ R_joint
            return Marker(side.name, body, side.s, R, side.Phi, side.Psi)
        R_joint = np.eye(3) if R_joint is None else R_joint
        return Marker(f"{self.name}.{tag}", body, A0.T @ (np.asarray(at, float) - r0),
                      A0.T @ R_joint)
