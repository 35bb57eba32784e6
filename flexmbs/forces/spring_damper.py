"""Point-to-point (axial) spring-damper, THEORY §5.7.1 (2.59)-(2.62).

With ``r_f = r_Q - r_P``, ``l = |r_f|`` and ``n = r_f / l``, the scalar force (tension
positive)

    F = k (l - l0) + d ld,        ld = n . (v_Q - v_P) = grad l . xd,

acts on body i at P along ``+n`` and on body j at Q along ``-n``.  Its generalized
force is ``Q_f = -F grad l`` (:func:`flexmbs.forces.base.scalar_law` with
``F_s = k``, ``F_sd = d``).  The spring stores

    V = k/2 (l - l0)^2,        dV/dx = k (l - l0) grad l = -Q_f(d = 0),

(there is no preload term: the force is zero at ``l = l0``); the damper dissipates
``d ld^2``.

Sides are markers, bodies (origin marker) or ``(body, point)`` with ``point`` the
inertial position [m] in the initial configuration (like a joint's ``at``); see
:func:`flexmbs.bodies.attach.attach`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach, body_of, initial_state, side_problems
from flexmbs.bodies.marker import Marker
from flexmbs.forces.base import ForceContribution, ForceElement, damping_exchange, scalar_law
from flexmbs.kinematics import jet as J


@dataclass(frozen=True, eq=False)
class PointToPointSpringDamper(ForceElement):
    """Axial spring ``k`` [N/m] and damper ``d`` [N s/m] of free length ``l0`` [m].

    ``l0=None`` takes the distance of the markers in the initial configuration.
    """

    first: object = None
    second: object = None
    k: float = 0.0
    d: float = 0.0
    l0: float | None = None
    kind = "spring_damper"

    def resolve(self) -> tuple[Marker, Marker]:
        return attach(self.first, self.name, "P"), attach(self.second, self.name, "Q")

    def free_length(self) -> float:
        if self.l0 is not None:
            return float(self.l0)
        P, Q = self.resolve()
        return float(np.linalg.norm(initial_state(Q)[0] - initial_state(P)[0]))

    def problems(self) -> list[str]:
        who = f"PointToPointSpringDamper '{self.name}'"
        out = side_problems(self.first, who, "P") + side_problems(self.second, who, "Q")
        if out:
            return out
        if not np.isfinite(self.k) or self.k < 0:
            out.append(f"{who}: stiffness k must be >= 0 [N/m], got {self.k}")
        if not np.isfinite(self.d) or self.d < 0:
            out.append(f"{who}: damping d must be >= 0 [N s/m], got {self.d}")
        if self.l0 is not None and (not np.isfinite(self.l0) or self.l0 < 0):
            out.append(f"{who}: free length l0 must be >= 0 [m], got {self.l0}")
        if body_of(self.first) is body_of(self.second):
            out.append(f"{who}: connects body '{body_of(self.first).name}' to itself")
        P, Q = self.resolve()
        if np.linalg.norm(initial_state(Q)[0] - initial_state(P)[0]) < 1e-12:
            out.append(f"{who}: markers coincide in the initial configuration, so the line "
                       "of action is undefined (use a Bushing)")
        return out

    def axial_law(self, length: float, ld: float) -> tuple[float, float, float]:
        """``(F, dF/dl, dF/dld)`` at length ``l`` [m] and rate ``ld`` [m/s]: here
        ``F = k (l - l0) + d ld``; subclasses with other laws (one-sided, tabulated)
        override this alone."""
        return self.k * (length - self.free_length()) + self.d * ld, self.k, self.d

    def contribution(self, ctx) -> ForceContribution:
        P, Q = ctx.frames[0], ctx.frames[1]
        r_f = Q.p - P.p
        if float(np.linalg.norm(r_f.v)) < 1e-14:
            raise ValueError(f"{type(self).__name__} '{self.name}': zero length, "
                             "direction undefined")
        length = J.norm(r_f)
        F, F_l, F_ld = self.axial_law(float(length.v), float(J.rate(length, ctx.xd)))
        return scalar_law(length, ctx.xd, F, F_l, F_ld, ctx.order)

    def potential(self, ctx) -> float:
        """Spring energy ``V = k/2 (l - l0)^2`` [J], ``l = |r_Q - r_P|`` (the damper has none)."""
        P, Q = ctx.frames[0], ctx.frames[1]
        length = float(np.linalg.norm(Q.p.v - P.p.v))
        return 0.5 * self.k * (length - self.free_length()) ** 2

    def energy_exchange(self) -> str | None:
        return damping_exchange(self.d, "N s/m")
