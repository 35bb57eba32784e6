"""Sphere-on-plane joint (VDI D3S2, u = 1): a point of Q stays in the plane of P.

The plane passes through ``at`` with normal ``z_P`` (the joint axis); for a sphere of
radius ``rho`` rolling or sliding on a face, put ``at`` at the sphere's centre, the plane
then being the face offset by ``rho``.  With ``d = r_Q - r_P``:

    z_P . d = 0;

joint coordinates: the in-plane displacements ``x_P . d``, ``y_P . d`` [m].
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint
from flexmbs.kinematics.relative import offset_along


@dataclass(frozen=True, eq=False)
class SphereOnPlane(Joint):
    kind = "sphere_on_plane"
    labels = ("z_P.d",)
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
    coordinate_names = ("x", "y")

    def coordinates(self, P, Q):
        return [offset_along(P, Q, 0), offset_along(P, Q, 1)]
