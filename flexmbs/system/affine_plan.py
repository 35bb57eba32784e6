"""What a compiled step of the whole system needs from it (the integrator's side is
:mod:`flexmbs.integrate.affine_step`).

A system whose bodies are all floating frames (rigid or flexible: one
:class:`~flexmbs.bodies.pack.BodyPack`) and whose constraint rows are all label rows,
drives of them and normalisations (a complete :class:`~flexmbs.system.stacked.StackedRows`)
has its residual ``r(q, qd, qdd) + G^T lam`` and rows ``g(q)`` in compiled kernels, with
the rows ``zd`` of the internal states of force elements and joint friction
(:class:`~flexmbs.system.friction_pack.FrictionPack`), and spring-dampers, bushings and
point forces (:class:`~flexmbs.system.spring_pack.SpringPack`).  An
:class:`AffinePlan` hands those kernels' constant arguments over, and takes back the rows
and frames a compiled call evaluated (so the system's next ``constraint`` or
``newton_matrix`` at that ``q`` reuses them, :meth:`AffinePlan.remember`).
"""
from __future__ import annotations

import numpy as np


class AffinePlan:
    """The compiled kernels' view of a system for one active set.

    Attributes
    ----------
    pack : the bodies (:class:`~flexmbs.bodies.pack.BodyPack`)
    stacked : the rows (:class:`~flexmbs.system.stacked.StackedRows`, complete)
    active : indices of the active rows among all rows (int64)
    active_key : the active set as bytes
    gravity : (3,)
    force_blocks : the force elements on their local vectors
    state_indices : the internal states of force elements in ``q`` (int64)
    friction : the joint friction elements the kernels cover
        (:class:`~flexmbs.system.friction_pack.FrictionPack`)
    springs : the spring-dampers, bushings and point forces the kernels cover
        (:class:`~flexmbs.system.spring_pack.SpringPack`)
    """

    def __init__(self, pack, stacked, rows, gravity, force_blocks, state_indices, friction,
                 springs):
        self.pack, self.stacked = pack, stacked
        self.active = np.flatnonzero(rows.active).astype(np.int64)
        self.active_key = rows.layout.active_key
        self.gravity = gravity
        self.force_blocks = force_blocks
        self.state_indices = np.asarray(state_indices, dtype=np.int64)
        self.friction = friction
        self.springs = springs
        self._rows = rows

    def remember(self, q_key: bytes, t: float, g, G, C, D) -> None:
        """Take all rows ``g``, dense ``G`` and the marker frames ``C``, ``D`` evaluated by a
        compiled call at ``q`` (``q.tobytes()``) and ``t`` as the system's last rows."""
        self.stacked.remember(C, D, q_key, t)
        self._rows.adopt_dense(q_key, t, self.active_key, g, G)

    def forget(self) -> None:
        """Forget what :meth:`remember` handed over (the arrays are being overwritten)."""
        self.stacked.last_key = None
        self._rows.forget_dense()
