"""Double prismatic joint (VDI S2, u = 4): translation in the plane normal to the joint
z axis, no rotation.

With ``d = r_Q - r_P``:

    z_P . d = 0,   z_P . x_Q = 0,   z_P . y_Q = 0,   x_P . y_Q = 0;

joint coordinates: the displacements ``x_P . d``, ``y_P . d`` [m].
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint
from flexmbs.kinematics.relative import offset_along


@dataclass(frozen=True, eq=False)
class DoublePrismatic(Joint):
    kind = "double_prismatic"
    labels = ("z_P.d", "z_P.x_Q", "z_P.y_Q", "x_P.y_Q")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
    coordinate_names = ("x", "y")

    def coordinates(self, P, Q):
        return [offset_along(P, Q, 0), offset_along(P, Q, 1)]
