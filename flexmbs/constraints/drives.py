"""Drives: prescribed motion of a joint coordinate (rheonomic constraints, THEORY §5.5).

A drive adds one equation ``g(q, t) = 0`` to the joint named ``joint``; the assembler
evaluates it with that joint's marker frames ``P``, ``Q`` and the time jet ``t`` (the
last local coordinate), so ``g_t`` and ``g_tt`` come out of the jets.

* :class:`AngleDrive` rotates Q about ``z_P`` by ``phi(t)`` without atan2 wrap-around:

      sin(theta - phi) ~ (y_P . x_Q) cos phi - (x_P . x_Q) sin phi = 0;

* :class:`AngularVelocityDrive`: ``phi(t) = phi0 + omega t``;
* :class:`DisplacementDrive`: ``z_P . (r_Q - r_P) - s(t) = 0``;
* :class:`VelocityDrive`: ``s(t) = s0 + v t``.

Time functions (:class:`~flexmbs.kinematics.time_functions.TimeFunction`) return
``(f, f', f'')`` at ``t``; plain numbers are constants and a tuple ``(f, fd, fdd)`` of
callables is wrapped.  ``phi0``/``s0``
left as None are taken from the initial configuration: the assembler calls
``drive.with_initial(value, t0)`` with the joint coordinate measured by
``drive.measure(P, Q)`` at the initial state (``drive.needs_initial`` tells whether it
must), which returns a copy with ``phi0 = value - omega t0``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from flexmbs.constraints.rows import WeightedRow
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.relative import offset_along, rotation_angle
from flexmbs.kinematics.time_functions import Ramp, TimeFunction, as_time_function, time_jet

# isort: split
# moved to flexmbs.kinematics.time_functions; re-exported (like Ramp above) because tests
# outside constraints/ (system, bodies, scenarios, reduction) import them from here
from flexmbs.kinematics.time_functions import FromCallables as FromCallables
from flexmbs.kinematics.time_functions import SpinUp as SpinUp


# -- drives --------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _Drive:
    name: str
    joint: str
    kind = None  # the case-file ``type`` of a subclass; None: not in case files
    coordinate = "angle"

    @property
    def n_eq(self) -> int:
        return len(self.labels)

    @property
    def needs_initial(self) -> bool:
        return False

    def with_initial(self, value: float, t0: float = 0.0):
        return self

    def measure(self, P, Q) -> float:
        """Current joint coordinate (angle in (-pi, pi] or displacement) at frames P, Q."""
        c = rotation_angle(P, Q) if self.coordinate == "angle" else offset_along(P, Q, 2)
        return float(c.v)

    def problems(self) -> list[str]:
        out = []
        if not isinstance(self.joint, str) or not self.joint:
            out.append(f"{type(self).__name__} '{self.name}': joint must be the name of a "
                       f"joint, got {self.joint!r}")
        return out

    def _fn(self) -> TimeFunction:
        """The prescribed coordinate ``phi(t)`` (angle) or ``s(t)`` (displacement)."""
        raise NotImplementedError

    def _phi(self, t: J.Jet) -> J.Jet:
        return time_jet(self._fn(), t)

    def _weights(self, t: float):
        """``(w, w', w'', f, f', f'')`` of the row as a :class:`WeightedRow` (module doc):
        angle ``cos(phi) (y_P . x_Q) - sin(phi) (x_P . x_Q)``, displacement
        ``z_P . d - s(t)``."""
        f, fd, fdd = (float(v) for v in self._fn()(t))
        if self.coordinate == "displacement":
            z = np.zeros(1)
            return np.ones(1), z, z, -f, -fd, -fdd
        c, s = np.cos(f), np.sin(f)
        return (np.array([c, -s]), np.array([-s * fd, -c * fd]),
                np.array([-c * fd * fd - s * fdd, s * fd * fd - c * fdd]), 0.0, 0.0, 0.0)

    def rows(self) -> WeightedRow:
        """The drive's row (cached); the assembler evaluates it vectorised."""
        cached = self.__dict__.get("_rows")
        if cached is None:
            labels = ("z_P.d",) if self.coordinate == "displacement" else ("y_P.x_Q", "x_P.x_Q")
            cached = WeightedRow(labels, self._weights)
            self.__dict__["_rows"] = cached
        return cached

    def equations(self, P, Q, t):
        return self.rows().jets(P, Q, t)


def _check_fn(obj, field_name) -> list[str]:
    try:
        fn = as_time_function(getattr(obj, field_name), f"{type(obj).__name__} '{obj.name}'")
        fn(0.0)
    except (TypeError, ValueError) as exc:
        return [str(exc)]
    return []


@dataclass(frozen=True, eq=False)
class AngleDrive(_Drive):
    """Prescribed angle ``phi(t)`` [rad] of Q about ``z_P``; ``angle``: TimeFunction or number."""

    angle: object = 0.0
    kind = "angle"
    labels = ("sin(theta-phi)",)

    def problems(self):
        return super().problems() + _check_fn(self, "angle")

    def _fn(self):
        return as_time_function(self.angle, f"AngleDrive '{self.name}'")


@dataclass(frozen=True, eq=False)
class AngularVelocityDrive(_Drive):
    """Constant rate ``omega`` [rad/s]: ``phi = phi0 + omega t``."""

    omega: float = 0.0
    phi0: float | None = None
    kind = "angular_velocity"
    labels = ("sin(theta-phi)",)

    @property
    def needs_initial(self) -> bool:
        return self.phi0 is None

    def with_initial(self, value: float, t0: float = 0.0):
        if self.phi0 is not None:
            return self
        return dataclasses.replace(self, phi0=float(value) - self.omega * t0)

    def problems(self):
        out = super().problems()
        if not np.isfinite(self.omega):
            out.append(f"AngularVelocityDrive '{self.name}': omega must be finite, "
                       f"got {self.omega}")
        return out

    def _fn(self):
        if self.phi0 is None:
            raise ValueError(f"AngularVelocityDrive '{self.name}': phi0 unknown; call "
                             "with_initial(angle) first")
        return Ramp(self.omega, self.phi0)


@dataclass(frozen=True, eq=False)
class DisplacementDrive(_Drive):
    """Prescribed displacement ``s(t)`` [m] of Q along ``z_P``."""

    s: object = 0.0
    kind = "displacement"
    coordinate = "displacement"
    labels = ("z_P.d-s",)

    def problems(self):
        return super().problems() + _check_fn(self, "s")

    def _fn(self):
        return as_time_function(self.s, f"DisplacementDrive '{self.name}'")


@dataclass(frozen=True, eq=False)
class VelocityDrive(_Drive):
    """Constant axial speed ``v`` [m/s]: ``s = s0 + v t``."""

    v: float = 0.0
    s0: float | None = None
    kind = "velocity"
    coordinate = "displacement"
    labels = ("z_P.d-s",)

    @property
    def needs_initial(self) -> bool:
        return self.s0 is None

    def with_initial(self, value: float, t0: float = 0.0):
        if self.s0 is not None:
            return self
        return dataclasses.replace(self, s0=float(value) - self.v * t0)

    def problems(self):
        out = super().problems()
        if not np.isfinite(self.v):
            out.append(f"VelocityDrive '{self.name}': v must be finite, got {self.v}")
        return out

    def _fn(self):
        if self.s0 is None:
            raise ValueError(f"VelocityDrive '{self.name}': s0 unknown; call with_initial(s) first")
        return Ramp(self.v, self.s0)
