"""A hydraulic cylinder under closed-loop control: the valve opening set by a PID law on
a sensor feed (THEORY §5.7, §7 items 29, 34, 36).

The cylinder is :class:`~flexmbs.forces.hydraulics.HydraulicCylinder` (chamber pressures
``p1``, ``p2`` as its first states).  Its valve opening is no longer a time function but
the output of a PID law (:func:`flexmbs.forces.controllers.pid_law`) on the error between
a reference ``r(t)`` and a measured sensor component ``y`` (the joint angle the cylinder
moves, as a servo-valve controller reads it):

    w = r(t) - y,      z_c' = A z_c + B w,      v = C z_c + D w,
    u = clip(v, -u_max, u_max)                                  (valve saturation)

with the controller states ``z_c`` after the pressures (``int e dt`` and, without a rate
feed, the derivative filter state).  A positive ``u`` opens supply to chamber 1 and
extends the cylinder: choose the gains' sign so that extension drives ``y`` towards
``r`` (negative gains when extending the cylinder lowers ``y``).

Tangents: ``du/dx = D dy/dx`` ... through the clip (``du/dv = 1`` inside the band, 0 in
saturation), ``du/dz_c = C``, ``du/dt = D w_t``; the pressure rows get
``beta/V dQ/du du/d(.)`` (:meth:`HydraulicCylinder.chamber_contribution`), the
controller rows ``A``, ``-B dy/dx``, ``-B dy/dxd``, ``B w_t``.  The integral keeps
integrating in saturation (no anti-windup): size ``Ki`` so that the valve saturates only
briefly, or use ``Ki = 0``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.forces.base import ForceContribution
from flexmbs.forces.controllers import PIDGains
from flexmbs.forces.hydraulics import HydraulicCylinder
from flexmbs.forces.states import time_function_problems
from flexmbs.kinematics.time_functions import as_time_function


@dataclass(frozen=True, eq=False)
class ServoCylinder(PIDGains, HydraulicCylinder):
    """Hydraulic cylinder whose valve is driven by a PID law (the keys of
    :class:`~flexmbs.forces.controllers.PIDGains`: gains ``Kp`` [1/unit of y], ``Ki``
    [1/(unit s)], ``Kd`` [s/unit]) on ``measure`` against ``reference`` (module
    docstring); ``u_max`` the valve saturation (at most 1)."""

    u_max: float = 1.0
    kind = "servo_cylinder"

    def __post_init__(self):
        A, B, C, D, feeds, refs, z0 = self.pid_law()
        k = len(A)
        object.__setattr__(self, "law", tuple(np.array(m, dtype=float).reshape(shape)
                                              for m, shape in zip(
                                                  (A, B, C, D),
                                                  ((k, k), (k, len(feeds)), (1, k),
                                                   (1, len(feeds))), strict=True)))
        object.__setattr__(self, "feeds", feeds)
        object.__setattr__(self, "references", refs)
        object.__setattr__(self, "z_c0", np.zeros(k) if z0 is None
                           else np.asarray(z0, dtype=float))

    @property
    def state_names(self) -> tuple[str, ...]:
        names = ("integral", "filter")[:len(self.z_c0)]
        return ("p1", "p2") + tuple(f"controller_{n}" for n in names)

    def initial_states(self) -> np.ndarray:
        return np.concatenate([[self.p10, self.p20], self.z_c0])

    def problems(self) -> list[str]:
        who = f"ServoCylinder '{self.name}'"
        out = super().problems()
        for i, f in enumerate(self.feeds):
            if len(f) != 2 or not hasattr(f[0], "measure"):
                out.append(f"{who}: feed {i} must be (sensor, component), got {f!r}")
        if not (isinstance(self.valve, (int, float)) and self.valve == 0):
            out.append(f"{who}: the valve opening is set by the PID law, got valve = "
                       f"{self.valve!r} (use a hydraulic_cylinder for a prescribed opening)")
        if not 0 < self.u_max <= 1:
            out.append(f"{who}: u_max must be in (0, 1] (valve opening), got {self.u_max}")
        if self.w <= 0:
            out.append(f"{who}: w must be > 0 [m^2] (the valve area the controller opens), "
                       f"got {self.w}")
        for i, r in enumerate(self.references):
            out += time_function_problems(r, f"{who}: reference {i}", scalar=True)
        return out

    def command(self, ctx):
        """``(v, w, w_t)``: the unsaturated PID output ``v = C z_c + D w``, the errors
        ``w = r(t) - y`` and their time derivatives along the references."""
        A, B, C, D = self.law
        refs = [as_time_function(r, self.name)(ctx.t) for r in self.references]
        w = np.array([float(r[0]) for r in refs]) - ctx.signals.y
        w_t = np.array([float(r[1]) for r in refs])
        z_c = ctx.x[ctx.states][2:]
        v = float(D[0] @ w) + (float(C[0] @ z_c) if len(z_c) else 0.0)
        return v, w, w_t

    def contribution(self, ctx) -> ForceContribution:
        A, B, C, D = self.law
        st, sig = ctx.states, ctx.signals
        c_rows = slice(st.start + 2, st.stop)
        z_c = ctx.x[c_rows]
        v, w, w_t = self.command(ctx)
        u = float(np.clip(v, -self.u_max, self.u_max))
        inside = float(abs(v) < self.u_max)
        u_x, u_xd = np.zeros(ctx.n), np.zeros(ctx.n)
        if ctx.order >= 2:
            u_x = inside * -(D[0] @ sig.y_x)
            u_xd = inside * -(D[0] @ sig.y_xd)
            u_x[-1] += inside * (D[0] @ w_t)
            if len(z_c):
                u_x[c_rows] += inside * C[0]
        c = self.chamber_contribution(ctx, u, u_x, u_xd)
        if not len(z_c):
            return c
        Q = c.Q
        Q[c_rows] += A @ z_c + B @ w
        if ctx.order >= 2:
            c.dQ_dx[c_rows, :] -= B @ sig.y_x
            c.dQ_dx[c_rows, c_rows] += A
            c.dQ_dx[c_rows, -1] += B @ w_t
            c.dQ_dxd[c_rows, :] -= B @ sig.y_xd
            c.dQ_dxd[:, -1] = 0.0
        return c

    @property
    def state_units(self) -> str:
        """One unit per state, comma-separated: the pressures [Pa], the integral of the
        error and the filter state in the measured sensor's unit."""
        unit = getattr(self.feeds[0][0], "unit", "") or "-"
        return ", ".join(("Pa", "Pa", f"{unit} s", unit)[:len(self.state_names)])

    def recorded_signals(self, t: float, y: np.ndarray, z: np.ndarray, ends) -> dict:
        """What a result file records at ``t``: the cylinder's (stroke, rate, force, of
        :meth:`HydraulicCylinder.recorded_signals`), the tracking ``error`` ``w = r - y``
        of the measured ``y`` and the ``valve`` opening ``u`` (saturated), each
        ``(values, unit, columns)``."""
        A, B, C, D = self.law
        r = np.array([float(as_time_function(f, self.name)(t)[0]) for f in self.references])
        w = r - np.asarray(y, dtype=float)
        v = float(D[0] @ w) + (float(C[0] @ z[2:]) if len(self.z_c0) else 0.0)
        unit = getattr(self.feeds[0][0], "unit", "") or "-"
        return {**super().recorded_signals(t, y, z, ends),
                "error": (w, unit, tuple(f"e{i + 1}" for i in range(len(w)))),
                "valve": (np.array([np.clip(v, -self.u_max, self.u_max)]), "-", ("u",))}
