"""Force-deflection curves of nonlinear springs, THEORY §5.7.1: ``F(s, sd)`` with its
partial derivatives (for Newton) and the potential ``V(s) = int_0^s F(u, 0) du``.

:class:`TabulatedCurve` interpolates a table ``(s_i, F_i)`` (``s_i`` strictly increasing)
with the monotone piecewise-cubic Hermite interpolant (PCHIP, Fritsch & Carlson 1980,
:class:`scipy.interpolate.PchipInterpolator`): C1, it passes through every point and does
not overshoot (monotone data give a monotone curve).  Outside the table it continues
*linearly* with the end value and end slope (C1 at the ends; no cubic extrapolation):

    F(s) = F_N + F'_N (s - s_N)   (s > s_N),     F(s) = F_0 + F'_0 (s - s_0)   (s < s_0).

Its potential is the exact antiderivative of that interpolant (the PCHIP cubics'
antiderivative inside, the quadratic outside), taken zero at ``s = 0``.

:class:`CallableCurve` wraps a Python function ``f(s, sd)`` and an optional
``derivative(s, sd) -> (F_s, F_sd)``; without it the derivatives are central differences
with steps ``h = 6e-6 max(1, |s|)`` (and the same in ``sd``; ``6e-6 ~ eps^(1/3)``
balances truncation and round-off).  Its potential is ``int_0^s f(u, 0) du`` by adaptive
quadrature (:func:`scipy.integrate.quad`); only the rate-independent part stores energy.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.integrate import quad
from scipy.interpolate import PchipInterpolator

from flexmbs.forces.base import damping_exchange

FD_STEP = 6e-6    #: relative central-difference step of CallableCurve


@dataclass(frozen=True, eq=False)
class TabulatedCurve:
    """``F(s)`` through the points ``(s[i], F[i])`` (PCHIP, linear outside)."""

    s: tuple
    F: tuple

    def problems(self, who: str, units: tuple[str, str]) -> list[str]:
        s, F = np.asarray(self.s, float), np.asarray(self.F, float)
        if s.ndim != 1 or s.shape != F.shape or s.size < 2:
            return [f"{who}: the curve needs two equally long lists of at least 2 values "
                    f"(deflection [{units[0]}], force [{units[1]}]), got {s.size} and {F.size}"]
        if not (np.all(np.isfinite(s)) and np.all(np.isfinite(F))):
            return [f"{who}: the curve has non-finite values"]
        if np.any(np.diff(s) <= 0):
            return [f"{who}: the curve's deflections must increase strictly, got {s.tolist()}"]
        return []

    def _parts(self):
        cached = self.__dict__.get("_cached")
        if cached is None:
            s = np.asarray(self.s, float)
            p = PchipInterpolator(s, np.asarray(self.F, float), extrapolate=False)
            dp, P = p.derivative(), p.antiderivative()
            ends = [(s[k], float(p(s[k])), float(dp(s[k])), float(P(s[k]))) for k in (0, -1)]
            cached = (p, dp, P, ends)
            self.__dict__["_cached"] = cached
        return cached

    def _outside(self, s: float):
        """``(s_k, F_k, F'_k, P_k)`` of the table end beyond which ``s`` lies, or None."""
        first, last = self._parts()[3]
        return first if s < first[0] else last if s > last[0] else None

    def __call__(self, s: float, sd: float = 0.0) -> tuple[float, float, float]:
        """``(F, F_s, F_sd)``; ``F_sd = 0``."""
        end = self._outside(s)
        if end is not None:
            s_k, F_k, dF_k, _ = end
            return F_k + dF_k * (s - s_k), dF_k, 0.0
        p, dp = self._parts()[:2]
        return float(p(s)), float(dp(s)), 0.0

    def primitive(self, s: float) -> float:
        """``int_{s_0}^s F`` of the interpolant with its linear extension."""
        end = self._outside(s)
        if end is not None:
            s_k, F_k, dF_k, P_k = end
            z = s - s_k
            return P_k + F_k * z + 0.5 * dF_k * z * z
        return float(self._parts()[2](s))

    def integral(self, s: float) -> float:
        """``V(s) = int_0^s F(u) du``."""
        return self.primitive(s) - self.primitive(0.0)

    rate_independent = True


@dataclass(frozen=True, eq=False)
class CallableCurve:
    """``F = f(s, sd)``, optional ``derivative(s, sd) -> (F_s, F_sd)``;
    ``rate_independent``: ``f`` does not depend on ``sd`` (then it stores all its work)."""

    f: Callable[[float, float], float]
    derivative: Callable[[float, float], tuple[float, float]] | None = None
    rate_independent: bool = False

    def problems(self, who: str, units: tuple[str, str]) -> list[str]:
        if not callable(self.f):
            return [f"{who}: law must be a function f(deflection [{units[0]}], rate) -> "
                    f"force [{units[1]}], got {type(self.f).__name__}"]
        if self.derivative is not None and not callable(self.derivative):
            return [f"{who}: derivative must be a function (deflection, rate) -> (dF/ds, "
                    f"dF/dsd), got {type(self.derivative).__name__}"]
        return []

    def __call__(self, s: float, sd: float = 0.0) -> tuple[float, float, float]:
        F = float(self.f(s, sd))
        if self.derivative is not None:
            F_s, F_sd = self.derivative(s, sd)
            return F, float(F_s), float(F_sd)
        hs, hd = FD_STEP * max(1.0, abs(s)), FD_STEP * max(1.0, abs(sd))
        F_s = (float(self.f(s + hs, sd)) - float(self.f(s - hs, sd))) / (2.0 * hs)
        F_sd = (float(self.f(s, sd + hd)) - float(self.f(s, sd - hd))) / (2.0 * hd)
        return F, F_s, F_sd

    def integral(self, s: float) -> float:
        """``V(s) = int_0^s f(u, 0) du`` (adaptive quadrature)."""
        return float(quad(lambda u: float(self.f(u, 0.0)), 0.0, s, epsabs=1e-13,
                          epsrel=1e-11, limit=200)[0])


def make_curve(table: tuple, law, derivative, rate_independent: bool):
    """The curve of a spring: its ``law`` function, or else its ``table`` ``(s, F)``."""
    if law is not None:
        return CallableCurve(law, derivative, rate_independent)
    return TabulatedCurve(tuple(table[0]), tuple(table[1]))


class CurveLaw:
    """What a nonlinear spring adds to its linear parent (``k``, ``d``): the curve of
    :meth:`curve_table` / ``law``, so that the scalar law is

        F = k s + d sd + F_c(s, sd),      V = k s^2 / 2 + int_0^s F_c(u, 0) du.

    Subclasses (dataclasses) have fields ``law``, ``derivative``, ``rate_independent``
    and define :meth:`curve_table` and ``units``.
    """

    units: tuple[str, str] = ("m", "N")

    def curve_table(self) -> tuple:
        raise NotImplementedError

    def curve(self):
        cached = self.__dict__.get("_curve")
        if cached is None:
            cached = make_curve(self.curve_table(), self.law, self.derivative,
                                self.rate_independent)
            self.__dict__["_curve"] = cached
        return cached

    def curve_problems(self) -> list[str]:
        given = self.law is not None, any(len(t) for t in self.curve_table())
        who = f"{type(self).__name__} '{self.name}'"
        if given[0] and given[1]:
            return [f"{who}: give a table or a law, not both"]
        if not any(given):
            return [f"{who}: give a force-deflection table or a law f(deflection, rate)"]
        return self.curve().problems(who, self.units)

    def scalar(self, s: float, sd: float) -> tuple[float, float, float]:
        """``(F, F_s, F_sd)`` of the total law."""
        F, F_s, F_sd = self.curve()(s, sd)
        return self.k * s + self.d * sd + F, self.k + F_s, self.d + F_sd

    def stored(self, s: float) -> float:
        """``V(s)`` of the total law."""
        return 0.5 * self.k * s * s + self.curve().integral(s)

    def curve_exchange(self, unit: str) -> str | None:
        if not self.curve().rate_independent:
            return "law f(deflection, rate) may depend on the rate"
        return damping_exchange(self.d, unit)
