"""Rotational sensors (THEORY §5.8).

``OrientationSensor``: relative rotation ``A^{PQ} = A_P^T A_Q`` (Q's axes in P's frame;
absolute ``A_Q`` when only one marker is given), output as

* ``"matrix"``: the 9 entries row by row;
* ``"rotvec"``: the rotation vector ``phi n`` [rad] (``phi`` in [0, pi]);
* ``"xyz"``: Cardan angles with ``A^{PQ} = R_x(a) R_y(b) R_z(c)`` [rad].

``AngularVelocitySensor``: ``omega_Q - omega_P``; ``AngularAccelerationSensor``:
``alpha_Q - alpha_P`` (its inertial time derivative), both resolved in the sensor frame.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics import jet as J
from flexmbs.sensors.base import Sensor

_OUTPUTS = ("matrix", "rotvec", "xyz")


def rotation_vector(R: np.ndarray) -> np.ndarray:
    """Rotation vector ``phi n`` of a rotation matrix (robust near 0 and pi)."""
    c = np.clip(0.5 * (np.trace(R) - 1.0), -1.0, 1.0)
    phi = float(np.arccos(c))
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if phi < 1e-6:
        return w                                  # sin(phi) n ~ phi n
    if np.pi - phi > 1e-4:
        return phi / np.sin(phi) * w
    B = 0.5 * (R + np.eye(3))                     # = n n^T near phi = pi
    k = int(np.argmax(np.diag(B)))
    n = B[:, k] / np.sqrt(B[k, k])
    if n @ w < 0:
        n = -n
    return phi * n


def cardan_xyz(R: np.ndarray) -> np.ndarray:
    """Angles ``(a, b, c)`` with ``R = R_x(a) R_y(b) R_z(c)``."""
    b = np.arcsin(np.clip(R[0, 2], -1.0, 1.0))
    a = np.arctan2(-R[1, 2], R[2, 2])
    c = np.arctan2(-R[0, 1], R[0, 0])
    return np.array([a, b, c])


@dataclass(frozen=True, eq=False)
class OrientationSensor(Sensor):
    """Relative orientation of Q with respect to P; ``output`` matrix | rotvec | xyz."""

    output: str = "rotvec"
    kind = "orientation"

    @property
    def unit(self) -> str:
        return "1" if self.output == "matrix" else "rad"

    @property
    def columns(self) -> tuple[str, ...]:
        if self.output == "matrix":
            return tuple(f"{self.name}.A{i}{j}" for i in range(1, 4) for j in range(1, 4))
        if self.output == "xyz":
            return tuple(f"{self.name}.{c}" for c in ("a_x", "b_y", "c_z"))
        return super().columns

    def problems(self) -> list[str]:
        out = super().problems()
        if self.output not in _OUTPUTS:
            out.append(f"OrientationSensor '{self.name}': output must be one of {_OUTPUTS}, "
                       f"got {self.output!r}")
        return out

    def matrix(self, states) -> np.ndarray:
        P, Q = self.pair(states)
        return P.R.T @ Q.R

    def measure(self, states) -> np.ndarray:
        A = self.matrix(states)
        if self.output == "matrix":
            return A.reshape(9)
        if self.output == "xyz":
            return cardan_xyz(A)
        return rotation_vector(A)

    @property
    def position_level(self) -> bool:
        """The matrix and the Cardan angles have jets; the rotation vector has none."""
        return self.output in ("matrix", "xyz")

    def measure_jet(self, frames):
        """``A_ij = a_P,i . a_Q,j`` and, for ``"xyz"``, :func:`cardan_xyz` of them."""
        P, Q = self.pair_jets(frames)

        def A(i, j):
            return J.dot(P.axis(i), Q.axis(j))
        if self.output == "matrix":
            return [A(i, j) for i in range(3) for j in range(3)]
        if self.output != "xyz":
            return super().measure_jet(frames)
        s = A(0, 2)
        v = float(np.clip(s.v, -1.0, 1.0))
        c2 = max(1.0 - v * v, 1e-300)
        b = J.apply(s, np.arcsin(v), 1.0 / np.sqrt(c2), v / c2 ** 1.5)
        return [J.atan2(-A(1, 2), A(2, 2)), b, J.atan2(-A(0, 1), A(0, 0))]


@dataclass(frozen=True, eq=False)
class AngularVelocitySensor(Sensor):
    """``A_s^T (omega_Q - omega_P)`` [rad/s]."""

    kind = "angular_velocity"
    unit = "rad/s"

    def measure(self, states) -> np.ndarray:
        P, Q = self.pair(states)
        return self.resolve_in_frame(states, Q.omega - P.omega)


@dataclass(frozen=True, eq=False)
class AngularAccelerationSensor(Sensor):
    """``A_s^T (alpha_Q - alpha_P)`` [rad/s^2]."""

    kind = "angular_acceleration"
    unit = "rad/s^2"

    def measure(self, states) -> np.ndarray:
        P, Q = self.pair(states)
        return self.resolve_in_frame(states, Q.alpha - P.alpha)
