"""The contract between the assembled multibody model and the integrators.

The model is the index-3 DAE of THEORY §1.5 / §5.9.2 in residual form, on flat arrays:

    r(q, qd, qdd, lam, t) = M(q) qdd - f(q, qd, t) + G(q)^T lam = 0      (n_q rows)
    g(q, t)               = 0                                           (n_lam rows)

with ``q`` the generalized coordinates (positions, Euler parameters, elastic coordinates),
``qd`` and ``qdd`` their first and second time derivatives (same length as ``q``),
``G = dg/dq`` the constraint Jacobian and ``lam`` the Lagrange multipliers.  The
Euler-parameter normalisation conditions are ordinary rows of ``g``.

Derivatives of the position constraints, used for consistent initial conditions and
for stabilised (GGL / index-2) forms:

    dg/dt   = G qd + g_t
    d2g/dt2 = G qdd + gamma(q, qd, t)

Only numpy/scipy here: the integrators (``flexmbs.integrate``) wrap these in PETSc.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp


@runtime_checkable
class DAE(Protocol):
    """Index-3 constrained mechanical system ``M qdd - f + G^T lam = 0, g = 0``."""

    n_q: int    # number of generalized coordinates
    n_lam: int  # number of constraint rows (multipliers)

    def residual(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                 lam: np.ndarray, t: float) -> np.ndarray:
        """``r = M(q) qdd - f(q, qd, t) + G(q)^T lam``, shape (n_q,)."""

    def tangent(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                lam: np.ndarray, t: float) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
        """``(K, C, M) = (dr/dq, dr/dqd, dr/dqdd)``, each CSR (n_q, n_q).

        ``K`` includes the constraint-force term ``d(G^T lam)/dq``."""

    def constraint(self, q: np.ndarray, t: float) -> np.ndarray:
        """``g(q, t)``, shape (n_lam,)."""

    def constraint_jacobian(self, q: np.ndarray, t: float) -> sp.csr_matrix:
        """``G = dg/dq``, CSR (n_lam, n_q)."""

    def constraint_rates(self, q: np.ndarray, qd: np.ndarray,
                         t: float) -> tuple[np.ndarray, np.ndarray]:
        """``(g_t, gamma)``: ``dg/dt = G qd + g_t`` and ``d2g/dt2 = G qdd + gamma``."""

    def constraint_force_jacobian(self, q: np.ndarray, mu: np.ndarray,
                                  t: float) -> sp.csr_matrix:
        """``d(G(q)^T mu)/dq`` for a fixed vector ``mu``, CSR (n_q, n_q)."""

    def constraint_velocity_jacobian(self, q: np.ndarray, v: np.ndarray,
                                     t: float) -> sp.csr_matrix:
        """``d(G(q) v)/dq`` for a fixed vector ``v``, CSR (n_lam, n_q)."""

    def normalize(self, q: np.ndarray) -> np.ndarray:
        """Return ``q`` with every Euler-parameter quadruple scaled to unit norm (a copy)."""
