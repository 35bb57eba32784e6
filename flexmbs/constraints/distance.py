"""Distance constraint (a massless link of length ``L`` between two points, u = 1).

P at ``at`` (or the first side's marker) and Q at ``second_at`` (or the second side's
marker) keep their distance ``|r_Q - r_P| = L``.  The row is

    g = (d . d - L^2) / (2 L),   d = r_Q - r_P,

which vanishes with ``|d| - L`` and has the same gradient there (``dg = d . dd / L``), but
no square root: its multiplier ``lam`` [N] is the link's compressive force, the force on
Q being ``-lam d / L`` (reactions ``-G^T lam``).  ``length`` [m] defaults to the initial
distance.  Joint coordinate: the distance ``|d|`` [m].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.constraints.two_point import TwoPointJoint
from flexmbs.kinematics import jet as J


@dataclass(frozen=True, eq=False)
class Distance(TwoPointJoint):
    """Massless link; ``length`` [m] (None: the initial distance)."""

    length: float | None = None
    kind = "distance"
    labels = ("(d.d-L^2)/2L",)
    coordinate_names = ("distance",)

    def L(self) -> float:
        """The link length [m]."""
        if self.length is not None:
            return float(self.length)
        (p, _), (pq, _) = self.initial_frames()
        return float(np.linalg.norm(pq - p))

    def problems(self) -> list[str]:
        out = super().problems()
        if self.length is not None and not (np.isfinite(self.length) and self.length > 0.0):
            out.append(f"{self.title}: length must be a positive distance [m], "
                       f"got {self.length}")
        elif not out and self.length is None and self.L() < 1e-12:
            out.append(f"{self.title}: the two points coincide initially; give "
                       "'second_at' (or a second marker) or 'length' [m]")
        return out

    def equations(self, P, Q, t):
        L = self.L()
        d = Q.p - P.p
        return [(J.dot(d, d) - L * L) * (0.5 / L)]

    def coordinates(self, P, Q):
        return [J.norm(Q.p - P.p)]
