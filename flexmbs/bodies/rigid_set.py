"""Kinetic and gravity energies of many rigid bodies at once (THEORY §2.2).

For rigid bodies ``b`` with coordinates ``q_b = [r; e]`` (their first coordinates at
``start_b``), mass ``m``, centre of mass ``c`` and inertia ``I_O`` about the frame origin
(body components), all at once:

    omega' = 2 L(e) ed,
    T = sum_b 1/2 m |rd|^2 + m rd . A(e) (omega' x c) + 1/2 omega' . I_O omega',
    V_g = sum_b -m g . (r + A(e) c),

the sums of :meth:`RigidBody.kinetic_energy <flexmbs.bodies.rigid.RigidBody.
kinetic_energy>` and :meth:`~flexmbs.bodies.rigid.RigidBody.potential_energy`, which stay
the reference.
"""
from __future__ import annotations

import numpy as np

from flexmbs.bodies import rigid_set_kernel
from flexmbs.bodies.rigid import RigidBody
from flexmbs.compiled import arg, use_compiled
from flexmbs.kinematics.rotation import L_BASIS, T_A

_I, _J = np.array([1, 2, 0]), np.array([2, 0, 1])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x b`` row by row, ``(n, 3)`` (without :func:`numpy.cross`'s axis handling)."""
    return a.take(_I, 1) * b.take(_J, 1) - a.take(_J, 1) * b.take(_I, 1)


#: ``A(e) = sum_kl T_A[:, :, k, l] e_k e_l`` as (4, 36) and ``L(e) = sum_k e_k L_BASIS[k]``
#: as (4, 12): ``A(e) = (e @ (e @ TAk).reshape(4, 9)).reshape(3, 3)``, ``L(e) = (e @ TLk)
#: .reshape(3, 4)`` (over leading axes of ``e``)
TAk = np.moveaxis(T_A, (2, 3), (0, 1)).reshape(4, 36)
TLk = L_BASIS.reshape(4, 12)


def rotation_matrices(e: np.ndarray) -> np.ndarray:
    """``A(e)`` (n, 3, 3) of Euler parameters ``e`` (n, 4) (:func:`flexmbs.kinematics.
    rotation.A_of` row by row)."""
    n = len(e)
    return (e[:, None, :] @ (e @ TAk).reshape(n, 4, 9)).reshape(n, 3, 3)


class RigidSet:
    """The bodies of ``bodies`` that are exactly :class:`~flexmbs.bodies.rigid.RigidBody`
    (``starts``: each body's first coordinate in ``q``, same order)."""

    def __init__(self, bodies, starts):
        chosen = [(b, s) for b, s in zip(bodies, starts) if type(b) is RigidBody]
        self.names = frozenset(b.name for b, _ in chosen)
        self.m = np.array([b.m for b, _ in chosen], dtype=float)
        self.c = np.array([b.com for b, _ in chosen], dtype=float).reshape(-1, 3)
        self.I_O = np.array([b.I_O for b, _ in chosen], dtype=float).reshape(-1, 3, 3)
        self.cols = np.array([s + np.arange(7) for _, s in chosen], dtype=np.int64).reshape(-1, 7)

    def __contains__(self, body) -> bool:
        return body.name in self.names

    def energies(self, q: np.ndarray, qd: np.ndarray, gravity: np.ndarray) -> tuple[float, float]:
        """``(T, V_g)`` [J] of the set's bodies (module docstring): the compiled
        :func:`flexmbs.bodies.rigid_set_kernel.rigid_energies`, or its reference
        :func:`rigid_energies` (``FLEXMBS_KERNELS=reference``)."""
        if not self.m.size:
            return 0.0, 0.0
        fn = rigid_set_kernel.rigid_energies if use_compiled() else rigid_energies
        T, V = fn(arg(q), arg(qd), self.cols, self.m, self.c, self.I_O, arg(gravity),
                  TLk, TAk)
        return float(T), float(V)


def rigid_energies(q, qd, cols, m, c, I_O, gravity, TLk, TAk) -> tuple[float, float]:
    """``(T, V_g)`` [J] of the rigid bodies with coordinates ``q[cols[b]]`` (module
    docstring), in numpy: the reference of :func:`flexmbs.bodies.rigid_set_kernel.
    rigid_energies`."""
    x, xd = q[cols], qd[cols]
    B = len(m)
    e, rd = x[:, 3:7], xd[:, 0:3]
    w = 2.0 * ((e @ TLk).reshape(B, 3, 4) @ xd[:, 3:7, None])[:, :, 0]
    A = rotation_matrices(e)
    Awc = (A @ cross(w, c)[:, :, None])[:, :, 0]
    Iw = (I_O @ w[:, :, None])[:, :, 0]
    T = (0.5 * m[:, None] * rd * rd + m[:, None] * rd * Awc + 0.5 * w * Iw).sum()
    Ac = (A @ c[:, :, None])[:, :, 0]
    V = -(m * ((x[:, 0:3] + Ac) @ gravity)).sum()
    return float(T), float(V)
