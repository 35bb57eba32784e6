"""Compiled (numba) residual of a whole system on an affine kinematic manifold.

Implicit Newmark-type integrators (generalized-α) solve for ``x = [q; lam~]`` with
velocities and accelerations affine in ``q``: ``qd = v0 + gamma' (q - q0)``,
``qdd = w0 + beta' (q - q0)``, multipliers ``lam = beta' lam~``, and the equilibrium rows
divided by ``beta'``.  For a system whose bodies are all floating frames (rigid or
flexible, :mod:`flexmbs.bodies.pack`) and whose constraint rows are all label rows and
normalisations (:class:`flexmbs.system.stacked.StackedRows`), one call gives

    F(x) = [ (r_bodies(q, qd, qdd) + G_A^T lam) / beta';  g_A(q) ],

``A`` the active rows, together with all rows ``g``, ``G`` (dense) and the marker frames
``C``, ``D`` that the Newton matrix reuses.  Force elements are added by the caller.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from flexmbs.bodies.ffrf_kernel import bodies_residual
from flexmbs.kinematics.frame_kernel import stacked_rows


@njit(cache=True)
def affine_residual(x, q0, v0, w0, gp, bp, gravity, active, n_rows,
                    b_off, b_nq, b_m, b_stiff, b_ptr, lin0, lin_q, I2, lin_qd, lin_qdd, C_t,
                    K_e, K2, K3,
                    C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb, kc, src, dst, norm_rows,
                    norm_idx, wd_row, wd_lo, wd_n, wd_w, wd_f):  # pragma: no cover - compiled
    """``(F, g, G, C, D, finite)`` of the module docstring (``finite``: all of ``F`` is,
    as a finite sum has finite terms), drive rows included (``wd_*``: the time weights of
    :meth:`flexmbs.system.stacked.StackedRows.drive_weights`); after ``n_rows`` come the
    arguments of
    ``bodies_residual`` (after the state and gravity) and of ``stacked_rows`` (after
    ``q``), flat (numba types a tuple argument in Python at every call, which is slow)."""
    n = q0.shape[0]
    q = x[:n].copy()
    qd = np.empty(n)
    qdd = np.empty(n)
    for i in range(n):
        dq = q[i] - q0[i]
        qd[i] = v0[i] + gp * dq
        qdd[i] = w0[i] + bp * dq
    r = bodies_residual(q, qd, qdd, gravity, b_off, b_nq, b_m, b_stiff, b_ptr, lin0, lin_q, I2,
                        lin_qd, lin_qdd, C_t, K_e, K2, K3)
    g, G, C, D, p, dp = stacked_rows(q, C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb, kc,
                                     src, dst, norm_rows, norm_idx, n_rows)
    o = 0
    for d in range(wd_row.shape[0]):          # drive rows: w(t) . p + f(t), gradient w . dp
        row = wd_row[d]
        g[row] = wd_f[d]
        for j in range(wd_n[d]):
            wj = wd_w[o + j]
            g[row] += wj * p[wd_lo[d] + j]
            for c in range(dp.shape[1]):
                G[row, c] += wj * dp[wd_lo[d] + j, c]
        o += wd_n[d]
    m = active.shape[0]
    F = np.empty(n + m)
    for k in range(m):
        lk = bp * x[n + k]
        row = active[k]
        if lk != 0.0:
            for j in range(n):
                r[j] += lk * G[row, j]
        F[n + k] = g[row]
    total = 0.0
    for j in range(n):
        F[j] = r[j] / bp
    for j in range(n + m):
        total += F[j]
    return F, g, G, C, D, np.isfinite(total)
