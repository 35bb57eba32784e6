"""Uniform pressure on a named face of a flexible body (THEORY §2.6, ``h_p``).

A pressure ``p(t)`` [Pa] on face set ``A`` is the traction ``-p n`` against the outward
normal.  With the file's reference face integrals (:mod:`flexmbs.reduction.loads`)
``F_n = int n dA``, ``F_m = int R x n dA``, ``F_q = int Phi^T n dA`` the body-frame
generalized force of THEORY §2.6 is

    h_p = -p [F_n;  F_m;  F_q]      (force, moment about the frame origin R, elastic rows),

projected like the body equations (:mod:`flexmbs.bodies.flexible`):

    Q_r = A(e) (-p F_n),    Q_e = 2 L(e)^T (-p F_m),    Q_q = -p F_q.

Approximation (first order, documented): the normals are the reference normals carried
along by the floating frame (a follower load with the frame); the change of the
normals and of the area by the elastic deformation and the moment ``int (Phi q) x n dA``
of the elastic displacement are neglected, so ``h_p`` does not depend on ``q_e``.  The
load is exact for a face that moves rigidly with the frame.

Tangent: ``dQ_r/de = d(A u)/de`` at ``u = -p F_n``, ``dQ_e/de = 2 R_L(-p F_m)``
(``LT_matrix``), ``dQ/dt`` from ``p'(t)``; no velocity dependence.

Energy: a follower load (its normals turn with the frame) has no potential; its work is
external work (``energy_exchange``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.marker import Marker
from flexmbs.forces.base import ForceContribution, ForceElement
from flexmbs.kinematics.frames import dAu_de
from flexmbs.kinematics.rotation import A_of, L_of, LT_matrix
from flexmbs.kinematics.time_functions import Constant, as_time_function


@dataclass(frozen=True, eq=False)
class FacePressure(ForceElement):
    """Pressure ``p`` [Pa] (number or
    :class:`~flexmbs.kinematics.time_functions.TimeFunction`) on the face set ``face`` of
    the :class:`~flexmbs.bodies.flexible.FlexibleBody` ``body``.  Positive ``p`` pushes
    against the outward normal (into the body)."""

    body: object = None
    face: str = ""
    p: object = 0.0
    kind = None  # not in case files

    def _face(self):
        for f in getattr(getattr(self.body, "body", None), "faces", ()):
            if f.name == self.face:
                return f
        return None

    @property
    def at(self):
        """The loaded body (so that the system checks it belongs to the model)."""
        return self.body

    def resolve(self):
        return (Marker(f"{self.name}.R", self.body),)

    def problems(self) -> list[str]:
        who = f"FacePressure '{self.name}'"
        if not hasattr(getattr(self.body, "body", None), "faces"):
            return [f"{who}: body must be a FlexibleBody, got {type(self.body).__name__}"]
        out = []
        if self._face() is None:
            names = [f.name for f in self.body.body.faces]
            out.append(f"{who}: body '{self.body.name}' has no face '{self.face}' "
                       f"(has: {', '.join(names) or 'none'})")
        try:
            val = np.asarray(as_time_function(self.p, who)(0.0)[0])
            if val.shape != ():
                out.append(f"{who}: pressure must be a scalar, got shape {val.shape}")
        except (TypeError, ValueError) as exc:
            out.append(str(exc))
        return out

    def energy_exchange(self) -> str | None:
        """None only for a pressure that is identically zero (no potential otherwise)."""
        fn = as_time_function(self.p, self.name)
        if isinstance(fn, Constant) and not np.any(fn.c):
            return None
        return "pressure (follower load), no potential"

    def generalized(self, q_b: np.ndarray, p: float):
        """``Q`` over the body coordinates and ``dQ/dq_b`` for pressure ``p``."""
        f = self._face()
        nb = len(q_b)
        e = np.asarray(q_b[3:7], dtype=float)
        fn, fm = -p * np.asarray(f.F_n), -p * np.asarray(f.F_m)
        Q = np.zeros(nb)
        Q[0:3] = A_of(e) @ fn
        Q[3:7] = 2.0 * L_of(e).T @ fm
        Q[7:] = -p * np.asarray(f.F_q)
        dQ = np.zeros((nb, nb))
        dQ[0:3, 3:7] = dAu_de(e, fn)
        dQ[3:7, 3:7] = 2.0 * LT_matrix(fm)
        return Q, dQ

    def contribution(self, ctx) -> ForceContribution:
        n, off, q_b = ctx.n, ctx.offsets[0], ctx.q_bodies[0]
        Q = np.zeros(n)
        order2 = ctx.order == 2
        dQ_dx = np.zeros((n, n)) if order2 else None
        if off is None or q_b is None:
            return ForceContribution(Q, dQ_dx, dQ_dx)
        p, pd, _ = (float(v) for v in as_time_function(self.p, self.name)(ctx.t))
        nb = len(q_b)
        Qb, dQb = self.generalized(q_b, p)
        Q[off:off + nb] = Qb
        if order2:
            dQ_dx[off:off + nb, off:off + nb] = dQb
            if pd != 0.0:
                dQ_dx[off:off + nb, n - 1] = self.generalized(q_b, pd)[0]
            return ForceContribution(Q, dQ_dx, np.zeros((n, n)))
        return ForceContribution(Q, None, None)
