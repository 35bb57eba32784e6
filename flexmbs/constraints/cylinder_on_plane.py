"""Cylinder-on-plane joint (VDI D2S2, u = 2): a cylinder of Q rests on the plane of P
along a line.

The plane has normal ``z_P`` (``axis``); the cylinder's axis is ``z_Q``
(``second_axis``, which must lie in the plane) and passes through ``at``, the plane
being the face offset by the cylinder's radius.  With ``d = r_Q - r_P``:

    z_P . d = 0,   z_P . z_Q = 0;

so Q may slide in the plane (2), turn about the normal (1) and roll about its own axis
(1).  Joint coordinates: the in-plane displacements ``x_P . d``, ``y_P . d`` [m].
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import parse_axis
from flexmbs.constraints.two_point import TwoPointJoint
from flexmbs.kinematics.relative import offset_along


@dataclass(frozen=True, eq=False)
class CylinderOnPlane(TwoPointJoint):
    kind = "cylinder_on_plane"
    labels = ("z_P.d", "z_P.z_Q")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
    coordinate_names = ("x", "y")

    def problems(self) -> list[str]:
        out = super().problems()
        if self.second_axis is None:
            out.append(f"{self.title}: give 'second_axis' (the cylinder's axis, in the plane)")
        elif self.axis is not None and not out:
            n = parse_axis(self.axis, self.title)
            a = parse_axis(self.second_axis, self.title)
            if abs(n @ a) > 1e-9:
                out.append(f"{self.title}: 'second_axis' (the cylinder's axis) must lie in "
                           f"the plane (normal to 'axis'), got axis . second_axis = {n @ a:.3g}")
        return out

    def coordinates(self, P, Q):
        return [offset_along(P, Q, 0), offset_along(P, Q, 1)]
