"""Compliant contact force elements with friction, THEORY §5.7.2 (FE-18), §5.7.4 (2.65),
§7 item 35.

A contact between side P (first) and side Q (second) has a gap ``s(x)`` [m] (a
:class:`~flexmbs.kinematics.jet.Jet` of the local vector ``x``; closed for ``s < 0``),
a unit normal ``n`` (the direction of the normal force on Q) and the two contact points
``c_P``, ``c_Q``:

    sphere-plane  (P: plane with normal axis ``normal`` of P, Q: sphere centre, radius R)
        s = n_P . (p_Q - p_P) - R,             n = n_P,         c_Q = p_Q - R n;
    sphere-sphere (radii R_P, R_Q; a point for R = 0)
        s = |p_Q - p_P| - R_P - R_Q,           n = (p_Q - p_P)/|p_Q - p_P|,
                                               c_P = p_P + R_P n,   c_Q = p_Q - R_Q n;
    pin in hole   (P: hole with axis z_P, Q: pin centre; radial clearance c, pin radius R)
        r = (I - z_P z_P^T)(p_Q - p_P),   rho = sqrt(r . r + eps^2),
        s = c + eps - rho,                     n = -r / rho,
                                               c_P = p_P + (R + c) r/rho, c_Q = p_Q + R r/rho
        (``eps`` = 1e-9 m regularises the direction at the centre; the gap is exact to
        ``eps^2 / (2 rho)``).

Normal force ``F_n(delta = -s, deltad = -sd, v_minus)`` of the
:class:`~flexmbs.forces.contact_law.ContactLaw`; its generalized force is
``Q_n = F_n grad s`` (:func:`flexmbs.forces.states.scalar_state_law` with the force
``-F_n`` acting against ``s``).  The approach speed ``v_minus`` of the last impact is a
held state ``z`` (``zd = 0``), set by the integrator when it lands on an impact
(``s`` crossing zero, :meth:`ContactElement.impact_state`).

Friction (regularised Coulomb, :class:`~flexmbs.forces.friction_law.FrictionLaw`): with
``w = c_Q(x) - c_P(x)`` the difference of the two *material* contact points (each
fixed in its body at the current contact), ``D = dw/dx`` and the sliding velocity
``v_t = (I - n n^T) D xd``,

    F_t = -mu(|v_t|) F_n v_t / sqrt(|v_t|^2 + v_eps^2),      Q_t = D^T F_t,

on Q (and ``-F_t`` on P).  The Newton tangent of ``Q_t`` holds the ``F_n`` and ``v_t``
dependences, the turning of ``n`` and the second derivatives of the material points
(``w`` fixed in the bodies); the motion of the contact point over the surfaces (which
material point is in contact) is left out of it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach, body_of, side_problems
from flexmbs.forces.base import ForceContribution
from flexmbs.forces.contact_law import ContactLaw
from flexmbs.forces.friction_law import FrictionLaw
from flexmbs.forces.states import StatefulForceElement, StateLaw, scalar_state_law
from flexmbs.kinematics import jet as J

#: regularisation length of the pin-in-hole direction [m]
EPS_CENTRE = 1e-9
AXES = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True)
class ContactGeometry:
    """Gap jet ``s`` [m], unit normal jet ``n`` (on Q), contact points ``c_P``, ``c_Q``
    [m]."""

    s: object
    n: object
    c_P: np.ndarray
    c_Q: np.ndarray


def inverse_scaled(a, length):
    """The jet ``a / length`` of a vector jet ``a`` and a positive scalar jet ``length``."""
    L = float(length.v)
    return J.mul(J.apply(length, 1.0 / L, -1.0 / L ** 2, 2.0 / L ** 3), a)


def material_point(frame, c: np.ndarray):
    """Jet of the body point of ``frame``'s body at the inertial ``c`` (fixed in it)."""
    d = c - frame.p.v
    return (frame.p + frame.x * float(frame.x.v @ d) + frame.y * float(frame.y.v @ d)
            + frame.z * float(frame.z.v @ d))


