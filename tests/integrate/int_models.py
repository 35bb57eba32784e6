"""Small DAEs (implementations of ``flexmbs.integrate.protocol.DAE``) for the integrator tests."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _csr(a):
    return sp.csr_matrix(np.atleast_2d(np.asarray(a, dtype=float)))


class Base:
    def constraint_rates(self, q, qd, t):
        return np.zeros(self.n_lam), np.zeros(self.n_lam)

    def constraint_force_jacobian(self, q, mu, t):
        return sp.csr_matrix((self.n_q, self.n_q))

    def constraint_velocity_jacobian(self, q, v, t):
        return sp.csr_matrix((self.n_lam, self.n_q))

    def constraint(self, q, t):
        return np.zeros(self.n_lam)

    def constraint_jacobian(self, q, t):
        return sp.csr_matrix((self.n_lam, self.n_q))

    def normalize(self, q):
        return np.array(q, dtype=float)


class Pendulum(Base):
    """Planar pendulum in Cartesian coordinates ``q = (x, y)``, ``g = x^2 + y^2 - L^2``
    (index 3), gravity ``-grav e_y``.  Tension ``T = 2 L lam``."""

    n_q, n_lam = 2, 1

    def __init__(self, m=1.0, L=1.0, grav=9.81):
        self.m, self.L, self.grav = m, L, grav

    def residual(self, q, qd, qdd, lam, t):
        f = np.array([0.0, -self.m * self.grav])
        return self.m * qdd - f + 2.0 * q * lam[0]

    def tangent(self, q, qd, qdd, lam, t):
        return (sp.csr_matrix(2.0 * lam[0] * np.eye(2)), sp.csr_matrix((2, 2)),
                sp.csr_matrix(self.m * np.eye(2)))

    def constraint(self, q, t):
        return np.array([q @ q - self.L ** 2])

    def constraint_jacobian(self, q, t):
        return _csr(2.0 * q)

    def constraint_rates(self, q, qd, t):
        return np.zeros(1), np.array([2.0 * qd @ qd])

    def constraint_force_jacobian(self, q, mu, t):
        return sp.csr_matrix(2.0 * mu[0] * np.eye(2))

    def constraint_velocity_jacobian(self, q, v, t):
        return _csr(2.0 * v)

    def energy(self, q, qd):
        return 0.5 * self.m * qd @ qd + self.m * self.grav * q[1]


class Oscillator(Base):
    """Unconstrained linear ``M qdd + C qd + K q = F(t)`` (dense matrices given)."""

    n_lam = 0

    def __init__(self, M, K, C=None, force=None):
        self.M, self.K = np.atleast_2d(M).astype(float), np.atleast_2d(K).astype(float)
        self.n_q = self.M.shape[0]
        self.C = np.zeros_like(self.M) if C is None else np.atleast_2d(C).astype(float)
        self.force = force

    def residual(self, q, qd, qdd, lam, t):
        F = np.zeros(self.n_q) if self.force is None else self.force(t)
        return self.M @ qdd + self.C @ qd + self.K @ q - F

    def tangent(self, q, qd, qdd, lam, t):
        return sp.csr_matrix(self.K), sp.csr_matrix(self.C), sp.csr_matrix(self.M)


class RotatingRail(Base):
    """Mass on a frictionless rail through the origin rotating at ``Omega`` (no gravity):
    ``g = -x sin(Omega t) + y cos(Omega t)`` (rheonomic).  Exact radial motion
    ``r(t) = r0 cosh(Omega t) + (rd0 / Omega) sinh(Omega t)``."""

    n_q, n_lam = 2, 1

    def __init__(self, m=1.0, Omega=1.0):
        self.m, self.Omega = m, Omega

    def _G(self, t):
        W = self.Omega
        return np.array([-np.sin(W * t), np.cos(W * t)])

    def residual(self, q, qd, qdd, lam, t):
        return self.m * qdd + self._G(t) * lam[0]

    def tangent(self, q, qd, qdd, lam, t):
        return sp.csr_matrix((2, 2)), sp.csr_matrix((2, 2)), sp.csr_matrix(self.m * np.eye(2))

    def constraint(self, q, t):
        return np.array([self._G(t) @ q])

    def constraint_jacobian(self, q, t):
        return _csr(self._G(t))

    def constraint_rates(self, q, qd, t):
        W, c, s = self.Omega, np.cos(self.Omega * t), np.sin(self.Omega * t)
        x, y = q
        xd, yd = qd
        g_t = -W * (x * c + y * s)
        gamma = -2.0 * W * (xd * c + yd * s) + W * W * (x * s - y * c)
        return np.array([g_t]), np.array([gamma])


class HangingChain(Base):
    """``N`` point masses in the plane joined by linear springs (stiffness ``k``, free
    length ``l0``); node 0 is held at the origin by two constraints ``g = (x0, y0)``;
    gravity ``-grav e_y``.  Static closed form: spring ``j`` (nodes ``j, j+1``) carries
    the weight of the ``N - 1 - j`` masses below it."""

    def __init__(self, N=5, m=1.0, k=100.0, l0=1.0, grav=9.81):
        self.N, self.m, self.k, self.l0, self.grav = N, m, k, l0, grav
        self.n_q, self.n_lam = 2 * N, 2

    def _springs(self, q):
        P = q.reshape(-1, 2)
        d = P[1:] - P[:-1]
        ell = np.linalg.norm(d, axis=1)
        return d, ell

    def forces(self, q):
        d, ell = self._springs(q)
        T = self.k * (ell - self.l0)
        fs = (T / ell)[:, None] * d  # force on node j+1 is -fs, on node j is +fs
        f = np.zeros((self.N, 2))
        f[:-1] += fs
        f[1:] -= fs
        f[:, 1] -= self.m * self.grav
        return f.ravel()

    def residual(self, q, qd, qdd, lam, t):
        r = self.m * qdd - self.forces(q)
        r[:2] += lam
        return r

    def tangent(self, q, qd, qdd, lam, t):
        d, ell = self._springs(q)
        K = np.zeros((self.n_q, self.n_q))
        for j in range(self.N - 1):
            n = d[j] / ell[j]
            Kj = self.k * ((1 - self.l0 / ell[j]) * np.eye(2) + self.l0 / ell[j] * np.outer(n, n))
            a, b = slice(2 * j, 2 * j + 2), slice(2 * j + 2, 2 * j + 4)
            K[a, a] += Kj
            K[b, b] += Kj
            K[a, b] -= Kj
            K[b, a] -= Kj
        return (sp.csr_matrix(K), sp.csr_matrix((self.n_q, self.n_q)),
                sp.csr_matrix(self.m * np.eye(self.n_q)))

    def constraint(self, q, t):
        return np.array(q[:2], dtype=float)

    def constraint_jacobian(self, q, t):
        G = np.zeros((2, self.n_q))
        G[0, 0] = G[1, 1] = 1.0
        return sp.csr_matrix(G)


class Blowup(Base):
    """``qdd = exp(q / s)``, finite-time blow-up; residual NaN for ``t > t_nan``."""

    n_q, n_lam = 1, 0

    def __init__(self, s=0.01, t_nan=np.inf):
        self.s, self.t_nan = s, t_nan

    def residual(self, q, qd, qdd, lam, t):
        if t > self.t_nan:
            return np.full(1, np.nan)
        return qdd - np.exp(q / self.s)

    def tangent(self, q, qd, qdd, lam, t):
        return (sp.csr_matrix(-np.exp(q / self.s)[None, :] / self.s), sp.csr_matrix((1, 1)),
                sp.csr_matrix(np.eye(1)))


class PendulumAngle(Base):
    """The same pendulum in the minimal coordinate ``q = (theta,)``, unconstrained:
    ``m L^2 theta'' + m grav L sin(theta) = 0``."""

    n_q, n_lam = 1, 0

    def __init__(self, m=1.0, L=1.0, grav=9.81):
        self.m, self.L, self.grav = m, L, grav

    def residual(self, q, qd, qdd, lam, t):
        return self.m * self.L ** 2 * qdd + self.m * self.grav * self.L * np.sin(q)

    def tangent(self, q, qd, qdd, lam, t):
        return (sp.csr_matrix([[self.m * self.grav * self.L * np.cos(q[0])]]),
                sp.csr_matrix((1, 1)), sp.csr_matrix([[self.m * self.L ** 2]]))

    def energy(self, q, qd):
        return 0.5 * self.m * self.L ** 2 * qd[0] ** 2 - self.m * self.grav * self.L * np.cos(q[0])
