"""Euler parameters (unit quaternions) and the tilde operator (THEORY §0, §3.3).

Euler parameters ``e = (e0, e1, e2, e3)`` with ``e0`` the scalar part.  With
``eps = (e1, e2, e3)``:

    A(e) = (e0^2 - eps.eps) E + 2 eps eps^T + 2 e0 tilde(eps)       (body -> inertial)
    G(e) = [-eps, tilde(eps) + e0 E],   omega  = 2 G(e) ed   (inertial components)
    L(e) = [-eps, -tilde(eps) + e0 E],  omega' = 2 L(e) ed   (body components)

``A = G L^T``; both ``G`` and ``L`` are linear in ``e`` and ``L(a) b = -L(b) a``.
Because ``A`` is quadratic in ``e``, ``A(e)_{kl} = e^T T_{kl} e`` with the constant
tensor ``T`` (3, 3, 4, 4) below, which gives exact first and second derivatives.

The compiled kernels use the same algebra from :mod:`flexmbs.kinematics.rotation_kernel`
(numpy reference :mod:`flexmbs.kinematics.rotation_reference`, built on this module).
"""
from __future__ import annotations

import numpy as np


def as_floats(a) -> list:
    """The entries of a short vector as Python floats (scalar arithmetic on them is
    several times faster than on numpy scalars)."""
    return a.tolist() if type(a) is np.ndarray else [float(x) for x in a]


def tilde(a: np.ndarray) -> np.ndarray:
    """Skew matrix with ``tilde(a) @ b == cross(a, b)``."""
    x, y, z = as_floats(a)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def A_of(e: np.ndarray) -> np.ndarray:
    """Rotation matrix ``A(e)`` (body -> inertial); exact for unit ``e``."""
    e0, x, y, z = as_floats(e)
    return np.array([
        [e0*e0 + x*x - y*y - z*z, 2*(x*y - e0*z), 2*(x*z + e0*y)],
        [2*(x*y + e0*z), e0*e0 - x*x + y*y - z*z, 2*(y*z - e0*x)],
        [2*(x*z - e0*y), 2*(y*z + e0*x), e0*e0 - x*x - y*y + z*z],
    ])


def G_of(e: np.ndarray) -> np.ndarray:
    """``G(e)`` (3x4): angular velocity in inertial components ``omega = 2 G ed``."""
    e0, x, y, z = as_floats(e)
    return np.array([[-x, e0, -z, y], [-y, z, e0, -x], [-z, -y, x, e0]])


def L_of(e: np.ndarray) -> np.ndarray:
    """``L(e)`` (3x4): angular velocity in body components ``omega' = 2 L ed``."""
    e0, x, y, z = as_floats(e)
    return np.array([[-x, e0, z, -y], [-y, -z, e0, x], [-z, y, -x, e0]])


def _quadratic_tensor() -> np.ndarray:
    unit = np.eye(4)
    T = np.zeros((3, 3, 4, 4))
    for a in range(4):
        T[:, :, a, a] = A_of(unit[a])
        for b in range(a + 1, 4):
            Tab = 0.5 * (A_of(unit[a] + unit[b]) - A_of(unit[a]) - A_of(unit[b]))
            T[:, :, a, b] = T[:, :, b, a] = Tab
    return T


T_A = _quadratic_tensor()                       # A(e)_{kl} = e^T T_A[k,l] e
G_BASIS = np.stack([G_of(u) for u in np.eye(4)])  # G(e) = sum_a e_a G_BASIS[a]
L_BASIS = np.stack([L_of(u) for u in np.eye(4)])


def Q_of(u: np.ndarray) -> np.ndarray:
    """``Q(u)`` (3,4,4) with ``(A(e) u)_k = e^T Q_k e``: d/de = 2 Q_k e, d2/de2 = 2 Q_k."""
    return np.einsum("klab,l->kab", T_A, u)


def QT_of(w: np.ndarray) -> np.ndarray:
    """``Q'(w)`` (3,4,4) with ``(A(e)^T w)_l = e^T Q'_l e``."""
    return np.einsum("klab,k->lab", T_A, w)


def GT_matrix(m: np.ndarray) -> np.ndarray:
    """4x4 ``R`` with ``G(e)^T m = R e`` (so ``d(G^T m)/de = R``):
    ``G^T m = [-m.eps; e0 m + m x eps]``, i.e. ``R = [[0, -m^T], [m, tilde(m)]]``."""
    a, b, c = as_floats(m)
    return np.array([[0.0, -a, -b, -c], [a, 0.0, -c, b], [b, c, 0.0, -a], [c, -b, a, 0.0]])


def LT_matrix(v: np.ndarray) -> np.ndarray:
    """4x4 ``R`` with ``L(e)^T v = R e``:
    ``L^T v = [-v.eps; e0 v - v x eps]``, i.e. ``R = [[0, -v^T], [v, -tilde(v)]]``."""
    a, b, c = as_floats(v)
    return np.array([[0.0, -a, -b, -c], [a, 0.0, c, -b], [b, -c, 0.0, a], [c, b, -a, 0.0]])


def e_from_matrix(R: np.ndarray) -> np.ndarray:
    """Unit Euler parameters of a rotation matrix (Shepperd's method), ``e0 >= 0``."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    cands = np.array([tr, R[0, 0], R[1, 1], R[2, 2]])
    i = int(np.argmax(cands))
    if i == 0:
        e0 = 0.5 * np.sqrt(1.0 + tr)
        e = np.array([e0, (R[2, 1] - R[1, 2]) / (4 * e0), (R[0, 2] - R[2, 0]) / (4 * e0),
                      (R[1, 0] - R[0, 1]) / (4 * e0)])
    else:
        j, k = (i % 3) + 1, ((i + 1) % 3) + 1
        ii = i
        ei = 0.5 * np.sqrt(1.0 + 2 * R[ii - 1, ii - 1] - tr)
        e = np.zeros(4)
        e[ii] = ei
        e[0] = (R[k - 1, j - 1] - R[j - 1, k - 1]) / (4 * ei)
        e[j] = (R[j - 1, ii - 1] + R[ii - 1, j - 1]) / (4 * ei)
        e[k] = (R[k - 1, ii - 1] + R[ii - 1, k - 1]) / (4 * ei)
    if e[0] < 0:
        e = -e
    return e / np.linalg.norm(e)


def matrix_from_axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' formula: rotation by ``angle`` [rad] about the unit ``axis``."""
    n = np.asarray(axis, dtype=float)
    n = n / np.linalg.norm(n)
    K = tilde(n)
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)


def frame_from_axis(axis: np.ndarray) -> np.ndarray:
    """Orthonormal frame (columns x, y, z) whose z column is ``axis`` (deterministic)."""
    z = np.asarray(axis, dtype=float)
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = helper - z * (helper @ z)
    x /= np.linalg.norm(x)
    (x0, x1, x2), (z0, z1, z2) = x.tolist(), z.tolist()
    R = np.empty((3, 3))
    R[:, 0], R[:, 2] = x, z
    R[:, 1] = (z1 * x2 - z2 * x1, z2 * x0 - z0 * x2, z0 * x1 - z1 * x0)   # y = z x x
    return R
