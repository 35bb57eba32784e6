"""Helpers for force elements with internal states: the assembled tangent against
central differences of the assembled residual, and convergence slopes."""
from __future__ import annotations

import numpy as np


def check_tangent(model, rng, *, scale=1e-2, rtol=1e-6, atol=1e-6):
    """``(K, C, M)`` of the assembled system against central differences of its residual
    ``r(q, qd, qdd, 0, t)`` at a random state near the initial one."""
    asm = model.assemble()
    n = asm.n_q
    q = asm.normalize(asm.initial_q() + scale * rng.normal(size=n))
    qd, qdd = rng.normal(size=n), rng.normal(size=n)
    lam, t = np.zeros(asm.n_lam), 0.3
    K, C, M = (A.toarray() for A in asm.tangent(q, qd, qdd, lam, t))
    h = 1e-6
    for A, which in ((K, 0), (C, 1), (M, 2)):
        fd = np.empty((n, n))
        for k in range(n):
            args_p = [q.copy(), qd.copy(), qdd.copy()]
            args_m = [q.copy(), qd.copy(), qdd.copy()]
            args_p[which][k] += h
            args_m[which][k] -= h
            fd[:, k] = (asm.residual(*args_p, lam, t) - asm.residual(*args_m, lam, t)) / (2 * h)
        np.testing.assert_allclose(A, fd, rtol=rtol, atol=atol * max(1.0, np.abs(fd).max()))
    return asm


def slope(dts, errors) -> float:
    """Least-squares slope of ``log(error)`` against ``log(dt)``."""
    return float(np.polyfit(np.log(dts), np.log(errors), 1)[0])
