"""Invariants of the floating-frame body (THEORY §2.3, §2.8.2): their one definition.

From the shape integrals ``m``, ``s0``, ``C_t = S^T``, ``J0``, ``J1``, ``J2``
(:class:`~flexmbs.reduction.quadrature.ShapeIntegrals`) come the constant coefficient
arrays (:func:`invariants_from_shape_integrals`, :func:`G_r_coefficients`; the table of
§2.8.2), and every invariant is a polynomial in the elastic coordinates ``q`` (``q_e``)
and their rates ``qd`` with these coefficients:

    c(q)       = (s0 + C_t^T q) / m
    I(q)       = I0 + sum_k q_k I1_k + sum_kl q_k q_l I2_kl
    C_r(q)     = C_r0 + C_r1 . q,               row k: C_r0[k] + sum_l q_l C_r1[k, l]
    O_e^k(q)   = O_e0[k] + sum_l q_l O_e1[k, l]
    G_r(q, qd) = -2 sum_m qd_m (G_r0[m] + sum_l q_l G_r1[m, l])
    G_e(qd)    = 2 C_r1 . qd
    M(q)       = [[m E, m c~^T, C_t^T], [m c~, I, C_r^T], [C_t, C_r, M_e]]

:class:`InvariantPolynomials` evaluates them (each contraction one matrix product);
:class:`flexmbs.bodies.flexible.FlexibleBody` uses it, and lays the same coefficients
out for the compiled kernels.  The module functions :func:`c`, :func:`I`, :func:`C_r`,
:func:`O_e`, :func:`G_r`, :func:`G_e`, :func:`mass_matrix` take ``inv``: any object with
the attributes of :class:`Invariants` (an :class:`Invariants` or a
:class:`flexmbs.io.bodyfile.ReducedBody`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.reduction.interfaces import tilde
from flexmbs.reduction.quadrature import ShapeIntegrals

E3 = np.eye(3)

#: Largest matrix (entries) in one matrix-vector product of :func:`matvec` and
#: :func:`vecmat`.  OpenBLAS runs a ``dgemv`` of 9216 or more entries on several threads;
#: at these sizes the hand-off costs more than the product (several times more on a
#: loaded machine), so larger matrices are split into row blocks (views, no copies).
GEMV_MAX = 8192


def matvec(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``A @ x`` for a C-contiguous ``A``, in row blocks of at most :data:`GEMV_MAX` entries."""
    rows = max(1, GEMV_MAX // max(1, A.shape[1]))
    if A.shape[0] <= rows:
        return A @ x
    return np.concatenate([A[i:i + rows] @ x for i in range(0, A.shape[0], rows)])


def vecmat(x: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``x @ A`` for a C-contiguous ``A``, in row blocks of at most :data:`GEMV_MAX`
    entries (their products summed)."""
    rows = max(1, GEMV_MAX // max(1, A.shape[1]))
    if A.shape[0] <= rows:
        return x @ A
    return sum(x[i:i + rows] @ A[i:i + rows] for i in range(0, A.shape[0], rows))


def axial(W: np.ndarray) -> np.ndarray:
    """``axial(W) = (W32, W13, W21)`` of (..., 3, 3) -> (..., 3) (THEORY §0)."""
    return np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)


def _tr(A: np.ndarray) -> np.ndarray:
    return np.trace(A, axis1=-2, axis2=-1)


@dataclass(frozen=True)
class Invariants:
    """Shape integrals plus the constant invariant parts derived from them.

    m, s0, C_t (n_q, 3), J0, J1 (n_q,3,3), J2 (n_q,n_q,3,3): see ShapeIntegrals.
    M_e (n_q, n_q) ``(M_e)_kl = tr J2_kl``;  I0 (3,3), I1 (n_q,3,3), I2 (n_q,n_q,3,3);
    C_r0 (n_q, 3); C_r1 (n_q, n_q, 3) with ``C_r(q)[k] = C_r0[k] + C_r1[k] . q``;
    O_e0 (n_q, 3, 3), O_e1 (n_q, n_q, 3, 3) with ``O_e[k](q) = O_e0[k] + O_e1[k] . q``.
    """

    m: float
    s0: np.ndarray
    C_t: np.ndarray
    J0: np.ndarray
    J1: np.ndarray
    J2: np.ndarray
    M_e: np.ndarray
    I0: np.ndarray
    I1: np.ndarray
    I2: np.ndarray
    C_r0: np.ndarray
    C_r1: np.ndarray
    O_e0: np.ndarray
    O_e1: np.ndarray


def invariants_from_shape_integrals(si: ShapeIntegrals) -> Invariants:
    """All constant invariant parts (formulas of the table in THEORY §2.8.2)."""
    J1, J2 = si.J1, si.J2
    J1T = np.swapaxes(J1, -1, -2)
    J2lk = np.swapaxes(J2, 0, 1)                       # J2lk[k, l] = J2[l, k]
    M_e = _tr(J2)
    M_e = 0.5 * (M_e + M_e.T)
    I0 = _tr(si.J0) * E3 - si.J0
    I1 = 2 * _tr(J1)[:, None, None] * E3 - J1 - J1T
    I2 = _tr(J2)[..., None, None] * E3 - 0.5 * (J2 + J2lk)
    C_r0 = axial(J1T - J1)
    C_r1 = axial(J2 - J2lk)                            # [k, l, :]
    O_e0 = J1 - _tr(J1)[:, None, None] * E3
    O_e1 = J2lk - M_e.T[..., None, None] * E3          # [k, l] = J2[l,k] - M_e[l,k] E
    return Invariants(m=si.m, s0=si.s0, C_t=si.S.T.copy(), J0=si.J0, J1=J1, J2=J2, M_e=M_e,
                      I0=I0, I1=I1, I2=I2, C_r0=C_r0, C_r1=C_r1, O_e0=O_e0, O_e1=O_e1)


def G_r_coefficients(inv) -> tuple[np.ndarray, np.ndarray]:
    """``(G_r0, G_r1)`` with ``G_r(q, qd) = -2 sum_m qd_m (G_r0[m] + sum_l q_l G_r1[m, l])``
    (THEORY §2.8.2): ``G_r0[m] = J1_m^T - tr(J1_m) E`` (n_q, 3, 3) and
    ``G_r1[m, l] = J2_ml - (M_e)_lm E`` (n_q, n_q, 3, 3); ``-G_r / 2`` is ``dG_r/dqd``
    contracted with ``qd``."""
    n = np.shape(inv.M_e)[0]
    trJ1 = np.trace(inv.J1, axis1=1, axis2=2) if n else np.zeros(0)
    G_r0 = np.swapaxes(inv.J1, 1, 2) - trJ1[:, None, None] * E3
    G_r1 = inv.J2 - inv.M_e.T[:, :, None, None] * E3
    return G_r0, G_r1


class InvariantPolynomials:
    """The invariants of one body at any ``q``, ``qd`` (module docstring), with the
    coefficients laid out once so that every contraction is one matrix product.

    Index names follow the invariants: ``C_r1[k, l, j]``, ``O_e1[k, l, i, j]``,
    ``I2[k, l, a, b]``, ``G_r1[m, l, i, j]``; a ``*_l`` layout puts the contracted ``l``
    first (rows), so ``q @ X_l`` contracts it.
    """

    def __init__(self, inv):
        n = np.shape(inv.M_e)[0]
        c = lambda a: np.ascontiguousarray(a, dtype=float)     # noqa: E731
        self.inv, self.n = inv, n
        G_r0, G_r1 = G_r_coefficients(inv)
        self.G_r0, self.G_r1 = G_r0, G_r1
        self.I1 = c(np.reshape(inv.I1, (n, 9)))                               # (k, ab)
        self.I2 = c(np.reshape(inv.I2, (n, n * 9)))                           # (k, l ab)
        self.I2T = c(np.transpose(self.I2))                                   # (l ab, k)
        self.C_r1_l = c(np.transpose(inv.C_r1, (1, 0, 2)).reshape(n, 3 * n))  # (l, k j)
        self.O_e0 = c(np.reshape(inv.O_e0, (n, 9)))                           # (k, ij)
        self.O_e1_l = c(np.transpose(inv.O_e1, (1, 0, 2, 3)).reshape(n, 9 * n))  # (l, k ij)
        self.G_r0_9 = c(np.reshape(G_r0, (n, 9)))                             # (m, ij)
        self.G_r1_l = c(np.transpose(G_r1, (1, 0, 2, 3)).reshape(n, 9 * n))   # (l, m ij)

    def c(self, q: np.ndarray) -> np.ndarray:
        """Centre of mass in R, ``c = (s0 + C_t^T q) / m`` (3,) [m]."""
        inv = self.inv
        return (inv.s0 + inv.C_t.T @ q) / inv.m

    def I(self, q: np.ndarray) -> np.ndarray:  # noqa: E743
        """Inertia tensor about R, ``I0 + sum q_k I1_k + sum q_k q_l I2_kl`` (3, 3) [kg m^2]."""
        n = self.n
        return self.inv.I0 + ((q @ self.I1) + q @ matvec(self.I2T, q).reshape(n, 9)) \
            .reshape(3, 3)

    def C_r(self, q: np.ndarray) -> np.ndarray:
        """Rotational coupling ``C_r0 + C_r1 . q`` (n_q, 3) [kg m]."""
        return self.inv.C_r0 + (q @ self.C_r1_l).reshape(self.n, 3)

    def O_e(self, q: np.ndarray) -> np.ndarray:
        """Stacked ``O_e^k = O_e0[k] + sum_l q_l O_e1[k, l]`` (n_q, 3, 3) [kg m]."""
        return (self.O_e0 + (q @ self.O_e1_l).reshape(self.n, 9)).reshape(self.n, 3, 3)

    def G_r(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """``-2 sum_m qd_m (G_r0[m] + sum_l q_l G_r1[m, l])`` (3, 3) [kg m^2 / s]."""
        Gm = self.G_r0_9 + (q @ self.G_r1_l).reshape(self.n, 9)
        return -2.0 * (qd @ Gm).reshape(3, 3)

    def G_e(self, qd: np.ndarray) -> np.ndarray:
        """``G_e = 2 C_r1 . qd`` (n_q, 3) [kg m / s]; independent of q."""
        return 2.0 * (qd @ self.C_r1_l).reshape(self.n, 3)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """The (6 + n_q) mass matrix of THEORY §2.3 in body components."""
        inv, n = self.inv, self.n
        M0 = self.__dict__.get("_M0")
        if M0 is None:          # the blocks independent of q, set once
            M0 = np.zeros((6 + n, 6 + n))
            M0[:3, :3] = inv.m * E3
            M0[:3, 6:], M0[6:, :3] = inv.C_t.T, inv.C_t
            M0[6:, 6:] = inv.M_e
            self.__dict__["_M0"] = M0
        M = M0.copy()
        mct = inv.m * tilde(self.c(q))
        Cr = self.C_r(q)
        M[:3, 3:6], M[3:6, :3] = mct.T, mct
        M[3:6, 3:6] = self.I(q)
        M[3:6, 6:], M[6:, 3:6] = Cr.T, Cr
        return M


def c(inv, q: np.ndarray) -> np.ndarray:
    """Centre of mass ``c(q)`` (3,) [m] (:meth:`InvariantPolynomials.c`)."""
    return InvariantPolynomials(inv).c(q)


def I(inv, q: np.ndarray) -> np.ndarray:  # noqa: E743
    """Inertia tensor about R ``I(q)`` (3, 3) [kg m^2] (:meth:`InvariantPolynomials.I`)."""
    return InvariantPolynomials(inv).I(q)


def C_r(inv, q: np.ndarray) -> np.ndarray:
    """Rotational coupling ``C_r(q)`` (n_q, 3) (:meth:`InvariantPolynomials.C_r`)."""
    return InvariantPolynomials(inv).C_r(q)


def O_e(inv, q: np.ndarray) -> np.ndarray:
    """Stacked ``O_e^k(q)`` (n_q, 3, 3) (:meth:`InvariantPolynomials.O_e`)."""
    return InvariantPolynomials(inv).O_e(q)


def G_r(inv, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """``G_r(q, qd)`` (3, 3) (:meth:`InvariantPolynomials.G_r`)."""
    return InvariantPolynomials(inv).G_r(q, qd)


def G_e(inv, qd: np.ndarray) -> np.ndarray:
    """``G_e(qd) = 2 C_r1 . qd`` (n_q, 3) (:meth:`InvariantPolynomials.G_e`)."""
    return InvariantPolynomials(inv).G_e(qd)


def mass_matrix(inv, q: np.ndarray) -> np.ndarray:
    """The (6 + n_q) mass matrix of THEORY §2.3:
    ``[[m E, m c~^T, C_t^T], [m c~, I, C_r^T], [C_t, C_r, M_e]]``."""
    return InvariantPolynomials(inv).mass_matrix(q)
