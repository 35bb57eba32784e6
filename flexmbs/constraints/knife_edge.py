"""A knife edge (the Chaplygin sleigh's runner) on a plane (THEORY §4).

The edge sits at the marker ``Q`` (``edge``) with its blade along ``x_Q``; the plane has
normal ``n = z_P`` (``plane``).  The edge cannot move sideways: its point has no
velocity, relative to the plane's material point there, along the in-plane normal of
the blade ``b = n x x_Q``,

    b . (v_Q - v_P(p_Q)) = 0                                   (one velocity row).

The edge stays on the plane by another joint (e.g. a ``planar`` joint).  The multiplier
is the lateral force ``F = -mu b`` [N] on the edge; it is normal to the edge's velocity
and does no work.
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.velocity import VelocityConstraint, as_marker, cross


@dataclass(frozen=True, eq=False)
class KnifeEdge(VelocityConstraint):
    """No sideways velocity of the edge marker ``edge`` (blade along its x axis) on the
    plane of ``plane`` (a marker or body; its z axis is the normal)."""

    plane: object = None
    edge: object = None
    kind = "knife_edge"
    labels = ("(z_P x x_Q).v_Q",)

    def markers(self) -> tuple:
        return (as_marker(self.plane, self.title, "plane"),
                as_marker(self.edge, self.title, "edge"))

    def reaction_point(self, motions):
        return motions[1].p

    def rates(self, motions, t):
        P, Q = motions
        b = cross(P.R[:, 2], Q.R[:, 0])
        return (b @ (Q.v - P.point_velocity(Q.p)))[None]
