"""Compiled (numba) energies of one flexible body in the floating frame: one call instead
of the mass matrix ``M(q_e)``, ``A(e)`` twice and some thirty numpy calls.  Its numpy
reference is :func:`flexmbs.bodies.flexible_set.flexible_energies` (same arguments;
``FLEXMBS_KERNELS=reference`` runs it; ``tests/bodies/test_flexible_energies.py``
compares them).  With ``q_b = [r; e; q_e]``, ``v = A(e)^T rd``, ``omega' = 2 L(e) ed``,
``m c = s0 + C_t^T q_e``:

    T   = 1/2 m |rd|^2 + v . (omega' x m c) + v . C_t^T qd_e + 1/2 omega' . I(q_e) omega'
          + qd_e . C_r(q_e) omega' + 1/2 qd_e . M_e qd_e,
    V_g = -g . (m r + A(e) m c),
    V_e = 1/2 q_e . K_e q_e [+ 1/3 q_e . (K2 : q_e q_e) + 1/8 pi(q_e) . H_p pi(q_e)],

``1/2 z^T M(q_e) z + 1/2 m (|rd|^2 - |v|^2)`` with ``z = [v; omega'; qd_e]`` written out
block by block (:meth:`FlexibleBody.kinetic_energy <flexmbs.bodies.flexible.
FlexibleBody.kinetic_energy>`), ``I(q_e) = I0 + q_k I1_k + q_k q_l I2_kl``, ``C_r(q_e) =
C_r0 + q_l C_r1_l``; the strain energy's stiffening terms only when ``stiff``
(:meth:`~flexmbs.bodies.flexible.FlexibleBody.elastic_energy`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from flexmbs.bodies.rigid_set_kernel import A_and_omega_into


@njit(cache=True)
def flexible_energies(q, qd, gravity, m, s0, C_t, I0, I1, I2, C_r0, C_r1_l, M_e, K_e,
                      K2, H_p, stiff, TLk, TAk):  # pragma: no cover
    """``(T, V_g, V_e)`` [J] of one flexible body (module docstring).  Shapes (``n =
    n_q``): ``q, qd`` (7 + n,), ``C_t`` (n, 3), ``I0`` (9,), ``I1`` (n, 9), ``I2`` (n,
    9 n) as ``[k, 9 l + ab]``, ``C_r0`` (n, 3), ``C_r1_l`` (n, 3 n) as ``[l, 3 k + j]``,
    ``M_e, K_e`` (n, n), ``K2`` (n n, n) as ``[n k + a, b]``, ``H_p`` (n_p, n_p) (both
    (0, 0) unless ``stiff``), ``TLk`` (4, 12), ``TAk`` (4, 36) as in :mod:`flexmbs.bodies.
    rigid_set`."""
    n = q.size - 7
    e = q[3:7]
    ed = qd[3:7]
    qe = q[7:]
    qde = qd[7:]
    A = np.empty((3, 3))
    w = np.empty(3)
    A_and_omega_into(e, ed, TLk, TAk, A, w)      # A(e), omega' = 2 L(e) ed
    v = np.empty(3)
    mc = np.empty(3)
    Ctqd = np.empty(3)
    for i in range(3):
        v[i] = A[0, i] * qd[0] + A[1, i] * qd[1] + A[2, i] * qd[2]
        a = s0[i]
        b = 0.0
        for k in range(n):
            a += C_t[k, i] * qe[k]
            b += C_t[k, i] * qde[k]
        mc[i] = a
        Ctqd[i] = b
    I = np.empty(9)
    for ab in range(9):                         # I(q_e)
        s = I0[ab]
        for k in range(n):
            t = I1[k, ab]
            for l in range(n):
                t += I2[k, 9 * l + ab] * qe[l]
            s += qe[k] * t
        I[ab] = s
    T = 0.0
    for i in range(3):
        T += 0.5 * m * qd[i] * qd[i]
    wmc0 = w[1] * mc[2] - w[2] * mc[1]
    wmc1 = w[2] * mc[0] - w[0] * mc[2]
    wmc2 = w[0] * mc[1] - w[1] * mc[0]
    T += v[0] * (wmc0 + Ctqd[0]) + v[1] * (wmc1 + Ctqd[1]) + v[2] * (wmc2 + Ctqd[2])
    for a in range(3):
        T += 0.5 * w[a] * (I[3 * a] * w[0] + I[3 * a + 1] * w[1] + I[3 * a + 2] * w[2])
    for k in range(n):                          # qd_e . (C_r w + 1/2 M_e qd_e)
        s = 0.0
        for j in range(3):
            Cr = C_r0[k, j]
            for l in range(n):
                Cr += qe[l] * C_r1_l[l, 3 * k + j]
            s += Cr * w[j]
        for l in range(n):
            s += 0.5 * M_e[k, l] * qde[l]
        T += qde[k] * s
    V_g = 0.0
    for i in range(3):
        V_g -= gravity[i] * (m * q[i] + A[i, 0] * mc[0] + A[i, 1] * mc[1] + A[i, 2] * mc[2])
    V_e = 0.0
    for k in range(n):
        s = 0.0
        for l in range(n):
            s += K_e[k, l] * qe[l]
        V_e += 0.5 * qe[k] * s
    if stiff:
        V2 = 0.0
        for k in range(n):
            for a in range(n):
                s = 0.0
                for b in range(n):
                    s += K2[n * k + a, b] * qe[b]
                V2 += qe[k] * qe[a] * s
        n_p = n * (n + 1) // 2
        pi = np.empty(n_p)
        p = 0
        for a in range(n):                      # pi(q)_(a, b), a <= b, row-major
            for b in range(a, n):
                pi[p] = (1.0 if a == b else 2.0) * qe[a] * qe[b]
                p += 1
        V3 = 0.0
        for p in range(n_p):
            s = 0.0
            for r in range(n_p):
                s += H_p[p, r] * pi[r]
            V3 += pi[p] * s
        V_e += V2 / 3.0 + V3 / 8.0
    return T, V_g, V_e


def warm() -> None:
    """Compile :func:`flexible_energies` now with the one signature every call uses (a
    body without elastic coordinates, so no elastic loop runs)."""
    z = np.zeros(7)
    z[3] = 1.0
    e = np.zeros((0, 0))
    flexible_energies(z, np.zeros(7), np.zeros(3), 1.0, np.zeros(3), np.zeros((0, 3)),
                      np.zeros(9), np.zeros((0, 9)), e, np.zeros((0, 3)), e, e, e, e, e, 0,
                      np.zeros((4, 12)), np.zeros((4, 36)))
