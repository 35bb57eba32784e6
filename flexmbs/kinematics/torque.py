"""Generalized torques on Euler parameters (THEORY §3.3, §5.7, (2.57)).

A torque ``m`` on a rigid body does the virtual work ``m . delta pi``; with the virtual
rotations ``delta pi = 2 G(e) delta e`` (inertial) and ``delta pi' = 2 L(e) delta e``
(body components) the generalized force on ``e`` is

    Q_e = 2 G(e)^T m     (m inertial),        dQ_e/de = 2 R_G(m),   G(e)^T m = R_G(m) e
    Q_e = 2 L(e)^T m'    (m' body-fixed),     dQ_e/de = 2 R_L(m'),  L(e)^T m' = R_L(m') e

(``G`` and ``L`` are linear in ``e``, so the derivative is the constant matrix ``R``;
``flexmbs.kinematics.rotation.GT_matrix``/``LT_matrix``).
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
