"""Compiled (numba) Euler-parameter algebra of :mod:`flexmbs.kinematics.rotation`.

The helpers the compiled kernels share (:mod:`flexmbs.kinematics.frame_kernel`,
:mod:`flexmbs.bodies.ffrf_kernel`), on the scalars ``e = (e0, x, y, z)``:

    A(e)  = (e0^2 - eps.eps) E + 2 eps eps^T + 2 e0 tilde(eps)     rotation_matrix,
                                                                    rotation_entries
    Te    = dA/de, Te[k, l, a] = dA_kl/de_a                        rotation_and_derivative
    L(e)  = [-eps, -tilde(eps) + e0 E],  2 L(e) v                   L_matrix, two_L
    R_L(v) with L(e)^T v = R_L(v) e                                 LT_matrix
    tilde(a) b = a x b                                              tilde, cross

The numpy reference beside it is :mod:`flexmbs.kinematics.rotation_reference` (same
names and arguments).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def rotation_entries(e0, x, y, z):  # pragma: no cover - compiled
    """The nine entries of ``A(e)``, row by row, as scalars (no array)."""
    return (e0 * e0 + x * x - y * y - z * z, 2.0 * (x * y - e0 * z), 2.0 * (x * z + e0 * y),
            2.0 * (x * y + e0 * z), e0 * e0 - x * x + y * y - z * z, 2.0 * (y * z - e0 * x),
            2.0 * (x * z - e0 * y), 2.0 * (y * z + e0 * x), e0 * e0 - x * x - y * y + z * z)


@njit(cache=True)
def rotation_matrix(e0, x, y, z):  # pragma: no cover - compiled
    """``A(e)`` (3, 3) of :func:`flexmbs.kinematics.rotation.A_of`."""
    A = np.empty((3, 3))
    a = rotation_entries(e0, x, y, z)
    for kl in range(9):
        A[kl // 3, kl % 3] = a[kl]
    return A


@njit(cache=True)
def rotation_and_derivative(e0, x, y, z):  # pragma: no cover - compiled
    """``A(e)`` (3, 3) and ``Te[k, l, a] = dA_kl/de_a`` (3, 3, 4), both exact."""
    A = np.empty((3, 3))
    Te = np.empty((3, 3, 4))
    rotation_and_derivative_into(e0, x, y, z, A, Te)
    return A, Te


@njit(cache=True)
def rotation_and_derivative_into(e0, x, y, z, A, Te):  # pragma: no cover - compiled
    """:func:`rotation_and_derivative` written into ``A`` (3, 3) and ``Te`` (3, 3, 4)
    (no allocation: the step kernels pass work arrays)."""
    a = rotation_entries(e0, x, y, z)
    for kl in range(9):
        A[kl // 3, kl % 3] = a[kl]
    rows = ((e0, x, -y, -z), (-z, y, x, -e0), (y, z, e0, x),
            (z, y, x, e0), (e0, -x, y, -z), (-x, -e0, z, y),
            (-y, z, -e0, x), (x, e0, z, y), (e0, -x, -y, z))
    for kl in range(9):
        r = rows[kl]
        Te[kl // 3, kl % 3, 0] = 2.0 * r[0]
        Te[kl // 3, kl % 3, 1] = 2.0 * r[1]
        Te[kl // 3, kl % 3, 2] = 2.0 * r[2]
        Te[kl // 3, kl % 3, 3] = 2.0 * r[3]


@njit(cache=True, inline="always")
def two_L(e0, x, y, z, a, b, c, d):  # pragma: no cover - compiled
    """``2 L(e) v`` (3,) for ``v = (a, b, c, d)`` (``L`` of
    :func:`flexmbs.kinematics.rotation.L_of`)."""
    v = np.empty(3)
    v[0] = 2.0 * (-x * a + e0 * b + z * c - y * d)
    v[1] = 2.0 * (-y * a - z * b + e0 * c + x * d)
    v[2] = 2.0 * (-z * a + y * b - x * c + e0 * d)
    return v


@njit(cache=True)
def L_matrix(e0, x, y, z):  # pragma: no cover - compiled
    """``L(e)`` (3, 4) of :func:`flexmbs.kinematics.rotation.L_of`."""
    L = np.empty((3, 4))
    L[0, 0], L[0, 1], L[0, 2], L[0, 3] = -x, e0, z, -y
    L[1, 0], L[1, 1], L[1, 2], L[1, 3] = -y, -z, e0, x
    L[2, 0], L[2, 1], L[2, 2], L[2, 3] = -z, y, -x, e0
    return L


@njit(cache=True)
def LT_matrix(a, b, c):  # pragma: no cover - compiled
    """``R_L(v)`` (4, 4) with ``L(e)^T v = R_L(v) e`` for ``v = (a, b, c)``
    (:func:`flexmbs.kinematics.rotation.LT_matrix`)."""
    return np.array([[0.0, -a, -b, -c], [a, 0.0, c, -b], [b, -c, 0.0, a],
                     [c, b, -a, 0.0]])


@njit(cache=True)
def tilde(a):  # pragma: no cover - compiled
    """Skew matrix (3, 3) with ``tilde(a) b = a x b``."""
    T = np.zeros((3, 3))
    T[0, 1], T[0, 2] = -a[2], a[1]
    T[1, 0], T[1, 2] = a[2], -a[0]
    T[2, 0], T[2, 1] = -a[1], a[0]
    return T


@njit(cache=True, inline="always")
def cross(a, b):  # pragma: no cover - compiled
    """``a x b`` (3,)."""
    v = np.empty(3)
    v[0] = a[1] * b[2] - a[2] * b[1]
    v[1] = a[2] * b[0] - a[0] * b[2]
    v[2] = a[0] * b[1] - a[1] * b[0]
    return v
