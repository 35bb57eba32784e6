"""An elastic wheel whose deformed rim rolls without slip on a plane (THEORY §2.1, §4).

The wheel is a floating-frame elastic body ``[r, e, q_e]``; its rim is a ring of mesh
nodes (:mod:`flexmbs.constraints.rim_curve`), the smooth material curve

    p(psi) = r + A(e) u(psi),     u(psi) = X(psi) + Phi(psi) q_e.

The plane is the x-y plane of the marker ``P`` (normal ``n = z_P``).  The contact point
is the rim point lowest along the normal, ``psi*`` with

    h(psi*) = n_b . u'(psi*) = 0,     n_b . u''(psi*) > 0,      n_b = A^T n,

found by Newton's method from the lowest rim node (so the contact moves around the
deformed rim and the rolling radius is the deformed one).  Two constraints keep it there:

* the normal contact, holonomic (:class:`~flexmbs.constraints.rim_contact.RimContact`,
  a joint ``NAME.contact`` added with the rolling): ``g = n . (p(psi*) - p_P) = 0``,
  held at position level; its multiplier ``lam`` gives the normal force ``-lam n``;
* rolling without slip, nonholonomic (two velocity rows): the material point of the rim
  at ``psi*`` has no velocity relative to the plane's material point there, in the
  plane's tangent directions,

      c = [x_P, y_P]^T (v_C - v_P(C)) = 0,
      v_C = rd + omega x (A u*) + A Phi(psi*) qd_e,    u* = u(psi*).

  The multipliers give the friction force on the wheel at ``C``,
  ``F = -(mu_1 x_P + mu_2 y_P)`` [N]; ``C`` has no velocity, so it does no work.

(The normal row at velocity level, ``n . (v_C - v_P(C)) = dg/dt`` by the envelope
theorem since ``h(psi*) = 0``, would let ``g`` drift by the integrator's error.)

``psi*`` is a function of the state only (the Newton start is the lowest node); for the
complex-step derivatives its imaginary part comes from one Newton step in complex
arithmetic from the real root, which is the implicit-function derivative exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import initial_state
from flexmbs.constraints.rim_contact import RimContact
from flexmbs.constraints.rim_curve import RimCurve, rim_curve
from flexmbs.constraints.velocity import (VelocityConstraint, angular_velocity, as_marker,
                                          cross, fixed_motion, marker_motion,
                                          rotation)
from flexmbs.errors import ModelError


def rim_nodes(body, rim: str, who: str) -> np.ndarray:
    """Mesh node ids of ``rim``: an interface or a face of ``body``'s body file."""
    reduced = body.body
    for mk in reduced.markers:
        if mk.name == rim:
            return np.asarray(mk.nodes, int)
    for fc in reduced.faces:
        if fc.name == rim and fc.facets is not None:
            return np.unique(np.asarray(fc.facets, int))
    names = [mk.name for mk in reduced.markers] + [fc.name for fc in reduced.faces]
    raise ValueError(f"{who}: the body '{body.name}' has no interface or face '{rim}' "
                     f"(has: {', '.join(names) or 'none'})")


def contact_angle(curve: RimCurve, U, n_b, who: str = "RimRolling") -> object:
    """``psi*`` [rad]: the rim point lowest along ``n_b`` (module docstring); ModelError
    naming ``who`` if Newton's method does not find it (a rim not convex there)."""
    Ur, nr = np.real(U), np.real(n_b)
    k = int(np.argmin(curve.B_nodes @ Ur @ nr))
    psi = curve.angle_of_node(k)
    for _ in range(30):
        h = nr @ curve.point(Ur, psi, 1)
        step = h / (nr @ curve.point(Ur, psi, 2))
        psi -= step
        if step * step < 1e-30:
            break
    if not (step * step < 1e-20 and nr @ curve.point(Ur, psi, 2) > 0.0):
        raise ModelError(f"{who}: no lowest point of the deformed rim found near node "
                         f"{k} (the rim is not convex there; angle step {step:.3g} rad)")
    if np.iscomplexobj(U) or np.iscomplexobj(n_b):      # implicit-function derivative
        psi = psi - (n_b @ curve.point(U, psi, 1)) / (n_b @ curve.point(U, psi, 2))
    return psi