@dataclass(frozen=True, eq=False)
class ContactElement(StatefulForceElement):
    """Base of the contact elements (module docstring): sides ``first`` (P), ``second``
    (Q), normal ``law`` and optional ``friction`` with the regularising speed ``v_eps``
    [m/s].  Subclasses give :meth:`geometry`."""

    first: object = None
    second: object = None
    law: ContactLaw | None = None
    friction: FrictionLaw | None = None
    v_eps: float = 1e-4
    state_names = ("v_impact",)
    is_contact = True

    def resolve(self):
        return attach(self.first, self.name, "P"), attach(self.second, self.name, "Q")

    @property
    def who(self) -> str:
        return f"{type(self).__name__} '{self.name}'"

    def problems(self) -> list[str]:
        who = self.who
        out = side_problems(self.first, who, "P") + side_problems(self.second, who, "Q")
        if not isinstance(self.law, ContactLaw):
            out.append(f"{who}: law must be a ContactLaw, got {type(self.law).__name__}")
        else:
            out += self.law.problems(who)
        if self.friction is not None:
            out += self.friction.problems(who)
        if not np.isfinite(self.v_eps) or self.v_eps <= 0:
            out.append(f"{who}: v_eps must be > 0 [m/s], got {self.v_eps}")
        if not out and body_of(self.first) is body_of(self.second):
            out.append(f"{who}: connects body '{body_of(self.first).name}' to itself")
        return out + self.geometry_problems()

    def geometry_problems(self) -> list[str]:
        return []

    def geometry(self, P, Q) -> ContactGeometry:
        raise NotImplementedError

    def geometry_at(self, ctx) -> ContactGeometry:
        """The geometry at the evaluation ``ctx`` (that of the side frames; an element
        whose surface depends on more than its two markers overrides it)."""
        return self.geometry(*ctx.frames[:2])

    # --- what the integrator's event location reads ------------------------------------
    def gap(self, ctx) -> tuple[float, float, float]:
        """``(s, sd, F_n)``: gap [m], its rate [m/s] and the normal force [N]."""
        g = self.geometry_at(ctx)
        s, sd = float(g.s.v), float(J.rate(g.s, ctx.xd))
        v_minus = float(ctx.x[ctx.states][0])
        return s, sd, self.law.force(-s, -sd, v_minus)[0]

    @staticmethod
    def impact_state(sd: float) -> np.ndarray:
        """The held state after an impact at the gap rate ``sd``: ``v_minus = -sd``."""
        return np.array([max(-sd, 0.0)])

    def contribution(self, ctx) -> ForceContribution:
        g = self.geometry_at(ctx)
        s, st = g.s, ctx.states
        sd = float(J.rate(s, ctx.xd))
        v_minus = float(ctx.x[st][0])
        F, F_d, F_dd, F_v = self.law.force(-float(s.v), -sd, v_minus)
        zero = np.zeros(1)
        law = StateLaw(zero, zero, zero, np.zeros((1, 1)), zero)
        c = scalar_state_law(s, ctx.xd, st, -F, F_d, F_dd, np.array([-F_v]), law, ctx.order)
        if self.friction is None or F <= 0.0:
            return c
        return self._with_friction(c, g, ctx, F, (F_d, F_dd, F_v))

    def _with_friction(self, c, g, ctx, F, dF) -> ForceContribution:
        """``c`` plus the friction force ``Q_t`` and its tangent (module docstring)."""
        P, Q = ctx.frames[:2]
        w = material_point(Q, g.c_Q) - material_point(P, g.c_P)
        D, n = w.d, g.n.v
        T = np.eye(3) - np.outer(n, n)
        u = D @ ctx.xd                     # relative velocity of the material points
        v = T @ u
        speed = float(np.sqrt(v @ v))
        root = float(np.sqrt(v @ v + self.v_eps ** 2))
        phi = v / root
        mu, dmu = self.friction.mu(speed)
        Ft = -mu * F * phi
        out = c.Q + D.T @ Ft
        if ctx.order < 2:
            return ForceContribution(out, None, None)
        dphi = np.eye(3) / root - np.outer(v, v) / root ** 3
        dmu_dv = dmu * v / speed if speed > 0 else np.zeros(3)
        dFt_dv = -F * (np.outer(phi, dmu_dv) + mu * dphi)
        dFt_dFn = -mu * phi
        # F_n = F(-s, -sd, z): dF/dx = -F_d grad s - F_dd (hess s . xd), dF/dxd = -F_dd grad s
        s = g.s
        dF_dx = -dF[0] * s.d - dF[1] * (s.h @ ctx.xd)
        dF_dx[ctx.states] += dF[2]
        dF_dxd = -dF[1] * s.d
        # v = T(n(x)) D(x) xd: the turning normal and the material points' Hessian
        du_dx = np.einsum("kij,j->ki", w.h, ctx.xd)
        Dn = g.n.d
        dv_dx = T @ du_dx - np.outer(n, u @ Dn) - (n @ u) * Dn
        dQ_dx = (c.dQ_dx + D.T @ (np.outer(dFt_dFn, dF_dx) + dFt_dv @ dv_dx)
                 + np.einsum("k,kij->ij", Ft, w.h))
        dQ_dxd = c.dQ_dxd + D.T @ (dFt_dv @ T @ D + np.outer(dFt_dFn, dF_dxd))
        dQ_dxd[:, -1] = 0.0
        return ForceContribution(out, dQ_dx, dQ_dxd)

    def potential(self, ctx) -> float:
        """Hertz energy ``V = K delta^(n+1) / (n + 1)`` [J] of the penetration."""
        delta = -float(self.geometry_at(ctx).s.v)
        law = self.law
        return law.K * delta ** (law.n + 1.0) / (law.n + 1.0) if delta > 0 else 0.0

    def energy_exchange(self) -> str | None:
        parts = []
        if self.law is not None and self.law.e is not None and self.law.e < 1.0:
            parts.append(f"contact damping (restitution e = {self.law.e:g})")
        if self.friction is not None:
            parts.append("contact friction")
        return " and ".join(parts) or None


