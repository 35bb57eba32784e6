"""Prismatic joint (VDI S, u = 5) along the joint z axis.

With ``d = r_Q - r_P``:

    x_P . d = 0,   y_P . d = 0,   z_P . x_Q = 0,   z_P . y_Q = 0,   x_P . y_Q = 0;

joint coordinate: the displacement ``z_P . d`` [m].
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint, offset_along
from flexmbs.kinematics.jet import dot


@dataclass(frozen=True, eq=False)
class Prismatic(Joint):
    kind = "prismatic"
    labels = ("x_P.d", "y_P.d", "z_P.x_Q", "z_P.y_Q", "x_P.y_Q")
    coordinate_names = ("displacement",)

    def equations(self, P, Q, t):
        return [offset_along(P, Q, 0), offset_along(P, Q, 1),
                dot(P.z, Q.x), dot(P.z, Q.y), dot(P.x, Q.y)]

    def coordinates(self, P, Q):
        return [offset_along(P, Q, 2)]
