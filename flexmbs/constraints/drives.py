"""Drives: prescribed motion of a joint coordinate (rheonomic constraints, THEORY §5.5).

A drive adds one equation ``g(q, t) = 0`` to the joint named ``joint``; the assembler
evaluates it with that joint's marker frames ``P``, ``Q`` and the time jet ``t`` (the
last local coordinate), so ``g_t`` and ``g_tt`` come out of the jets.

* :class:`AngleDrive` rotates Q about ``z_P`` by ``phi(t)`` without atan2 wrap-around:

      sin(theta - phi) ~ (y_P . x_Q) cos phi - (x_P . x_Q) sin phi = 0;

* :class:`AngularVelocityDrive`: ``phi(t) = phi0 + omega t``;
* :class:`DisplacementDrive`: ``z_P . (r_Q - r_P) - s(t) = 0``;
* :class:`VelocityDrive`: ``s(t) = s0 + v t``.

A drive fed by a sensor (``feed = (sensor, component)``, ``ratio``, ``y0``) prescribes

    c(P, Q) = f(t) + ratio (y(q) - y0)

with ``y`` a position-level reading of the sensor (its ``measure_jet``: a position, an
orientation as Cardan angles or matrix, a face displacement; ``y0`` its initial value
unless given), in the same forms (``phi = f(t) + ratio (y - y0)`` in the sine form of
the angle), so the constraint stays holonomic.  Its row then depends on the
coordinates of the sensor's bodies too: the assembler appends the sensor's markers to
the drive's ``P``, ``Q`` and hands their frame jets to ``equations``, and ``G``,
``gamma`` and ``d(G^T lam)/dq`` come out of the jets.  With ``theta_B`` the driven
angle and ``y = theta_A`` an angle sensor on another joint this is the gear coupling
``theta_B = ratio theta_A``: the multiplier ``lam`` [N m] is the torque ``-lam`` on B
about its axis and ``ratio lam`` on A (virtual work ``tau_A = -ratio tau_B``).  A Cardan
angle is read in (-pi, pi]: the coupling holds while the fed angle stays off +-pi.

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
from dataclasses import dataclass, field

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
    #: ``(sensor, component)`` whose reading ``y`` adds ``ratio (y - y0)`` (module doc)
    feed: tuple | None = field(default=None, kw_only=True)
    ratio: float = field(default=1.0, kw_only=True)
    #: the reading at which the feed adds nothing (None: the initial reading)
    y0: float | None = field(default=None, kw_only=True)
    kind = None  # the case-file ``type`` of a subclass; None: not in case files
    coordinate = "angle"

    def __post_init__(self):
        if isinstance(self.feed, list):
            object.__setattr__(self, "feed", tuple(self.feed))

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
        why = self.feed_problem()
        return out + ([why] if why else [])

    # -- a drive fed by a sensor (module docstring) ------------------------------------
    def feed_problem(self) -> str | None:
        """The one-line reason ``feed``, ``ratio`` or ``y0`` is unusable, or None."""
        if self.feed is None:
            return None
        who = f"{type(self).__name__} '{self.name}'"
        f = self.feed
        if not (isinstance(f, tuple) and len(f) == 2 and hasattr(f[0], "measure_jet")
                and isinstance(f[1], (int, np.integer))):
            return f"{who}: feed must be (sensor, component index), got {f!r}"
        sensor, k = f
        if not getattr(sensor, "position_level", False):
            how = f" with output '{sensor.output}'" if hasattr(sensor, "output") else ""
            return (f"{who}: feed: sensor '{sensor.name}' ({type(sensor).__name__}{how}) is "
                    "not a position-level sensor; a drive stays holonomic and reads a "
                    "position, an orientation (output 'xyz' or 'matrix') or a "
                    "face_displacement sensor")
        if not 0 <= k < len(sensor.columns):
            return (f"{who}: feed: sensor '{sensor.name}' has {len(sensor.columns)} "
                    f"components, got component {k}")
        for key in ("ratio", "y0"):
            v = getattr(self, key)
            if (v is not None or key == "ratio") and not (
                    isinstance(v, (int, float, np.floating)) and np.isfinite(v)):
                return f"{who}: {key} must be a finite number, got {v!r}"
        return None

    @property
    def needs_reading(self) -> bool:
        """Whether ``y0`` must be taken from the initial configuration."""
        return self.feed is not None and self.y0 is None

    def with_reading(self, y0: float):
        """A copy with ``y0`` (the initial reading) if it was not given."""
        return self if self.y0 is not None else dataclasses.replace(self, y0=float(y0))

    def reading(self, sensor_frames) -> J.Jet:
        """The fed reading ``y`` as a jet of the sensor markers' frame jets."""
        sensor, k = self.feed
        return sensor.measure_jet(sensor_frames)[k]

    def gradient_problem(self, frames, C: np.ndarray, t0: float = 0.0) -> str | None:
        """The one-line reason a fed drive's row is singular at the frames ``frames``
        (order-1 jets of ``P``, ``Q`` and the sensor's markers): its gradient in the
        coordinates lies in the span of the rows ``C`` (k, n - 1) of its joint and the
        bodies' normalisations, as when the sensor reads the driven coordinate itself
        with ratio 1 (``g`` then does not change along the joint's freedom)."""
        n = frames[0].p.n
        d = self.equations(*frames[:2], J.Jet.variable(n - 1, t0, n, 1), *frames[2:])[0].d[:-1]
        r = d - C.T @ np.linalg.lstsq(C.T, d, rcond=None)[0] if len(C) else d
        if np.linalg.norm(r) > 1e-8 * max(1.0, np.linalg.norm(d)):
            return None
        return (f"{type(self).__name__} '{self.name}': feed '{self.feed[0].name}' with "
                f"ratio {self.ratio:g} cancels the driven coordinate (the sensor reads joint "
                f"'{self.joint}' itself): the drive equation is singular; feed it from "
                "another joint or change the ratio")

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

    def rows(self) -> WeightedRow | None:
        """The drive's row (cached); the assembler evaluates it vectorised.  None for a
        fed drive (its jets, :meth:`equations`)."""
        if self.feed is not None:
            return None
        cached = self.__dict__.get("_rows")
        if cached is None:
            labels = ("z_P.d",) if self.coordinate == "displacement" else ("y_P.x_Q", "x_P.x_Q")
            cached = WeightedRow(labels, self._weights)
            self.__dict__["_rows"] = cached
        return cached

    def equations(self, P, Q, t, *sensor_frames):
        """The row as a jet; a fed drive's with the sensor's frame jets (module doc)."""
        if self.feed is None:
            return self.rows().jets(P, Q, t)
        phi = self._phi(t) + (self.reading(sensor_frames) - float(self.y0)) * float(self.ratio)
        if self.coordinate == "displacement":
            return [offset_along(P, Q, 2) - phi]
        f = float(phi.v)
        c, s = np.cos(f), np.sin(f)
        return [J.mul(J.apply(phi, c, -s, -c), J.dot(P.y, Q.x))
                - J.mul(J.apply(phi, s, c, -s), J.dot(P.x, Q.x))]


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
