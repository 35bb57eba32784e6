"""Generalized torques on Euler parameters (THEORY §3.3, §5.7, (2.57)).

A torque ``m`` on a rigid body does the virtual work ``m . delta pi``; with the virtual
rotations ``delta pi = 2 G(e) delta e`` (inertial) and ``delta pi' = 2 L(e) delta e``
(body components) the generalized force on ``e`` is

    Q_e = 2 G(e)^T m     (m inertial),        dQ_e/de = 2 R_G(m),   G(e)^T m = R_G(m) e
    Q_e = 2 L(e)^T m'    (m' body-fixed),     dQ_e/de = 2 R_L(m'),  L(e)^T m' = R_L(m') e

(``G`` and ``L`` are linear in ``e``, so the derivative is the constant matrix ``R``;
``flexmbs.kinematics.rotation.GT_matrix``/``LT_matrix``).

On a marker of a flexible body the torque also does work on the elastic rotation
``Psi q_e`` (THEORY §2.6): :func:`marker_torque` gives ``Q = J_R^T m`` over
``[r, e, q_e]`` with ``J_R = [0, 2 G(e), A(e) Psi]``.
"""
from __future__ import annotations

import numpy as np

from flexmbs.kinematics.rotation import G_of, GT_matrix, L_of, LT_matrix


def Q_e_inertial(e: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Q_e, dQ_e/de) = (2 G(e)^T m, 2 R_G(m))`` for an inertial torque ``m`` [N m]."""
    m = np.asarray(m, dtype=float)
    return 2.0 * G_of(e).T @ m, 2.0 * GT_matrix(m)


def Q_e_body(e: np.ndarray, m_body: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Q_e, dQ_e/de) = (2 L(e)^T m', 2 R_L(m'))`` for a torque in body components."""
    m_body = np.asarray(m_body, dtype=float)
    return 2.0 * L_of(e).T @ m_body, 2.0 * LT_matrix(m_body)


def dQ_e_dm_inertial(e: np.ndarray) -> np.ndarray:
    """``dQ_e/dm = 2 G(e)^T`` (4x3), e.g. for a torque that depends on time or state."""
    return 2.0 * G_of(e).T


def dQ_e_dm_body(e: np.ndarray) -> np.ndarray:
    """``dQ_e/dm' = 2 L(e)^T`` (4x3)."""
    return 2.0 * L_of(e).T


# -- torques on markers of flexible bodies (THEORY §2.6, h_d) ----------------------------------
def marker_torque(marker, q_b: np.ndarray, m, md=None, frame: str = "inertial"):
    """Generalized force of a torque at a marker of a flexible (or rigid) body.

    ``Q = J_R^T m`` over the body coordinates ``[r, e, q_e]`` with
    ``J_R = [0, 2 G(e), A(e) Psi]`` (``flexmbs.kinematics.frames.jacobians``): the
    torque does work on the frame rotation and on the elastic rotation ``Psi q_e`` at the
    marker (THEORY §2.6, ``h_d``).  ``frame="body"``: ``m = sum_k m'_k a_k(q)`` along the
    marker's (deformed, follower) axes.  Returns ``(Q, dQ/dq_b, dQ/dt)``; ``md`` is
    ``dm/dt`` (zero if None).

    ``dQ/dq_b`` at fixed ``m``: rows e ``2 R_G(m)`` (``GT_matrix``), rows q_e
    ``Psi^T d(A^T m)/de``; plus ``J_R^T dm/dq_b`` for the follower torque.
    """
    from flexmbs.kinematics.frames import frame_jet, jacobians
    from flexmbs.kinematics.rotation import QT_of

    q_b = np.asarray(q_b, dtype=float)
    nb = len(q_b)
    e = q_b[3:7]
    m = np.asarray(m, dtype=float)
    md = np.zeros(3) if md is None else np.asarray(md, dtype=float)
    _, JR = jacobians(marker, q_b)
    if frame == "body":
        fj = frame_jet(marker, q_b, nb, 0, 1)
        axes = (fj.x, fj.y, fj.z)
        m_in = sum(m[k] * axes[k].v for k in range(3))
        md_in = sum(md[k] * axes[k].v for k in range(3))
        dm_dq = sum(m[k] * axes[k].d for k in range(3))
    elif frame == "inertial":
        m_in, md_in, dm_dq = m, md, np.zeros((3, nb))
    else:
        raise ValueError(f"marker_torque: frame must be 'inertial' or 'body', got {frame!r}")
    Q = JR.T @ m_in
    dQ = JR.T @ dm_dq
    dQ[3:7, 3:7] += 2.0 * GT_matrix(m_in)
    if nb > 7 and marker.Psi is not None:
        dATm_de = 2.0 * np.einsum("lab,b->la", QT_of(m_in), e)
        dQ[7:, 3:7] += np.asarray(marker.Psi, float).T @ dATm_de
    return Q, dQ, JR.T @ md_in
