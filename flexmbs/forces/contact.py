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

Friction.  With ``w = c_Q(x) - c_P(x)`` the difference of the two *material* contact
points (each fixed in its body at the current contact; on a deformed face the
barycentric ``sum_i b_i x_i`` of the nodes, ``b`` held), ``D = dw/dx``, ``T = I - n n^T``
and the sliding velocity ``v_t = T D xd``, the tangential force on Q is ``-F_t`` (``+F_t``
on P), ``Q_t = -D^T F_t``, with one of two laws (``friction_model``):

``"bristle"`` (the default) -- LuGre bristles (:mod:`flexmbs.forces.lugre`, parameters
:mod:`flexmbs.forces.bristle`) with the states ``z`` (3,) [m], a vector whose projection
``z_t = T z`` on the tangent plane is the bristle deflection:

    zd  = v_t - sigma0 a(v_t) z_t / mu(a(v_t)),
    F_t = F_n (sigma0 z_t + sigma1(a) zd),          sigma0 = mu_s / z_s,

so a contact under a tangential load ``|F| < mu_s F_n`` holds at ``z_t = F / (sigma0
F_n)``, ``|z_t| < z_s``, with ``zd = 0`` at ``v_t = 0``: true sticking, no creep.  One
more state ``W`` [J] integrates the friction work, ``Wd = F_t . v_t``, reported as
``friction_work`` in the energies.  Open contact (``F_n = 0``): ``F_t = 0``; ``z`` still
follows its rate, which keeps ``|z_t|`` below ``z_s`` (its steady value is
``mu(a) v_t / (sigma0 a)``) and is implicit-stable (``dzd/dz = -sigma0 a / mu T``); at
every impact (the gap closing) the bristles are reset to ``z = 0``: a new contact starts
undeflected.  The normal part of ``z`` is not used (it stays zero for a plane fixed in
its body; it stores the part of an older deflection turned out of the plane).  The step
must resolve the bristles, ``h <= z_s / (2 v_st)`` (a note says so otherwise).

``"regularised"`` -- viscous regularisation of Coulomb's law, no states but ``v_impact``:

    F_t = mu(|v_t|) F_n v_t / sqrt(|v_t|^2 + v_eps^2),

below ``v_eps`` [m/s] a viscous force: a loaded contact creeps at ``~ v_eps F / (mu
F_n)``.

Both ignore the law's viscous ``c_v``.  The Newton tangent of ``Q_t`` (and of the state
rows) holds the ``F_n``, ``v_t`` and ``z`` dependences, the turning of ``n`` and the second
derivatives of the material points (``w`` fixed in the bodies); the motion of the contact
point over the surfaces (which material point is in contact) is left out of it.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach, body_of, side_problems
from flexmbs.forces.base import ForceContribution
from flexmbs.forces.bristle import BristleParameters
from flexmbs.forces.contact_law import ContactLaw
from flexmbs.forces.friction_law import FrictionLaw
from flexmbs.forces.lugre import lugre
from flexmbs.forces.states import StatefulForceElement, StateLaw, scalar_state_law
from flexmbs.kinematics import jet as J

#: regularisation length of the pin-in-hole direction [m]
EPS_CENTRE = 1e-9
AXES = {"x": 0, "y": 1, "z": 2}
#: the tangential friction laws of a contact (module docstring), the default first
FRICTION_MODELS = ("bristle", "regularised")


@dataclass(frozen=True)
class ContactGeometry:
    """Gap jet ``s`` [m], unit normal jet ``n`` (on Q), contact points ``c_P``, ``c_Q``
    [m]; ``w_P``: the jet of P's material contact point when P's surface is not rigid in
    its frame (a deformed face: ``sum_i b_i x_i``), None for ``c_P`` fixed in P's
    frame."""

    s: object
    n: object
    c_P: np.ndarray
    c_Q: np.ndarray
    w_P: object = None


def inverse_scaled(a, length):
    """The jet ``a / length`` of a vector jet ``a`` and a positive scalar jet ``length``."""
    L = float(length.v)
    return J.mul(J.apply(length, 1.0 / L, -1.0 / L ** 2, 2.0 / L ** 3), a)


def material_point(frame, c: np.ndarray):
    """Jet of the body point of ``frame``'s body at the inertial ``c`` (fixed in it)."""
    d = c - frame.p.v
    return (frame.p + frame.x * float(frame.x.v @ d) + frame.y * float(frame.y.v @ d)
            + frame.z * float(frame.z.v @ d))


