"""Compiled (numba) predictor and update of one generalized-α step (:mod:`.genalpha`).

With ``q0 = q_n + h qd_n + h^2 (1/2 - beta) a_n``, ``v0 = qd_n + h (1 - gamma) a_n`` and
``w0 = (alpha_m a_n - alpha_f qdd_n) / (1 - alpha_f)`` the step's velocities and
accelerations are affine in the unknown ``q_{n+1}``: ``qd = v0 + gamma' (q - q0)``,
``qdd = w0 + beta' (q - q0)``.  The Newton start is the predictor ``qdd_{n+1} = qdd_n``:
``a* = (qdd_n - alpha_m a_n) / (1 - alpha_m)``, ``x0 = [q0 + h^2 beta a*; lam_n / beta']``.
After the solve :func:`update` applies the update formulas.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def predict(q, qd, qdd, a, lam, h, alpha_m, alpha_f, beta, gamma, bp, q0, v0, w0,
            x0):  # pragma: no cover - compiled
    """``q0, v0, w0, x0`` of the module docstring, written into the arrays given (a
    compiled function's returned arrays cost a Python object each)."""
    n, m = q.shape[0], lam.shape[0]
    c1, c2 = h * h * (0.5 - beta), h * (1.0 - gamma)
    for i in range(n):
        q0[i] = q[i] + h * qd[i] + c1 * a[i]
        v0[i] = qd[i] + c2 * a[i]
        w0[i] = (alpha_m * a[i] - alpha_f * qdd[i]) / (1.0 - alpha_f)
        a_pred = (qdd[i] - alpha_m * a[i]) / (1.0 - alpha_m)
        x0[i] = q[i] + h * qd[i] + h * h * ((0.5 - beta) * a[i] + beta * a_pred)
    for i in range(m):
        x0[n + i] = lam[i] / bp


@njit(cache=True)
def update(x, q_n, qd_n, qdd_n, a_n, h, alpha_m, alpha_f, beta, gamma,
           bp):  # pragma: no cover - compiled
    """``(q, qd, qdd, a, lam)`` at ``t_{n+1}`` from the solution ``x = [q; lam~]`` by the
    update formulas themselves (:mod:`.genalpha`), in their order of operations:
    ``a = (q - q_n - h qd_n - h^2 (1/2 - beta) a_n) / (beta h^2)``, ``qd = qd_n +
    h (1 - gamma) a_n + h gamma a``, ``qdd = ((1 - alpha_m) a + alpha_m a_n - alpha_f
    qdd_n) / (1 - alpha_f)`` (exact to round-off even for very stiff modes, where ``a``
    is many orders larger than ``q``)."""
    n = q_n.shape[0]
    m = x.shape[0] - n
    q = x[:n].copy()
    qd = np.empty(n)
    qdd = np.empty(n)
    a = np.empty(n)
    lam = np.empty(m)
    for i in range(n):
        a[i] = (q[i] - q_n[i] - h * qd_n[i] - h * h * (0.5 - beta) * a_n[i]) / (beta * h * h)
        qd[i] = qd_n[i] + h * (1.0 - gamma) * a_n[i] + h * gamma * a[i]
        qdd[i] = ((1.0 - alpha_m) * a[i] + alpha_m * a_n[i] - alpha_f * qdd_n[i]) \
            / (1.0 - alpha_f)
    for i in range(m):
        lam[i] = x[n + i] * bp
    return q, qd, qdd, a, lam


@njit(cache=True)
def update_into(x, q, qd, qdd, a, lam, h, alpha_m, alpha_f, beta, gamma,
                bp):  # pragma: no cover - compiled
    """:func:`update` written over the state ``(q, qd, qdd, a, lam)`` at ``t_n`` (the same
    formulas in the same order; each row's old values read before it is written): no
    allocation (the compiled step loop, :mod:`.steps_kernel`)."""
    n = q.shape[0]
    for i in range(n):
        q_n, qd_n, qdd_n, a_n = q[i], qd[i], qdd[i], a[i]
        qi = x[i]
        ai = (qi - q_n - h * qd_n - h * h * (0.5 - beta) * a_n) / (beta * h * h)
        q[i] = qi
        a[i] = ai
        qd[i] = qd_n + h * (1.0 - gamma) * a_n + h * gamma * ai
        qdd[i] = ((1.0 - alpha_m) * ai + alpha_m * a_n - alpha_f * qdd_n) / (1.0 - alpha_f)
    for i in range(lam.shape[0]):
        lam[i] = x[n + i] * bp


def warm() -> None:
    """Compile :func:`predict` and :func:`update` now, with the one signature every call
    uses (C-contiguous float64 arrays, float scalars): run once by the first import of an
    installation (:mod:`flexmbs.kernel_cache`), as the other kernel modules are compiled
    by their C callbacks then."""
    z = np.zeros(1)
    predict(z, z, z, z, z, 0.1, 0.5, 0.5, 0.25, 0.5, 1.0, np.zeros(1), np.zeros(1),
            np.zeros(1), np.zeros(2))
    update(np.zeros(2), z, z, z, z, 0.1, 0.5, 0.5, 0.25, 0.5, 1.0)
