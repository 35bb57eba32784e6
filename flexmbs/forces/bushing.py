"""Bushing: six-component linear spring-damper between two markers (SIMPACK FE-3/FE-41).

Measures in P's frame, with ``d = r_Q - r_P``:

    u     = (x_P . d, y_P . d, z_P . d)                               [m]
    theta = 1/2 (z_P . y_Q - y_P . z_Q,  x_P . z_Q - z_P . x_Q,  y_P . x_Q - x_P . y_Q)   [rad]

(``theta`` is the small relative rotation of Q about P's axes; exact to first order).
With ``s = (u, theta)`` and ``s0`` its value in the initial configuration (the bushing
is unloaded there), each component is an independent linear law

    F_k = K_k (s_k - s0_k) + D_k sd_k,       Q_f = -sum_k F_k grad s_k,

so forces act on body i along +P axes and on body j opposite.  ``Q`` defaults to a
marker on the second body coincident with P in the initial configuration.

The stiffness part is the gradient of the potential of these same measures,

    V = sum_k K_k/2 (s_k - s0_k)^2,      dV/dx = sum_k K_k (s_k - s0_k) grad s_k = -Q_f(D = 0),

so for a rotation by ``a`` about ``x_P`` it is ``K_4/2 sin(a)^2`` (``theta_x = sin a``),
not ``K_4/2 a^2``.  The dampers ``D_k`` dissipate ``sum_k D_k sd_k^2``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach, body_of, initial_state, side_problems
from flexmbs.bodies.marker import Marker
from flexmbs.forces.base import ForceContribution, ForceElement, damping_exchange, scalar_law
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.frames import frame_jet
from flexmbs.kinematics.relative import offset_along


def bushing_measures(P, Q) -> list[J.Jet]:
    """The six jets ``(u, theta)`` of the module docstring."""
    u = [offset_along(P, Q, k) for k in range(3)]
    th = [0.5 * (J.dot(P.z, Q.y) - J.dot(P.y, Q.z)),
          0.5 * (J.dot(P.x, Q.z) - J.dot(P.z, Q.x)),
          0.5 * (J.dot(P.y, Q.x) - J.dot(P.x, Q.y))]
    return u + th


def _initial_q(body):
    if getattr(body, "is_ground", False):
        return None
    return body.initial_q()


@dataclass(frozen=True, eq=False)
class Bushing(ForceElement):
    """Stiffnesses ``K`` (6,) [N/m x3, N m/rad x3] and dampings ``D`` (6,) along/about P's axes."""

    first: object = None
    second: object = None
    K: tuple = (0.0,) * 6
    D: tuple = (0.0,) * 6
    kind = "bushing"

    def resolve(self) -> tuple[Marker, Marker]:
        P = attach(self.first, self.name, "P")
        if isinstance(self.second, Marker):
            return P, self.second
        p0, R0 = initial_state(P)
        side = self.second if isinstance(self.second, tuple) else (self.second, p0)
        return P, attach(side, self.name, "Q", R=R0)

    def problems(self) -> list[str]:
        who = f"Bushing '{self.name}'"
        out = side_problems(self.first, who, "P")
        for key in ("K", "D"):
            a = np.asarray(getattr(self, key), dtype=float)
            if a.shape != (6,):
                out.append(f"{who}: {key} must have shape (6,), got {a.shape}")
            elif not np.all(np.isfinite(a)) or np.any(a < 0):
                out.append(f"{who}: {key} must be finite and >= 0, got {a.tolist()}")
        if not out and body_of(self.first) is body_of(self.second):
            out.append(f"{who}: connects body '{body_of(self.first).name}' to itself")
        return out

    def unloaded(self) -> np.ndarray:
        """``s0``: the six measures in the initial configuration."""
        P, Q = self.resolve()
        qP, qQ = _initial_q(P.body), _initial_q(Q.body)
        nP = 0 if qP is None else len(qP)
        n = nP + (0 if qQ is None else len(qQ)) + 1
        FP = frame_jet(P, qP, n, 0, order=1)
        FQ = frame_jet(Q, qQ, n, nP, order=1)
        return np.array([float(m.v) for m in bushing_measures(FP, FQ)])

    def contribution(self, ctx) -> ForceContribution:
        P, Q = ctx.frames[0], ctx.frames[1]
        K, D = np.asarray(self.K, float), np.asarray(self.D, float)
        s0 = self.unloaded()
        total = None
        for k, s in enumerate(bushing_measures(P, Q)):
            sd = float(J.rate(s, ctx.xd))
            F = K[k] * (float(s.v) - s0[k]) + D[k] * sd
            c = scalar_law(s, ctx.xd, F, K[k], D[k], ctx.order)
            total = c if total is None else _add(total, c)
        return total

    def potential(self, ctx) -> float:
        """Stiffness energy ``V = sum_k K_k/2 (s_k - s0_k)^2`` [J] of the six measures
        ``s = (u, theta)`` (module docstring); the dampers have none."""
        s = np.array([float(m.v) for m in bushing_measures(ctx.frames[0], ctx.frames[1])])
        return float(0.5 * np.sum(np.asarray(self.K, float) * (s - self.unloaded()) ** 2))

    def energy_exchange(self) -> str | None:
        return damping_exchange(self.D, "N s/m, N m s/rad")


def _add(a: ForceContribution, b: ForceContribution) -> ForceContribution:
    if a.dQ_dx is None:
        return ForceContribution(a.Q + b.Q, None, None)
    return ForceContribution(a.Q + b.Q, a.dQ_dx + b.dQ_dx, a.dQ_dxd + b.dQ_dxd)
