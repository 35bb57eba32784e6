"""The mean elastic displacement of a face of a flexible body (THEORY §5.8, §2.6).

For the named facet set ``A`` of a flexible body with the area-weighted mean mode
``Phi_c = int_A Phi dA / A`` (stored in the body file), the sensor gives

    u_A = Phi_c q_e = (1/A) int_A u dA       [m], body-frame components,

the face's mean elastic displacement relative to the floating frame: a marker at the
centroid ``X_c`` moving with ``Phi_c`` (:meth:`FlexibleBody.face_marker`) and one on the
frame at its origin give ``u_A = A_R^T (p_c - r_R) - X_c``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics import jet as J
from flexmbs.sensors.base import Sensor


@dataclass(frozen=True, eq=False)
class FaceDisplacementSensor(Sensor):
    """Mean elastic displacement [m] of face ``face`` of flexible body ``first``, in the
    body frame (module docstring)."""

    face: str = ""
    kind = "face_displacement"
    unit = "m"

    def problems(self) -> list[str]:
        who = f"FaceDisplacementSensor '{self.name}'"
        if not hasattr(self.first, "face_marker"):
            return [f"{who}: first must be a flexible body, got "
                    f"{type(self.first).__name__}"]
        try:
            self.first.face_marker(self.face)
        except KeyError as exc:
            return [f"{who}: {exc.args[0]}"]
        return []

    def resolve(self):
        body = self.first
        marker = body.face_marker(self.face)
        object.__setattr__(self, "_X_c", marker.s)     # the centroid, for measure
        return (marker, body.marker(f"{self.name}:frame"))

    position_level = True

    def measure(self, states) -> np.ndarray:
        c, frame = states[0], states[1]
        return frame.R.T @ (c.p - frame.p) - self._X_c

    def measure_jet(self, frames):
        c, frame = frames[0], frames[1]
        w = c.p - frame.p
        return [J.dot(frame.axis(k), w) - float(self._X_c[k]) for k in range(3)]
