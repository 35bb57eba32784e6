"""Coulomb friction law with a Stribeck curve and a viscous part (THEORY §3, §7 item 28).

The friction coefficient over the sliding speed ``|v|`` [m/s, or rad/s for a bearing
torque law]:

    mu(|v|) = mu_k + (mu_s - mu_k) exp(-(|v| / v_s)^2),
    d mu / d|v| = -2 |v| / v_s^2 (mu_s - mu_k) exp(-(|v| / v_s)^2),

with ``mu_s`` the static and ``mu_k`` the kinetic coefficient and ``v_s`` the Stribeck
velocity; ``v_s = 0`` means no Stribeck curve: ``mu = mu_k`` for ``|v| > 0`` and ``mu_s``
in the limit ``v = 0`` (where sticking is decided).  The sliding force of a contact with
normal force ``N`` [N] is

    F = mu(|v|) N sign(v) + c_v v,

``c_v`` [N s/m] the viscous coefficient.  How a joint holds at ``v = 0`` (sticking) is
not part of the law: see :mod:`flexmbs.forces.joint_friction`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class FrictionLaw:
    """``mu_s``, ``mu_k`` [-], Stribeck velocity ``v_s`` [m/s or rad/s] (0: none) and
    viscous coefficient ``c_v`` [N s/m] (force ``-c_v v``)."""

    mu_s: float            # static coefficient [-]
    mu_k: float            # kinetic coefficient [-]
    v_s: float = 0.0       # Stribeck velocity [m/s or rad/s]; 0 = no Stribeck curve
    c_v: float = 0.0       # viscous coefficient [N s/m], force = -c_v v

    def mu(self, v: float) -> tuple[float, float]:
        """``(mu(|v|), d mu / d|v|)`` of the module docstring."""
        a = abs(float(v))
        if self.v_s <= 0.0:
            return (float(self.mu_s) if a == 0.0 else float(self.mu_k)), 0.0
        u = a / self.v_s
        e = math.exp(-u * u)
        dmu = self.mu_s - self.mu_k
        return self.mu_k + dmu * e, -2.0 * u / self.v_s * dmu * e

    def force(self, v: float, N: float) -> float:
        """Sliding force ``mu(|v|) N sign(v) + c_v v`` [N] at ``v != 0`` (opposes ``v``
        when applied as ``-F``)."""
        m, _ = self.mu(v)
        return math.copysign(m * N, v) + self.c_v * v if v != 0.0 else 0.0

    def problems(self, who: str) -> list[str]:
        """One line per invalid parameter, naming ``who``."""
        out = []
        for name, val in (("mu_s", self.mu_s), ("mu_k", self.mu_k), ("v_s", self.v_s),
                          ("c_v", self.c_v)):
            if not isinstance(val, (int, float)) or isinstance(val, bool) \
                    or not math.isfinite(val) or val < 0:
                unit = {"v_s": " [m/s]", "c_v": " [N s/m]"}.get(name, " [-]")
                out.append(f"{who}: friction {name} must be a finite number >= 0{unit}, "
                           f"got {val!r}")
        if not out and self.mu_k > self.mu_s:
            out.append(f"{who}: friction mu_k must not exceed mu_s, got mu_k = {self.mu_k} "
                       f"> mu_s = {self.mu_s}")
        return out
