"""Jets of marker frames: position and axes of a marker as functions of body coordinates.

For a marker ``P`` on a rigid body with coordinates ``[r, e]`` (see ``flexmbs.bodies.rigid``):

    p(q)   = r + A(e) s,           dp/dr = E,   dp_k/de = 2 Q_k(s) e,   d2p_k/de2 = 2 Q_k(s)
    a_j(q) = A(e) R[:, j],         the same with ``s -> R[:, j]`` and no ``r`` term,

where ``(A(e) u)_k = e^T Q_k(u) e`` (``flexmbs.kinematics.rotation.Q_of``).

For a marker with elastic rows ``Phi``, ``Psi`` on a flexible body with coordinates
``[r, e, q_e]`` (``flexmbs.bodies.flexible``), THEORY §2.1:

    p(q)   = r + A(e) (s + Phi q_e),            a_j(q) = A(e) (R_j + (Psi q_e) x R_j),

i.e. ``V = A(e) U(q_e)`` with ``U`` affine in ``q_e``, ``dU/dq_e = W`` (``Phi`` for the
position, ``-tilde(R_j) Psi`` for axis j), so

    dV/de = Te . U,  dV/dq_e = A W,  d2V/de2 = 2 Q(U),  d2V/de dq_e = Te . W,  d2V/dq_e2 = 0.

The axes use the linearised elastic rotation, so they are orthonormal only to first
order in ``Psi q_e``.  The local
coordinate vector of a joint is ``x = [q_i; q_j; t]``; ``offset`` places a body's
coordinates in it.  A point mass has coordinates ``r`` only and fixed axes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics.jet import Jet
from flexmbs.kinematics.rotation import T_A, A_of, G_of, Q_of, tilde


@dataclass(frozen=True)
class FrameJet:
    """Position ``p`` and axes ``x, y, z`` of a marker frame, each a 3-vector jet."""

    p: Jet
    x: Jet
    y: Jet
    z: Jet

    def axis(self, k: int) -> Jet:
        return (self.x, self.y, self.z)[k]


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x b`` for 3-vectors without numpy's general (slow for tiny arrays) machinery."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def dAu_de(e: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``d(A(e) u)/de`` (3x4) in closed form: with ``eps = e[1:]``,

    ``2 [e0 u + eps x u,  (eps.u) E + eps u^T - u eps^T - e0 tilde(u)]`` (equal to ``2 Q(u) e``).
    """
    e0, eps = e[0], e[1:]
    D = np.empty((3, 4))
    D[:, 0] = 2.0 * (e0 * u + cross3(eps, u))
    B = (eps @ u) * np.eye(3) + np.outer(eps, u) - np.outer(u, eps)
    B[0, 1] += e0 * u[2]; B[0, 2] -= e0 * u[1]
    B[1, 0] -= e0 * u[2]; B[1, 2] += e0 * u[0]
    B[2, 0] += e0 * u[1]; B[2, 1] -= e0 * u[0]
    D[:, 1:] = 2.0 * B
    return D


def _vector_jet(e, u, n, off, order, with_r, A=None):
    v = (A @ u) if e is not None else np.array(u, float)
    d = np.zeros((3, n))
    h = np.zeros((3, n, n)) if order == 2 else None
    if with_r:
        v = v + with_r[1]
        d[0, off] = d[1, off + 1] = d[2, off + 2] = 1.0
    if e is not None:
        eo = off + 3
        d[:, eo:eo + 4] = dAu_de(e, u)
        if order == 2:
            h[:, eo:eo + 4, eo:eo + 4] = 2.0 * Q_of(u)
    return Jet(v, d, h)