@dataclass(frozen=True, eq=False)
class SpherePlaneContact(ContactElement):
    """Sphere of radius ``R`` [m] centred at Q on the plane through P with normal the
    ``normal`` axis of P (``"x"``, ``"y"`` or ``"z"``); R = 0: a point on a plane."""

    R: float = 0.0
    normal: str = "z"
    kind = "sphere_plane_contact"

    def geometry_problems(self) -> list[str]:
        out = []
        if not np.isfinite(self.R) or self.R < 0:
            out.append(f"{self.who}: radius R must be >= 0 [m], got {self.R}")
        if self.normal not in AXES:
            out.append(f"{self.who}: normal must be 'x', 'y' or 'z', got {self.normal!r}")
        return out

    def geometry(self, P, Q) -> ContactGeometry:
        n_P = P.axis(AXES[self.normal])
        s = J.dot(n_P, Q.p - P.p) - self.R
        c_Q = Q.p.v - self.R * n_P.v
        return ContactGeometry(s, n_P, c_Q, c_Q)


@dataclass(frozen=True, eq=False)
class SphereSphereContact(ContactElement):
    """Spheres of radii ``R_P`` and ``R_Q`` [m] centred at P and Q (0: a point)."""

    R_P: float = 0.0
    R_Q: float = 0.0
    kind = "sphere_sphere_contact"

    def geometry_problems(self) -> list[str]:
        return [f"{self.who}: radius {k} must be >= 0 [m], got {getattr(self, k)}"
                for k in ("R_P", "R_Q")
                if not (np.isfinite(getattr(self, k)) and getattr(self, k) >= 0)]

    def geometry(self, P, Q) -> ContactGeometry:
        d = Q.p - P.p
        if float(d.v @ d.v) == 0.0:
            raise ValueError(f"{self.who}: sphere centres coincide, normal undefined")
        dist = J.norm(d)
        n = inverse_scaled(d, dist)
        return ContactGeometry(dist - (self.R_P + self.R_Q), n, P.p.v + self.R_P * n.v,
                               Q.p.v - self.R_Q * n.v)


@dataclass(frozen=True, eq=False)
class PinInHoleContact(ContactElement):
    """Pin of radius ``R`` [m] centred at Q in a hole of radius ``R + c`` centred at P,
    the hole axis the z axis of P; radial clearance ``c`` [m] (the radial law of a
    :class:`flexmbs.system.clearance.ClearanceRevolute`)."""

    c: float = 0.0
    R: float = 0.0
    kind = "pin_in_hole_contact"

    def geometry_problems(self) -> list[str]:
        return [f"{self.who}: {k} must be >= 0 [m], got {getattr(self, k)}"
                for k in ("c", "R") if not (np.isfinite(getattr(self, k))
                                            and getattr(self, k) >= 0)]

    def geometry(self, P, Q) -> ContactGeometry:
        d = Q.p - P.p
        r = d - J.mul(J.dot(P.z, d), P.z)
        rho2 = J.dot(r, r) + EPS_CENTRE ** 2
        rho_v = float(np.sqrt(rho2.v))
        rho = J.apply(rho2, rho_v, 0.5 / rho_v, -0.25 / rho_v ** 3)
        e_r = inverse_scaled(r, rho)
        return ContactGeometry((rho * -1.0) + (self.c + EPS_CENTRE), -e_r,
                               P.p.v + (self.R + self.c) * e_r.v, Q.p.v + self.R * e_r.v)
