"""Compiled (numba) block maxima for the Newton increment test of :mod:`._newton`."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def block_maxima(dx, x, f, bounds, alg0):  # pragma: no cover - compiled
    """``max |dx|`` and ``max |x|`` over each block ``bounds[b]:bounds[b + 1]``, and
    ``max |f[alg0:]|`` (0 if ``alg0 < 0``); a NaN anywhere in a block is kept (``np.max``
    semantics), so a non-finite increment never passes the test."""
    nb = bounds.shape[0] - 1
    d = np.zeros(nb)
    xm = np.zeros(nb)
    for b in range(nb):
        for i in range(bounds[b], bounds[b + 1]):
            a = abs(dx[i])
            if a > d[b] or a != a:
                d[b] = a
            a = abs(x[i])
            if a > xm[b] or a != a:
                xm[b] = a
    fm = 0.0
    if alg0 >= 0:
        for i in range(alg0, f.shape[0]):
            a = abs(f[i])
            if a > fm or a != a:
                fm = a
    return d, xm, fm
