"""LuGre bristle model of sliding friction, scaled by the normal force (THEORY §3, §7
item 28; Canudas de Wit, Olsson, Astrom, Lischinsky, IEEE TAC 40 (1995) 419-425).

A contact slips with the velocity ``v`` (``d`` components: 1 for a prismatic or
revolute joint, 2 for a cylindrical one, 3 for a spherical one) [m/s].  The bristle
deflection ``z`` (d,) [m] obeys

    zd = f(v, z) = v - sigma0 a(v) z / mu(a(v)),      a(v) = sqrt(v.v + eps^2) - eps,

and the friction force on the slip (applied as ``-F``) is

    F = N (sigma0 z + sigma1(a) zd) + c_v v,      sigma1(a) = sigma1 exp(-(a / v_d)^2),

with the normal force ``N`` [N], the bristle stiffness per unit normal force
``sigma0 = mu_s / z_s`` [1/m] (``z_s`` the pre-sliding deflection at the static limit),
the bristle damping ``sigma1`` [s/m] (acting near sticking only, below about the
velocity ``v_d`` [m/s]: the velocity-dependent damping of Canudas de Wit et al., so it
does not add a viscous impulse at the transitions of sliding; ``v_d = 0``: constant
``sigma1``), the friction coefficient ``mu(a)`` of a
:class:`~flexmbs.forces.friction_law.FrictionLaw` and its viscous coefficient ``c_v``.
``a`` is the slip speed ``|v|``, made smooth at ``v = 0`` with ``eps`` [m/s] and exactly
zero there.

Sticking: at ``v = 0``, ``zd = 0`` exactly, so a joint under a constant load
``|F| < mu_s N`` holds at ``z = F / (N sigma0)`` (``|z| < z_s``) without drift.  Steady
sliding (``zd = 0``, ``v != 0``) gives ``z = mu(a) v / (sigma0 a)`` and
``F = mu(|v|) N v / |v| + c_v v``: the Coulomb-Stribeck law.

The friction work rate is ``P = F . v`` [W] (dissipation plus the rate of the bristles'
elastic energy ``N sigma0 z.z / 2``).  :func:`lugre` returns ``f``, ``F``, ``P`` and their
partial derivatives by ``v`` and ``z``, and ``dF/dN``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.forces.friction_law import FrictionLaw


@dataclass(frozen=True)
class LuGreState:
    """``f``, ``F`` (d,), ``P`` and the partials ``f_v``, ``f_z``, ``F_v``, ``F_z``
    (d, d), ``P_v``, ``P_z`` (d,), ``F_N = dF/dN`` (d,)."""

    f: np.ndarray
    F: np.ndarray
    P: float
    f_v: np.ndarray
    f_z: np.ndarray
    F_v: np.ndarray
    F_z: np.ndarray
    P_v: np.ndarray
    P_z: np.ndarray
    F_N: np.ndarray


def lugre(law: FrictionLaw, v: np.ndarray, z: np.ndarray, N: float, sigma0: float,
          sigma1: float, eps: float, v_d: float = 0.0) -> LuGreState:
    """The bristle law of the module docstring at slip velocity ``v`` and deflection ``z``."""
    v, z = np.asarray(v, dtype=float), np.asarray(z, dtype=float)
    d = v.size
    root = float(np.sqrt(v @ v + eps * eps))
    a = root - eps
    mu, mu_a = law.mu(a)
    g = a / mu
    a_v = v / root                                              # da/dv
    g_v = (1.0 / mu - a * mu_a / (mu * mu)) * a_v               # dg/dv
    s1, s1_a = sigma1, 0.0
    if v_d > 0.0:
        s1 = sigma1 * np.exp(-(a / v_d) ** 2)
        s1_a = -2.0 * a / (v_d * v_d) * s1
    eye = np.eye(d)
    f = v - sigma0 * g * z
    f_v = eye - sigma0 * np.outer(z, g_v)
    f_z = -sigma0 * g * eye
    F_N = sigma0 * z + s1 * f
    F = N * F_N + law.c_v * v
    F_v = N * (s1 * f_v + s1_a * np.outer(f, a_v)) + law.c_v * eye
    F_z = N * (sigma0 * eye + s1 * f_z)
    P = float(F @ v)
    return LuGreState(f, F, P, f_v, f_z, F_v, F_z, F + F_v.T @ v, F_z.T @ v, F_N)
