"""Compiled (numba) block maxima for the Newton increment test of :mod:`._newton`."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def block_maxima(dx, x, f, bounds, alg0, d1, eps):  # pragma: no cover - compiled
    """The quantities of the increment test: ``d_b = max |dx|`` and ``max |x|`` over each
    block ``bounds[b]:bounds[b + 1]`` (a NaN is kept, ``np.max`` semantics, so a
    non-finite increment never passes), ``max |f[alg0:]|`` (0 if ``alg0 < 0``), whether
    every ``d_b <= eps max |x_b|`` (round-off level), and ``max_b d_b / d1_b`` against the
    first increments ``d1`` (``0/0 = 0``, ``d/0 = inf``)."""
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
    roundoff = True
    ratio = 0.0
    for b in range(nb):
        if not d[b] <= eps * xm[b]:
            roundoff = False
        if d[b] != 0.0 or d[b] != d[b]:
            q = d[b] / d1[b] if d1[b] > 0.0 else np.inf
            if not q <= ratio:
                ratio = q
    return d, xm[0], fm, roundoff, ratio
