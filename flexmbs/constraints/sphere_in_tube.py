"""Sphere-in-tube joint (VDI D3S, u = 2): a point of Q stays on the line of P.

The line passes through ``at`` along ``z_P`` (the joint axis: the tube's axis, the
point the sphere's centre).  With ``d = r_Q - r_P``:

    x_P . d = 0,   y_P . d = 0;

joint coordinate: the displacement ``z_P . d`` [m] along the line.
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint
from flexmbs.kinematics.relative import offset_along


@dataclass(frozen=True, eq=False)
class SphereInTube(Joint):
    kind = "sphere_in_tube"
    labels = ("x_P.d", "y_P.d")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
    coordinate_names = ("displacement",)

    def coordinates(self, P, Q):
        return [offset_along(P, Q, 2)]