def frame_jet(marker, q_b: np.ndarray | None, n: int, offset: int, order: int = 2,
              rot: tuple[np.ndarray, np.ndarray] | None = None) -> FrameJet:
    """Jets of ``marker``'s position and axes over an ``n``-long local vector.

    ``rot``: ``rotation_data(q_b[3:7])`` if the caller already has it (shared by all the
    markers of one body in one evaluation)."""
    body = marker.body
    R = marker.R
    if getattr(body, "is_ground", False):
        cst = [Jet.constant(marker.s, n, order)] + [Jet.constant(R[:, k], n, order) for k in range(3)]
        return FrameJet(*cst)
    if body.n_coords == 3:          # point mass: translation only
        p = _vector_jet(None, marker.s, n, offset, order, (True, q_b[0:3]))
        axes = [Jet.constant(R[:, k], n, order) for k in range(3)]
        return FrameJet(p, *axes)
    if rot is None:
        rot = rotation_data(q_b[3:7])
    if _is_flexible(marker):
        return _flexible_frame(q_b, marker, n, offset, order, rot)
    return _rigid_frame(q_b, marker, n, offset, order, rot)


def _is_flexible(marker) -> bool:
    return marker.Phi is not None and marker.body.n_coords > 7


def _flexible_UW(marker, qe):
    """``U`` (3, 4): [s + Phi q, R_j + (Psi q) x R_j] and ``W`` (4, 3, n_q) = dU/dq."""
    R = marker.R
    Phi = np.asarray(marker.Phi, float)
    Psi = np.zeros_like(Phi) if marker.Psi is None else np.asarray(marker.Psi, float)
    th = Psi @ qe
    U = np.column_stack([marker.s + Phi @ qe] + [R[:, j] + cross3(th, R[:, j]) for j in range(3)])
    W = np.stack([Phi] + [-tilde(R[:, j]) @ Psi for j in range(3)])
    return U, W


def _flexible_UW_cached(marker, qe):
    """``_flexible_UW`` with the constant ``W`` and the Phi, Psi arrays kept on the marker."""
    c = marker.__dict__.get("_UW")
    if c is None:
        Phi = np.asarray(marker.Phi, float)
        Psi = np.zeros_like(Phi) if marker.Psi is None else np.asarray(marker.Psi, float)
        R = np.asarray(marker.R, float)
        W = np.stack([Phi] + [-tilde(R[:, j]) @ Psi for j in range(3)])
        U0 = np.column_stack([marker.s, R])
        c = (Phi, Psi, R, W, U0)
        marker.__dict__["_UW"] = c
    Phi, Psi, R, W, U0 = c
    th = Psi @ qe
    U = U0.copy()
    U[:, 0] += Phi @ qe
    for j in range(1, 4):
        U[:, j] += cross3(th, R[:, j - 1])
    return U, W


