"""Compiled (numba) residual of a rigid floating-frame body (``n_q = 0``) in scalars:
the equations of :mod:`flexmbs.bodies.ffrf_kernel` with the elastic terms gone,

    residual = [ m (rdd - g) + A f_t;   2 L^T f_r ],
    f_t = m (alpha' x c + omega' x (omega' x c)),
    f_r = m c x (A^T (rdd - g)) + omega' x (I omega') + I alpha',

``omega' = 2 L(e) ed``, ``alpha' = 2 L(e) edd``, ``lin0 = [m c, I]`` (3 + 9).  No array is
allocated (the general kernel makes some thirty small ones per call, most of a rigid
body's time), and every sum is taken in the general kernel's order, zero terms
included, so both give the same bits; :func:`~flexmbs.bodies.ffrf_kernel.ffrf_residual`
at ``n_q = 0`` is its reference (``tests/bodies/test_compiled_kernels.py``).
"""
from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):  # pragma: no cover - compiled
    """``a x b`` as three scalars."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always")
def _two_L(e0, x, y, z, a, b, c, d):  # pragma: no cover - compiled
    """``2 L(e) v`` for ``v = (a, b, c, d)`` as three scalars."""
    return (2.0 * (-x * a + e0 * b + z * c - y * d), 2.0 * (-y * a - z * b + e0 * c + x * d),
            2.0 * (-z * a + y * b - x * c + e0 * d))


@njit(cache=True)
def rigid_residual(q, qd, qdd, g, m, lin0, out, o):  # pragma: no cover - compiled
    """The residual of the module docstring of the body with coordinates ``q[o:o + 7]``
    written into ``out[o:o + 7]``."""
    e0, x, y, z = q[o + 3], q[o + 4], q[o + 5], q[o + 6]
    A00 = e0 * e0 + x * x - y * y - z * z
    A01 = 2.0 * (x * y - e0 * z)
    A02 = 2.0 * (x * z + e0 * y)
    A10 = 2.0 * (x * y + e0 * z)
    A11 = e0 * e0 - x * x + y * y - z * z
    A12 = 2.0 * (y * z - e0 * x)
    A20 = 2.0 * (x * z - e0 * y)
    A21 = 2.0 * (y * z + e0 * x)
    A22 = e0 * e0 - x * x - y * y + z * z
    w0, w1, w2 = qdd[o] - g[0], qdd[o + 1] - g[1], qdd[o + 2] - g[2]
    d0 = A00 * w0 + A10 * w1 + A20 * w2                # A^T (rdd - g)
    d1 = A01 * w0 + A11 * w1 + A21 * w2
    d2 = A02 * w0 + A12 * w1 + A22 * w2
    om0, om1, om2 = _two_L(e0, x, y, z, qd[o + 3], qd[o + 4], qd[o + 5], qd[o + 6])
    al0, al1, al2 = _two_L(e0, x, y, z, qdd[o + 3], qdd[o + 4], qdd[o + 5], qdd[o + 6])
    # lin = lin0 + 0 (the general kernel's lin0 + q_e lin_q with no q_e)
    c0, c1, c2 = (lin0[0] + 0.0) / m, (lin0[1] + 0.0) / m, (lin0[2] + 0.0) / m
    I00, I01, I02 = lin0[3] + 0.0, lin0[4] + 0.0, lin0[5] + 0.0
    I10, I11, I12 = lin0[6] + 0.0, lin0[7] + 0.0, lin0[8] + 0.0
    I20, I21, I22 = lin0[9] + 0.0, lin0[10] + 0.0, lin0[11] + 0.0
    Iw0 = I00 * om0 + I01 * om1 + I02 * om2
    Iw1 = I10 * om0 + I11 * om1 + I12 * om2
    Iw2 = I20 * om0 + I21 * om1 + I22 * om2
    Ia0 = I00 * al0 + I01 * al1 + I02 * al2
    Ia1 = I10 * al0 + I11 * al1 + I12 * al2
    Ia2 = I20 * al0 + I21 * al1 + I22 * al2
    Go = 0.0 * om0 + 0.0 * om1 + 0.0 * om2             # G_r omega' with G_r = 0
    occ0, occ1, occ2 = _cross(om0, om1, om2, c0, c1, c2)
    a0, a1, a2 = _cross(al0, al1, al2, c0, c1, c2)
    b0, b1, b2 = _cross(om0, om1, om2, occ0, occ1, occ2)
    v0, v1, v2 = _cross(om0, om1, om2, 0.0, 0.0, 0.0)
    ft0 = m * (a0 + b0) + 0.0 + 2.0 * v0
    ft1 = m * (a1 + b1) + 0.0 + 2.0 * v1
    ft2 = m * (a2 + b2) + 0.0 + 2.0 * v2
    x0, x1, x2 = _cross(c0, c1, c2, d0, d1, d2)
    y0, y1, y2 = _cross(om0, om1, om2, Iw0, Iw1, Iw2)
    r1 = m * x0 + y0 + Ia0 + 0.0 + Go
    r2 = m * x1 + y1 + Ia1 + 0.0 + Go
    r3 = m * x2 + y2 + Ia2 + 0.0 + Go
    out[o] = m * w0 + A00 * ft0 + A01 * ft1 + A02 * ft2
    out[o + 1] = m * w1 + A10 * ft0 + A11 * ft1 + A12 * ft2
    out[o + 2] = m * w2 + A20 * ft0 + A21 * ft1 + A22 * ft2
    out[o + 3] = 2.0 * (-x * r1 - y * r2 - z * r3)     # 2 L(e)^T f_r
    out[o + 4] = 2.0 * (e0 * r1 - z * r2 + y * r3)
    out[o + 5] = 2.0 * (z * r1 + e0 * r2 - x * r3)
    out[o + 6] = 2.0 * (-y * r1 + x * r2 + e0 * r3)
