"""The generalized forces ``Q_f`` of a system's force elements and their potentials.

Each force element is evaluated on its local vector ``x = [q_i; q_j; t]``
(:mod:`flexmbs.system.layout`) through a :class:`~flexmbs.forces.base.LocalContext` that
makes the markers' frame jets on demand; an element with a ``body_force`` shortcut (one
body's load without frame jets, e.g. a torque) is asked that first.  Its contribution
holds ``Q`` and, at order 2, ``dQ/dx`` and ``dQ/dxd`` (the residual subtracts ``Q``,
the tangent ``dQ``).

An element that reads sensors (``feeds``: ``(sensor, component)`` pairs) gets their
values ``y`` in ``ctx.signals`` (:class:`~flexmbs.forces.base.Signals`), with ``dy/dx``
and ``dy/dxd`` on its local vector by central differences of the sensors' ``measure``
(step ``1e-7 (1 + |x_k|)``; the accelerations a sensor sees are taken as zero, so an
acceleration sensor cannot feed a force element).
"""
from __future__ import annotations

import numpy as np

from flexmbs.forces.base import LocalContext, Signals
from flexmbs.forces.sampled import is_tick, ticks
from flexmbs.system.layout import frame_jets
from flexmbs.system.outputs import marker_kinematics

FD_STEP = 1e-7      # relative central-difference step of the sensor derivatives


