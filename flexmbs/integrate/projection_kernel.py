"""Compiled (numba) velocity projection of one output point (THEORY §8.3): the dense
``"cholesky"`` route of :func:`flexmbs.integrate.consistent.project_velocities` in one
call instead of some eight numpy and LAPACK calls on arrays of a few entries
(``G @ qd``, ``G G^T``, ``potrf``, the factor's diagonal, ``potrs``, ``G^T x``):

    r = G qd + g_t,   G G^T = L L^T,   L L^T x = r,   qd <- qd - G^T x.

It reports ``ok = False`` (and leaves the result unused) when ``G G^T`` is not positive
definite or ``min diag(L) <= ratio max diag(L)`` (:data:`~flexmbs.integrate.
consistent.CHOLESKY_RATIO`): the caller then takes the least squares, as
:func:`~flexmbs.integrate.consistent.minimum_norm` does.  Its numpy reference is
:func:`flexmbs.integrate.consistent.projected_dense` (same arguments;
``FLEXMBS_KERNELS=reference`` runs it; ``tests/integrate/test_projection_kernel.py``
compares them).  The sums are in another order than LAPACK's: the projected velocities
agree with the reference to round-off, not bit for bit.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def projected_dense(G, g_t, qd, ratio):  # pragma: no cover
    """``(qd - G^T (G G^T)^-1 (G qd + g_t), ok)`` for ``G`` (m, n) C-contiguous float
    (module docstring)."""
    m, n = G.shape
    out = qd.copy()
    if m == 0:
        return out, True
    r = np.empty(m)
    for i in range(m):
        s = g_t[i]
        for k in range(n):
            s += G[i, k] * qd[k]
        r[i] = s
    L = np.zeros((m, m))
    for i in range(m):                       # L L^T = G G^T, column by column
        for j in range(i + 1):
            s = 0.0
            for k in range(n):
                s += G[i, k] * G[j, k]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                if not s > 0.0:
                    return out, False
                L[i, i] = math.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    d_min, d_max = L[0, 0], L[0, 0]
    for i in range(1, m):
        d_min = min(d_min, L[i, i])
        d_max = max(d_max, L[i, i])
    if not d_min > ratio * d_max:
        return out, False
    x = np.empty(m)
    for i in range(m):                       # L y = r
        s = r[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(m - 1, -1, -1):           # L^T x = y
        s = x[i]
        for k in range(i + 1, m):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]
    for i in range(m):                       # qd - G^T x
        xi = x[i]
        for k in range(n):
            out[k] -= G[i, k] * xi
    return out, True


def warm() -> None:
    """Compile :func:`projected_dense` now with the one signature every call uses."""
    projected_dense(np.eye(1, 2), np.zeros(1), np.zeros(2), 1e-6)
