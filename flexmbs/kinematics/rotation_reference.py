"""Numpy reference of :mod:`flexmbs.kinematics.rotation_kernel` (same names, same
arguments): the Euler-parameter algebra of :mod:`flexmbs.kinematics.rotation`, with the
derivative ``Te`` from the quadratic form ``A_kl(e) = e^T T_A[k, l] e`` instead of the
kernel's closed-form table:

    A(e) = A_of(e),   Te[k, l] = 2 T_A[k, l] e,   2 L(e) v,   L(e),   R_L(v),   tilde(a),   a x b.
"""
from __future__ import annotations

import numpy as np

from flexmbs.kinematics import rotation


def rotation_matrix(e0, x, y, z) -> np.ndarray:
    """``A(e)`` (3, 3)."""
    return rotation.A_of(np.array([e0, x, y, z], dtype=float))


def rotation_entries(e0, x, y, z) -> tuple:
    """The nine entries of ``A(e)``, row by row."""
    return tuple(float(a) for a in rotation_matrix(e0, x, y, z).ravel())


def rotation_and_derivative(e0, x, y, z) -> tuple[np.ndarray, np.ndarray]:
    """``A(e)`` (3, 3) and ``Te[k, l, a] = dA_kl/de_a = 2 (T_A[k, l] e)_a`` (3, 3, 4)."""
    e = np.array([e0, x, y, z], dtype=float)
    return rotation.A_of(e), 2.0 * (rotation.T_A @ e)


def two_L(e0, x, y, z, a, b, c, d) -> np.ndarray:
    """``2 L(e) v`` (3,) for ``v = (a, b, c, d)``."""
    return 2.0 * (L_matrix(e0, x, y, z) @ np.array([a, b, c, d], dtype=float))


def L_matrix(e0, x, y, z) -> np.ndarray:
    """``L(e)`` (3, 4)."""
    return rotation.L_of(np.array([e0, x, y, z], dtype=float))


def LT_matrix(a, b, c) -> np.ndarray:
    """``R_L(v)`` (4, 4) with ``L(e)^T v = R_L(v) e`` for ``v = (a, b, c)``."""
    return rotation.LT_matrix(np.array([a, b, c], dtype=float))


def tilde(a) -> np.ndarray:
    """Skew matrix (3, 3) with ``tilde(a) b = a x b``."""
    return rotation.tilde(np.asarray(a, dtype=float))


def cross(a, b) -> np.ndarray:
    """``a x b`` (3,)."""
    return np.cross(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
