"""Torsion spring-damper about a joint axis, THEORY §5.7.1 (2.63)-(2.64).

    M = k (phi - phi0) + d phid,

with ``phi`` the joint angle of Q relative to P about ``z_P`` (the joint's "angle"
coordinate, or ``atan2(y_P . x_Q, x_P . x_Q)`` if it has none).  ``phi - phi0`` is
taken modulo 2 pi in (-pi, pi], so the spring is smooth except half a turn away from
``phi0``.  The moment ``M`` acts on body i about ``+z_P`` and on body j about ``-z_P``:
a positive deflection is restored (``Q_f = -M grad phi``, ``scalar_law``).  The torsion
spring stores

    V = k/2 (phi - phi0)^2,      dV/dx = k (phi - phi0) grad phi = -Q_f(d = 0),

with the same wrapped deflection (``V`` is continuous across the wrap, where
``phi - phi0 = +-pi`` give the same value); the damper dissipates ``d phid^2``.

The element takes the joint *object* (a revolute, cylindrical, ... joint) and uses its
markers: ``resolve()`` returns ``joint.resolve()``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.forces.base import ForceContribution, ForceElement, damping_exchange, scalar_law
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.relative import rotation_angle


def joint_angle(joint, P, Q) -> J.Jet:
    names = tuple(getattr(joint, "coordinate_names", ()))
    if "angle" in names:
        return joint.coordinates(P, Q)[names.index("angle")]
    return rotation_angle(P, Q)


@dataclass(frozen=True, eq=False)
class RotationalSpringDamper(ForceElement):
    """Torsion spring ``k`` [N m/rad], damper ``d`` [N m s/rad], free angle ``angle0`` [rad]."""

    joint: object = None
    k: float = 0.0
    d: float = 0.0
    angle0: float = 0.0
    kind = "rotational_spring"

    def resolve(self):
        return self.joint.resolve()

    def problems(self) -> list[str]:
        who = f"RotationalSpringDamper '{self.name}'"
        out = []
        if not hasattr(self.joint, "resolve"):
            out.append(f"{who}: joint must be a joint object, got {type(self.joint).__name__}")
        if not np.isfinite(self.k) or self.k < 0:
            out.append(f"{who}: stiffness k must be >= 0 [N m/rad], got {self.k}")
        if not np.isfinite(self.d) or self.d < 0:
            out.append(f"{who}: damping d must be >= 0 [N m s/rad], got {self.d}")
        if not np.isfinite(self.angle0):
            out.append(f"{who}: angle0 must be finite, got {self.angle0}")
        return out

    def deflection(self, P, Q) -> J.Jet:
        """``s = phi - phi0`` wrapped to about (-pi, pi] (a jet over the local vector)."""
        phi = joint_angle(self.joint, P, Q)
        dev = float(phi.v) - self.angle0
        return phi + (-self.angle0 - 2.0 * np.pi * float(np.round(dev / (2.0 * np.pi))))

    def contribution(self, ctx) -> ForceContribution:
        s = self.deflection(ctx.frames[0], ctx.frames[1])
        sd = float(J.rate(s, ctx.xd))
        M = self.k * float(s.v) + self.d * sd
        return scalar_law(s, ctx.xd, M, self.k, self.d, ctx.order)

    def potential(self, ctx) -> float:
        """Torsion spring energy ``V = k/2 (phi - phi0)^2`` [J] (wrapped deflection)."""
        s = float(self.deflection(ctx.frames[0], ctx.frames[1]).v)
        return 0.5 * self.k * s * s

    def energy_exchange(self) -> str | None:
        return damping_exchange(self.d, "N m s/rad")
