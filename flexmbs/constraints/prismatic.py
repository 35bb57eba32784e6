"""Prismatic joint (VDI S, u = 5) along the joint z axis.

With ``d = r_Q - r_P``:

    x_P . d = 0,   y_P . d = 0,   z_P . x_Q = 0,   z_P . y_Q = 0,   x_P . y_Q = 0;

joint coordinate: the displacement ``z_P . d`` [m].
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint
from flexmbs.kinematics.relative import offset_along, offset_along_value


@dataclass(frozen=True, eq=False)
class Prismatic(Joint):
    kind = "prismatic"
    labels = ("x_P.d", "y_P.d", "z_P.x_Q", "z_P.y_Q", "x_P.y_Q")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
    coordinate_names = ("displacement",)

    def coordinates(self, P, Q):
        return [offset_along(P, Q, 2)]

    def coordinate_values(self, P, Q):
        return [offset_along_value(P, Q, 2)]
