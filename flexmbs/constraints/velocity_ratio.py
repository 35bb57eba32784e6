"""A velocity-ratio coupling of two rotations (THEORY §4): a belt or friction drive
whose ratio is set by the velocities only.

With ``omega_P``, ``omega_Q`` the angular velocities of the bodies of the markers ``P``
(``first``) and ``Q`` (``second``) and ``ratio`` the transmission ratio,

    z_P . omega_P - ratio z_Q . omega_Q = 0                     (one velocity row).

Between bodies turning about fixed axes this integrates to a gear (``angle_P = ratio
angle_Q``); on bodies whose axes move it does not.  The multiplier is the torque
``-mu z_P`` [N m] on the first body and ``mu ratio z_Q`` on the second.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.constraints.velocity import VelocityConstraint, as_marker


@dataclass(frozen=True, eq=False)
class VelocityRatio(VelocityConstraint):
    """``z_P . omega_P = ratio z_Q . omega_Q`` between ``first`` and ``second`` (markers
    or bodies; a body's z axis is used)."""

    first: object = None
    second: object = None
    ratio: float = 1.0
    kind = "velocity"
    labels = ("z_P.omega_P - ratio z_Q.omega_Q",)

    def markers(self) -> tuple:
        return (as_marker(self.first, self.title, "first"),
                as_marker(self.second, self.title, "second"))

    def problems(self) -> list[str]:
        out = super().problems()
        if not (isinstance(self.ratio, (int, float)) and np.isfinite(self.ratio)):
            out.append(f"{self.title}: ratio must be a finite number, got {self.ratio!r}")
        return out

    def rates(self, motions, t):
        P, Q = motions
        return np.array([P.R[:, 2] @ P.omega - self.ratio * (Q.R[:, 2] @ Q.omega)])
