"""Second-order jets: a value with its gradient and Hessian over local coordinates.

A constraint, force law or sensor of a joint between bodies ``i`` and ``j`` is a function
of the local coordinate vector ``x = [q_i; q_j; t]`` (time is the last local
coordinate, so ``dg/dt``, ``d2g/dt2`` and ``d2g/dq dt`` come out of the same jet).
A :class:`Jet` carries ``v = w(x)``, ``d = dw/dx`` and, when ``order == 2``,
``h = d2w/dx2``.  The algebra below is the chain rule, e.g. for a dot product

    d(a.b) = a^T db + b^T da,   h(a.b) = sum_k (a_k h(b_k) + b_k h(a_k)) + da^T db + db^T da,

which gives constraint Jacobians ``G``, the geometric term ``d(G^T lam)/dq = sum lam_i h_i``
and the acceleration term ``gamma = xd^T h xd`` exactly.
"""
from __future__ import annotations

import numpy as np


class Jet:
    """Value ``v`` (shape S), gradient ``d`` (S + (n,)), Hessian ``h`` (S + (n, n)) or None.

    A plain class with ``__slots__`` (jets are created by the thousand per time step; a
    frozen dataclass costs several times more per construction).  Treat it as immutable.
    """

    __slots__ = ("v", "d", "h")

    def __init__(self, v: np.ndarray, d: np.ndarray, h: np.ndarray | None):
        self.v, self.d, self.h = v, d, h

    def __repr__(self) -> str:
        return f"Jet(v={self.v!r}, d={self.d!r}, h={self.h!r})"

    @property
    def n(self) -> int:
        return self.d.shape[-1]

    # -- construction ---------------------------------------------------------------
    @staticmethod
    def constant(value, n: int, order: int = 2) -> Jet:
        v = np.asarray(value, dtype=float)
        return Jet(v, np.zeros(v.shape + (n,)), np.zeros(v.shape + (n, n)) if order == 2 else None)

    @staticmethod
    def variable(index: int, value: float, n: int, order: int = 2) -> Jet:
        """The local coordinate ``x[index]`` itself (e.g. time)."""
        d = np.zeros(n)
        d[index] = 1.0
        return Jet(np.asarray(float(value)), d, np.zeros((n, n)) if order == 2 else None)

    # -- linear algebra -------------------------------------------------------------
    def __add__(self, other: Jet) -> Jet:
        if not isinstance(other, Jet):
            return Jet(self.v + other, self.d, self.h)
        return Jet(self.v + other.v, self.d + other.d, _add(self.h, other.h))

    def __sub__(self, other: Jet) -> Jet:
        if not isinstance(other, Jet):
            return Jet(self.v - other, self.d, self.h)
        return Jet(self.v - other.v, self.d - other.d, _add(self.h, None if other.h is None else -other.h))

    def __neg__(self) -> Jet:
        return Jet(-self.v, -self.d, None if self.h is None else -self.h)

    def __mul__(self, c: float) -> Jet:
        """Product with a constant scalar, or with a scalar jet (product rule)."""
        if isinstance(c, Jet):
            return mul(self, c)
        return Jet(self.v * c, self.d * c, None if self.h is None else self.h * c)

    __rmul__ = __mul__

    def __getitem__(self, k) -> Jet:
        return Jet(self.v[k], self.d[k], None if self.h is None else self.h[k])


def _add(a, b):
    if a is None or b is None:
        return None
    return a + b


