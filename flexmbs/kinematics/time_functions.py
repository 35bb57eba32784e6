"""Time functions: prescribed values ``f(t)`` with two derivatives (THEORY §5.5).

A :class:`TimeFunction` returns ``(f, f', f'')`` at ``t`` (scalars or arrays); drives
prescribe joint coordinates with them and loads their magnitudes.  A plain number or
array is a :class:`Constant` and a tuple ``(f, fd, fdd)`` of callables is wrapped
(:func:`as_time_function`); :func:`time_jet` turns a value into a jet over the local
vector whose last entry is time, so ``g_t`` and ``g_tt`` follow by the chain rule.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics import jet as J


@dataclass(frozen=True)
class TimeFunction:
    """A function of time with two derivatives; ``f(t) -> (f, fd, fdd)`` (scalars or arrays)."""

    kind = None  # the case-file ``type`` of a subclass; None: not in case files

    def __call__(self, t: float):
        raise NotImplementedError


@dataclass(frozen=True)
class Constant(TimeFunction):
    """``f = c`` (scalar or vector)."""

    c: object = 0.0
    kind = "constant"

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
    kind = "ramp"

    def __call__(self, t):
        r = np.asarray(self.rate, dtype=float)
        return np.asarray(self.f0, float) + r * (t - self.t0), r, np.zeros_like(r)


@dataclass(frozen=True)
class Polynomial(TimeFunction):
    """``f = sum_k c_k t^k`` (``coeffs`` lowest power first)."""

    coeffs: tuple = (0.0,)
    kind = "polynomial"

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
    kind = "sine"

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
    kind = "spin_up"

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
