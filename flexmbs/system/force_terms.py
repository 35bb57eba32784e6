"""The generalized forces ``Q_f`` of a system's force elements and their potentials.

Each force element is evaluated on its local vector ``x = [q_i; q_j; t]``
(:mod:`flexmbs.system.layout`) through a :class:`~flexmbs.forces.base.LocalContext` that
makes the markers' frame jets on demand; an element with a ``body_force`` shortcut (one
body's load without frame jets, e.g. a torque) is asked that first.  Its contribution
holds ``Q`` and, at order 2, ``dQ/dx`` and ``dQ/dxd`` (the residual subtracts ``Q``,
the tangent ``dQ``).

An element that reads sensors (``feeds``: ``(sensor, component)`` pairs) gets their
values ``y`` in ``ctx.signals`` (:class:`~flexmbs.forces.base.Signals`), with ``dy/dx``
and ``dy/dxd`` on its local vector by the chain rule through the markers' kinematics
(:mod:`flexmbs.system.feed_jacobian`; the accelerations a sensor sees are not
differentiated, so an acceleration sensor cannot feed a force element).

An element that reads its joint's reaction (``reads_reaction``, e.g.
:class:`~flexmbs.forces.joint_friction.JointFriction`) gets the multipliers ``lam`` of
that joint's rows in ``ctx.lam`` when the caller passes the system's ``lam`` (the residual
and the Newton matrix do; without them ``ctx.lam`` is None).
"""
from __future__ import annotations

import numpy as np

from flexmbs.forces.base import LocalContext, Signals
from flexmbs.forces.sampled import is_tick, ticks
from flexmbs.system.feed_jacobian import feed_jacobians
from flexmbs.system.layout import frame_jets
from flexmbs.system.outputs import marker_kinematics


class ForceTerms:
    """The force elements of a :class:`~flexmbs.system.layout.Layout`."""

    def __init__(self, layout):
        self.layout = layout
        start = {b.name: (layout.row_start[i], layout.row_start[i + 1])
                 for i, b in enumerate(layout.blocks) if b.kind == "joint"}
        #: {id of a force block that reads a reaction: its joint's rows in all rows}
        self.reaction_rows = {id(fb): slice(*start[fb.element.joint.name])
                              for fb in layout.force_blocks
                              if getattr(fb.element, "reads_reaction", False)}

    def reaction_blocks(self) -> list:
        """``[(force block, mask of its joint's rows that are active, their positions in
        lam)]`` of the elements that read a reaction (for the ``dQ/dlam`` block of the
        Newton matrix)."""
        lay = self.layout
        pos = np.cumsum(lay.active) - 1
        out = []
        for fb in lay.force_blocks:
            rows = self.reaction_rows.get(id(fb))
            if rows is not None:
                act = lay.active[rows]
                out.append((fb, act, pos[rows][act]))
        return out

    def joint_multipliers(self, lam) -> np.ndarray | None:
        """The multipliers of all rows (dropped rows 0) from those of the active rows
        ``lam``, when some element reads a reaction (else None)."""
        if lam is None or not self.reaction_rows:
            return None
        out = np.zeros(self.layout.n_rows_all)
        out[self.layout.active] = lam
        return out

    def contributions(self, q, qd, t, order, blocks=None, lam=None):
        """``(force block, contribution)`` of every force element (or of ``blocks``) at
        ``(q, qd, t)``, to ``order`` (1: ``Q``; 2: also ``dQ/dx``, ``dQ/dxd``); ``lam``
        the multipliers of the active rows, for the elements that read a reaction."""
        rot: dict = {}
        lam_all = self.joint_multipliers(lam)
        for fb in self.layout.force_blocks if blocks is None else blocks:
            c = self.body_force(fb, q, t, order)
            if c is not None:
                yield fb, c
                continue
            yield fb, fb.element.contribution(self.context(fb, q, qd, t, order, lam_all, rot))

    def context(self, fb, q, qd, t, order, lam_all=None, rot=None) -> LocalContext:
        """The :class:`LocalContext` of force block ``fb`` at ``(q, qd, t)`` (``lam_all``:
        the multipliers of all rows, :meth:`joint_multipliers`; ``rot``: a memo of
        rotation jets shared by the blocks of one evaluation)."""
        n = len(fb.idx) + 1
        x, xd = np.empty(n), np.empty(n)
        x[:-1], x[-1] = q[fb.idx], t
        xd[:-1], xd[-1] = qd[fb.idx], 1.0
        memo = {} if rot is None else rot
        def frames():
            return frame_jets(fb.markers, fb.offsets, q, fb.idx, n, order, memo)
        q_b = tuple(None if o is None else q[fb.idx[o:o + m.body.n_coords]]
                    for m, o in zip(fb.markers, fb.offsets))
        qd_b = tuple(None if o is None else qd[fb.idx[o:o + m.body.n_coords]]
                     for m, o in zip(fb.markers, fb.offsets))
        rows = self.reaction_rows.get(id(fb)) if lam_all is not None else None
        return LocalContext(fb.markers, frames, x, xd, t, n, fb.offsets, q_b, qd_b, order,
                            fb.states, self.signals(fb, q, qd, order),
                            None if rows is None else lam_all[rows])

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
        if order < 2:
            return Signals(self.measure(feeds, q, qd), None, None)
        return Signals(*feed_jacobians(self.layout, feeds, q, qd, fb.idx))

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
