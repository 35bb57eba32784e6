"""Newton-Euler equations of one rigid body about its reference point O_i (THEORY §3.5,
(3), (4)), in inertial components, moment rows first:

    M_i abar_i = f_i^c + f_i^t + f_i^k,
    M_i   = [[I_i, m rho_S~], [m rho_S~^T, m E]],
    f_i^c = [-omega~ I_i omega; -m omega~ omega~ rho_S],
    f_i^t = [rho_S x m g; m g]            (gravity, the only applied load here)

with ``I_i = A I_O A^T`` the inertia about O_i and ``rho_S = A c`` the centre of mass
(``I_O``, ``c`` in body axes: :class:`~flexmbs.bodies.rigid.RigidBody`).
"""
from __future__ import annotations

import numpy as np

from flexmbs.kinematics.rotation import tilde


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x b`` of two 3-vectors (without ``np.cross``'s overhead)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def body_mass(body, A: np.ndarray) -> np.ndarray:
    """``M_i`` (6, 6) of a rigid body with rotation ``A``."""
    m, rho_S = body.m, A @ body.com
    M = np.zeros((6, 6))
    M[:3, :3] = A @ body.I_O @ A.T
    M[:3, 3:] = m * tilde(rho_S)
    M[3:, :3] = M[:3, 3:].T
    M[3:, 3:] = m * np.eye(3)
    return M


def body_loads(body, A: np.ndarray, omega: np.ndarray, gravity: np.ndarray) -> np.ndarray:
    """``f_i^c + f_i^t`` (6,): the d'Alembert and gravity wrenches about O_i."""
    m, rho_S = body.m, A @ body.com
    I_i = A @ body.I_O @ A.T
    return np.concatenate([-cross(omega, I_i @ omega) + cross(rho_S, m * gravity),
                           -m * cross(omega, cross(omega, rho_S)) + m * gravity])
