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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.relative.kinematics import B_of, TreeKinematics, transfer, transfer_T
from flexmbs.relative.newton_euler import body_mass
from flexmbs.relative.tree import Tree


@dataclass(frozen=True, eq=False)
class ArticulatedFactor:
    """``U_i`` (6, d_i) and ``D_i^-1`` (d_i, d_i) of every joint (module doc)."""

    tree: Tree
    kin: TreeKinematics
    U: list
    D_inv: list

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x = S^-1 b`` for ``b`` of shape (n_beta,) or (n_beta, k)."""
        tree, kin = self.tree, self.kin
        b = np.asarray(b, dtype=float)
        cols = b.reshape(b.shape[0], -1)
        k = cols.shape[1]
        n = tree.n
        pA = [np.zeros((6, k)) for _ in range(n)]
        u = [None] * n
        for i in range(n - 1, -1, -1):
            tj = tree.joints[i]
            u[i] = cols[tj.s] - kin.C[i].T @ pA[i]
            if tj.parent >= 0:
                pA[tj.parent] += transfer_T(kin.rho[i],
                                            pA[i] + self.U[i] @ (self.D_inv[i] @ u[i]))
        x = np.empty_like(cols)
        a = [None] * n
        for i, tj in enumerate(tree.joints):
            a_p = np.zeros((6, k)) if tj.parent < 0 else transfer(kin.rho[i], a[tj.parent])
            x_i = self.D_inv[i] @ (u[i] - self.U[i].T @ a_p)
            x[tj.s] = x_i
            a[i] = a_p + kin.C[i] @ x_i
        return x.reshape(b.shape)


def factor(tree: Tree, kin: TreeKinematics, c_M: float = 1.0,
           Delta: dict | None = None) -> ArticulatedFactor:
    """The :class:`ArticulatedFactor` of ``S = c_M Mbar + Delta`` (``Delta``: {joint
    index: (d_i, d_i)} for some joints, zero elsewhere) of a rigid tree at ``kin``."""
    if tree.flexible:
        raise ValueError("articulated.factor: rigid trees only")
    n = tree.n
    IA = [c_M * body_mass(b, kin.A[i]) for i, b in enumerate(tree.bodies)]
    U, D_inv = [None] * n, [None] * n
    for i in range(n - 1, -1, -1):
        C = kin.C[i]
        U[i] = IA[i] @ C
        D = C.T @ U[i]
        if Delta is not None and i in Delta:
            D = D + Delta[i]
        D_inv[i] = np.linalg.inv(D)
        p = tree.joints[i].parent
        if p >= 0:
            B = B_of(kin.rho[i])
            IA[p] = IA[p] + B.T @ (IA[i] - U[i] @ D_inv[i] @ U[i].T) @ B
    return ArticulatedFactor(tree, kin, U, D_inv)
