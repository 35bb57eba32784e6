"""Linear actuator with a first-order lag (THEORY §5.7, §7 item 33).

An actuator between markers P and Q pushes them apart along ``n = (r_Q - r_P) / l``
with the force ``F`` [N] (extension positive), which follows its command ``F_cmd(t)``
with the time constant ``tau`` [s]:

    Fd = (F_cmd(t) - F) / tau,        F(t0) = F0.

``F`` is the element's internal state (:mod:`flexmbs.forces.states`); on the bodies it
acts as a scalar law against ``l`` with ``-F`` (``Q_f = F grad l``).  For a constant
command the lag gives ``F(t) = F_cmd + (F0 - F_cmd) exp(-(t - t0) / tau)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach, body_of, side_problems
from flexmbs.bodies.marker import Marker
from flexmbs.forces.base import ForceContribution
from flexmbs.forces.states import (
    StatefulForceElement,
    StateLaw,
    scalar_state_law,
    time_function_problems,
)
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.time_functions import as_time_function


def marker_distance(element, ctx) -> J.Jet:
    """``l = |r_Q - r_P|`` [m] of the element's two markers, a jet over its local vector."""
    r_f = ctx.frames[1].p - ctx.frames[0].p
    if float(np.linalg.norm(r_f.v)) < 1e-14:
        raise ValueError(f"{type(element).__name__} '{element.name}': zero length, "
                         "direction undefined")
    return J.norm(r_f)


def two_side_problems(element) -> list[str]:
    """Problems of the two sides ``first``, ``second`` of a point-to-point element."""
    who = f"{type(element).__name__} '{element.name}'"
    out = side_problems(element.first, who, "P") + side_problems(element.second, who, "Q")
    if not out and body_of(element.first) is body_of(element.second):
        out.append(f"{who}: connects body '{body_of(element.first).name}' to itself")
    return out


@dataclass(frozen=True, eq=False)
class LinearActuator(StatefulForceElement):
    """Actuator force ``F`` [N] lagging its command ``command`` [N] (number or
    :class:`~flexmbs.kinematics.time_functions.TimeFunction`) by ``tau`` [s]."""

    first: object = None
    second: object = None
    command: object = 0.0
    tau: float = 0.0
    F0: float = 0.0
    kind = "linear_actuator"
    state_names = ("F",)
    state_units = "N"

    def resolve(self) -> tuple[Marker, Marker]:
        return attach(self.first, self.name, "P"), attach(self.second, self.name, "Q")

    def initial_states(self) -> np.ndarray:
        return np.array([float(self.F0)])

    def problems(self) -> list[str]:
        who = f"LinearActuator '{self.name}'"
        out = two_side_problems(self)
        if not np.isfinite(self.tau) or self.tau <= 0:
            out.append(f"{who}: time constant tau must be > 0 [s], got {self.tau}")
        if not np.isfinite(self.F0):
            out.append(f"{who}: initial force F0 must be finite [N], got {self.F0}")
        return out + time_function_problems(self.command, f"{who}: command", scalar=True)

    def contribution(self, ctx) -> ForceContribution:
        length = marker_distance(self, ctx)
        F = float(ctx.x[ctx.states][0])
        c, cd, _ = as_time_function(self.command, self.name)(ctx.t)
        law = StateLaw(f=np.array([(float(c) - F) / self.tau]), f_s=np.zeros(1),
                       f_sd=np.zeros(1), f_z=np.array([[-1.0 / self.tau]]),
                       f_t=np.array([float(cd) / self.tau]))
        return scalar_state_law(length, ctx.xd, ctx.states, -F, 0.0, 0.0, np.array([-1.0]),
                                law, ctx.order)
