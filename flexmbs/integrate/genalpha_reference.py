"""numpy reference of the compiled predictor and update of one generalized-α step
(:mod:`.genalpha_kernel`, same arguments, same formulas; run with
``FLEXMBS_KERNELS=reference``, compared with the kernel in the tests)."""
from __future__ import annotations

import numpy as np


def predict(q, qd, qdd, a, lam, h, alpha_m, alpha_f, beta, gamma, bp, q0, v0, w0, x0):
    """``q0, v0, w0, x0`` of :mod:`.genalpha_kernel`, written into the arrays given."""
    n = q.shape[0]
    c1, c2 = h * h * (0.5 - beta), h * (1.0 - gamma)
    q0[:] = q + h * qd + c1 * a
    v0[:] = qd + c2 * a
    w0[:] = (alpha_m * a - alpha_f * qdd) / (1.0 - alpha_f)
    a_pred = (qdd - alpha_m * a) / (1.0 - alpha_m)
    x0[:n] = q + h * qd + h * h * ((0.5 - beta) * a + beta * a_pred)
    x0[n:] = lam / bp


def update(x, q_n, qd_n, qdd_n, a_n, h, alpha_m, alpha_f, beta, gamma, bp):
    """``(q, qd, qdd, a, lam)`` at ``t_{n+1}`` from ``x = [q; lam~]`` (the update formulas
    of :mod:`.genalpha`, in the order of operations of :func:`.genalpha_kernel.update`)."""
    n = q_n.shape[0]
    q = np.array(x[:n])
    a = (q - q_n - h * qd_n - h * h * (0.5 - beta) * a_n) / (beta * h * h)
    qd = qd_n + h * (1.0 - gamma) * a_n + h * gamma * a
    qdd = ((1.0 - alpha_m) * a + alpha_m * a_n - alpha_f * qdd_n) / (1.0 - alpha_f)
    return q, qd, qdd, a, x[n:] * bp