def _vh(c: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``einsum("k,kij->ij", c, h)`` for a 3-vector ``c`` as one matrix product."""
    n = h.shape[-1]
    return (c @ h.reshape(3, n * n)).reshape(n, n)


def dot(a: Jet, b: Jet) -> Jet:
    """Scalar ``a . b`` of two 3-vector jets."""
    v = a.v @ b.v
    d = a.v @ b.d + b.v @ a.d
    h = None
    if a.h is not None and b.h is not None:
        cross_term = a.d.T @ b.d
        h = _vh(a.v, b.h) + _vh(b.v, a.h) + cross_term + cross_term.T
    return Jet(np.asarray(v), d, h)


def dot_const(a: Jet, c: np.ndarray) -> Jet:
    """Scalar ``a . c`` with a constant 3-vector ``c``."""
    return Jet(np.asarray(a.v @ c), c @ a.d, None if a.h is None else _vh(c, a.h))


def mul(s: Jet, w: Jet) -> Jet:
    """Product of a scalar jet ``s`` with a scalar or vector jet ``w``."""
    if s.v.ndim != 0:
        raise ValueError("mul: first factor must be a scalar jet")
    v = s.v * w.v
    d = s.v * w.d + np.multiply.outer(w.v, s.d)
    h = None
    if s.h is not None and w.h is not None:
        cross_term = w.d[..., :, None] * s.d
        h = s.v * w.h + np.multiply.outer(w.v, s.h) + cross_term + np.swapaxes(cross_term, -1, -2)
    return Jet(v, d, h)


def apply(s: Jet, f: float, f1: float, f2: float) -> Jet:
    """Scalar function of a scalar jet, given ``f(s)``, ``f'(s)``, ``f''(s)``."""
    h = None if s.h is None else f1 * s.h + f2 * np.outer(s.d, s.d)
    return Jet(np.asarray(f), f1 * s.d, h)


def norm(a: Jet) -> Jet:
    """Euclidean length of a 3-vector jet (must be non-zero)."""
    s = dot(a, a)
    r = float(np.sqrt(s.v))
    return apply(s, r, 0.5 / r, -0.25 / r**3)


def atan2(y: Jet, x: Jet) -> Jet:
    """``atan2(y, x)`` of two scalar jets."""
    r2 = float(x.v**2 + y.v**2)
    gy, gx = float(x.v) / r2, -float(y.v) / r2        # d/dy, d/dx
    d = gy * y.d + gx * x.d
    h = None
    if x.h is not None and y.h is not None:
        # second derivatives of atan2: f_yy = -2xy/r^4, f_xx = 2xy/r^4, f_xy = (y^2 - x^2)/r^4
        xv, yv = float(x.v), float(y.v)
        fyy, fxx, fxy = -2 * xv * yv / r2**2, 2 * xv * yv / r2**2, (yv**2 - xv**2) / r2**2
        h = (gy * y.h + gx * x.h + fyy * np.outer(y.d, y.d) + fxx * np.outer(x.d, x.d)
             + fxy * (np.outer(x.d, y.d) + np.outer(y.d, x.d)))
    return Jet(np.asarray(np.arctan2(y.v, x.v)), d, h)


def cross(a: Jet, b: Jet) -> Jet:
    """3-vector jet ``a x b``."""
    v = np.cross(a.v, b.v)
    d = np.cross(a.v[:, None], b.d, axis=0) + np.cross(a.d, b.v[:, None], axis=0)
    h = None
    if a.h is not None and b.h is not None:
        h = (np.cross(a.v[:, None, None], b.h, axis=0) + np.cross(a.h, b.v[:, None, None], axis=0)
             + np.cross(a.d[:, :, None], b.d[:, None, :], axis=0)
             + np.cross(a.d[:, None, :], b.d[:, :, None], axis=0))
    return Jet(v, d, h)


def rate(s: Jet, xd: np.ndarray) -> float:
    """Time derivative ``ds/dt = ds/dx . xd`` where ``xd`` includes ``dt/dt = 1`` last."""
    return s.d @ xd


def rate2(s: Jet, xd: np.ndarray, xdd: np.ndarray) -> np.ndarray:
    """Second time derivative ``ds/dx . xdd + xd^T h xd`` (``xdd`` has 0 for time)."""
    return s.d @ xdd + np.einsum("...ij,i,j->...", s.h, xd, xd)
