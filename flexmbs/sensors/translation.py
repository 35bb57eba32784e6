"""Translational sensors (THEORY §5.8): ``r = r_Q - r_P`` and its time derivatives.

Resolved in the sensor frame ``s`` (axes ``A_s``, angular velocity ``omega_s`` and
acceleration ``alpha_s``):

    position      ^s r   = A_s^T r
    velocity      inertial derivative  A_s^T rd,
                  or (``derivative="frame"``) derivative seen in s:
                  d(A_s^T r)/dt = A_s^T (rd - omega_s x r)
    acceleration  inertial  A_s^T rdd,  or seen in s:
                  A_s^T (rdd - alpha_s x r - 2 omega_s x rd + omega_s x (omega_s x r)).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.sensors.base import Sensor

_DERIVATIVES = ("inertial", "frame")


@dataclass(frozen=True, eq=False)
class PositionSensor(Sensor):
    """Relative position ``A_s^T (r_Q - r_P)`` [m]."""

    kind = "position"
    unit = "m"
    position_level = True

    def measure(self, states) -> np.ndarray:
        P, Q = self.pair(states)
        return self.resolve_in_frame(states, Q.p - P.p)

    def measure_jet(self, frames):
        P, Q = self.pair_jets(frames)
        return self.resolve_jet(frames, Q.p - P.p)


@dataclass(frozen=True, eq=False)
class _Derivative(Sensor):
    derivative: str = "inertial"

    def problems(self) -> list[str]:
        out = super().problems()
        if self.derivative not in _DERIVATIVES:
            out.append(f"{type(self).__name__} '{self.name}': derivative must be one of "
                       f"{_DERIVATIVES}, got {self.derivative!r}")
        return out


@dataclass(frozen=True, eq=False)
class VelocitySensor(_Derivative):
    """Relative velocity [m/s] (module docstring)."""

    kind = "velocity"
    unit = "m/s"

    def measure(self, states) -> np.ndarray:
        P, Q = self.pair(states)
        r, rd = Q.p - P.p, Q.v - P.v
        if self.derivative == "frame":
            S = self.frame_state(states)
            rd = rd - np.cross(S.omega, r)
        return self.resolve_in_frame(states, rd)


@dataclass(frozen=True, eq=False)
class AccelerationSensor(_Derivative):
    """Relative acceleration [m/s^2] (module docstring)."""

    kind = "acceleration"
    unit = "m/s^2"

    def measure(self, states) -> np.ndarray:
        P, Q = self.pair(states)
        r, rd, rdd = Q.p - P.p, Q.v - P.v, Q.a - P.a
        if self.derivative == "frame":
            S = self.frame_state(states)
            w, al = S.omega, S.alpha
            rdd = rdd - np.cross(al, r) - 2.0 * np.cross(w, rd) + np.cross(w, np.cross(w, r))
        return self.resolve_in_frame(states, rdd)
