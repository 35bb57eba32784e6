"""Cylindrical joint (VDI DS, u = 4) about and along the joint z axis.

With ``d = r_Q - r_P``:

    x_P . d = 0,   y_P . d = 0,   z_P . x_Q = 0,   z_P . y_Q = 0;

joint coordinates: the angle ``atan2(y_P . x_Q, x_P . x_Q)`` [rad] and the
displacement ``z_P . d`` [m].
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint
from flexmbs.kinematics.relative import (offset_along, offset_along_value, rotation_angle,
                                          rotation_angle_value)


@dataclass(frozen=True, eq=False)
class Cylindrical(Joint):
    kind = "cylindrical"
    labels = ("x_P.d", "y_P.d", "z_P.x_Q", "z_P.y_Q")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
    coordinate_names = ("angle", "displacement")

    def coordinates(self, P, Q):
        return [rotation_angle(P, Q), offset_along(P, Q, 2)]

    def coordinate_values(self, P, Q):
        return [rotation_angle_value(P, Q), offset_along_value(P, Q, 2)]
