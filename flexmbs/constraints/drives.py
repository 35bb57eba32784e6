"""Drives: prescribed motion of a joint coordinate (rheonomic constraints, THEORY §5.5).

A drive adds one equation ``g(q, t) = 0`` to the joint named ``joint``; the assembler
evaluates it with that joint's marker frames ``P``, ``Q`` and the time jet ``t`` (the
last local coordinate), so ``g_t`` and ``g_tt`` come out of the jets.

* :class:`AngleDrive` rotates Q about ``z_P`` by ``phi(t)`` without atan2 wrap-around:

      sin(theta - phi) ~ (y_P . x_Q) cos phi - (x_P . x_Q) sin phi = 0;

* :class:`AngularVelocityDrive`: ``phi(t) = phi0 + omega t``;
* :class:`DisplacementDrive`: ``z_P . (r_Q - r_P) - s(t) = 0``;
* :class:`VelocityDrive`: ``s(t) = s0 + v t``.

Time functions (:class:`TimeFunction`) return ``(f, f', f'')`` at ``t``; plain numbers
are constants and a tuple ``(f, fd, fdd)`` of callables is wrapped.  ``phi0``/``s0``
left as None are taken from the initial configuration: the assembler calls
``drive.with_initial(value, t0)`` with the joint coordinate measured by
``drive.measure(P, Q)`` at the initial state (``drive.needs_initial`` tells whether it
must), which returns a copy with ``phi0 = value - omega t0``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from flexmbs.constraints.base import offset_along, rotation_angle
from flexmbs.constraints.rows import WeightedRow
from flexmbs.kinematics import jet as J


# -- time functions ------------------------------------------------------------------------
@dataclass(frozen=True)
class TimeFunction:
    """A function of time with two derivatives; ``f(t) -> (f, fd, fdd)`` (scalars or arrays)."""

    def __call__(self, t: float):
        raise NotImplementedError


@dataclass(frozen=True)
class Constant(TimeFunction):
    """``f = c`` (scalar or vector)."""

    c: object = 0.0

    def __call__(self, t):
        c = np.asarray(self.c, dtype=float)
        z = np.zeros_like(c)
        return c, z, z


@dataclass(frozen=True)
class Ramp(TimeFunction):
    """Linear ``f = f0 + rate (t - t0)``."""

    rate: object = 0.0
    f0: object = 0.0
    t0: float = 0.0

    def __call__(self, t):
        r = np.asarray(self.rate, dtype=float)
        return np.asarray(self.f0, float) + r * (t - self.t0), r, np.zeros_like(r)


@dataclass(frozen=True)
class Polynomial(TimeFunction):
    """``f = sum_k c_k t^k`` (``coeffs`` lowest power first)."""

    coeffs: tuple = (0.0,)

    def __call__(self, t):
        p = np.polynomial.Polynomial(np.asarray(self.coeffs, dtype=float))
        return float(p(t)), float(p.deriv(1)(t)), float(p.deriv(2)(t))


@dataclass(frozen=True)
class Sine(TimeFunction):
    """``f = offset + amplitude sin(omega t + phase)`` (amplitude may be a vector)."""

    amplitude: object = 1.0
    omega: float = 1.0
    phase: float = 0.0
    offset: object = 0.0

    def __call__(self, t):
        a, w = np.asarray(self.amplitude, float), self.omega
        arg = w * t + self.phase
        return (np.asarray(self.offset, float) + a * np.sin(arg), a * w * np.cos(arg),
                -a * w * w * np.sin(arg))


@dataclass(frozen=True)
class SpinUp(TimeFunction):
    """Kane's spin-up profile (Kane, Ryan & Banerjee 1987) for the angle ``theta(t)``.

    ``thetad = (Omega/T) (t - T/(2 pi) sin(2 pi t/T))`` for ``t < T``, ``Omega`` after;
    integrated: ``theta = (Omega/T) (t^2/2 + (T/(2 pi))^2 (cos(2 pi t/T) - 1))``, and
    ``theta = Omega T/2 + Omega (t - T)`` for ``t >= T``; plus ``theta0``.
    """

    Omega: float = 1.0
    T: float = 1.0
    theta0: float = 0.0

    def __call__(self, t):
        W, T = self.Omega, self.T
        if t >= T:
            return self.theta0 + W * T / 2.0 + W * (t - T), W, 0.0
        c = T / (2.0 * np.pi)
        f = W / T * (t * t / 2.0 + c * c * (np.cos(t / c) - 1.0))
        return self.theta0 + f, W / T * (t - c * np.sin(t / c)), W / T * (1.0 - np.cos(t / c))


@dataclass(frozen=True)
class FromCallables(TimeFunction):
    """Wrap user callables ``(f, fd, fdd)``."""

    f: object = None
    fd: object = None
    fdd: object = None

    def __call__(self, t):
        return self.f(t), self.fd(t), self.fdd(t)


@dataclass(frozen=True)
class Scaled(TimeFunction):
    """``factor * function(t)``, e.g. a fixed direction times a scalar history."""

    factor: object = 1.0
    function: TimeFunction = Constant(1.0)

    def __call__(self, t):
        a = np.asarray(self.factor, dtype=float)
        return tuple(a * np.asarray(v, float) for v in self.function(t))


def as_time_function(spec, who: str) -> TimeFunction:
    """Number/array -> :class:`Constant`; ``(f, fd, fdd)`` callables -> :class:`FromCallables`."""
    if isinstance(spec, TimeFunction):
        return spec
    if isinstance(spec, (tuple, list)) and len(spec) == 3 and all(callable(c) for c in spec):
        return FromCallables(*spec)
    if callable(spec):
        raise TypeError(f"{who}: give a TimeFunction or (f, fd, fdd) callables, not a single "
                        "callable (its derivatives are needed for g_t and g_tt)")
    a = np.asarray(spec, dtype=float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{who}: time function value must be finite, got {spec}")
    return Constant(a)


def time_jet(fn: TimeFunction, t: J.Jet) -> J.Jet:
    """Jet of ``f(t)`` by the chain rule: ``d = f' dt``, ``h = f'' dt dt^T + f' ht``."""
    f, fd, fdd = (np.asarray(v, dtype=float) for v in fn(float(t.v)))
    d = np.multiply.outer(fd, t.d)
    h = None
    if t.h is not None:
        h = np.multiply.outer(fdd, np.outer(t.d, t.d)) + np.multiply.outer(fd, t.h)
    return J.Jet(f, d, h)


# -- drives --------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _Drive:
    name: str
    joint: str
    kind = "drive"
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
