"""Kinetic, gravity and strain energies of the flexible bodies of a system (THEORY §2.3,
§2.8), each in one call.

For a :class:`~flexmbs.bodies.flexible.FlexibleBody` with ``q_b = [r; e; q_e]``,
``v = A(e)^T rd``, ``omega' = 2 L(e) ed`` and ``m c = s0 + C_t^T q_e``:

    T   = 1/2 m |rd|^2 + v . (omega' x m c) + v . C_t^T qd_e + 1/2 omega' . I(q_e) omega'
          + qd_e . C_r(q_e) omega' + 1/2 qd_e . M_e qd_e,
    V_g = -g . (m r + A(e) m c),
    V_e = 1/2 q_e . K_e q_e + 1/3 q_e . (K2 : q_e q_e) + 1/8 pi(q_e) . H_p pi(q_e),

the last two terms with the geometric stiffening only.  ``T`` is ``1/2 z^T M(q_e) z +
1/2 m (|rd|^2 - |v|^2)``, ``z = [v; omega'; qd_e]``, written block by block; the body's
:meth:`~flexmbs.bodies.flexible.FlexibleBody.kinetic_energy`,
:meth:`~flexmbs.bodies.flexible.FlexibleBody.potential_energy` and
:meth:`~flexmbs.bodies.flexible.FlexibleBody.elastic_energy` (through ``M(q_e)``) stay
the reference of both :func:`flexible_energies` (numpy) and its compiled form
:func:`flexmbs.bodies.flexible_set_kernel.flexible_energies`.
"""
from __future__ import annotations

import numpy as np

from flexmbs.bodies import flexible_set_kernel
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.bodies.rigid_set import TAk, TLk, cross, rotation_matrices
from flexmbs.compiled import arg, use_compiled
from flexmbs.reduction.invariants import InvariantPolynomials
from flexmbs.reduction.stiffening import pair_vector


def energy_args(body: FlexibleBody) -> tuple:
    """The constant arguments of :func:`flexible_energies` after ``(q, qd, gravity)``:
    ``(m, s0, C_t, I0, I1, I2, C_r0, C_r1_l, M_e, K_e, K2, H_p, stiff)``, laid out as
    the kernel's docstring says (the body's invariant polynomials, copied once)."""
    b, n = body.body, body.n_q
    p = InvariantPolynomials(b)
    stiff = body.uses_stiffening
    K2, H_p = (arg(x) for x in body.kernel_args()[8:10])   # (0, 0) without stiffening
    return (float(b.m), arg(b.s0).reshape(3), arg(b.C_t).reshape(n, 3),
            arg(b.I0).reshape(9), arg(p.I1).reshape(n, 9), arg(p.I2).reshape(n, 9 * n),
            arg(b.C_r0).reshape(n, 3), arg(p.C_r1_l).reshape(n, 3 * n),
            arg(b.M_e).reshape(n, n), arg(b.K_e).reshape(n, n),
            K2, H_p, int(stiff))


class FlexibleSet:
    """The bodies of ``bodies`` that are exactly :class:`~flexmbs.bodies.flexible.
    FlexibleBody` (``starts``: each body's first coordinate in ``q``, same order)."""

    def __init__(self, bodies, starts):
        chosen = [(b, s) for b, s in zip(bodies, starts) if type(b) is FlexibleBody]
        self.names = frozenset(b.name for b, _ in chosen)
        self.slices = [slice(s, s + b.n_coords) for b, s in chosen]
        self.args = [energy_args(b) for b, _ in chosen]

    def __contains__(self, body) -> bool:
        return body.name in self.names

    def energies(self, q: np.ndarray, qd: np.ndarray, gravity: np.ndarray) \
            -> tuple[float, float, float]:
        """``(T, V_g, V_e)`` [J] summed over the set's bodies (module docstring): the
        compiled :func:`flexmbs.bodies.flexible_set_kernel.flexible_energies`, or its
        reference :func:`flexible_energies` (``FLEXMBS_KERNELS=reference``)."""
        fn = flexible_set_kernel.flexible_energies if use_compiled() else flexible_energies
        g = arg(gravity)
        T = V = W = 0.0
        for s, a in zip(self.slices, self.args):
            t, v, w = fn(arg(q[s]), arg(qd[s]), g, *a, TLk, TAk)
            T += t
            V += v
            W += w
        return float(T), float(V), float(W)


def flexible_energies(q, qd, gravity, m, s0, C_t, I0, I1, I2, C_r0, C_r1_l, M_e, K_e,
                      K2, H_p, stiff, TLk, TAk) -> tuple[float, float, float]:
    """``(T, V_g, V_e)`` [J] of one flexible body (module docstring), in numpy: the
    reference of :func:`flexmbs.bodies.flexible_set_kernel.flexible_energies` (same
    arguments)."""
    n = q.size - 7
    e, qe, qde, rd = q[3:7], q[7:], qd[7:], qd[0:3]
    A = rotation_matrices(e[None, :])[0]
    w = 2.0 * (e @ TLk).reshape(3, 4) @ qd[3:7]
    v = A.T @ rd
    mc = s0 + qe @ C_t
    I = (I0 + qe @ I1 + np.einsum("k,l,klx->x", qe, qe, I2.reshape(n, n, 9))).reshape(3, 3)
    C_r = C_r0 + (qe @ C_r1_l).reshape(n, 3)
    T = 0.5 * m * rd @ rd + v @ (cross(w[None], mc[None])[0] + qde @ C_t) \
        + 0.5 * w @ I @ w + qde @ (C_r @ w) + 0.5 * qde @ M_e @ qde
    V_g = -gravity @ (m * q[0:3] + A @ mc)
    V_e = 0.5 * qe @ K_e @ qe
    if stiff:
        pi = pair_vector(qe)
        V_e += qe @ ((K2 @ qe).reshape(n, n) @ qe) / 3.0 + pi @ (H_p @ pi) / 8.0
    return float(T), float(V_g), float(V_e)
