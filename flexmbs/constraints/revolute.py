"""Revolute joint (VDI D, u = 5) about the joint z axis.

``r_Q - r_P = 0``, ``z_P . x_Q = 0``, ``z_P . y_Q = 0``; joint coordinate: the angle of
Q relative to P about ``z_P`` (``flexmbs.kinematics.relative.rotation_angle``).
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint
from flexmbs.kinematics.relative import rotation_angle, rotation_angle_value


@dataclass(frozen=True, eq=False)
class Revolute(Joint):
    kind = "revolute"
    labels = ("x", "y", "z", "z_P.x_Q", "z_P.y_Q")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
    coordinate_names = ("angle",)

    def coordinates(self, P, Q):
        return [rotation_angle(P, Q)]

    def coordinate_values(self, P, Q):
        return [rotation_angle_value(P, Q)]
