"""Articulated-body factorisation of the joint-space matrix of a rigid tree (THEORY
§3.9, §3.11): ``S x = b`` in O(n) per right-hand side, without forming ``Mbar``.

The matrix is ``S = c_M Mbar + Delta`` with ``Mbar = J^T M J`` (§3.8) and ``Delta`` block
diagonal over the joints (``Delta_i`` on joint i's coordinates, e.g. the Euler-parameter
terms ``4 w e e^T`` that make ``S`` regular).  With the same ``B_{p(i),i}``, ``C_i`` and
``M_i`` as the recursive formalism (:mod:`flexmbs.relative.recursive`):

factor (leaves to root):

    IA_i = c_M M_i + sum_{c in children(i)} B_{i,c}^T (IA_c - U_c D_c^-1 U_c^T) B_{i,c}
    U_i  = IA_i C_i,      D_i = C_i^T U_i + Delta_i

solve ``S x = b``, backward (leaves to root) with ``pA_i`` the articulated bias wrench:

    u_i   = b_i - C_i^T pA_i,
    pA_i  = sum_{c in children(i)} B_{i,c}^T (pA_c + U_c D_c^-1 u_c)

and forward (root to leaves), ``a_0 = 0``:

    a'_i = B_{p(i),i} a_{p(i)},   x_i = D_i^-1 (u_i - U_i^T a'_i),   a_i = a'_i + C_i x_i.

(The derivation: the joint wrench of a subtree is ``f_i^P = IA_i a_i + pA_i``; its
projection ``C_i^T f_i^P + Delta_i x_i = b_i`` gives ``x_i``, and putting ``x_i`` back
leaves the parent the wrench of the articulated inertia ``IA_i - U_i D_i^-1 U_i^T``.)
Cost O(n) for the factor and per column of ``b``; ``D_i`` is at most 7 x 7.

Local rows (a joint's own constraint rows, e.g. the normalisation ``g_i = 2 e_i^T`` of
its Euler parameters): the factor also solves the saddle point system

    S x + G_l^T y = b,   G_l x = c,      G_l = blockdiag(g_i)   (rows on one joint each)

in the same O(n): joint i's projection becomes the local saddle

    [[D_i, g_i^T], [g_i, 0]] [x_i; y_i] = [u_i - U_i^T a'_i; c_i],
    [[D_i, g_i^T], [g_i, 0]]^-1 = [[P_i, Q_i], [Q_i^T, R_i]],

so ``x_i = P_i (u_i - U_i^T a'_i) + Q_i c_i``, ``y_i = Q_i^T (u_i - U_i^T a'_i) + R_i
c_i``, and the parent receives the articulated inertia of the constrained joint and its
bias,

    IA_i - U_i P_i U_i^T,      pA_i + U_i (P_i u_i + Q_i c_i)

(``P_i = D_i^-1``, ``Q_i`` empty for a joint without rows).  ``D_i`` need not be
regular, only the local saddle: the Euler parameters' direction ``e_i``, along which
``C_i e_i = 0``, is held by the row ``2 e_i^T`` itself (no ``Delta_i`` needed).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.relative.kinematics import B_of, TreeKinematics, transfer, transfer_T
from flexmbs.relative.newton_euler import body_mass
from flexmbs.relative.tree import Tree


@dataclass(frozen=True, eq=False)
class ArticulatedFactor:
    """``U_i`` (6, d_i), ``P_i`` (d_i, d_i; ``D_i^-1`` without local rows) and, for the
    joints with local rows, ``Q_i`` (d_i, r_i), ``R_i`` (r_i, r_i) and the slice of their
    rows in ``c`` (module doc)."""

    tree: Tree
    kin: TreeKinematics
    U: list
    P: list
    Q: list
    R: list
    rows: list
    n_rows: int

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x = S^-1 b`` for ``b`` of shape (n_beta,) or (n_beta, k) (with local rows:
        the ``x`` of the saddle point system at ``c = 0``)."""
        return self.solve_rows(b)[0]

    def solve_rows(self, b: np.ndarray, c: np.ndarray | None = None):
        """``(x, y)`` of ``S x + G_l^T y = b``, ``G_l x = c`` (module doc) for ``b`` of
        shape (n_beta,) or (n_beta, k) and ``c`` (n_rows,) or (n_rows, k) (None: 0)."""
        tree, kin = self.tree, self.kin
        b = np.asarray(b, dtype=float)
        cols = b.reshape(b.shape[0], -1)
        k = cols.shape[1]
        cc = (np.zeros((self.n_rows, k)) if c is None
              else np.asarray(c, dtype=float).reshape(self.n_rows, k))
        n = tree.n
        pA = [np.zeros((6, k)) for _ in range(n)]
        u = [None] * n
        for i in range(n - 1, -1, -1):
            tj = tree.joints[i]
            u[i] = cols[tj.s] - kin.C[i].T @ pA[i]
            if tj.parent >= 0:
                xu = self.P[i] @ u[i]
                if self.Q[i] is not None:
                    xu = xu + self.Q[i] @ cc[self.rows[i]]
                pA[tj.parent] += transfer_T(kin.rho[i], pA[i] + self.U[i] @ xu)
        x = np.empty_like(cols)
        y = np.empty((self.n_rows, k))
        a = [None] * n
        for i, tj in enumerate(tree.joints):
            a_p = np.zeros((6, k)) if tj.parent < 0 else transfer(kin.rho[i], a[tj.parent])
            w = u[i] - self.U[i].T @ a_p
            x_i = self.P[i] @ w
            if self.Q[i] is not None:
                c_i = cc[self.rows[i]]
                x_i = x_i + self.Q[i] @ c_i
                y[self.rows[i]] = self.Q[i].T @ w + self.R[i] @ c_i
            x[tj.s] = x_i
            a[i] = a_p + kin.C[i] @ x_i
        y_shape = (self.n_rows,) + b.shape[1:]
        return x.reshape(b.shape), y.reshape(y_shape)


