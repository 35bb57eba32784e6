"""Joint stop: one-sided spring with play on a joint coordinate, THEORY §5.6 (2.55).

For a joint coordinate ``s`` (angle [rad] or displacement [m]) with free range
``lower <= s <= upper`` the restoring law (force against positive ``s``) is

    F = +k r(s - upper) + d c(s - upper) sd      above the range,
    F = -k r(lower - s) + d c(lower - s) sd      below the range,
    F = 0                                        inside,

with the ramp ``r(z) = max(z, 0)`` and contact indicator ``c(z) = r'(z)`` (damping acts
only in contact).  With ``smoothing = w > 0`` the kink is replaced by the C^1 ramp

    r(z) = 0 (z <= 0),   z^2 / (2 w) (0 < z < w),   z - w/2 (z >= w),   c(z) = r'(z),

so the stop engages gradually over the first ``w`` of penetration.  The damping force
is not clipped: a fast separation may briefly pull.  ``Q_f = -F grad s`` with
``F_s``, ``F_sd`` from the chain rule (``scalar_law``).

The spring part is the gradient of the potential (zero inside the play)

    V = k R(s - upper) + k R(lower - s),     R(z) = int_0^z r = 0 (z <= 0),
        z^3 / (6 w) (0 < z < w),   z^2/2 - w z/2 + w^2/6 (z >= w)     (w = 0: z^2/2),

``dV/ds = k r(s - upper) - k r(lower - s) = F(d = 0)``; the contact damping dissipates
``d c sd^2``.

On the compiled step a stop on a revolute's, cylindrical's or planar joint's angle
(``atan2(y_P . x_Q, x_P . x_Q)``) or on a prismatic's, cylindrical's or planar joint's
displacement (``a_k^P . (p_Q - p_P)``) is a row of kind ``ANGLE_STOP`` or ``SLIDE_STOP``
of the spring kernel (:mod:`flexmbs.forces.spring_kernel`, :func:`~flexmbs.forces.
spring_columns.stop_coordinate`), the law of :func:`stop_law` in compiled form; stops on
other joint coordinates stay on the Python path.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.forces.base import ForceContribution, ForceElement, damping_exchange, scalar_law
from flexmbs.kinematics import jet as J


def ramp(z: float, w: float) -> tuple[float, float, float]:
    """``(r, r', r'')`` of the (smoothed) ramp."""
    if z <= 0.0:
        return 0.0, 0.0, 0.0
    if w > 0.0 and z < w:
        return z * z / (2.0 * w), z / w, 1.0 / w
    return z - (0.5 * w if w > 0.0 else 0.0), 1.0, 0.0


def ramp_integral(z: float, w: float) -> float:
    """``R(z) = int_0^z r(y) dy`` of the (smoothed) ramp (module docstring)."""
    if z <= 0.0:
        return 0.0
    if w > 0.0 and z < w:
        return z**3 / (6.0 * w)
    return 0.5 * z * z - 0.5 * w * z + w * w / 6.0


def stop_law(s: float, sd: float, lower: float, upper: float, k: float, d: float,
             w: float) -> tuple[float, float, float]:
    """``(F, F_s, F_sd)`` of the module docstring."""
    r, c, dc = ramp(s - upper, w)
    if c > 0.0 or r > 0.0:
        return k * r + d * c * sd, k * c + d * dc * sd, d * c
    r, c, dc = ramp(lower - s, w)
    return -k * r + d * c * sd, k * c - d * dc * sd, d * c


@dataclass(frozen=True, eq=False)
class JointStop(ForceElement):
    """Stop on coordinate ``coordinate`` (name or index) of ``joint`` (a joint object).

    ``lower``/``upper`` limits, ``k`` stiffness, ``d`` contact damping, ``smoothing``
    width (units of the coordinate).
    """

    joint: object = None
    lower: float = -np.inf
    upper: float = np.inf
    k: float = 0.0
    d: float = 0.0
    smoothing: float = 0.0
    coordinate: object = 0
    kind = "joint_stop"

    def resolve(self):
        return self.joint.resolve()

    def coordinate_index(self) -> int:
        """The index of the limited coordinate in the joint's ``coordinate_names``."""
        names = tuple(getattr(self.joint, "coordinate_names", ()))
        if isinstance(self.coordinate, str):
            return names.index(self.coordinate)
        return int(self.coordinate)

    def problems(self) -> list[str]:
        who = f"JointStop '{self.name}'"
        out = []
        names = tuple(getattr(self.joint, "coordinate_names", ()))
        if not names:
            out.append(f"{who}: joint '{getattr(self.joint, 'name', self.joint)}' has no "
                       "joint coordinates to limit")
        elif isinstance(self.coordinate, str) and self.coordinate not in names:
            out.append(f"{who}: joint has no coordinate '{self.coordinate}' (has {names})")
        elif not isinstance(self.coordinate, str) and not 0 <= int(self.coordinate) < len(names):
            out.append(f"{who}: coordinate index {self.coordinate} out of range for {names}")
        if not self.lower <= self.upper:
            out.append(f"{who}: lower limit {self.lower} must not exceed upper {self.upper}")
        for key in ("k", "d", "smoothing"):
            val = getattr(self, key)
            if not np.isfinite(val) or val < 0:
                out.append(f"{who}: {key} must be finite and >= 0, got {val}")
        return out

    def contribution(self, ctx) -> ForceContribution:
        P, Q = ctx.frames[0], ctx.frames[1]
        s = self.joint.coordinates(P, Q)[self.coordinate_index()]
        sd = float(J.rate(s, ctx.xd))
        F, F_s, F_sd = stop_law(float(s.v), sd, self.lower, self.upper, self.k, self.d,
                                self.smoothing)
        return scalar_law(s, ctx.xd, F, F_s, F_sd, ctx.order)

    def potential(self, ctx) -> float:
        """Stop energy ``V = k R(s - upper) + k R(lower - s)`` [J] (module docstring)."""
        s = float(self.joint.coordinates(ctx.frames[0], ctx.frames[1])[self.coordinate_index()].v)
        w = self.smoothing
        return self.k * (ramp_integral(s - self.upper, w) + ramp_integral(self.lower - s, w))

    def energy_exchange(self) -> str | None:
        names = tuple(getattr(self.joint, "coordinate_names", ()))
        angle = bool(names) and "angle" in names[self.coordinate_index()]
        out = damping_exchange(self.d, "N m s/rad" if angle else "N s/m")
        return None if out is None else "contact " + out
