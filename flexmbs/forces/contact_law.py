"""Normal contact laws: Hertz and Hunt-Crossley with a coefficient of restitution,
THEORY §5.7.2 (FE-18 one-sided contact), §7 item 35.

With the penetration ``delta = -s >= 0`` [m] (``s`` the gap) and its rate ``deltad``
[m/s] the normal force (pushing the bodies apart, never pulling) is

    Hertz:           F = K delta^n,
    Hunt-Crossley:   F = max(0, K delta^n (1 + chi deltad)),     chi = a(e, n) / v_minus,

``F = 0`` for ``delta <= 0``.  ``K`` [N/m^n] is the contact stiffness, ``n`` the exponent
(3/2 for two spheres, Hertz), ``v_minus`` [m/s] the approach speed of the impact.

Choice of ``chi``.  For one impact of a mass ``m`` at ``v_minus``, ``delta = X u``,
``t = T tau`` with ``X / T = v_minus`` and ``m X / T^2 = K X^n`` give the dimensionless
impact ODE

    u'' = -max(0, u^n (1 + a u')),     u(0) = 0,   u'(0) = 1,    a = chi v_minus,

whose exit speed ``-u'(tau_end)`` at ``u = 0`` is the restitution: it depends on
``a`` and ``n`` alone (so ``chi = a / v_minus``; the same holds for two bodies with the
reduced mass).  :func:`damping_number` integrates this ODE (scipy ``solve_ivp``, DOP853,
rtol 1e-11) and inverts ``e(a) = e`` with Brent's method to 1e-12, once per ``(e, n)``:
the restitution of one isolated impact IS ``e`` (not an approximation such as
Lankarani-Nikravesh ``a = 3 (1 - e^2) / 4``, which gives ``a`` 28 % low at ``e = 0.8``).
For ``e -> 1`` the inversion tends to Hunt & Crossley's ``a = 3 (1 - e) / 2``
(``tests/forces/test_contact_law.py`` checks it).

Below the speed ``v_min`` (a resting or creeping contact, or one that started closed)
``chi = a / v_min``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


def exit_speed(a: float, n: float) -> float:
    """The restitution ``-u'(tau_end)`` of the dimensionless impact ODE (module doc)."""
    from scipy.integrate import solve_ivp

    def rhs(_, y):
        u, ud = y
        return (ud, -max(0.0, max(u, 0.0) ** n * (1.0 + a * ud)))

    def back(_, y):
        return y[0] if _ > 0 else 1.0
    back.terminal, back.direction = True, -1
    sol = solve_ivp(rhs, (0.0, 1e3), (0.0, 1.0), method="DOP853", rtol=1e-11, atol=1e-13,
                    events=back)
    return float(-sol.y_events[0][0][1]) if sol.t_events[0].size else 0.0


@lru_cache(maxsize=64)
def damping_number(e: float, n: float) -> float:
    """``a = chi v_minus`` for which one impact has the restitution ``e`` (module doc)."""
    from scipy.optimize import brentq
    if e >= 1.0:
        return 0.0
    hi = 1.5 * (1.0 - e) + 1e-3
    while exit_speed(hi, n) > e:
        hi *= 2.0
    return float(brentq(lambda a: exit_speed(a, n) - e, 0.0, hi, xtol=1e-12, rtol=1e-12))


@dataclass(frozen=True)
class ContactLaw:
    """Normal law: stiffness ``K`` [N/m^n], exponent ``n`` [-], restitution ``e`` [-]
    (None: Hertz, elastic; a number in (0, 1]: Hunt-Crossley), speed floor ``v_min``
    [m/s] of the damping."""

    K: float
    n: float = 1.5
    e: float | None = None
    v_min: float = 1e-3

    def problems(self, who: str) -> list[str]:
        out = []
        if not isinstance(self.K, (int, float)) or not np.isfinite(self.K) or self.K <= 0:
            out.append(f"{who}: contact stiffness K must be > 0 [N/m^n], got {self.K!r}")
        if not isinstance(self.n, (int, float)) or not 1.0 <= self.n <= 3.0:
            out.append(f"{who}: contact exponent n must lie in [1, 3], got {self.n!r}")
        if self.e is not None and (not isinstance(self.e, (int, float))
                                   or not 0.0 < self.e <= 1.0):
            out.append(f"{who}: restitution e must lie in (0, 1], got {self.e!r}")
        if not isinstance(self.v_min, (int, float)) or not self.v_min > 0:
            out.append(f"{who}: v_min must be > 0 [m/s], got {self.v_min!r}")
        return out

    @property
    def a(self) -> float:
        """The damping number ``a = chi v_minus`` (0 for Hertz)."""
        return 0.0 if self.e is None else damping_number(float(self.e), float(self.n))

    def force(self, delta: float, deltad: float,
              v_minus: float) -> tuple[float, float, float, float]:
        """``(F, dF/d delta, dF/d deltad, dF/d v_minus)`` [N, N/m, N s/m, N s/m]."""
        if delta <= 0.0:
            return 0.0, 0.0, 0.0, 0.0
        a = self.a
        v = max(v_minus, self.v_min)
        chi = a / v
        dchi = -a / (v * v) if v_minus > self.v_min else 0.0
        damp = 1.0 + chi * deltad
        if damp <= 0.0:
            return 0.0, 0.0, 0.0, 0.0
        Kd = self.K * delta ** self.n
        return (Kd * damp, self.n * self.K * delta ** (self.n - 1.0) * damp, Kd * chi,
                Kd * deltad * dchi)
