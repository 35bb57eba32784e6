"""Event location (flexmbs.integrate.events) on a closed-form motion: a point falling
under gravity from z0 = 1 m, gap s = z (no integrator: the "step" is the exact
trajectory), crossing zero at t* = sqrt(2 z0 / g)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from flexmbs.integrate.events import EVENT_TOL, ContactEvents
from flexmbs.integrate.genalpha import State

G, Z0 = 9.81, 1.0


class Falling:
    """The DAE side of the locator: one gap, its rate and a force."""

    event_labels = ("floor",)
    event_bodies = (("ground", "point"),)

    def event_gaps(self, q, qd, t):
        return np.array([q[0]]), np.array([qd[0]]), np.array([max(0.0, -1e6 * q[0])])

    def impact(self, q, k, sd):
        return q


def exact(t: float) -> State:
    z, v = Z0 - 0.5 * G * t * t, -G * t
    one = np.array
    return State(t, one([z]), one([v]), one([-G]), one([-G]), np.zeros(0))


def step(s0: State, h: float) -> State:
    return exact(s0.t + h)


@pytest.mark.parametrize("h", [0.1, 0.37, 1.0])
def test_the_step_lands_just_after_the_crossing(h):
    t_star = math.sqrt(2 * Z0 / G)
    ev = ContactEvents(Falling())
    s = exact(0.0)
    ev.start(s)
    t = 0.0
    while True:
        s1, h_step = ev.locate(step, s, step(s, h), h)
        s = ev.accept(s1)
        t += h_step
        if ev.impacts:
            break
    assert 0.0 <= ev.impacts[0].t - t_star <= EVENT_TOL
    assert ev.impacts[0].v_impact == pytest.approx(G * t_star, rel=1e-6)
    assert s.t == pytest.approx(t, abs=1e-15)


def test_no_crossing_keeps_the_step():
    ev = ContactEvents(Falling())
    s = exact(0.0)
    ev.start(s)
    s1 = step(s, 0.2)
    assert ev.locate(step, s, s1, 0.2) == (s1, 0.2)
