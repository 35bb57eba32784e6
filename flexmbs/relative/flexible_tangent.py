"""Tangent of the DAE of a tree with flexible bodies (:mod:`flexmbs.relative.dae`): the
descriptor form's analytic tangent carried through the map ``T = dq_b/dbeta``.

With ``r = T^T rt_b(q_b, T betad, T betadd + Td betad, t) + [2 e_j^T]^T lam_e``,
``rt_b = r_b + G_b^T mu_b`` the descriptor residual with the cut rows' multipliers
``mu_b`` (the cut part of ``lam`` on the descriptor rows, zero elsewhere; ``G_b`` the
descriptor rows' Jacobian, the ``C_b`` of :mod:`flexmbs.relative.dae`) and
``K_b, C_b, M_b`` its tangent (``K_b`` with ``d(G_b^T mu_b)/dq_b``):

    K[:, k] = T^T (K_b T_k + C_b dT_k betad + M_b (dT_k betadd + dTd_k betad))
              + dT_k^T rt_b + 2 lam_e E (on each normalised quaternion),
    C = T^T (C_b T + M_b (Td + [dT_k betad]_k)),        M = T^T M_b T,

``T_k`` column ``k`` of ``T``, ``dT_k = dT/dbeta_k``, ``Td = dT/dt`` along ``betad``,
``dTd_k = dTd/dbeta_k = d(dT_k)/dt`` (mixed partials of ``T`` commute);
``d(Td betad)/dbetad = Td + [dT_k betad]_k``.  Where ``T`` is a Jacobian (``dT_.j/dbeta_k``
symmetric in ``j, k``) that is ``2 Td`` and, the third derivatives of ``q_b`` symmetric,
``dTd_k betad`` is column ``k`` of the second difference of ``T`` along the motion.  A
joint's Euler parameters ``e`` break that: ``T``'s rows map their rates through the
projection ``G^T G = E - e e^T``, so ``T`` is not a Jacobian off the unit sphere (the
symmetric formulas were off by 1e-3 of ``C`` and up to 4e-4 of ``K`` on random trees
with spherical and free joints); with such joints the general formulas below are taken,
and the tangent's columns along each ``e/|e|`` (where ``T e = 0`` but the residual
still moves through the velocity products) are differences of the residual
(:mod:`flexmbs.relative.dae`).

The derivatives of ``T`` are differences of ``T`` (one kinematic sweep each): ``dT_k``
central differences at ``beta +- h e_k``, ``Td`` along the motion and ``dTd_k betad``
the difference of ``dT_k betad`` along the motion:

    dT_k = (T(beta + h e_k) - T(beta - h e_k)) / (2 h),
    Td   = (T+ - T-) / (2 s),    T+- = T(beta +- s betad),
    dTd_k betad = (dT_k(beta + s betad) - dT_k(beta - s betad)) betad / (2 s)
                  (T a Jacobian: [dTd_k betad]_k = (T+ - 2 T + T-) / s^2),

with ``h`` and ``s |betad|`` scaled by the size of ``T``'s columns (``h = 1e-5``,
``s |betad| = 1e-4`` rad or m; truncation and round-off about 1e-10 relative in
``dT_k``, 1e-8 in ``Td``, 1e-7 in ``dTd_k betad``), so a tangent costs ``2 n_beta + 2``
sweeps (``6 n_beta + 2`` with Euler-parameter joints) and one descriptor tangent,
against ``12 n_beta`` sweeps and ``4 n_beta`` descriptor residuals of central
differences of ``r``; those of ``dT_k`` sweep only the
bodies that ``beta_k`` moves (the others' rows of ``T`` are the same at ``beta +- h e_k``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: step ``h`` of the differences in ``beta_k`` and ``s |betad|`` of those along the motion
STEP, MOTION_STEP = 1e-5, 1e-4


def T_gradients(T_at: Callable[..., np.ndarray], beta: np.ndarray,
                T: np.ndarray) -> list:
    """``dT_k = dT/dbeta_k`` for each k (module doc) at ``beta`` with ``T = T_at(beta)``;
    ``T_at`` gives Euler parameters of one sign about ``beta``, and ``T_at(x, k)`` at an
    ``x`` that differs from ``beta`` in ``x_k`` alone may leave zero (or equal to those of
    ``T``) the rows that do not depend on ``beta_k``: their differences are zero either
    way."""
    n = beta.size
    scale = np.maximum(np.abs(T).max(axis=0), 1.0)
    dT = []
    for k in range(n):
        e_k = np.zeros(n)
        e_k[k] = h = STEP / scale[k]
        dT.append((T_at(beta + e_k, k) - T_at(beta - e_k, k)) / (2.0 * h))
    return dT


def T_derivatives(T_at: Callable[[np.ndarray], np.ndarray], beta: np.ndarray,
                  betad: np.ndarray, T: np.ndarray, dT: list,
                  gradients_at: Callable[[np.ndarray], list] | None = None
                  ) -> tuple[list, np.ndarray, np.ndarray, np.ndarray]:
    """``(dT_k for each k, [dTd_k betad]_k (n_q, n_beta), Td, d(Td betad)/dbetad)``
    (module doc) at ``beta`` with ``T = T_at(beta)`` and ``dT`` :func:`T_gradients` at
    ``beta``; ``gradients_at(x)``: those at another ``x``, or None when ``T`` is a
    Jacobian (no Euler-parameter joints): then ``dTd_k betad`` is the second difference
    of ``T`` along the motion and ``d(Td betad)/dbetad = 2 Td``."""
    scale = np.maximum(np.abs(T).max(axis=0), 1.0)
    speed = np.abs(betad * scale).max(initial=0.0)
    if speed == 0.0:
        zero = np.zeros_like(T)
        return dT, zero, zero, zero
    s = MOTION_STEP / speed
    plus, minus = T_at(beta + s * betad), T_at(beta - s * betad)
    Td = (plus - minus) / (2.0 * s)
    if gradients_at is None:
        return dT, (plus - 2.0 * T + minus) / s**2, Td, 2.0 * Td
    dT_p, dT_m = gradients_at(beta + s * betad), gradients_at(beta - s * betad)
    dTd_bd = np.column_stack([(a - b) @ betad for a, b in zip(dT_p, dT_m, strict=True)])
    return dT, dTd_bd / (2.0 * s), Td, Td + np.column_stack([d @ betad for d in dT])


def projected_tangent(T: np.ndarray, derivatives: tuple, tangent_b: tuple,
                      rt_b: np.ndarray, betad: np.ndarray, betadd: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense ``(K, C, M)`` without the normalisations' term (module doc), from ``T``,
    :func:`T_derivatives`, the descriptor tangent ``(K_b, C_b, M_b)`` and residual
    ``rt_b``."""
    dT, dTd_bd, _, dTdbd_dbetad = derivatives
    K_b, C_b, M_b = (np.asarray(x.toarray() if hasattr(x, "toarray") else x)
                     for x in tangent_b)
    dqd = np.column_stack([d @ betad for d in dT])
    dqdd = np.column_stack([d @ betadd for d in dT]) + dTd_bd
    K = T.T @ (K_b @ T + C_b @ dqd + M_b @ dqdd) + np.column_stack([d.T @ rt_b for d in dT])
    C = T.T @ (C_b @ T + M_b @ dTdbd_dbetad)
    return K, C, T.T @ (M_b @ T)
