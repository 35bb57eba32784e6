"""Articulated-body factorisation of the Newton matrix of a tree with flexible bodies
(floating frame of reference; THEORY §3.9, §3.11): ``S x = b`` in O(n) per right-hand
side, without forming ``Mbar``.  The generalisation of :mod:`flexmbs.relative.articulated`
to the generalized velocities ``y_i = [omega_i; v_Oi; qd_e,i]`` (6 + n_e,i) of the
recursive formalism (:mod:`flexmbs.relative.flexible_recursive`, same symbols):

    y_i = X_i y_p + Cbar_i betabard_i,   X_i = [[B_{p,i}, X_e,i], [0, 0]],
                                       Cbar_i = [[C_i], [0, E]],

``qd_b,i = H_i y_i`` and ``Mbar = sum_i Jbar_i^T H_i^T M_b,i H_i Jbar_i``.

The matrix is ``S = c_M Mbar + Delta_e`` with ``Delta_e`` the body-local part of the
tangent kept by the modified Newton iteration: on each flexible body's modal
coordinates ``q_e,i`` (which are joint coordinates, ``y_i``'s last rows equal
``qd_e,i``) the tangent stiffness of the elastic force ``h_e = K_e q_e + K2:q q +
K3:q q q`` and the structural damping,

    Delta_e,i = c_K K_t,i(q_e,i) + c_C D_e,i,
    K_t,i = dh_e/dq_e = K_e,i + d(K2:q q + K3:q q q)/dq_e   (K_e,i for a linear body),

of the body alone (the rest of ``K``, ``C`` -- inertia and gyroscopic terms, forces,
the joints' ``dT/dbeta`` -- is dropped).  Keeping them matters: without ``K_e`` the
modified iteration's contraction rate is ~ (omega_e h)^2, which exceeds one for the
stiff modes; without the stiffening's tangent, which moved the modal stiffness of the
flexible slider-crank's rod by up to 70 % at t = 2 ms, ``|I - W_0'^-1 W|`` reached 78
there (0.59 with it) and the first modified increment of a step overshot until the run
diverged.

factor (leaves to root), ``K_i`` the modal block ``[[0, 0], [0, Delta_e,i]]``:

    IA_i = c_M H_i^T M_b,i H_i + K_i + sum_{c in children(i)} X_c^T (IA_c - U_c P_c U_c^T) X_c
    U_i  = IA_i Cbar_i,      D_i = Cbar_i^T U_i,

and the joint's local saddle with its Euler normalisation ``g_i = 2 e_i^T`` (spherical
and free joints; zero on the modal columns) ``[[D_i, g_i^T], [g_i, 0]]^-1 = [[P_i, Q_i],
[Q_i^T, R_i]]`` (``P_i = D_i^-1`` without rows).  Solve, backward (leaves to root):

    u_i  = b_i - Cbar_i^T pA_i,   pA_p += X_i^T (pA_i + U_i (P_i u_i + Q_i c_i)),

forward (root to leaves), ``a_0 = 0``:

    a'_i = X_i a_p,  w_i = u_i - U_i^T a'_i,  x_i = P_i w_i + Q_i c_i,
    y_i = Q_i^T w_i + R_i c_i,  a_i = a'_i + Cbar_i x_i.

Cost O(sum_i (6 + n_e,i)^3) for the factor and O(sum_i (6 + n_e,i)^2) per column.  The
rows of the cut joints and drives (coupling several joints) are a Schur complement on
top, as for rigid trees (:class:`FlexibleSchurFactor`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.reduction.stiffening import h_e_tangent
from flexmbs.relative.articulated import joint_inverse, row_slices
from flexmbs.relative.flexible_recursive import Cbar_matrix, H_matrix, barred, n_modes
from flexmbs.relative.kinematics import B_of
from flexmbs.relative.newton_factor import SchurFactor, euler_rows
from flexmbs.relative.tree import Tree


def X_matrix(loc, i: int, n_i: int, n_p: int) -> np.ndarray:
    """``X_i`` (6 + n_i, 6 + n_p) from the local kinematics ``loc``."""
    X = np.zeros((6 + n_i, 6 + n_p))
    X[:6, :6] = B_of(loc.rho[i])
    if loc.X_e[i] is not None:
        X[:6, 6:] = loc.X_e[i]
    return X


def modal_block(body, c_K: float, c_C: float, q_e: np.ndarray | None = None
                ) -> np.ndarray | None:
    """``Delta_e,i = c_K K_t,i(q_e) + c_C D_e,i`` of a flexible body (None for a rigid one):
    the tangent stiffness of its elastic force ``h_e = K_e q_e + K2:q q + K3:q q q`` at
    ``q_e`` (``K_e`` alone for the linear model or ``q_e`` None) and its applied
    structural damping (zero with ``damping = False``)."""
    if getattr(body, "kind", None) != "flexible" or not body.n_q:
        return None
    K_t = np.asarray(body.body.K_e, float)
    if q_e is not None and body.uses_stiffening:
        K_t = h_e_tangent(K_t, body.body.K2, body.body.K3, np.asarray(q_e, float))
    return c_K * K_t + c_C * np.asarray(body.D_e, float)


@dataclass(frozen=True, eq=False)
class FlexibleArticulatedFactor:
    """``U_i`` (6 + n_e,i, d_i), ``P_i`` (d_i, d_i), ``X_i`` and ``Cbar_i`` per body, and
    for the joints with local rows ``Q_i``, ``R_i`` and the slice of their rows in ``c``
    (module doc)."""

    tree: Tree
    X: list
    Cbar: list
    U: list
    P: list
    Q: list
    R: list
    rows: list
    n_rows: int

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x = S^-1 b`` (with local rows: the ``x`` of the saddle at ``c = 0``)."""
        return self.solve_rows(b)[0]

    def solve_rows(self, b: np.ndarray, c: np.ndarray | None = None):
        """``(x, y)`` of ``S x + G_l^T y = b``, ``G_l x = c`` (module doc) for ``b`` of
        shape (n_beta,) or (n_beta, k) and ``c`` (n_rows,) or (n_rows, k) (None: 0)."""
        tree = self.tree
        b = np.asarray(b, dtype=float)
        cols = b.reshape(b.shape[0], -1)
        k = cols.shape[1]
        cc = (np.zeros((self.n_rows, k)) if c is None
              else np.asarray(c, dtype=float).reshape(self.n_rows, k))
        n = tree.n
        pA = [np.zeros((self.U[i].shape[0], k)) for i in range(n)]
        u = [None] * n
        for i in range(n - 1, -1, -1):
            u[i] = cols[barred(tree, i)] - self.Cbar[i].T @ pA[i]
            p = tree.joints[i].parent
            if p >= 0:
                xu = self.P[i] @ u[i]
                if self.Q[i] is not None:
                    xu = xu + self.Q[i] @ cc[self.rows[i]]
                pA[p] += self.X[i].T @ (pA[i] + self.U[i] @ xu)
        x = np.empty_like(cols)
        y = np.empty((self.n_rows, k))
        a = [None] * n
        for i, tj in enumerate(tree.joints):
            a_p = (np.zeros((self.U[i].shape[0], k)) if tj.parent < 0
                   else self.X[i] @ a[tj.parent])
            w = u[i] - self.U[i].T @ a_p
            x_i = self.P[i] @ w
            if self.Q[i] is not None:
                c_i = cc[self.rows[i]]
                x_i = x_i + self.Q[i] @ c_i
                y[self.rows[i]] = self.Q[i].T @ w + self.R[i] @ c_i
            x[barred(tree, i)] = x_i
            a[i] = a_p + self.Cbar[i] @ x_i
        return x.reshape(b.shape), y.reshape((self.n_rows,) + b.shape[1:])


