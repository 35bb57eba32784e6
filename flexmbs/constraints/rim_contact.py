"""The normal contact of an elastic wheel's deformed rim with a plane, held at position
level (THEORY §2.1, §4, §5.5): the joint that comes with
:class:`~flexmbs.constraints.rim_rolling.RimRolling`.

With the rim ``p(psi) = r + A(e) u(psi)``, ``u(psi) = X(psi) + Phi(psi) q_e``
(:mod:`flexmbs.constraints.rim_curve`; ``u``, ``u'``, ``u''`` from the basis rows of
:meth:`~flexmbs.constraints.rim_curve.RimCurve.basis`) and the plane of marker ``P`` (normal
``n = z_P``), the lowest rim point ``psi*`` makes ``f_psi = 0`` of

    f(x, psi) = n . (p(psi) - p_P),        g(x) = f(x, psi*(x)) = 0,

over the joint's local vector ``x`` (the plane's and the wheel's whole coordinates
``[r, e, q_e]``, :func:`flexmbs.system.layout.coordinate_jets`).  As ``psi*`` is
stationary (envelope theorem), with ``dpsi*/dx = -f_x,psi / f_psi,psi``,

    dg/dx = f_x (at fixed psi = psi*),
    d2g/dx2 = f_xx - f_x,psi f_x,psi^T / f_psi,psi,

``f_psi = n . A(e) u'(psi)``, ``f_psi,psi = n . A(e) u''(psi*) > 0``.  At fixed ``psi``
the rim point is a material point of the elastic body, ``p = r + A(e) u``, with
(``Te`` of :func:`flexmbs.kinematics.frames.rotation_data`, ``Q`` of
:func:`flexmbs.kinematics.rotation.Q_of`; :func:`flexmbs.kinematics.frames.
material_vectors`)

    dp/d[r, e, q_e] = [E, Te . u, A Phi],   d2p/de2 = 2 Q(u),   d2p/de dq_e = Te . Phi,

and the same without ``r`` for ``A u'``; the plane's frame enters through its jets.
All derivatives are exact.  The multiplier ``lam`` of ``g`` is the normal contact
force: ``-lam n`` [N] on the wheel at the contact point.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.constraints.base import Joint
from flexmbs.errors import ModelError
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.frames import material_vectors, rotation_data


def body_point_jet(rot, u, Phi, with_r: bool, order: int):
    """``(v, d, h)`` of ``[r +] A(e) u`` over the body coordinates ``[r, e, q_e]`` with
    ``du/dq_e = Phi`` (3, n_q) (module docstring, :func:`~flexmbs.kinematics.frames.
    material_vectors`; ``v`` without ``r``, ``h`` None below order 2)."""
    nq = Phi.shape[1]
    nb = 7 + nq
    V, V_e, V_q, V_ee, V_eq = material_vectors(rot, np.reshape(u, (1, 3)), Phi, order)
    d = np.zeros((3, nb))
    if with_r:
        d[:, :3] = np.eye(3)
    d[:, 3:7] = V_e[0]
    d[:, 7:] = V_q[0]
    if order < 2:
        return V[0], d, None
    h = np.zeros((3, nb, nb))
    h[:, 3:7, 3:7] = V_ee[0]
    h[:, 3:7, 7:] = V_eq[0]
    h[:, 7:, 3:7] = V_eq[0].transpose(0, 2, 1)
    return V[0], d, h


def on_local(v, d, h, S: J.Jet) -> J.Jet:
    """The 3-vector jet over the local vector of ``(v, d, h)`` over the body coordinates,
    whose jet on it is ``S`` (its gradient ``S.d`` (n_b, n); chain rule, ``S.h = 0``)."""
    dl = d @ S.d
    hl = None if (h is None or S.h is None) else np.einsum("ai,kab,bj->kij", S.d, h, S.d)
    return J.Jet(v, dl, hl)


@dataclass(frozen=True, eq=False)
class RimContact(Joint):
    """``g = n . (p(psi*) - p_P) = 0``: the deformed rim of ``rolling`` (a
    :class:`~flexmbs.constraints.rim_rolling.RimRolling`) touches the plane of ``P``;
    ``Q`` is the wheel's frame marker (its local coordinates are the wheel's)."""

    rolling: object = None
    kind = None
    labels = ("n.(p(psi*) - p_P)",)
    reads_coordinates = True

    def equations(self, P, Q, t, coordinates=None):
        if coordinates is None:            # a caller that does not pass the coordinates
            raise ModelError(f"joint '{self.name}' reads its wheel's coordinates: it "
                             f"cannot be driven, carry joint friction or feed a sensor "
                             f"drive (got no coordinates)")
        _, qw = coordinates
        roll = self.rolling
        curve = roll.curve()
        qb = np.asarray(qw.v, dtype=float)
        order = 1 if (qw.h is None or P.z.h is None) else 2
        rot = rotation_data(qb[3:7])
        A = rot[0]
        n = np.asarray(P.z.v, dtype=float)
        U = curve.coefficients(qb[7:])
        psi = roll.contact_angle_at(U, A.T @ n)
        b0, b1 = curve.basis(psi, 0), curve.basis(psi, 1)
        u, u1 = b0 @ U, b1 @ U
        Phi0 = np.tensordot(b0, curve.Phi_c, axes=1)
        v, d, h = body_point_jet(rot, u, Phi0, True, order)
        p = on_local(v + qb[:3], d, h, qw)
        g = J.dot(P.z, p - P.p)
        if order < 2:
            return [g]
        Phi1 = np.tensordot(b1, curve.Phi_c, axes=1)
        f_psi = J.dot(P.z, on_local(*body_point_jet(rot, u1, Phi1, False, order), qw))
        f_pp = n @ (A @ (curve.basis(psi, 2) @ U))
        return [J.Jet(g.v, g.d, g.h - np.outer(f_psi.d, f_psi.d) / f_pp)]
