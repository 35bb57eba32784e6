"""Double-acting hydraulic cylinder with a 4/3 valve and end cushions (THEORY §5.7,
§7 item 29): the worked example of a force element with internal states
(:mod:`flexmbs.forces.states`).

The barrel is at marker P, the rod end at marker Q; the stroke is ``x = l - l0`` [m]
with ``l = |r_Q - r_P|``.  Chamber 1 (piston side, area ``A1``) grows with ``x``,
chamber 2 (rod side, ``A2``) shrinks:

    V1 = V01 + A1 x,      V2 = V02 - A2 x                                  [m^3]

The chamber pressures ``p1``, ``p2`` [Pa] are the states; the pressure build-up
(oil bulk modulus ``beta`` [Pa]) is

    p1' = beta / V1 (Q1 - A1 xd),      p2' = beta / V2 (Q2 + A2 xd).

The valve (opening ``u(t)`` in [-1, 1]; ``u > 0`` connects supply ``p_s`` to chamber 1
and chamber 2 to tank ``p_t``, ``u < 0`` the reverse) passes the flows [m^3/s]

    Q1 = C_d w (max(u, 0) q(p_s - p1) + min(u, 0) q(p1 - p_t)),
    Q2 = -C_d w (max(u, 0) q(p2 - p_t) + min(u, 0) q(p_s - p2)),

with the orifice law ``q(dp) = sqrt(2 |dp| / rho) sign(dp)`` regularised near
``dp = 0`` as

    q(dp) = sqrt(2 / rho) dp / (dp^2 + dp_r^2)^(1/4),

(``dp_r`` [Pa]: below it the flow is laminar-like, linear in ``dp``; above it the
square-root law to a relative error ``(dp_r/dp)^2 / 4``).  The cylinder pushes the
markers apart with

    F = p1 A1 - p2 A2 + F_c - b xd,      F_c = k_c (x_min - x)^+ - k_c (x - x_max)^+,

``F_c`` the end cushions: stiff one-sided springs ``k_c`` [N/m] beyond the stroke ends;
``b`` [N s/m] the viscous friction of the piston and rod seals.
With the valve closed (``u = 0``), small motions about equal pressures see the oil
spring ``k_oil = beta (A1^2 / V1 + A2^2 / V2)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach, initial_state
from flexmbs.bodies.marker import Marker
from flexmbs.forces.actuator import marker_distance, two_side_problems
from flexmbs.forces.base import ForceContribution
from flexmbs.forces.states import (
    StatefulForceElement,
    StateLaw,
    scalar_state_law,
    time_function_problems,
)
from flexmbs.kinematics.time_functions import as_time_function


def orifice(dp: float, rho: float, dp_r: float) -> tuple[float, float]:
    """``(q, dq/ddp)`` of the regularised orifice law ``sqrt(2/rho) dp (dp^2 +
    dp_r^2)^(-1/4)`` [m^3/s per m^2 of opening]."""
    c = np.sqrt(2.0 / rho)
    s = dp * dp + dp_r * dp_r
    return c * dp * s ** -0.25, c * s ** -1.25 * (0.5 * dp * dp + dp_r * dp_r)


@dataclass(frozen=True, eq=False)
class HydraulicCylinder(StatefulForceElement):
    """Cylinder between ``first`` (barrel) and ``second`` (rod end); SI units throughout
    (module docstring for the symbols)."""

    first: object = None
    second: object = None
    A1: float = 0.0
    A2: float = 0.0
    V01: float = 0.0
    V02: float = 0.0
    beta: float = 1.5e9
    p10: float = 0.0
    p20: float = 0.0
    l0: float | None = None
    valve: object = 0.0          # opening u(t) in [-1, 1]
    C_d: float = 0.7
    w: float = 0.0               # valve area gradient: opening area at u = 1 [m^2]
    p_s: float = 0.0
    p_t: float = 0.0
    rho: float = 850.0
    dp_r: float = 1e5
    x_min: float = -np.inf
    x_max: float = np.inf
    k_c: float = 0.0
    b: float = 0.0               # viscous seal friction [N s/m]
    kind = "hydraulic_cylinder"
    state_names = ("p1", "p2")
    state_units = "Pa"

    def resolve(self) -> tuple[Marker, Marker]:
        return attach(self.first, self.name, "P"), attach(self.second, self.name, "Q")

    def initial_states(self) -> np.ndarray:
        return np.array([self.p10, self.p20], dtype=float)

    def stroke_origin(self) -> float:
        """``l0`` [m]: the marker distance at ``x = 0`` (default: the initial one)."""
        if self.l0 is not None:
            return float(self.l0)
        P, Q = self.resolve()
        return float(np.linalg.norm(initial_state(Q)[0] - initial_state(P)[0]))

    def problems(self) -> list[str]:
        who = f"{type(self).__name__} '{self.name}'"
        out = two_side_problems(self)
        for key, unit in (("A1", "m^2"), ("A2", "m^2"), ("V01", "m^3"), ("V02", "m^3"),
                          ("beta", "Pa"), ("rho", "kg/m^3"), ("dp_r", "Pa")):
            v = getattr(self, key)
            if not np.isfinite(v) or v <= 0:
                out.append(f"{who}: {key} must be > 0 [{unit}], got {v}")
        for key, unit in (("C_d", "1"), ("w", "m^2"), ("k_c", "N/m"), ("b", "N s/m")):
            v = getattr(self, key)
            if not np.isfinite(v) or v < 0:
                out.append(f"{who}: {key} must be >= 0 [{unit}], got {v}")
        if not self.x_min < self.x_max:
            out.append(f"{who}: x_min must be < x_max [m], got {self.x_min} and {self.x_max}")
        return out + time_function_problems(self.valve, f"{who}: valve", scalar=True)

    def volumes(self, x: float) -> tuple[float, float]:
        """``(V1, V2)`` [m^3] at stroke ``x`` [m]."""
        return self.V01 + self.A1 * x, self.V02 - self.A2 * x

    def valve_opening(self, ctx) -> tuple[float, np.ndarray, np.ndarray]:
        """``(u, du/dx, du/dxd)``: the opening ``u(t)`` and its derivatives on the local
        vector (``du/dx`` holds ``ud`` in the time column)."""
        u, ud, _ = (float(v) for v in as_time_function(self.valve, self.name)(ctx.t))
        u_x = np.zeros(ctx.n)
        u_x[-1] = ud
        return u, u_x, np.zeros(ctx.n)

    def valve_flows(self, p1: float, p2: float, u: float):
        """``(Q, dQ/dp, dQ/du)`` of the two chambers [m^3/s] at opening ``u`` (module
        docstring)."""
        up, um = max(u, 0.0), min(u, 0.0)
        a = self.C_d * self.w
        qs1, dqs1 = orifice(self.p_s - p1, self.rho, self.dp_r)
        qt1, dqt1 = orifice(p1 - self.p_t, self.rho, self.dp_r)
        qt2, dqt2 = orifice(p2 - self.p_t, self.rho, self.dp_r)
        qs2, dqs2 = orifice(self.p_s - p2, self.rho, self.dp_r)
        Q = np.array([a * (up * qs1 + um * qt1), -a * (up * qt2 + um * qs2)])
        dQ_dp = np.array([a * (-up * dqs1 + um * dqt1), -a * (up * dqt2 - um * dqs2)])
        dQ_du = np.array([a * (qs1 if u > 0 else qt1), -a * (qt2 if u > 0 else qs2)])
        return Q, dQ_dp, dQ_du

    def cushion(self, x: float) -> tuple[float, float]:
        """``(F_c, dF_c/dx)`` [N, N/m] of the end cushions."""
        if x < self.x_min:
            return self.k_c * (self.x_min - x), -self.k_c
        if x > self.x_max:
            return -self.k_c * (x - self.x_max), -self.k_c
        return 0.0, 0.0

    def contribution(self, ctx) -> ForceContribution:
        return self.chamber_contribution(ctx, *self.valve_opening(ctx))

    def recorded_signals(self, t: float, y, z: np.ndarray, ends) -> dict:
        """What a result file records at ``t`` from the states ``z`` and the markers'
        states ``ends`` (P, Q): ``stroke`` ``x`` [m] and its rate [m/s], and the
        ``force`` ``F = p1 A1 - p2 A2 + F_c - b xd`` [N] pushing the markers apart, each
        ``(values, unit, columns)``."""
        P, Q = ends
        d = Q.p - P.p
        length = float(np.linalg.norm(d))
        x = length - self.stroke_origin()
        xd = d @ (Q.v - P.v) / length
        F = z[0] * self.A1 - z[1] * self.A2 + self.cushion(x)[0] - self.b * xd
        return {"stroke": (np.array([x, xd]), "m, m/s",
                           ("x", "xd")),
                "force": (np.array([F]), "N", ("F",))}

    def chamber_contribution(self, ctx, u: float, u_x: np.ndarray,
                             u_xd: np.ndarray) -> ForceContribution:
        """The force and the chamber rows (the first two states ``p1``, ``p2`` of
        ``ctx.states``; further states get zero rows) at valve opening ``u`` with
        derivatives ``u_x``, ``u_xd`` on the local vector: ``dp'/dx += beta/V dQ/du
        u_x^T`` (the same with ``xd``)."""
        length = marker_distance(self, ctx)
        x = float(length.v) - self.stroke_origin()
        xd = float(length.d @ ctx.xd)
        st = ctx.states
        z = ctx.x[st]
        p1, p2 = float(z[0]), float(z[1])
        V1, V2 = self.volumes(x)
        if V1 <= 0 or V2 <= 0:
            # (an ArithmeticError: a Newton iterate outside the stroke range fails that
            # iteration and the step is cut, as after an overflow in a force law)
            raise FloatingPointError(
                f"HydraulicCylinder '{self.name}': expected positive chamber volumes, got "
                f"V1 = {V1:.3e} m^3, V2 = {V2:.3e} m^3 at stroke x = {x:.4g} m (V01 + A1 x, "
                f"V02 - A2 x)")
        Q, dQ_dp, dQ_du = self.valve_flows(p1, p2, u)
        Fc, Fc_x = self.cushion(x)
        b1, b2 = self.beta / V1, self.beta / V2
        k = len(z)

        def rows(a, b):
            out = np.zeros(k)
            out[:2] = a, b
            return out
        f_z = np.zeros((k, k))
        f_z[0, 0], f_z[1, 1] = b1 * dQ_dp[0], b2 * dQ_dp[1]
        law = StateLaw(
            f=rows(b1 * (Q[0] - self.A1 * xd), b2 * (Q[1] + self.A2 * xd)),
            f_s=rows(-b1 / V1 * self.A1 * (Q[0] - self.A1 * xd),
                     b2 / V2 * self.A2 * (Q[1] + self.A2 * xd)),
            f_sd=rows(-b1 * self.A1, b2 * self.A2), f_z=f_z, f_t=np.zeros(k))
        F = p1 * self.A1 - p2 * self.A2 + Fc - self.b * xd    # pushes the markers apart
        c = scalar_state_law(length, ctx.xd, st, -F, -Fc_x, self.b, rows(-self.A1, self.A2),
                             law, ctx.order)
        if ctx.order >= 2:
            p = slice(st.start, st.start + 2)
            bq = np.array([b1 * dQ_du[0], b2 * dQ_du[1]])
            c.dQ_dx[p, :] += np.outer(bq, u_x)
            c.dQ_dxd[p, :] += np.outer(bq, u_xd)
        return c