def factor(tree: Tree, loc, e: list, M_b: list, c_M: float = 1.0, c_K: float = 0.0,
           c_C: float = 0.0, rows: dict | None = None, beta: np.ndarray | None = None
           ) -> FlexibleArticulatedFactor:
    """The :class:`FlexibleArticulatedFactor` of ``S = c_M Mbar + Delta_e`` (module doc)
    at the local kinematics ``loc`` (:class:`~flexmbs.relative.flexible_kinematics.
    LocalKinematics`), the bodies' Euler parameters ``e`` and descriptor mass matrices
    ``M_b`` ((7 + n_e,i) square per body), with the local rows ``rows``: {joint index:
    g_i (r_i, d_i)} (their multipliers in the order of the joints); ``beta`` the joint
    coordinates, whose modal ones ``q_e,i`` give the stiffening's tangent in ``Delta_e,i``
    (None: ``K_e,i`` alone)."""
    n = tree.n
    m = [n_modes(tree, i) for i in range(n)]
    IA = []
    for i, body in enumerate(tree.bodies):
        H = H_matrix(e[i], m[i])
        IA_i = c_M * (H.T @ M_b[i] @ H)
        Delta = (modal_block(body, c_K, c_C, beta[tree.joints[i].qe]) if beta is not None
                 else modal_block(body, c_K, c_C))
        if Delta is not None:
            IA_i[6:, 6:] += Delta
        IA.append(IA_i)
    X, Cb = [None] * n, [None] * n
    U, P, Q, R = [None] * n, [None] * n, [None] * n, [None] * n
    sl, start = row_slices(n, rows)
    for i in range(n - 1, -1, -1):
        Cb[i] = C = Cbar_matrix(loc, i, m[i])
        U[i] = IA[i] @ C
        D = C.T @ U[i]
        P[i], Q[i], R[i] = joint_inverse(D, None if sl[i] is None else rows[i])
        p = tree.joints[i].parent
        if p >= 0:
            X[i] = X_matrix(loc, i, m[i], m[p])
            Ia = IA[i] - U[i] @ P[i] @ U[i].T
            Ia = 0.5 * (Ia + Ia.T)                  # kept symmetric (articulated.py)
            IA[p] = IA[p] + X[i].T @ Ia @ X[i]
    return FlexibleArticulatedFactor(tree, X, Cb, U, P, Q, R, sl, start)


class FlexibleSchurFactor(SchurFactor):
    """``W_0'^-1`` of a flexible tree, ``W_0' = [[c_M Mbar + Delta_e, G^T], [G, 0]]``:
    the Euler rows ``G_e`` eliminated joint by joint in :func:`factor`, the rows ``G_c``
    of the cut joints and drives by a Schur complement (the solve of
    :class:`~flexmbs.relative.newton_factor.SchurFactor`, whose ``K_e`` attribute names
    the factor of ``[[S, G_e^T], [G_e, 0]]``).  ``solve([b; c_e; c_c])`` returns ``[x;
    y_e; y_c]``."""

    def __init__(self, tree, loc, e, M_b, beta: np.ndarray, G_c: np.ndarray,
                 c_M: float, c_K: float, c_C: float):
        rows = euler_rows(tree, beta, lambda i: barred(tree, i).stop - barred(tree, i).start)
        self.setup(lambda: factor(tree, loc, e, M_b, c_M, c_K, c_C, rows=rows, beta=beta),
                   tree.n_beta, len(rows), G_c)
