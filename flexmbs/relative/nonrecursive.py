"""The non-recursive formalism (THEORY §3.8): the global Jacobian ``J = B^{-1} C`` by a
forward sweep, then

    Mbar = sum_i J_i^T M_i J_i,
    k    = k^c + k^t = -sum_i J_i^T (M_i ahat_i - f_i^c - f_i^t),

so that ``Mbar betadd = k``, with ``J_i = B_{p(i),i} J_{p(i)} + [0 .. C_i .. 0]`` and
``ahat_i = B_{p(i),i} ahat_{p(i)} + a_breve_i`` (14).  Cost O(n^2) in the chain length.
"""
from __future__ import annotations

import numpy as np

from flexmbs.relative.kinematics import TreeKinematics, transfer
from flexmbs.relative.newton_euler import body_loads, body_mass
from flexmbs.relative.tree import Tree


def jacobians(tree: Tree, kin: TreeKinematics) -> tuple[list, list]:
    """``(J, ahat)``: ``J[i]`` (6, n_beta) and ``ahat[i]`` (6,) of every body (14)."""
    J, ahat = [], []
    for i, tj in enumerate(tree.joints):
        if tj.parent < 0:
            J_i, a_i = np.zeros((6, tree.n_beta)), np.zeros(6)
        else:
            J_i = transfer(kin.rho[i], J[tj.parent])
            a_i = transfer(kin.rho[i], ahat[tj.parent])
        J_i[:, tj.s] += kin.C[i]
        J.append(J_i)
        ahat.append(a_i + kin.a_breve[i])
    return J, ahat


def mass_and_bias(tree: Tree, kin: TreeKinematics, gravity: np.ndarray,
                  f_extra=None) -> tuple[np.ndarray, np.ndarray]:
    """``(Mbar, k)`` of the module doc, (n_beta, n_beta) and (n_beta,); ``f_extra[i]``:
    further applied wrenches about O_i (force elements), added to ``f_i^t``."""
    J, ahat = jacobians(tree, kin)
    Mbar = np.zeros((tree.n_beta, tree.n_beta))
    k = np.zeros(tree.n_beta)
    for i, body in enumerate(tree.bodies):
        M_i = body_mass(body, kin.A[i])
        Mbar += J[i].T @ M_i @ J[i]
        f_t = body_loads(body, kin.A[i], kin.v[i][:3], gravity)
        if f_extra is not None:
            f_t = f_t + f_extra[i]
        k -= J[i].T @ (M_i @ ahat[i] - f_t)
    return Mbar, k
