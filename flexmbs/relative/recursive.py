"""The recursive formalism (THEORY §3.9, §3.11): the same ``B_{p(i),i}``, ``C_i`` and
``M_i`` in sweeps over the tree, O(n) per residual.

Recursive Newton-Euler (inverse dynamics) for given ``betadd``:

    forward:   abar_i = B_{p(i),i} abar_{p(i)} + C_i betadd_i + a_breve_i          (11)
               f_i^k  = M_i abar_i - f_i^c - f_i^t                                 (7)
    backward:  f_i^P  = f_i^k + sum_{c in children(i)} B_{i,c}^T f_c^P     (f^P = B^{-T} f^k)
    tau_i = C_i^T f_i^P,   tau = J^T f^k = Mbar betadd - k                      (16), (17)

``f_i^P`` is the wrench [M; F] joint i exerts on body i, about O_i, inertial components
(the reaction of the joint; ``C_i^T f_i^P = tau_i`` is zero for a free joint motion).

Composite rigid bodies for the mass matrix: ``M^c_i = M_i + sum_c B_{i,c}^T M^c_c
B_{i,c}``, then ``Mbar_ji = C_j^T (B^T ... B^T) M^c_i C_i`` along the path from i to
the root (O(n d), d the depth).
"""
from __future__ import annotations

import numpy as np

from flexmbs.relative.kinematics import B_of, TreeKinematics, transfer, transfer_T
from flexmbs.relative.newton_euler import body_loads, body_mass
from flexmbs.relative.tree import Tree


def joint_wrenches(tree: Tree, kin: TreeKinematics, betadd: np.ndarray,
                   gravity: np.ndarray, f_extra=None) -> list:
    """``f^P`` (one (6,) wrench per body) for ``betadd``; ``f_extra[i]``: further applied
    wrenches about O_i (e.g. the cut joints' forces), added to ``f_i^t``."""
    n = tree.n
    abar, fP = [None] * n, [None] * n
    for i, tj in enumerate(tree.joints):
        a_p = np.zeros(6) if tj.parent < 0 else abar[tj.parent]
        abar[i] = transfer(kin.rho[i], a_p) + kin.C[i] @ betadd[tj.s] + kin.a_breve[i]
        body = tree.bodies[i]
        fP[i] = (body_mass(body, kin.A[i]) @ abar[i]
                 - body_loads(body, kin.A[i], kin.v[i][:3], gravity))
        if f_extra is not None:
            fP[i] = fP[i] - f_extra[i]
    for i in range(n - 1, -1, -1):
        for c in tree.children[i]:
            fP[i] = fP[i] + transfer_T(kin.rho[c], fP[c])
    return fP


def inverse_dynamics(tree: Tree, kin: TreeKinematics, betadd: np.ndarray,
                     gravity: np.ndarray, f_extra=None) -> np.ndarray:
    """``tau = Mbar betadd - k`` (n_beta,) by recursive Newton-Euler."""
    fP = joint_wrenches(tree, kin, betadd, gravity, f_extra)
    tau = np.zeros(tree.n_beta)
    for i, tj in enumerate(tree.joints):
        tau[tj.s] = kin.C[i].T @ fP[i]
    return tau


def mass_matrix(tree: Tree, kin: TreeKinematics) -> np.ndarray:
    """``Mbar`` (n_beta, n_beta) by composite rigid bodies."""
    Mc = [body_mass(b, kin.A[i]) for i, b in enumerate(tree.bodies)]
    for i in range(tree.n - 1, -1, -1):
        p = tree.joints[i].parent
        if p >= 0:
            B = B_of(kin.rho[i])
            Mc[p] = Mc[p] + B.T @ Mc[i] @ B
    Mbar = np.zeros((tree.n_beta, tree.n_beta))
    for i, tj in enumerate(tree.joints):
        F = Mc[i] @ kin.C[i]
        Mbar[tj.s, tj.s] = kin.C[i].T @ F
        j = i
        while tree.joints[j].parent >= 0:
            F = transfer_T(kin.rho[j], F)
            j = tree.joints[j].parent
            sj = tree.joints[j].s
            Mbar[sj, tj.s] = kin.C[j].T @ F
            Mbar[tj.s, sj] = Mbar[sj, tj.s].T
    return Mbar


def mass_and_bias(tree: Tree, kin: TreeKinematics, gravity: np.ndarray,
                  f_extra=None) -> tuple[np.ndarray, np.ndarray]:
    """``(Mbar, k)`` recursively: ``k = -tau(betadd = 0)``."""
    return mass_matrix(tree, kin), -inverse_dynamics(tree, kin, np.zeros(tree.n_beta),
                                                     gravity, f_extra)
