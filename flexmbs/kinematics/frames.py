"""Jets of marker frames: position and axes of a marker as functions of body coordinates.

For a marker ``P`` on a rigid body with coordinates ``[r, e]`` (see ``flexmbs.bodies.rigid``):

    p(q)   = r + A(e) s,           dp/dr = E,   dp_k/de = 2 Q_k(s) e,   d2p_k/de2 = 2 Q_k(s)
    a_j(q) = A(e) R[:, j],         the same with ``s -> R[:, j]`` and no ``r`` term,

where ``(A(e) u)_k = e^T Q_k(u) e`` (``flexmbs.kinematics.rotation.Q_of``).  The local
coordinate vector of a joint is ``x = [q_i; q_j; t]``; ``offset`` places a body's
coordinates in it.  A point mass has coordinates ``r`` only and fixed axes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics.jet import Jet
from flexmbs.kinematics.rotation import A_of, G_of, Q_of


@dataclass(frozen=True)
class FrameJet:
    """Position ``p`` and axes ``x, y, z`` of a marker frame, each a 3-vector jet."""

    p: Jet
    x: Jet
    y: Jet
    z: Jet

    def axis(self, k: int) -> Jet:
        return (self.x, self.y, self.z)[k]


def _vector_jet(e, u, n, off, order, with_r):
    v = A_of(e) @ u if e is not None else np.array(u, float)
    d = np.zeros((3, n))
    h = np.zeros((3, n, n)) if order == 2 else None
    if with_r:
        v = v + with_r[1]
        d[:, off:off + 3] = np.eye(3)
    if e is not None:
        eo = off + 3
        Q = Q_of(u)
        d[:, eo:eo + 4] = 2.0 * Q @ e
        if order == 2:
            h[:, eo:eo + 4, eo:eo + 4] = 2.0 * Q
    return Jet(v, d, h)


def frame_jet(marker, q_b: np.ndarray | None, n: int, offset: int, order: int = 2) -> FrameJet:
    """Jets of ``marker``'s position and axes over an ``n``-long local vector."""
    body = marker.body
    R = marker.R
    if getattr(body, "is_ground", False):
        cst = [Jet.constant(marker.s, n, order)] + [Jet.constant(R[:, k], n, order) for k in range(3)]
        return FrameJet(*cst)
    if body.n_coords == 3:          # point mass: translation only
        p = _vector_jet(None, marker.s, n, offset, order, (True, q_b[0:3]))
        axes = [Jet.constant(R[:, k], n, order) for k in range(3)]
        return FrameJet(p, *axes)
    e = q_b[3:7]
    p = _vector_jet(e, marker.s, n, offset, order, (True, q_b[0:3]))
    axes = [_vector_jet(e, R[:, k], n, offset, order, None) for k in range(3)]
    return FrameJet(p, *axes)


def position(marker, q_b) -> np.ndarray:
    """Inertial position of a marker."""
    body = marker.body
    if getattr(body, "is_ground", False):
        return np.array(marker.s)
    if body.n_coords == 3:
        return q_b[0:3] + marker.s
    return q_b[0:3] + A_of(q_b[3:7]) @ marker.s


def orientation(marker, q_b) -> np.ndarray:
    """Inertial axes (columns) of a marker."""
    body = marker.body
    if getattr(body, "is_ground", False) or body.n_coords == 3:
        return np.array(marker.R)
    return A_of(q_b[3:7]) @ marker.R


def jacobians(marker, q_b) -> tuple[np.ndarray, np.ndarray]:
    """``(J_T, J_R)`` (3 x n_b): ``v_P = J_T qd_b`` and ``omega_P = J_R qd_b`` (inertial)."""
    body = marker.body
    nb = body.n_coords
    JT, JR = np.zeros((3, nb)), np.zeros((3, nb))
    if nb == 0:
        return JT, JR
    JT[:, 0:3] = np.eye(3)
    if nb >= 7:
        e = q_b[3:7]
        JT[:, 3:7] = 2.0 * Q_of(marker.s) @ e
        JR[:, 3:7] = 2.0 * G_of(e)
    return JT, JR
