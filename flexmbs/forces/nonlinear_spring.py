"""Springs with a force-deflection curve, THEORY §5.7.1 (2.59)-(2.64).

A translational spring between two markers (deflection ``s = l - l0`` [m], ``l`` their
distance) and a rotational spring on a joint angle (deflection ``s = phi - phi0`` [rad],
wrapped to (-pi, pi] as in :class:`~flexmbs.forces.rotational_spring.RotationalSpringDamper`)
with the scalar law (force or moment, opposing positive ``s``)

    F = k s + d sd + F_c(s, sd),

``F_c`` a table (PCHIP, linear outside: :class:`~flexmbs.forces.curves.TabulatedCurve`)
or a Python function with optional derivative
(:class:`~flexmbs.forces.curves.CallableCurve`); ``k`` and ``d`` (default 0) a linear
spring and damper in parallel.  ``Q_f = -F grad s`` (``scalar_law``), with
``F_s = k + dF_c/ds``, ``F_sd = d + dF_c/dsd``.  The spring stores

    V = k s^2 / 2 + int_0^s F_c(u, 0) du,       dV/ds = F(sd = 0),

(exact for a table: the antiderivative of the interpolant); the damper and any rate
dependence of ``F_c`` exchange energy.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from flexmbs.forces.base import ForceContribution, scalar_law
from flexmbs.forces.curves import CurveLaw
from flexmbs.forces.one_sided import named_problems
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.kinematics import jet as J


@dataclass(frozen=True, eq=False)
class NonlinearSpring(CurveLaw, PointToPointSpringDamper):
    """Point-to-point spring with the curve ``deflection`` [m] -> ``force`` [N] (tension
    positive) or ``law(s, sd)`` [N] (with optional ``derivative(s, sd) -> (F_s, F_sd)``),
    plus ``k`` [N/m], ``d`` [N s/m]; free length ``l0`` [m] (None: initial distance)."""

    deflection: tuple = ()
    force: tuple = ()
    law: Callable | None = None
    derivative: Callable | None = None
    rate_independent: bool = False
    kind = "nonlinear_spring"
    units = ("m", "N")

    def curve_table(self) -> tuple:
        return tuple(self.deflection), tuple(self.force)

    def problems(self) -> list[str]:
        return (named_problems(self, PointToPointSpringDamper, super().problems())
                + self.curve_problems())

    def axial_law(self, length: float, ld: float) -> tuple[float, float, float]:
        """``(F, F_s, F_sd)`` of the curve at ``s = l - l0`` (module docstring)."""
        return self.scalar(length - self.free_length(), ld)

    def potential(self, ctx) -> float:
        """``V = k s^2 / 2 + int_0^s F_c`` [J], ``s = l - l0``."""
        P, Q = ctx.frames[0], ctx.frames[1]
        return self.stored(float(np.linalg.norm(Q.p.v - P.p.v)) - self.free_length())

    def energy_exchange(self) -> str | None:
        return self.curve_exchange("N s/m")


@dataclass(frozen=True, eq=False)
class NonlinearRotationalSpring(CurveLaw, RotationalSpringDamper):
    """Torsion spring on ``joint`` with the curve ``angle`` [rad] -> ``moment`` [N m] or
    ``law(s, sd)`` [N m], plus ``k`` [N m/rad], ``d`` [N m s/rad]; free angle ``angle0``."""

    angle: tuple = ()
    moment: tuple = ()
    law: Callable | None = None
    derivative: Callable | None = None
    rate_independent: bool = False
    kind = "nonlinear_rotational_spring"
    units = ("rad", "N m")

    def curve_table(self) -> tuple:
        return tuple(self.angle), tuple(self.moment)

    def problems(self) -> list[str]:
        return (named_problems(self, RotationalSpringDamper, super().problems())
                + self.curve_problems())

    def contribution(self, ctx) -> ForceContribution:
        s = self.deflection(ctx.frames[0], ctx.frames[1])
        M, M_s, M_sd = self.scalar(float(s.v), float(J.rate(s, ctx.xd)))
        return scalar_law(s, ctx.xd, M, M_s, M_sd, ctx.order)

    def potential(self, ctx) -> float:
        """``V = k s^2 / 2 + int_0^s M_c`` [J], ``s`` the wrapped joint-angle deflection."""
        return self.stored(float(self.deflection(ctx.frames[0], ctx.frames[1]).v))

    def energy_exchange(self) -> str | None:
        return self.curve_exchange("N m s/rad")
