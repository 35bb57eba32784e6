"""Event location for contacts: steps that land on the zeros of the gap functions.

A system with the :class:`~.protocol.Events` capability has gaps ``s_k(q)`` [m] (closed
for ``s_k <= 0``).  After a step ``t_n -> t_n + h`` in which some gaps change sign, the
step size is found where the first of them crosses zero:

    f(h') = min_k  sigma_k s_k(q_{n+1}(h')),      sigma_k = +1 closing, -1 opening,

``f(0) > 0 >= f(h)``.  ``q_{n+1}(h')`` is the generalized-alpha step of size ``h'`` from the
same state, so ``f`` is continuous in ``h'``; the Illinois variant of regula falsi
(Dowell & Jarratt, BIT 11, 1971) shrinks the bracket ``[h_lo, h_hi]`` below ``tol``
[s] and the integrator takes the step ``h_hi``: it lands on the closed (resp. open)
side at most ``tol`` after the crossing of the discrete solution.

At a closing gap (an impact) the contact's held approach speed ``v_minus = -sd`` is set
(:meth:`~.protocol.Events.impact`); at every crossing the auxiliary acceleration is
restarted, ``a = qdd`` (the contact force has a kink there: generalized-alpha restarted
from consistent accelerations keeps its second order after it).  Each impact is
recorded as an :class:`Impact`: its time, contact, bodies, approach speed, the peak
normal force over the accepted steps while the gap stays closed, and the time it opens.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

#: default tolerance of the event location [s]
EVENT_TOL = 1e-7


@dataclasses.dataclass(frozen=True)
class Impact:
    """One impact: ``contact`` name, ``bodies`` (P, Q), time ``t`` [s], approach speed
    ``v_impact`` [m/s], ``peak_force`` [N] and the time ``t_release`` [s] the gap opens
    again (nan while it is closed at the end of the run)."""

    contact: str
    bodies: tuple
    t: float
    v_impact: float
    peak_force: float = 0.0
    t_release: float = math.nan


def impact_columns(impacts) -> dict:
    """``{column: (values, unit)}`` of a list of :class:`Impact` (a table, one row per
    impact): floats ``t``, ``v_impact``, ``peak_force``, ``t_release`` and the names
    ``contact``, ``body_P``, ``body_Q``."""
    out = {k: (np.array([getattr(i, k) for i in impacts], dtype=float), unit)
           for k, unit in (("t", "s"), ("v_impact", "m/s"), ("peak_force", "N"),
                           ("t_release", "s"))}
    out["contact"] = ([i.contact for i in impacts], "")
    out["body_P"] = ([i.bodies[0] for i in impacts], "")
    out["body_Q"] = ([i.bodies[1] for i in impacts], "")
    return out


class ContactEvents:
    """The events of one run: locates them and records the :class:`Impact` s."""

    def __init__(self, dae, tol: float = EVENT_TOL):
        self.dae, self.tol = dae, tol
        self.impacts: list[Impact] = []
        self._open: dict[int, int] = {}         # contact -> index of its open impact
        self._gap = None
        self._last = None       # (state, its gaps) of the last evaluation

    def _gaps(self, s):
        """``(s, sd, F_n)`` of the state ``s``, remembered for the step that becomes the
        accepted one (its gaps are not evaluated twice)."""
        if self._last is None or self._last[0] is not s:
            self._last = (s, self.dae.event_gaps(s.q, s.qd, s.t))
        return self._last[1]

    def start(self, s) -> None:
        """The gaps of the first state (a contact closed there has no impact record)."""
        self._gap = self.dae.event_gaps(s.q, s.qd, s.t)

    def locate(self, step, s0, s1, h: float):
        """``(s1, h)``: the step and its size, cut to land on the first gap crossing in
        ``(t_n, t_n + h]`` (module docstring); ``step(s0, h')`` makes a step."""
        g0 = self._gap[0]
        g1 = self._gaps(s1)[0]
        sigma = np.where((g0 > 0) & (g1 <= 0), 1.0, np.where((g0 <= 0) & (g1 > 0), -1.0, 0.0))
        crossing = sigma != 0
        if not crossing.any() or h <= self.tol:
            return s1, h

        def f(g):
            return float(np.min(sigma[crossing] * g[crossing]))
        lo, f_lo, hi, f_hi, best = 0.0, f(g0), h, f(g1), s1
        side = 0
        while hi - lo > self.tol:
            h_m = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
            w = hi - lo
            h_m = min(max(h_m, lo + 0.01 * w), hi - 0.01 * w)
            st = step(s0, h_m)
            f_m = f(self._gaps(st)[0])
            if f_m > 0:
                lo, f_lo = h_m, f_m
                if side == -1:
                    f_hi *= 0.5
                side = -1
            else:
                hi, f_hi, best = h_m, f_m, st
                if side == 1:
                    f_lo *= 0.5
                side = 1
        return best, hi

    def accept(self, s):
        """The state after the accepted step ``s`` (a ``(t, q, qd, qdd, a, lam)`` named
        tuple): impacts set and recorded, peaks updated, ``a`` restarted at a crossing
        (module docstring)."""
        gap, sd, F = self._gaps(s)
        g0 = self._gap[0]
        closing = np.flatnonzero((g0 > 0) & (gap <= 0))
        opening = np.flatnonzero((g0 <= 0) & (gap > 0))
        q = s.q
        for k in closing:
            q = self.dae.impact(q, int(k), float(sd[k]))
            self._open[int(k)] = len(self.impacts)
            self.impacts.append(Impact(self.dae.event_labels[k],
                                       tuple(self.dae.event_bodies[k]), float(s.t),
                                       float(max(-sd[k], 0.0))))
        for k in opening:
            i = self._open.pop(int(k), None)
            if i is not None:
                self.impacts[i] = dataclasses.replace(self.impacts[i], t_release=float(s.t))
        for k, i in self._open.items():
            if F[k] > self.impacts[i].peak_force:
                self.impacts[i] = dataclasses.replace(self.impacts[i], peak_force=float(F[k]))
        self._gap = (gap, sd, F)
        if closing.size or opening.size:
            return type(s)(s.t, q, s.qd, s.qdd, s.qdd.copy(), s.lam)
        return s
