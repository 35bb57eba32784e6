"""One-sided point-to-point springs: a rope (tension only) and a compression-only spring,
THEORY §5.7.1 (2.59)-(2.62) with the one-sided law of §5.6 (2.55).

With ``l = |r_Q - r_P|``, ``ld = grad l . xd`` and the free length ``l0`` the force
(tension positive, acting like :class:`~flexmbs.forces.spring_damper.PointToPointSpringDamper`'s)
is

    rope:                 F = +k r(l - l0) + d c(l - l0) ld      (taut for l > l0),
    compression spring:   F = -k r(l0 - l) + d c(l0 - l) ld      (engaged for l < l0),

with the ramp ``r`` and the engagement indicator ``c = r'`` of
:func:`flexmbs.forces.stops.ramp`: so the damper acts only while the element is engaged,
and a slack rope (or an open compression spring) applies nothing.

Law at the switch.  With ``smoothing = 0`` the force is continuous (C0) in ``l`` with a
kink in its stiffness (``k`` on one side, 0 on the other), and the damper force jumps by
``d ld`` when the element engages at speed ``ld``.  Newton's tangent is the one of the side
the iterate is on; an iterate that crosses the switch sees the other side's tangent at
the next iteration; the force being continuous and monotone in ``l``, this settles in a
few more iterations of that step (the rope pendulum of
``tests/forces/test_nonlinear_dynamics.py`` catches without a step cut).  Newton is not
guaranteed to converge across a kink, though: if it fails the step is cut.  A rope that catches a mass fast, or
a stiff rope with a large step, may then bounce between the sides inside one step; for
those give ``smoothing = w > 0`` [m]: the ramp becomes C1 (``z^2 / 2w`` over the first
``w`` of engagement) and the damper engages gradually (``c = z / w``), so the force is
C1 in ``l`` and continuous in ``ld``.  ``w`` shifts the fully engaged force by
``k w / 2``: choose it small against the expected stretch (e.g. 1 % of it).

The spring stores (``R = int r`` of :func:`flexmbs.forces.stops.ramp_integral`)

    rope: V = k R(l - l0),    compression spring: V = k R(l0 - l),    dV/dl = F(d = 0),

and the damper dissipates ``d c ld^2``.

On the compiled step both elements are rows of kind ``AXIAL_STOP`` of the spring kernel
(:mod:`flexmbs.forces.spring_kernel`, :func:`~flexmbs.forces.spring_columns.kind_code`):
the same law and smoothing (:meth:`Rope.limits`), its Newton matrix without the curvature
of ``l``, like the two-sided spring-dampers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.forces.stops import ramp_integral, stop_law


def named_problems(element, parent: type, problems: list[str]) -> list[str]:
    """``problems`` of the check of the class ``parent``, named after ``element``'s class."""
    return [p.replace(parent.__name__, type(element).__name__, 1) for p in problems]


@dataclass(frozen=True, eq=False)
class Rope(PointToPointSpringDamper):
    """Tension-only spring ``k`` [N/m] and damper ``d`` [N s/m] of free length ``l0`` [m]
    (None: the initial distance), engagement smoothed over ``smoothing`` [m]."""

    smoothing: float = 0.0
    kind = "rope"
    tension_only = True

    def problems(self) -> list[str]:
        out = named_problems(self, PointToPointSpringDamper, super().problems())
        if not np.isfinite(self.smoothing) or self.smoothing < 0:
            out.append(f"{type(self).__name__} '{self.name}': smoothing must be >= 0 [m], "
                       f"got {self.smoothing}")
        return out

    def limits(self) -> tuple[float, float]:
        """``(lower, upper)`` of the free range of ``l`` [m] of
        :func:`~flexmbs.forces.stops.stop_law`: ``(-inf, l0)`` for a rope, ``(l0, inf)``
        for a compression spring (also the compiled kernel's,
        :mod:`flexmbs.forces.spring_kernel`)."""
        l0 = self.free_length()
        return (-np.inf, l0) if self.tension_only else (l0, np.inf)

    def axial_law(self, length: float, ld: float) -> tuple[float, float, float]:
        """``(F, F_l, F_ld)`` of the module docstring."""
        lower, upper = self.limits()
        return stop_law(length, ld, lower, upper, self.k, self.d, self.smoothing)

    def engaged(self, length: float) -> bool:
        """True when the element applies its spring force (taut rope, compressed spring)."""
        l0 = self.free_length()
        return length > l0 if self.tension_only else length < l0

    def potential(self, ctx) -> float:
        """Spring energy ``V = k R(+-(l - l0))`` [J] (module docstring)."""
        P, Q = ctx.frames[0], ctx.frames[1]
        z = float(np.linalg.norm(Q.p.v - P.p.v)) - self.free_length()
        return self.k * ramp_integral(z if self.tension_only else -z, self.smoothing)


@dataclass(frozen=True, eq=False)
class CompressionSpring(Rope):
    """Compression-only spring ``k`` [N/m] and damper ``d`` [N s/m] of free length ``l0``
    [m]: a contact that pushes the markers apart when closer than ``l0``."""

    kind = "compression_spring"
    tension_only = False