def row_slices(n: int, rows: dict | None) -> tuple[list, int]:
    """The slices of the local rows ``rows`` ({joint index: g_i (r_i, d_i)}) in the
    multipliers ``y`` (in the order of the joints; None for a joint without), and their
    number."""
    sl, start = [None] * n, 0
    for i in range(n):
        if rows is not None and i in rows:
            r_i = np.atleast_2d(rows[i]).shape[0]
            sl[i] = slice(start, start + r_i)
            start += r_i
    return sl, start


def joint_inverse(D: np.ndarray, g) -> tuple:
    """``(P, Q, R)`` of joint ``i``'s local saddle: ``[[P, Q], [Q^T, R]] = [[D, g^T],
    [g, 0]]^-1`` with its local rows ``g`` (r_i, d_i), or ``(D^-1, None, None)``
    without (``g`` None)."""
    if g is None:
        return np.linalg.inv(D), None, None
    g = np.atleast_2d(np.asarray(g, dtype=float))
    d, r_i = D.shape[0], g.shape[0]
    K = np.zeros((d + r_i, d + r_i))
    K[:d, :d], K[:d, d:], K[d:, :d] = D, g.T, g
    K_inv = np.linalg.inv(K)
    return K_inv[:d, :d], K_inv[:d, d:], K_inv[d:, d:]


def factor(tree: Tree, kin: TreeKinematics, c_M: float = 1.0,
           Delta: dict | None = None, rows: dict | None = None) -> ArticulatedFactor:
    """The :class:`ArticulatedFactor` of ``S = c_M Mbar + Delta`` (``Delta``: {joint
    index: (d_i, d_i)} for some joints, zero elsewhere) of a rigid tree at ``kin``, with
    the local rows ``rows``: {joint index: g_i (r_i, d_i)} (their multipliers ``y`` in
    the order of the joints)."""
    if tree.flexible:
        raise ValueError("articulated.factor: rigid trees only")
    n = tree.n
    IA = [c_M * body_mass(b, kin.A[i]) for i, b in enumerate(tree.bodies)]
    U, P, Q, R = [None] * n, [None] * n, [None] * n, [None] * n
    sl, start = row_slices(n, rows)
    for i in range(n - 1, -1, -1):
        C = kin.C[i]
        U[i] = IA[i] @ C
        D = C.T @ U[i]
        if Delta is not None and i in Delta:
            D = D + Delta[i]
        P[i], Q[i], R[i] = joint_inverse(D, None if sl[i] is None else rows[i])
        p = tree.joints[i].parent
        if p >= 0:
            B = B_of(kin.rho[i])
            Ia = IA[i] - U[i] @ P[i] @ U[i].T      # symmetric: kept so (the round-off
            Ia = 0.5 * (Ia + Ia.T)                  # of its skew part grew link by link:
            IA[p] = IA[p] + B.T @ Ia @ B            # 2.1 relative at 32 spherical links)
    return ArticulatedFactor(tree, kin, U, P, Q, R, sl, start)
