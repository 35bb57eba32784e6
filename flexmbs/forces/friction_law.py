"""Coulomb friction coefficient with an optional Stribeck drop and a viscous part,
THEORY §5.7.4 (2.65)-(2.66), §7 item 28.

The coefficient as a function of the slip speed ``|v|`` [m/s] is

    mu(|v|) = mu_k + (mu_s - mu_k) exp(-(|v| / v_s)^2),

``mu_k`` when ``v_s = 0`` (no Stribeck part), and its derivative ``d mu / d|v|``.
``c_v`` is the viscous part, applied by the joint-friction elements (not part of ``mu``;
the contact elements of :mod:`flexmbs.forces.contact` use ``mu`` alone).

This is the minimal version of the interface shared with the joint-friction elements.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FrictionLaw:
    """Static ``mu_s`` and kinetic ``mu_k`` coefficients [-], Stribeck speed ``v_s``
    [m/s] (0: none) and viscous coefficient ``c_v`` (module docstring)."""

    mu_s: float
    mu_k: float
    v_s: float = 0.0
    c_v: float = 0.0

    def mu(self, v: float) -> tuple[float, float]:
        """``(mu(|v|), d mu / d|v|)`` of the module docstring."""
        a = abs(float(v))
        mu, dmu = self.mu_k, 0.0
        if self.v_s > 0.0:
            x = a / self.v_s
            g = (self.mu_s - self.mu_k) * np.exp(-x * x)
            mu += g
            dmu += -2.0 * x / self.v_s * g
        return float(mu), float(dmu)

    def problems(self, who: str) -> list[str]:
        """One line per bad coefficient, naming ``who``."""
        out = []
        for key in ("mu_s", "mu_k", "v_s", "c_v"):
            val = getattr(self, key)
            if not isinstance(val, (int, float)) or not np.isfinite(val) or val < 0:
                out.append(f"{who}: friction {key} must be a finite number >= 0, got {val!r}")
        if not out and self.mu_s < self.mu_k:
            out.append(f"{who}: friction mu_s = {self.mu_s} must not be below mu_k = "
                       f"{self.mu_k}")
        return out