def _de_block(Te: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``einsum('kla,lu->uka', Te, U)`` (4, 3, 4) as one small matrix product."""
    return (U.T @ Te.transpose(1, 0, 2).reshape(3, 12)).reshape(U.shape[1], 3, 4)


def _flexible_frame(q_b, marker, n, off, order, rot=None) -> FrameJet:
    """Position and axes of a marker with elastic rows ``Phi``, ``Psi`` (module docstring)."""
    nq = len(q_b) - 7
    A, Te = rotation_data(q_b[3:7]) if rot is None else rot
    U, W = _flexible_UW_cached(marker, q_b[7:])
    V = A @ U
    V[:, 0] += q_b[0:3]
    D = np.zeros((4, 3, n))
    eo, qo = off + 3, off + 7
    D[:, :, eo:eo + 4] = _de_block(Te, U)
    D[:, :, qo:qo + nq] = np.matmul(A, W)
    D[0, 0, off] = D[0, 1, off + 1] = D[0, 2, off + 2] = 1.0
    if order < 2:
        return FrameJet(*(Jet(V[:, k], D[k], None) for k in range(4)))
    H = np.zeros((4, 3, n, n))
    H[:, :, eo:eo + 4, eo:eo + 4] = 2.0 * np.einsum("klab,lu->ukab", T_A, U)
    mixed = np.einsum("kla,ulj->ukaj", Te, W)                   # (4, 3, 4, n_q)
    H[:, :, eo:eo + 4, qo:qo + nq] = mixed
    H[:, :, qo:qo + nq, eo:eo + 4] = np.swapaxes(mixed, 2, 3)
    return FrameJet(*(Jet(V[:, k], D[k], H[k]) for k in range(4)))


def rotation_data(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A(e)`` and ``Te`` (3, 3, 4) with ``d(A(e) u)/de = einsum('kla,l->ka', Te, u)``.

    From ``A_kl(e) = e^T T_A[k,l] e``: ``Te[k,l] = 2 T_A[k,l] e``; note ``A = Te . e / 2``.
    """
    Te = 2.0 * (T_A @ e)
    return 0.5 * (Te @ e), Te


def _rigid_frame(q_b, marker, n, off, order, rot=None) -> FrameJet:
    """All four vectors (s and the three axes) of a rigid-body marker at once:
    ``V = A U + [r, 0, 0, 0]``, ``dV/de = Te . U``, ``d2V/de2 = 2 Q(U)``."""
    A, Te = rotation_data(q_b[3:7]) if rot is None else rot
    U = marker.__dict__.get("_U")
    if U is None:
        U = np.column_stack([marker.s, marker.R])        # (3, 4): s, x, y, z
        marker.__dict__["_U"] = U
    V = A @ U
    V[:, 0] += q_b[0:3]
    D = np.zeros((4, 3, n))
    eo = off + 3
    D[:, :, eo:eo + 4] = _de_block(Te, U)
    D[0, 0, off] = D[0, 1, off + 1] = D[0, 2, off + 2] = 1.0
    if order == 2:
        QU = np.einsum("klab,lu->ukab", T_A, U)          # (4, 3, 4, 4)
        H = np.zeros((4, 3, n, n))
        H[:, :, eo:eo + 4, eo:eo + 4] = 2.0 * QU
        return FrameJet(*(Jet(V[:, k], D[k], H[k]) for k in range(4)))
    return FrameJet(Jet(V[:, 0], D[0], None), Jet(V[:, 1], D[1], None),
                    Jet(V[:, 2], D[2], None), Jet(V[:, 3], D[3], None))


def position(marker, q_b) -> np.ndarray:
    """Inertial position of a marker."""
    body = marker.body
    if getattr(body, "is_ground", False):
        return np.array(marker.s)
    if body.n_coords == 3:
        return q_b[0:3] + marker.s
    if _is_flexible(marker):
        return q_b[0:3] + A_of(q_b[3:7]) @ (marker.s + marker.Phi @ q_b[7:])
    return q_b[0:3] + A_of(q_b[3:7]) @ marker.s


def orientation(marker, q_b) -> np.ndarray:
    """Inertial axes (columns) of a marker."""
    body = marker.body
    if getattr(body, "is_ground", False) or body.n_coords == 3:
        return np.array(marker.R)
    if _is_flexible(marker):
        return A_of(q_b[3:7]) @ _flexible_UW(marker, q_b[7:])[0][:, 1:]
    return A_of(q_b[3:7]) @ marker.R


def jacobians(marker, q_b) -> tuple[np.ndarray, np.ndarray]:
    """``(J_T, J_R)`` (3 x n_b): ``v_P = J_T qd_b`` and ``omega_P = J_R qd_b`` (inertial).

    On a flexible marker ``J_T = [E, d(A u)/de, A Phi]`` with ``u = s + Phi q_e`` and
    ``J_R = [0, 2 G(e), A Psi]`` (THEORY §2.1, ``T^t``, ``T^r`` in inertial components)."""
    body = marker.body
    nb = body.n_coords
    JT, JR = np.zeros((3, nb)), np.zeros((3, nb))
    if nb == 0:
        return JT, JR
    JT[:, 0:3] = np.eye(3)
    if nb >= 7:
        e = q_b[3:7]
        JR[:, 3:7] = 2.0 * G_of(e)
        if _is_flexible(marker):
            A, qe = A_of(e), q_b[7:]
            JT[:, 3:7] = dAu_de(e, marker.s + marker.Phi @ qe)
            JT[:, 7:] = A @ marker.Phi
            if marker.Psi is not None:
                JR[:, 7:] = A @ marker.Psi
        else:
            JT[:, 3:7] = dAu_de(e, marker.s)
    return JT, JR
