"""Rack and pinion: the rack's advance equals the pitch radius times the pinion's turn,
both relative to their common carrier.

Sides: the pinion (marker ``P`` at its centre, ``z_P`` its axis: ``at``, ``axis``) and
the rack (``Q`` on the rack, ``z_Q`` its direction of travel: ``second_at``,
``second_axis``, normal to ``z_P``).  The pinion turns on a revolute and the rack slides
on a prismatic joint of one carrier (a body or the ground), so the pinion centre and the
direction ``z_Q`` are fixed in the carrier.  With ``d = r_Q - r_P``, the rack's advance
and the angle of ``z_Q`` about the pinion's axis seen from the pinion are

    s = z_Q . d,        beta = atan2(y_P . z_Q, x_P . z_Q),

and the pinion's turn is ``theta - theta_0 = -(beta - beta_0)``; the law
``s - s_0 = r (theta - theta_0)`` for the pitch radius ``r`` [m] (``radius``, negative
to reverse the sense) is

    g = s - s_0 + r (beta - beta_0) - 2 pi r k,
    k = round(((s - s_0) / r + beta - beta_0) / (2 pi)),

``k`` counting the pinion's whole turns statelessly from the advance (as the helical
joint does: exact while the law holds to better than half a turn; ``k`` is piecewise
constant, so the jets are those of ``s`` and ``beta``).  ``s_0``, ``beta_0``: initial
configuration.  The multiplier ``lam`` [N] is the rack force along ``z_Q`` (the force
on the rack ``-lam z_Q``, the torque on the pinion ``r lam`` about ``z_P``).  Joint
coordinates: the pinion turn ``theta - theta_0`` [rad] and the advance ``s - s_0`` [m].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import initial_state
from flexmbs.constraints.base import parse_axis
from flexmbs.constraints.two_point import TwoPointJoint
from flexmbs.kinematics import jet as J


@dataclass(frozen=True, eq=False)
class RackPinion(TwoPointJoint):
    """``radius`` [m]: pitch radius of the pinion (signed, module docstring)."""

    radius: float | None = None
    kind = "rack_pinion"
    labels = ("s-s0-r*theta",)
    coordinate_names = ("turn", "advance")

    def problems(self) -> list[str]:
        out = super().problems()
        r = self.radius
        if r is None or not np.isfinite(r) or r == 0.0:
            out.append(f"{self.title}: radius must be a finite non-zero pitch radius [m], "
                       f"got {r}")
        if self.axis is not None and self.second_axis is not None and not out:
            a, b = parse_axis(self.axis, self.title), parse_axis(self.second_axis, self.title)
            if abs(a @ b) > 1e-9:
                out.append(f"{self.title}: the rack's direction 'second_axis' must be normal "
                           f"to the pinion's 'axis', got axis . second_axis = {a @ b:.3g}")
        elif not out:           # (an axis left out: the markers' own axes, or each other's)
            try:
                P, Q = self.resolve()
                a, b = initial_state(P)[1][:, 2], initial_state(Q)[1][:, 2]
            except (ValueError, TypeError, AttributeError):
                return out                      # (the sides' own problems say why)
            if abs(a @ b) > 1e-9 * np.linalg.norm(a) * np.linalg.norm(b):
                how = "given" if self.second_axis is not None else \
                    "left out: the pinion's axis"
                out.append(f"{self.title}: the rack's direction 'second_axis' must be normal "
                           f"to the pinion's axis, got the directions "
                           f"{np.round(a, 12).tolist()} and {np.round(b, 12).tolist()} "
                           f"(second_axis {how})")
        return out

    def _initial(self) -> tuple[float, float]:
        """``(s_0 [m], beta_0 [rad])`` of the initial configuration."""
        (p, A), (pq, B) = self.initial_frames()
        zq = B[:, 2]
        return float(zq @ (pq - p)), float(np.arctan2(A[:, 1] @ zq, A[:, 0] @ zq))

    def _turn_and_advance(self, P, Q) -> tuple[J.Jet, J.Jet]:
        s0, beta0 = self._initial()
        r = float(self.radius)
        ds = J.dot(Q.z, Q.p - P.p) - s0
        dbeta = J.atan2(J.dot(P.y, Q.z), J.dot(P.x, Q.z)) - beta0
        k = np.round((float(ds.v) / r + float(dbeta.v)) / (2.0 * np.pi))
        return -dbeta + 2.0 * np.pi * k, ds

    def equations(self, P, Q, t):
        theta, ds = self._turn_and_advance(P, Q)
        return [ds - theta * float(self.radius)]

    def coordinates(self, P, Q):
        return list(self._turn_and_advance(P, Q))
