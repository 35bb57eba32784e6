"""Tangent of the DAE of a tree with flexible bodies (:mod:`flexmbs.relative.dae`): the
descriptor form's analytic tangent carried through the map ``T = dq_b/dbeta``.

With ``r = T^T rt_b(q_b, T betad, T betadd + Td betad, t) + [2 e_j^T]^T lam_e``,
``rt_b = r_b + G_b^T mu_b`` the descriptor residual with the cut rows' multipliers
``mu_b`` (the cut part of ``lam`` on the descriptor rows, zero elsewhere; ``G_b`` the
descriptor rows' Jacobian, the ``C_b`` of :mod:`flexmbs.relative.dae`) and
``K_b, C_b, M_b`` its tangent (``K_b`` with ``d(G_b^T mu_b)/dq_b``):

    K[:, k] = T^T (K_b T_k + C_b dT_k betad + M_b (dT_k betadd + dTd_k betad))
              + dT_k^T rt_b + 2 lam_e E (on each normalised quaternion),
    C = T^T (C_b T + 2 M_b Td),        M = T^T M_b T,

``T_k`` column ``k`` of ``T``, ``dT_k = dT/dbeta_k``, ``Td = dT/dt`` along ``betad``,
``dTd_k = dTd/dbeta_k``; ``d(Td betad)/dbetad = 2 Td`` because ``dT_.j/dbeta_k`` is
symmetric in ``j, k`` (``T`` is a Jacobian).

The derivatives of ``T`` are differences of ``T`` (one kinematic sweep each): ``dT_k``
central differences at ``beta +- h e_k``, and, as ``T`` is the Jacobian of ``q_b``, the
third derivatives of ``q_b`` are symmetric, so ``dTd_k betad = d^3 q_b[e_k, betad, betad]``
is column ``k`` of the second difference of ``T`` along the motion:

    dT_k = (T(beta + h e_k) - T(beta - h e_k)) / (2 h),
    Td   = (T+ - T-) / (2 s),     [dTd_k betad]_k = (T+ - 2 T + T-) / s^2,
    T+-  = T(beta +- s betad),

with ``h`` and ``s |betad|`` scaled by the size of ``T``'s columns (``h = 1e-5``,
``s |betad| = 1e-4`` rad or m; truncation and round-off about 1e-10 relative in
``dT_k``, 1e-8 in the others), so a tangent costs ``2 n_beta + 2`` sweeps and one
descriptor tangent, against ``12 n_beta`` sweeps and ``4 n_beta`` descriptor residuals
of central differences of ``r``; those of ``dT_k`` sweep only the bodies that
``beta_k`` moves (the others' rows of ``T`` are the same at ``beta +- h e_k``).
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
                  betad: np.ndarray, T: np.ndarray, dT: list | None = None
                  ) -> tuple[list, np.ndarray, np.ndarray]:
    """``(dT_k for each k, [dTd_k betad]_k (n_q, n_beta), Td)`` (module doc) at ``beta``
    with ``T = T_at(beta)`` (``dT``: :func:`T_gradients` at ``beta`` when known)."""
    if dT is None:
        dT = T_gradients(T_at, beta, T)
    scale = np.maximum(np.abs(T).max(axis=0), 1.0)
    speed = np.abs(betad * scale).max(initial=0.0)
    if speed == 0.0:
        return dT, np.zeros_like(T), np.zeros_like(T)
    s = MOTION_STEP / speed
    plus, minus = T_at(beta + s * betad), T_at(beta - s * betad)
    return dT, (plus - 2.0 * T + minus) / s**2, (plus - minus) / (2.0 * s)


def projected_tangent(T: np.ndarray, derivatives: tuple, tangent_b: tuple,
                      rt_b: np.ndarray, betad: np.ndarray, betadd: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense ``(K, C, M)`` without the normalisations' term (module doc), from ``T``,
    :func:`T_derivatives`, the descriptor tangent ``(K_b, C_b, M_b)`` and residual
    ``rt_b``."""
    dT, dTd_bd, Td = derivatives
    K_b, C_b, M_b = (np.asarray(x.toarray() if hasattr(x, "toarray") else x)
                     for x in tangent_b)
    dqd = np.column_stack([d @ betad for d in dT])
    dqdd = np.column_stack([d @ betadd for d in dT]) + dTd_bd
    K = T.T @ (K_b @ T + C_b @ dqd + M_b @ dqdd) + np.column_stack([d.T @ rt_b for d in dT])
    C = T.T @ (C_b @ T + 2.0 * (M_b @ Td))
    return K, C, T.T @ (M_b @ T)