def _lengths_problems(element, names, what: str = "") -> list[str]:
    """One line per attribute of ``names`` of ``element`` that is not a finite length
    >= 0 [m] (a number: a missing one, None, is named as missing)."""
    out = []
    for k in names:
        v = getattr(element, k)
        if v is None:
            out.append(f"{element.who}: {what}{k} [m] is missing: expected a length >= 0")
        elif isinstance(v, bool) or not isinstance(v, numbers.Real) or \
                not (math.isfinite(v) and v >= 0):
            out.append(f"{element.who}: {what}{k} must be >= 0 [m], got {v}")
    return out


@dataclass(frozen=True, eq=False)
class ContactElement(BristleParameters, StatefulForceElement):
    """Base of the contact elements (module docstring): sides ``first`` (P), ``second``
    (Q), normal ``law`` and optional ``friction`` with the ``friction_model``
    ``"bristle"`` (parameters ``stiction_deformation`` [m], ``stiction_velocity`` [m/s],
    ``bristle_damping`` [s/m]) or ``"regularised"`` (speed ``v_eps`` [m/s]).
    Subclasses give :meth:`geometry`."""

    first: object = None
    second: object = None
    law: ContactLaw | None = None
    friction: FrictionLaw | None = None
    v_eps: float = 1e-4
    friction_model: str = FRICTION_MODELS[0]
    is_contact = True
    max_step_reason = ("bristles need (z_s / (2 v_st)); with larger steps a contact that "
                       "should stick may slide (docs/contact.md)")

    @property
    def bristles(self) -> bool:
        """Whether the friction is the bristle law (with its states ``z``, ``W``)."""
        return self.friction is not None and self.friction_model == "bristle"

    @property
    def state_names(self) -> tuple:
        return ("v_impact", "z_x", "z_y", "z_z", "W") if self.bristles else ("v_impact",)

    @property
    def state_units(self) -> str:
        return "m/s (v_impact), m (z), J (W)" if self.bristles else "m/s"

    @property
    def work_index(self) -> int | None:
        """Index of the friction work ``W`` among the states (None without bristles)."""
        return 4 if self.bristles else None

    @property
    def bristle_law(self) -> FrictionLaw:
        """The friction law, without its viscous part (not used by contacts)."""
        return dataclasses.replace(self.friction, c_v=0.0)

    @property
    def max_step(self) -> float | None:
        return super().max_step if self.bristles else None

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
        if self.friction_model not in FRICTION_MODELS:
            out.append(f"{who}: friction_model must be one of {', '.join(FRICTION_MODELS)}, "
                       f"got {self.friction_model!r}")
        elif self.bristles and not out:
            if self.friction.mu_k <= 0:
                out.append(f"{who}: bristle friction needs mu_k > 0 [-], got "
                           f"{self.friction.mu_k}")
            out += self.bristle_problems(who)
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

    def impact_state(self, sd: float, z: np.ndarray) -> np.ndarray:
        """The states after an impact at the gap rate ``sd`` from the states ``z``: the
        held ``v_minus = -sd``, the bristles reset (``z = 0``), the work ``W`` kept."""
        out = np.zeros(len(self.state_names))
        out[0] = max(-sd, 0.0)
        if self.bristles:
            out[4] = z[4]
        return out

    def contribution(self, ctx) -> ForceContribution:
        g = self.geometry_at(ctx)
        s, st = g.s, ctx.states
        sd = float(J.rate(s, ctx.xd))
        v_minus = float(ctx.x[st][0])
        F, F_d, F_dd, F_v = self.law.force(-float(s.v), -sd, v_minus)
        n_z = len(self.state_names)
        zero = np.zeros(n_z)
        law = StateLaw(zero, zero, zero, np.zeros((n_z, n_z)), zero)
        F_z = np.zeros(n_z)
        F_z[0] = -F_v
        c = scalar_state_law(s, ctx.xd, st, -F, F_d, F_dd, F_z, law, ctx.order)
        if self.bristles:
            return self._with_bristles(c, g, ctx, F, (F_d, F_dd, F_v))
        if self.friction is None or F <= 0.0:
            return c
        return self._with_friction(c, g, ctx, F, (F_d, F_dd, F_v))

    @staticmethod
    def slip(g, ctx):
        """``(w, T, u, v_t)``: the material points' difference jet ``w``, the tangent
        projector ``T``, their relative velocity ``u = D xd`` and ``v_t = T u``."""
        P, Q = ctx.frames[:2]
        w_P = material_point(P, g.c_P) if g.w_P is None else g.w_P
        w = material_point(Q, g.c_Q) - w_P
        n = g.n.v
        T = np.eye(3) - np.outer(n, n)
        u = w.d @ ctx.xd
        return w, T, u, T @ u

    @staticmethod
    def slip_gradients(g, ctx, w, T, u, dF):
        """``(dF_n/dx, dF_n/dxd, dv_t/dx)`` with ``F_n = F(-s, -sd, v_minus)`` and
        ``v_t = T(n(x)) D(x) xd`` (the turning normal and the material points' Hessian)."""
        s, n = g.s, g.n.v
        dF_dx = -dF[0] * s.d - dF[1] * (s.h @ ctx.xd)
        dF_dx[ctx.states.start] += dF[2]
        dF_dxd = -dF[1] * s.d
        du_dx = np.einsum("kij,j->ki", w.h, ctx.xd)
        Dn = g.n.d
        dv_dx = T @ du_dx - np.outer(n, u @ Dn) - (n @ u) * Dn
        return dF_dx, dF_dxd, dv_dx

    def _with_bristles(self, c, g, ctx, F, dF) -> ForceContribution:
        """``c`` plus the bristle friction ``Q_t = -D^T F_t``, the rates of ``z`` and ``W``
        and their tangent (module docstring)."""
        w, T, u, v = self.slip(g, ctx)
        D, n = w.d, g.n.v
        S = ctx.states
        zs, wi = slice(S.start + 1, S.start + 4), S.start + 4
        z = ctx.x[zs]
        st = lugre(self.effective_law, v, T @ z, F, self.sigma0, self.sigma1,
                   self.smoothing, self.damping_velocity)
        out = c.Q - D.T @ st.F
        out[zs] += st.f
        out[wi] += st.P
        if ctx.order < 2:
            return ForceContribution(out, None, None)
        dF_dx, dF_dxd, dv_dx = self.slip_gradients(g, ctx, w, T, u, dF)
        Dn = g.n.d
        dzt_dx = -np.outer(n, z @ Dn) - (n @ z) * Dn        # z_t = T(n(x)) z
        VD = T @ D                                          # dv_t/dxd
        P_N = float(st.F_N @ v)                             # dWd/dF_n
        dQ_dx, dQ_dxd = c.dQ_dx.copy(), c.dQ_dxd.copy()
        dQ_dx -= (D.T @ (st.F_v @ dv_dx + st.F_z @ dzt_dx + np.outer(st.F_N, dF_dx))
                  + np.einsum("k,kij->ij", st.F, w.h))
        dQ_dx[:, zs] -= D.T @ st.F_z @ T
        dQ_dxd -= D.T @ (st.F_v @ VD + np.outer(st.F_N, dF_dxd))
        dQ_dx[zs, :] += st.f_v @ dv_dx + st.f_z @ dzt_dx
        dQ_dx[zs, zs] += st.f_z @ T
        dQ_dxd[zs, :] += st.f_v @ VD
        dQ_dx[wi, :] += st.P_v @ dv_dx + st.P_z @ dzt_dx + P_N * dF_dx
        dQ_dx[wi, zs] += st.P_z @ T
        dQ_dxd[wi, :] += st.P_v @ VD + P_N * dF_dxd
        dQ_dxd[:, -1] = 0.0
        return ForceContribution(out, dQ_dx, dQ_dxd)

    def _with_friction(self, c, g, ctx, F, dF) -> ForceContribution:
        """``c`` plus the regularised friction force ``Q_t`` and its tangent (module
        docstring)."""
        w, T, u, v = self.slip(g, ctx)
        D = w.d
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
        dF_dx, dF_dxd, dv_dx = self.slip_gradients(g, ctx, w, T, u, dF)
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
        if self.bristles:
            parts.append("contact friction (its work W is reported as friction_work)")
        elif self.friction is not None:
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
        out = _lengths_problems(self, ("R",), "radius ")
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
        return _lengths_problems(self, ("R_P", "R_Q"), "radius ")

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
        return _lengths_problems(self, ("c", "R"))

    def geometry(self, P, Q) -> ContactGeometry:
        d = Q.p - P.p
        r = d - J.mul(J.dot(P.z, d), P.z)
        rho2 = J.dot(r, r) + EPS_CENTRE ** 2
        rho_v = float(np.sqrt(rho2.v))
        rho = J.apply(rho2, rho_v, 0.5 / rho_v, -0.25 / rho_v ** 3)
        e_r = inverse_scaled(r, rho)
        return ContactGeometry((rho * -1.0) + (self.c + EPS_CENTRE), -e_r,
                               P.p.v + (self.R + self.c) * e_r.v, Q.p.v + self.R * e_r.v)
