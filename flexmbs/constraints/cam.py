"""Point-on-curve cam joint (u = 2): a point of Q (a follower's tip or roller centre) stays
on a planar curve fixed in P (the cam), the curve parameter eliminated.

P (``at``, ``axis``: the curve's origin and the normal of its plane) and Q (the point on
the curve, ``second_at``) are placed as :mod:`flexmbs.constraints.two_point` says.
The curve lies in P's x-y plane; with the local coordinates of Q's point,
``u = A_P^T (r_Q - r_P)`` (``u_x = x_P . d``, ...), the rows are

    z_P . d = 0                                    (in the plane of the curve),
    polar:  |(u_x, u_y)| - rho(psi) = 0,   psi = atan2(u_y, u_x)   (a disc cam),
    graph:  u_y - f(u_x) = 0                                          (a track or linear cam).

``rho`` (radius [m] over the polar angle [rad], periodic) and ``f`` (height [m] over
``x`` [m]) are C2 cubic splines through the samples ``curve_x``, ``curve_y`` (scipy's
``CubicSpline``, periodic for ``polar``), so the jets, hence the Jacobians and the
acceleration term, are exact chain rules of the spline's derivatives.  Eliminating the
parameter restricts a polar curve to one seen from P's origin at every angle once
(a disc cam's pitch curve) and a graph to one ``y`` per ``x``.  For a roller follower
the curve is the cam's pitch curve (the profile offset by the roller radius).

The multiplier ``lam`` of the second row is the contact force [N] along the row's
gradient (reactions ``-G^T lam``): for a polar cam and a follower moving along the
radius through P's origin that is ``-lam`` along the radius.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from flexmbs.constraints.two_point import TwoPointJoint
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.relative import offset_along

CURVES = ("polar", "graph")


def spline_of(J_value: J.Jet, spline) -> J.Jet:
    """``spline(s)`` of a scalar jet ``s`` (chain rule with the spline's derivatives)."""
    s = float(J_value.v)
    return J.apply(J_value, float(spline(s)), float(spline(s, 1)), float(spline(s, 2)))


@dataclass(frozen=True, eq=False)
class PointOnCurve(TwoPointJoint):
    """``curve`` "polar" or "graph"; samples ``curve_x`` (angles [rad] or x [m]) and
    ``curve_y`` (radii or heights [m]); a polar curve's samples cover one turn, the
    first angle's value repeated after 2 pi is added."""

    curve: str = "polar"
    curve_x: tuple | None = None
    curve_y: tuple | None = None
    kind = "point_on_curve"
    labels = ("z_P.d", "on curve")
    coordinate_names = ("curve_parameter",)

    def problems(self) -> list[str]:
        out = super().problems()
        who = f"PointOnCurve '{self.name}'"
        if self.curve not in CURVES:
            out.append(f"{who}: curve must be one of {', '.join(CURVES)}, got {self.curve!r}")
            return out
        try:
            self.spline()
        except (TypeError, ValueError) as exc:
            out.append(f"{who}: curve_x, curve_y: {exc}")
        return out

    def spline(self) -> CubicSpline:
        """The curve's spline (module docstring); ValueError for unusable samples."""
        cached = self.__dict__.get("_spline")
        if cached is not None:
            return cached
        if self.curve_x is None or self.curve_y is None:
            raise ValueError("give the samples of the curve (two arrays of equal length)")
        x = np.asarray(self.curve_x, dtype=float)
        y = np.asarray(self.curve_y, dtype=float)
        if x.ndim != 1 or x.shape != y.shape or len(x) < 4 or not np.all(np.isfinite(x)) \
                or not np.all(np.isfinite(y)):
            raise ValueError(f"expected two finite arrays of equal length >= 4, got shapes "
                             f"{x.shape} and {y.shape}")
        if np.any(np.diff(x) <= 0):
            raise ValueError("expected strictly increasing curve_x")
        if self.curve == "polar":
            if x[-1] - x[0] >= 2 * np.pi:
                raise ValueError(f"expected polar angles spanning less than one turn, got "
                                 f"{x[-1] - x[0]:.6g} rad")
            if np.any(y <= 0):
                raise ValueError("expected positive radii [m] of a polar curve")
            spline = CubicSpline(np.append(x, x[0] + 2 * np.pi), np.append(y, y[0]),
                                 bc_type="periodic")
        else:
            spline = CubicSpline(x, y)
        self.__dict__["_spline"] = spline
        return spline

    def _local(self, P, Q):
        return offset_along(P, Q, 0), offset_along(P, Q, 1)

    def _parameter(self, ux, uy) -> J.Jet:
        return J.atan2(uy, ux) if self.curve == "polar" else ux

    def equations(self, P, Q, t):
        ux, uy = self._local(P, Q)
        spline = self.spline()
        par = self._parameter(ux, uy)
        if self.curve == "polar":
            s = ux * ux + uy * uy
            r = float(np.sqrt(s.v))
            on = J.apply(s, r, 0.5 / r, -0.25 / r**3) - spline_of(par, spline)
        else:
            on = uy - spline_of(par, spline)
        return [offset_along(P, Q, 2), on]

    def coordinates(self, P, Q):
        """The curve parameter: polar angle [rad] (in (-pi, pi]) or x [m]."""
        return [self._parameter(*self._local(P, Q))]