class ForceTerms:
    """The force elements of a :class:`~flexmbs.system.layout.Layout`."""

    def __init__(self, layout):
        self.layout = layout

    def contributions(self, q, qd, t, order, blocks=None):
        """``(force block, contribution)`` of every force element (or of ``blocks``) at
        ``(q, qd, t)``, to ``order`` (1: ``Q``; 2: also ``dQ/dx``, ``dQ/dxd``)."""
        rot: dict = {}
        for fb in self.layout.force_blocks if blocks is None else blocks:
            c = self.body_force(fb, q, t, order)
            if c is not None:
                yield fb, c
                continue
            yield fb, fb.element.contribution(self.context(fb, q, qd, t, order, rot))

    def context(self, fb, q, qd, t, order, rot=None) -> LocalContext:
        """The :class:`LocalContext` of force block ``fb`` at ``(q, qd, t)`` to ``order``
        (``rot`` shares the bodies' rotation data between the blocks of one evaluation)."""
        n = len(fb.idx) + 1
        x, xd = np.empty(n), np.empty(n)
        x[:-1], x[-1] = q[fb.idx], t
        xd[:-1], xd[-1] = qd[fb.idx], 1.0
        rot = {} if rot is None else rot

        def frames():
            return frame_jets(fb.markers, fb.offsets, q, fb.idx, n, order, rot)
        q_b = tuple(None if o is None else q[fb.idx[o:o + m.body.n_coords]]
                    for m, o in zip(fb.markers, fb.offsets))
        qd_b = tuple(None if o is None else qd[fb.idx[o:o + m.body.n_coords]]
                     for m, o in zip(fb.markers, fb.offsets))
        return LocalContext(fb.markers, frames, x, xd, t, n, fb.offsets, q_b, qd_b, order,
                            fb.states, self.signals(fb, q, qd, order))

    def sampled(self) -> list:
        """The force elements sampled at ticks (their ``period``,
        :mod:`flexmbs.forces.sampled`)."""
        return [fb.element for fb in self.layout.force_blocks
                if getattr(fb.element, "period", None) is not None]

    def sample_times(self, t0: float, t_end: float) -> np.ndarray:
        """Every tick ``t0 + k T`` in ``[t0, t_end]`` of the sampled elements, sorted."""
        out = [ticks(t0, t_end, el.period) for el in self.sampled()]
        return np.unique(np.concatenate(out)) if out else np.zeros(0)

    def sample(self, q, qd, t: float, t0: float) -> np.ndarray:
        """``q`` with the states of every element whose tick ``t`` is (ticks from ``t0``)
        set by its ``update(t, z, y)`` from the sensor values at ``(q, qd)``."""
        q = np.array(q, dtype=float)
        for el in self.sampled():
            if is_tick(t, t0, el.period):
                s = self.layout.state_slices[el.name]
                q[s] = el.update(t, q[s], self.measure(el.feeds, q, qd))
        return q

    def measure(self, feeds, q, qd) -> np.ndarray:
        """The sensor components ``feeds`` (``(sensor, component)`` pairs) at ``(q, qd)``
        with zero accelerations."""
        qdd = np.zeros_like(qd)
        out = np.empty(len(feeds))
        for i, (sensor, k) in enumerate(feeds):
            states = tuple(marker_kinematics(self.layout, m, q, qd, qdd)
                           for m in sensor.resolve())
            out[i] = sensor.measure(states)[k]
        return out

    def signals(self, fb, q, qd, order) -> Signals | None:
        """:class:`~flexmbs.forces.base.Signals` of the sensors force block ``fb`` reads
        (module docstring), or None when it reads none."""
        feeds = getattr(fb.element, "feeds", ())
        if not feeds:
            return None
        y = self.measure(feeds, q, qd)
        if order < 2:
            return Signals(y, None, None)
        n = len(fb.idx) + 1
        y_x, y_xd = np.zeros((len(y), n)), np.zeros((len(y), n))
        n_body = len(fb.idx) if fb.states is None else fb.states.start
        for k in range(n_body):
            i = fb.idx[k]
            for v, out, other in ((q, y_x, False), (qd, y_xd, True)):
                h = FD_STEP * (1.0 + abs(v[i]))
                vp, vm = v.copy(), v.copy()
                vp[i] += h
                vm[i] -= h
                if other:
                    fp, fm = self.measure(feeds, q, vp), self.measure(feeds, q, vm)
                else:
                    fp, fm = self.measure(feeds, vp, qd), self.measure(feeds, vm, qd)
                out[:, k] = (fp - fm) / (2.0 * h)
        return Signals(y, y_x, y_xd)

    @staticmethod
    def body_force(fb, q, t, order):
        """The element's ``body_force`` shortcut (one body's load without frame jets, e.g.
        a torque), or None when it has none or declines."""
        fast = getattr(fb.element, "body_force", None)
        if fast is None or len(fb.markers) != 1 or fb.offsets[0] != 0:
            return None
        return fast(fb.markers[0], q[fb.idx], t, order)

    def potential_context(self, fb, q, t) -> LocalContext:
        """The first-order :class:`LocalContext` of force block ``fb`` at ``(q, t)`` and
        rest (what the residual hands ``contribution``), for the element's ``potential``."""
        n = len(fb.idx) + 1
        frames = tuple(frame_jets(fb.markers, fb.offsets, q, fb.idx, n, 1))
        q_b = tuple(None if o is None else q[fb.idx[o:o + m.body.n_coords]]
                    for m, o in zip(fb.markers, fb.offsets))
        qd_b = tuple(None if o is None else np.zeros(m.body.n_coords)
                     for m, o in zip(fb.markers, fb.offsets))
        xd = np.zeros(n)
        xd[-1] = 1.0
        return LocalContext(fb.markers, frames, np.append(q[fb.idx], t), xd, t, n,
                            fb.offsets, q_b, qd_b, 1, fb.states)

    def state_rates(self, q, qd, t) -> np.ndarray:
        """``f(z, q, qd, t)`` of every internal state (:mod:`flexmbs.forces.states`), in
        the order of ``layout.state_indices``."""
        blocks = [fb for fb in self.layout.force_blocks if fb.states is not None]
        out = [c.Q[fb.states] for fb, c in self.contributions(q, qd, t, 1, blocks)]
        return np.concatenate(out) if out else np.zeros(0)

    def potentials(self, q, t=0.0) -> dict:
        """``{name: V_f}`` [J]: the potential of each force element that has one (springs,
        bushings, stops, constant inertial forces; ``V_f`` with ``dV_f/dq = -Q_f`` of its
        conservative part, see :mod:`flexmbs.forces.base`)."""
        q = np.asarray(q, dtype=float)
        out = {}
        for fb in self.layout.force_blocks:
            pot = getattr(fb.element, "potential", None)
            if pot is not None:
                out[fb.element.name] = float(pot(self.potential_context(fb, q, t)))
        return out
