"""Planar joint (VDI DS2, u = 3) with the joint z axis as plane normal.

With ``d = r_Q - r_P``:

    z_P . d = 0,   z_P . x_Q = 0,   z_P . y_Q = 0;

joint coordinates: displacements ``x_P . d``, ``y_P . d`` [m] and the angle
``atan2(y_P . x_Q, x_P . x_Q)`` [rad] about the normal.
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint
from flexmbs.kinematics.relative import (offset_along, offset_along_value, rotation_angle,
                                          rotation_angle_value)


@dataclass(frozen=True, eq=False)
class Planar(Joint):
    kind = "planar"
    labels = ("z_P.d", "z_P.x_Q", "z_P.y_Q")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
    coordinate_names = ("x", "y", "angle")

    def coordinates(self, P, Q):
        return [offset_along(P, Q, 0), offset_along(P, Q, 1), rotation_angle(P, Q)]

    def coordinate_values(self, P, Q):
        return [offset_along_value(P, Q, 0), offset_along_value(P, Q, 1),
                rotation_angle_value(P, Q)]
