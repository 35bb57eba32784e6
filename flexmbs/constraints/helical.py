"""Helical (screw) joint (VDI W, u = 5) about and along the joint z axis.

Cylindrical conditions plus the coupling of advance and turn by the pitch ``h``
[m per turn]; with ``d = r_Q - r_P``:

    x_P . d = 0,  y_P . d = 0,  z_P . x_Q = 0,  z_P . y_Q = 0,  z_P . d - h theta / (2 pi) = 0.

``theta`` must be continuous across +-pi.  The wrapped angle
``theta_w = atan2(y_P . x_Q, x_P . x_Q)`` is unwrapped statelessly by the number of
turns implied by the axial displacement,

    theta = theta_w + 2 pi round((2 pi z_P . d / h - theta_w) / (2 pi)),

which is exact while the screw condition holds to better than half a turn.  The
added term is piecewise constant, so the jets of ``theta`` are those of ``theta_w``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.constraints.base import Joint
from flexmbs.kinematics.jet import dot
from flexmbs.kinematics.relative import offset_along, rotation_angle


def unwrapped_angle(P, Q, pitch: float):
    """Jet of the continuous screw angle ``theta`` [rad] (module docstring)."""
    theta_w = rotation_angle(P, Q)
    s = offset_along(P, Q, 2)
    turns = np.round((2.0 * np.pi * float(s.v) / pitch - float(theta_w.v)) / (2.0 * np.pi))
    return theta_w + 2.0 * np.pi * turns


@dataclass(frozen=True, eq=False)
class Helical(Joint):
    """Screw joint; ``pitch`` [m/turn], positive for a right-handed screw about z."""

    pitch: float | None = None
    kind = "helical"
    labels = ("x_P.d", "y_P.d", "z_P.x_Q", "z_P.y_Q", "z_P.d-h*theta/2pi")
    coordinate_names = ("angle", "displacement")

    def problems(self) -> list[str]:
        out = super().problems()
        h = self.pitch
        if h is None or not np.isfinite(h) or h == 0.0:
            out.append(f"Helical '{self.name}': pitch must be a finite non-zero length per "
                       f"turn [m] (use Cylindrical or Revolute otherwise), got {h}")
        return out

    def equations(self, P, Q, t):
        h = float(self.pitch)
        s = offset_along(P, Q, 2)
        screw = s - unwrapped_angle(P, Q, h) * (h / (2.0 * np.pi))
        return [offset_along(P, Q, 0), offset_along(P, Q, 1), dot(P.z, Q.x), dot(P.z, Q.y), screw]

    def coordinates(self, P, Q):
        return [unwrapped_angle(P, Q, float(self.pitch)), offset_along(P, Q, 2)]