@dataclass(frozen=True, eq=False)
class RimRolling(VelocityConstraint):
    """The deformed rim ``rim`` (an interface or face of ``wheel``'s body file: a ring of
    mesh nodes about the body-frame ``axis``) of the elastic body ``wheel`` rolls without
    slip on the plane of ``plane`` (a marker or body; its z axis is the normal)."""

    plane: object = None
    wheel: object = None
    rim: str = "rim"
    axis: tuple = (0.0, 0.0, 1.0)
    kind = "rim_rolling"
    labels = ("x_P.v_C", "y_P.v_C")

    def markers(self) -> tuple:
        return (as_marker(self.plane, self.title, "plane"),
                as_marker(self.wheel, self.title, "wheel"))

    def holonomic_joints(self) -> tuple:
        P, W = self.markers()
        return (RimContact(f"{self.name}.contact", P, W, rolling=self),)

    def curve(self) -> RimCurve:
        cached = self.__dict__.get("_curve")
        if cached is None:
            body = self.wheel
            nodes = rim_nodes(body, self.rim, self.title)
            cached = rim_curve(np.asarray(body.body.points, float), body.body.modes,
                               nodes, self.axis, f"{self.title}: rim '{self.rim}'")
            self.__dict__["_curve"] = cached
        return cached

    def problems(self) -> list[str]:
        out = super().problems()
        if out:
            return out
        if getattr(self.wheel, "n_coords", 0) <= 7 or not hasattr(self.wheel, "body"):
            return [f"{self.title}: 'wheel' must be a flexible body (its rim is a node "
                    f"set of its mesh), got {self.wheel!r}"]
        axis = np.asarray(self.axis, dtype=float)
        if axis.shape != (3,) or not np.all(np.isfinite(axis)) or not axis.any():
            return [f"{self.title}: axis must be a non-zero 3-vector (the wheel's axis in "
                    f"its body frame), got {self.axis!r}"]
        try:
            self.curve()
        except ValueError as exc:
            return [str(exc)]
        P, _ = self.markers()
        if not getattr(P.body, "is_ground", False):
            return out
        gap = self.gap(fixed_motion(P), self.wheel.initial_q())
        if gap * gap > 1e-18:                    # 1e-9 m
            p_P, _ = initial_state(P)
            out.append(f"{self.title}: the rim must touch the plane at the start; its "
                       f"lowest point is {gap:.6g} m from it along the normal (plane "
                       f"through {np.round(p_P, 9).tolist()} m)")
        return out

    # -- kinematics -------------------------------------------------------------------
    def contact(self, plane_motion, qw, qdw=None):
        """``(C, v_C, psi*)``: the contact point [m], its material velocity [m/s] (None
        without ``qdw``) and the rim angle [rad], from the wheel's coordinates ``qw``."""
        curve = self.curve()
        A = rotation(qw[3:7])
        n = plane_motion.R[:, 2]
        U = curve.coefficients(qw[7:])
        psi = self.contact_angle_at(U, A.T @ n)
        arm = A @ curve.point(U, psi)
        C = qw[:3] + arm
        if qdw is None:
            return C, None, psi
        omega = angular_velocity(qw[3:7], qdw[3:7])
        v = qdw[:3] + cross(omega, arm) + A @ (curve.point(curve.Phi_c @ qdw[7:], psi))
        return C, v, psi

    def contact_angle_at(self, U, n_b):
        """:func:`contact_angle` of the rim coefficients ``U`` and the body-frame normal
        ``n_b``, memoised on the last arguments (the rows and the contact joint repeat
        them)."""
        key = (U.tobytes(), n_b.tobytes())
        memo = self.__dict__.get("_psi_memo")
        if memo is not None and memo[0] == key:
            return memo[1]
        psi = contact_angle(self.curve(), U, n_b, self.title)
        self.__dict__["_psi_memo"] = (key, psi)
        return psi

    def gap(self, plane_motion, qw) -> float:
        """``g = n . (C - p_P)`` [m]: the normal contact (zero at the start, held by the
        joint ``NAME.contact``)."""
        C, _, _ = self.contact(plane_motion, qw)
        return float(np.real(plane_motion.R[:, 2] @ (C - plane_motion.p)))

    def local_rates(self, x, xd, t, slices, markers):
        P, W = markers
        sp, sw = slices
        plane = marker_motion(P, None if sp is None else x[sp], None if sp is None else xd[sp])
        C, v_C, _ = self.contact(plane, x[sw], xd[sw])
        v_rel = v_C - plane.point_velocity(C)
        return np.array([plane.R[:, 0] @ v_rel, plane.R[:, 1] @ v_rel])

    def local_reaction_point(self, x, xd, slices, markers):
        P, _ = markers
        sp, sw = slices
        plane = marker_motion(P, None if sp is None else x[sp], None if sp is None else xd[sp])
        return self.contact(plane, x[sw])[0]

    def rates(self, motions, t):
        raise ModelError(f"{self.title}: the rows read the wheel's elastic coordinates "
                         "(local_rates), not only its frame's motion")
