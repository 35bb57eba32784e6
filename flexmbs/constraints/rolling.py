"""A disc rolling without slip on a plane (THEORY §4, §7 items 18-25).

The plane is the x-y plane of the marker ``P`` (``plane``, normal ``n = z_P``); the disc
of radius ``R`` [m] has its centre at the marker ``Q`` (``disc``) and its axis along
``u = z_Q``.  With ``s = n . u`` the lowest point of the rim is

    C = p_Q + R d,   d = -(n - s u) / sqrt(1 - s^2).

Two constraints keep it there:

* the normal contact, holonomic (:class:`DiscOnPlane`, a joint added with the rolling):

      n . (p_Q - p_P) - R sqrt(1 - s^2) = 0;

* rolling without slip, nonholonomic (:class:`Rolling`, two velocity rows): the material
  point of the disc at ``C`` has no velocity relative to the plane's material point there,
  in the plane's tangent directions,

      x_P . (v_Q(C) - v_P(C)) = 0,   y_P . (v_Q(C) - v_P(C)) = 0,

  with ``v_B(C) = v_B + omega_B x (C - p_B)``.  Their multipliers give the friction force
  that holds the disc, ``F = -(mu_1 x_P + mu_2 y_P)`` [N] at ``C``; as ``C`` has no
  velocity it does no work.  The disc must not lie flat (``s = +-1``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import initial_state
from flexmbs.constraints.base import Joint
from flexmbs.constraints.velocity import VelocityConstraint, as_marker
from flexmbs.kinematics import jet as J


def contact_point(p_disc, u, n, radius):
    """``C = p + R d`` of the module docstring (complex-safe)."""
    s = n @ u
    return p_disc - radius * (n - s * u) / np.sqrt(1.0 - s * s)


@dataclass(frozen=True, eq=False)
class DiscOnPlane(Joint):
    """The normal contact ``n . (p_Q - p_P) - R sqrt(1 - (n . u)^2) = 0`` of a disc."""

    radius: float = 0.0
    kind = None
    labels = ("n.(p_Q - p_P) - R sqrt(1 - (n.u)^2)",)

    def equations(self, P, Q, t):
        s = J.dot(P.z, Q.z)
        w = float(np.sqrt(1.0 - float(s.v) ** 2))
        root = J.apply(s, w, -float(s.v) / w, -1.0 / w ** 3)
        return [J.dot(P.z, Q.p - P.p) - root * self.radius]


@dataclass(frozen=True, eq=False)
class Rolling(VelocityConstraint):
    """Rolling without slip of a disc (``disc``: marker at its centre, z = its axis) of
    ``radius`` [m] on the plane of ``plane`` (a marker or body; its z axis is the
    normal)."""

    plane: object = None
    disc: object = None
    radius: float = 0.0
    kind = "rolling"
    labels = ("x_P.v_C", "y_P.v_C")

    def markers(self) -> tuple:
        return (as_marker(self.plane, self.title, "plane"),
                as_marker(self.disc, self.title, "disc"))

    def holonomic_joints(self) -> tuple:
        P, Q = self.markers()
        return (DiscOnPlane(f"{self.name}.contact", P, Q, radius=float(self.radius)),)

    def problems(self) -> list[str]:
        out = super().problems()
        if not (isinstance(self.radius, (int, float)) and np.isfinite(self.radius)
                and self.radius > 0.0):
            out.append(f"{self.title}: radius must be a positive length [m], "
                       f"got {self.radius!r}")
        if not out:
            (_, R_P), (_, R_Q) = (initial_state(mk) for mk in self.markers())
            s = float(R_P[:, 2] @ R_Q[:, 2])
            if abs(s) > 1.0 - 1e-9:
                out.append(f"{self.title}: the disc lies flat on the plane in the initial "
                           f"configuration (disc axis . plane normal = {s:.3g}); it needs "
                           "its axis out of the normal (the contact point is undefined)")
        return out

    def reaction_point(self, motions):
        P, Q = motions
        return contact_point(Q.p, Q.R[:, 2], P.R[:, 2], self.radius)

    def rates(self, motions, t):
        P, Q = motions
        C = self.reaction_point(motions)
        v_rel = Q.point_velocity(C) - P.point_velocity(C)
        return np.array([P.R[:, 0] @ v_rel, P.R[:, 1] @ v_rel])
