"""External (applied) forces and torques on one body, THEORY §5.7, (2.57).

``ExternalForce``: a force ``F(t)`` [N] at marker P, inertial or in P's axes
(``frame="body"``: ``F = sum_k F'_k a_k``).  Its virtual work ``delta W = F . delta p``
gives, on the local coordinates ``x``,

    Q = (dp/dx)^T F,     dQ/dx = sum_k F_k d2p_k/dx2 + (dp/dx)^T dF/dx,

where ``dF/dx`` holds the follower (``frame="body"``) and time (last column) terms.
Because ``A(e)`` is quadratic in ``e``, this ``Q`` has, besides ``2 G^T ((A s) x F)``, a
component along ``e`` (the work of scaling ``|e|``); the multiplier of ``e.e = 1`` takes it.

``ExternalTorque``: a torque ``m(t)`` [N m] on P's body, inertial or in P's axes; on the
Euler parameters (``flexmbs.kinematics.torque``)

    Q_e = 2 G(e)^T m   or   Q_e = 2 L(e)^T (R_P m'),

with ``R_P`` the marker axes in the body frame.  Rigid bodies only (a point mass takes
no torque).  Loads are specified by a
:class:`~flexmbs.kinematics.time_functions.TimeFunction` with (3,) values, a constant (3,)
vector, or ``(f, fd, fdd)`` callables.

Energy: only a constant force in inertial components is conservative, with

    V = -F . p_P,        dV/dx = -(dp/dx)^T F = -Q.

A time-varying force (``dV/dt != 0``), a follower force (``frame="body"``: ``F`` turns
with the body, its work ``int F . dp`` depends on the path) and every torque (``int m .
omega dt``: ``omega`` is not the rate of any function of ``q``, so the work depends on the
path) have no potential; their work is external work (``energy_exchange``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach, side_problems
from flexmbs.forces.base import ForceContribution, ForceElement
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.time_functions import Constant, as_time_function, time_jet
from flexmbs.kinematics.torque import Q_e_body, Q_e_inertial, marker_torque

_FRAMES = ("inertial", "body")


def _load_problems(obj, key: str) -> list[str]:
    who = f"{type(obj).__name__} '{obj.name}'"
    out = side_problems(obj.at, who, "P")
    if obj.frame not in _FRAMES:
        out.append(f"{who}: frame must be one of {_FRAMES}, got {obj.frame!r}")
    try:
        val = np.asarray(as_time_function(getattr(obj, key), who)(0.0)[0])
        if val.shape != (3,):
            out.append(f"{who}: {key} must have 3 components, got shape {val.shape}")
    except (TypeError, ValueError) as exc:
        out.append(str(exc))
    return out


def _load(obj, key: str):
    """The load's :class:`~flexmbs.kinematics.time_functions.TimeFunction` (made once per
    element)."""
    fn = obj.__dict__.get("_fn")
    if fn is None:
        fn = obj.__dict__["_fn"] = as_time_function(getattr(obj, key), obj.name)
    return fn


def _time(ctx) -> J.Jet:
    return J.Jet.variable(ctx.n - 1, ctx.t, ctx.n, ctx.order)


@dataclass(frozen=True, eq=False)
class ExternalForce(ForceElement):
    """Force ``force`` [N] at ``at`` (marker, body or (body, point)); ``frame`` inertial|body."""

    at: object = None
    force: object = (0.0, 0.0, 0.0)
    frame: str = "inertial"
    kind = "force"

    def resolve(self):
        return (attach(self.at, self.name, "P"),)

    def problems(self) -> list[str]:
        return _load_problems(self, "force")

    def is_conservative(self) -> bool:
        """A constant force in inertial components (or no force at all)."""
        fn = _load(self, "force")
        return isinstance(fn, Constant) and (self.frame == "inertial" or not np.any(fn.c))

    def potential(self, ctx) -> float:
        """``V = -F . p_P`` [J] of a constant inertial force (module docstring); 0 for a
        time-varying or follower force, which has no potential (see :meth:`energy_exchange`)."""
        if not self.is_conservative():
            return 0.0
        return -float(np.asarray(_load(self, "force").c, float) @ ctx.frames[0].p.v)

    def energy_exchange(self) -> str | None:
        if self.is_conservative():
            return None
        if self.frame == "body":
            return "follower force (body axes), no potential"
        return "time-varying force, no potential"

    def contribution(self, ctx) -> ForceContribution:
        P = ctx.frames[0]
        F = time_jet(_load(self, "force"), _time(ctx))
        if self.frame == "body":
            F = J.mul(F[0], P.x) + J.mul(F[1], P.y) + J.mul(F[2], P.z)
        p = P.p
        Q = p.d.T @ F.v
        if ctx.order < 2:
            return ForceContribution(Q, None, None)
        dQ_dx = np.einsum("kij,k->ij", p.h, F.v) + p.d.T @ F.d
        return ForceContribution(Q, dQ_dx, np.zeros((ctx.n, ctx.n)))


@dataclass(frozen=True, eq=False)
class ExternalTorque(ForceElement):
    """Torque ``torque`` [N m] on the body of ``at``; ``frame`` inertial|body (P's axes)."""

    at: object = None
    torque: object = (0.0, 0.0, 0.0)
    frame: str = "inertial"
    kind = "torque"

    def resolve(self):
        return (attach(self.at, self.name, "P"),)

    def problems(self) -> list[str]:
        return _load_problems(self, "torque")

    def energy_exchange(self) -> str | None:
        """None only for a torque that is identically zero (a torque has no potential)."""
        fn = _load(self, "torque")
        if isinstance(fn, Constant) and not np.any(fn.c):
            return None
        return "applied torque, no potential"

    def linear_force(self, marker, n_b: int) -> np.ndarray | None:
        """``K`` (n_b, n_b) with the generalized force ``Q = K q_b`` at every state and
        time, or None: a constant inertial torque ``m`` on a rigid body, ``Q_e = 2 G(e)^T m
        = 2 R_G(m) e`` (compiled residuals take it as such)."""
        if n_b != 7 or (marker.Phi is not None and marker.body.n_coords > 7):
            return None
        fn = _load(self, "torque")
        if self.frame != "inertial" or not isinstance(fn, Constant):
            return None
        K = np.zeros((7, 7))
        K[3:7, 3:7] = Q_e_inertial(np.zeros(4), np.asarray(fn.c, float))[1]
        return K

    def body_force(self, marker, q_b, t: float, order: int = 1) -> ForceContribution | None:
        """:meth:`contribution` on a rigid body without the frame jets: ``Q`` over
        ``[q_b; t]`` is ``2 G(e)^T m`` (or ``2 L(e)^T R_P m'``) on ``e``, ``dQ/de`` the
        constant ``2 R_G(m)`` (``2 R_L(R_P m')``), ``dQ/dt`` the same with ``dm/dt``;
        None on other bodies (then :meth:`contribution` is used)."""
        nb = len(q_b)
        if nb != 7 or (marker.Phi is not None and marker.body.n_coords > 7):
            return None
        fn = _load(self, "torque")
        if self.frame == "inertial" and isinstance(fn, Constant):
            # the common constant torque: 2 G(e)^T m on Python floats, and the constant
            # tangent 2 R_G(m) (no time term) made once
            m0, m1, m2 = np.asarray(fn.c, float).tolist()
            e0, x, y, z = q_b[3:7].tolist()
            Q = np.array([0.0, 0.0, 0.0, 2.0 * (-x * m0 - y * m1 - z * m2),
                          2.0 * (e0 * m0 + z * m1 - y * m2), 2.0 * (-z * m0 + e0 * m1 + x * m2),
                          2.0 * (y * m0 - x * m1 + e0 * m2), 0.0])
            if order < 2:
                return ForceContribution(Q, None, None)
            K = self.__dict__.get("_dQ")
            if K is None:
                K = np.zeros((8, 8))
                K[3:7, 3:7] = Q_e_inertial(q_b[3:7], np.array([m0, m1, m2]))[1]
                K.setflags(write=False)
                self.__dict__["_dQ"] = K
                self.__dict__["_dQd"] = np.zeros((8, 8))
                self.__dict__["_dQd"].setflags(write=False)
            return ForceContribution(Q, K, self.__dict__["_dQd"])
        m, md, _ = (np.asarray(v, float) for v in fn(t))
        e = q_b[3:7]
        Q = np.zeros(nb + 1)
        if self.frame == "body":
            R = np.asarray(marker.R, float)
            Q[3:7], dQ_e = Q_e_body(e, R @ m)
            Q_e_t = Q_e_body(e, R @ md)[0] if order == 2 else None
        else:
            Q[3:7], dQ_e = Q_e_inertial(e, m)
            Q_e_t = Q_e_inertial(e, md)[0] if order == 2 else None
        if order < 2:
            return ForceContribution(Q, None, None)
        dQ_dx = np.zeros((nb + 1, nb + 1))
        dQ_dx[3:7, 3:7] = dQ_e
        dQ_dx[3:7, nb] = Q_e_t
        return ForceContribution(Q, dQ_dx, np.zeros((nb + 1, nb + 1)))

    def contribution(self, ctx) -> ForceContribution:
        n = ctx.n
        Q = np.zeros(n)
        dQ_dx = np.zeros((n, n)) if ctx.order == 2 else None
        dQ_dxd = np.zeros((n, n)) if ctx.order == 2 else None
        marker, off, q_b = ctx.markers[0], ctx.offsets[0], ctx.q_bodies[0]
        if off is None or q_b is None or marker.body.n_coords < 7:
            return ForceContribution(Q, dQ_dx, dQ_dxd)
        if marker.Phi is not None and marker.body.n_coords > 7:
            m, md, _ = (np.asarray(v, float) for v in _load(self, "torque")(ctx.t))
            # flexible marker: Q = J_R^T m with J_R = [0, 2G(e), A Psi] (THEORY §2.6, h_d)
            nb = marker.body.n_coords
            Qb, dQb, dQt = marker_torque(marker, q_b, m, md, self.frame)
            Q[off:off + nb] = Qb
            if dQ_dx is not None:
                dQ_dx[off:off + nb, off:off + nb] = dQb
                dQ_dx[off:off + nb, n - 1] = dQt
            return ForceContribution(Q, dQ_dx, dQ_dxd)
        # rigid body, or a marker fixed to a flexible body's floating frame (no Psi: the
        # torque works on the frame's rotation only): the rows [r, e] and time
        c = self.body_force(marker, q_b[:7], ctx.t, ctx.order)
        rows = np.append(np.arange(off, off + 7), n - 1)
        Q[rows] = c.Q
        if dQ_dx is not None:
            dQ_dx[np.ix_(rows, rows)] = c.dQ_dx
        return ForceContribution(Q, dQ_dx, dQ_dxd)
