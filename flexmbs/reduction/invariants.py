"""Invariants of the floating-frame body from the shape integrals (THEORY §2.3, §2.8.2).

Every function is pure and takes ``inv``: any object with the attributes ``m``, ``s0``,
``C_t`` (n_q, 3), ``J0``, ``J1`` (n_q, 3, 3), ``J2`` (n_q, n_q, 3, 3) and ``M_e`` --
an :class:`Invariants` or a :class:`flexmbs.io.bodyfile.ReducedBody`.
``q`` are the elastic coordinates ``q_e``, ``qd`` their rates.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.reduction.interfaces import tilde
from flexmbs.reduction.quadrature import ShapeIntegrals

E3 = np.eye(3)


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


def c(inv, q: np.ndarray) -> np.ndarray:
    """Centre of mass ``c = (s0 + C_t^T q) / m`` (3,) [m]."""
    return (inv.s0 + inv.C_t.T @ q) / inv.m


def theta(inv, q: np.ndarray) -> np.ndarray:
    """``Theta = int r r^T dm = J0 + sum q_k (J1_k + J1_k^T) + sum q_k q_l J2_kl``."""
    A = np.einsum("k,kij->ij", q, inv.J1)
    return inv.J0 + A + A.T + np.einsum("k,l,klij->ij", q, q, inv.J2)


def I(inv, q: np.ndarray) -> np.ndarray:  # noqa: E743
    """Inertia tensor about R: ``I = tr(Theta) E - Theta`` (3, 3) [kg m^2]."""
    Th = theta(inv, q)
    return np.trace(Th) * E3 - Th


def C_r(inv, q: np.ndarray) -> np.ndarray:
    """Rotational coupling (n_q, 3): row k ``= axial(J1_k^T - J1_k) + sum_l q_l
    axial(J2_kl - J2_lk)``."""
    J1T = np.swapaxes(inv.J1, -1, -2)
    return axial(J1T - inv.J1) + C_r1(inv, q)


def C_r1(inv, q: np.ndarray) -> np.ndarray:
    """Linear part of ``C_r``: row k ``= sum_l q_l axial(J2_kl - J2_lk)``."""
    W = np.einsum("l,klij->kij", q, inv.J2 - np.swapaxes(inv.J2, 0, 1))
    return axial(W)


def G_e(inv, qd: np.ndarray) -> np.ndarray:
    """``G_e = 2 C_r1(qd)`` (n_q, 3) [kg m / s]; independent of q."""
    return 2.0 * C_r1(inv, qd)


def G_r(inv, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """``G_r = -2 sum_m qd_m [J1_m^T - tr(J1_m) E + sum_l q_l (J2_ml - (M_e)_lm E)]``."""
    A = np.einsum("m,mji->ij", qd, inv.J1) - (qd @ np.trace(inv.J1, axis1=1, axis2=2)) * E3
    B = np.einsum("m,l,mlij->ij", qd, q, inv.J2) - (q @ inv.M_e @ qd) * E3
    return -2.0 * (A + B)


def O_e(inv, q: np.ndarray) -> np.ndarray:
    """Stacked ``O_e^k`` (n_q, 3, 3): ``J1_k + sum_l q_l J2_lk - [tr J1_k +
    sum_l q_l (M_e)_lk] E``."""
    A = inv.J1 + np.einsum("l,lkij->kij", q, inv.J2)
    s = np.trace(inv.J1, axis1=1, axis2=2) + q @ inv.M_e
    return A - s[:, None, None] * E3


def mass_matrix(inv, q: np.ndarray) -> np.ndarray:
    """The (6 + n_q) mass matrix of THEORY §2.3:
    ``[[m E, m c~^T, C_t^T], [m c~, I, C_r^T], [C_t, C_r, M_e]]``."""
    n_q = len(q)
    M = np.zeros((6 + n_q, 6 + n_q))
    ct = tilde(c(inv, q)) * inv.m
    Cr = C_r(inv, q)
    M[:3, :3] = inv.m * E3
    M[:3, 3:6], M[3:6, :3] = ct.T, ct
    M[:3, 6:], M[6:, :3] = inv.C_t.T, inv.C_t
    M[3:6, 3:6] = I(inv, q)
    M[3:6, 6:], M[6:, 3:6] = Cr.T, Cr
    M[6:, 6:] = inv.M_e
    return M
