"""The contact elements of a system as events for the integrator (THEORY §7 items 35, 38).

Each contact element (``is_contact``, :mod:`flexmbs.forces.contact`) has a gap
``s(q)`` [m] (closed for ``s <= 0``), its rate ``sd`` [m/s] and its normal force
``F_n`` [N]; the integrator lands on the zeros of ``s``
(:mod:`flexmbs.integrate.events`) and at a closing one sets the element's held
approach speed ``v_minus = -sd`` and resets the bristles of its friction
(:meth:`ContactTerms.impact`).
"""
from __future__ import annotations

import numpy as np


class ContactTerms:
    """The contact elements among the force blocks of a :class:`ForceTerms`."""

    def __init__(self, forces):
        self.forces = forces
        self.blocks = [fb for fb in forces.layout.force_blocks
                       if getattr(fb.element, "is_contact", False)]
        #: the contacts' names, and the names of the bodies each one touches
        self.labels = [fb.element.name for fb in self.blocks]
        self.bodies = [tuple(m.body.name for m in fb.markers) for fb in self.blocks]
        self.state_slices = [forces.layout.state_slices[name] for name in self.labels]

    def gaps(self, q, qd, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(s, sd, F_n)`` of every contact, each shape (n_contacts,)."""
        out = np.zeros((3, len(self.blocks)))
        rot: dict = {}
        for k, fb in enumerate(self.blocks):
            out[:, k] = fb.element.gap(self.forces.context(fb, q, qd, t, 1, rot=rot))
        return out[0], out[1], out[2]

    def impact(self, q, k: int, sd: float) -> np.ndarray:
        """``q`` with contact ``k``'s states set for an impact at the gap rate ``sd`` (the
        held approach speed; bristle friction's deflection reset)."""
        q = np.array(q, dtype=float)
        sl = self.state_slices[k]
        q[sl] = self.blocks[k].element.impact_state(sd, q[sl])
        return q
