"""The rows of the cut joints and drives of a tree by paths, without the dense velocity
map ``T`` (n_qb x n_beta) of :mod:`flexmbs.relative.absolute_map`.

A cut joint or drive between bodies ``a`` and ``b`` has descriptor rows ``C_b`` nonzero
only in those bodies' coordinates, so that

    G_c = C_b T = sum_{i in {a, b}} C_b[:, i] T_i,     T_i = [J_Ti; 1/2 G(e_i)^T J_Ri; 0 .. E .. 0]

with ``T_i`` the rows of body ``i`` (the last ones on its modal coordinates ``q_e,i``),
nonzero only in the coordinates ``betabar_k = [beta_k; q_e,k]`` of ``i`` and its
ancestors ``k``.  The twist Jacobian of body ``i`` on them is, the transfers
``B_{k,i} = [[E, 0], [-(r_i - r_k)~, E]]`` composed along the path in one
(``B(a) B(b) = B(a + b)``),

    J_i[:, betabar_k] = B_{k,i} C_k,      J_i[:, q_e,p(c)] += B_{c,i} X_e,c

(``C_k`` the local columns of joint ``k`` and of body ``k``'s modal rates, ``X_e,c`` those
of the parent's modal rates through a deforming marker P of the path's child ``c``,
:class:`~flexmbs.relative.flexible_kinematics.LocalKinematics`; rigid trees:
:class:`~flexmbs.relative.kinematics.TreeKinematics`, no ``X_e``): O(d) per touched body
(d its depth), against O(n^2) for the dense ``T``.  ``c(q_b)``, ``C_b``, ``gamma = C_b Td
betad + ...`` need ``q_b``, ``qd_b = T betad`` and ``Td betad`` only, made body by body
from the sweep's poses, twists and velocity products (:func:`body_states`), O(n).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from flexmbs.kinematics.rotation import G_of
from flexmbs.relative.absolute_map import body_acceleration, body_velocity
from flexmbs.relative.kinematics import transfer
from flexmbs.relative.tree import Tree


@dataclass(frozen=True, eq=False)
class PathGeometry:
    """What the paths need, per body ``i`` (tree order): origin ``r[i]`` (3,), local
    columns ``C[i]`` (6, n_beta_i [+ n_e,i]), ``X_e[i]`` (6, n_e of the parent, or None)
    and unit Euler parameters ``e[i]`` (those of ``q_b``)."""

    r: list
    C: list
    X_e: list
    e: list


def body_velocity_map(tree: Tree, geo: PathGeometry, i: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cols, T_i)``: the rows ``T_i`` (7 + n_e,i, len(cols)) of body ``i`` of ``T`` on
    the coordinates ``cols`` of its path (module doc), O(d)."""
    blocks, cols = [], []
    k, child = i, -1
    r_i = geo.r[i]
    while k >= 0:
        tj = tree.joints[k]
        n_b = tj.s.stop - tj.s.start
        J_k = np.zeros((6, tj.qe.stop - tj.s.start))
        C_k = geo.C[k]
        J_k[:, :C_k.shape[1]] = C_k if k == i else transfer(r_i - geo.r[k], C_k)
        if child >= 0 and geo.X_e[child] is not None:
            J_k[:, n_b:] += transfer(r_i - geo.r[child], geo.X_e[child])
        blocks.append(J_k)
        cols.append(np.arange(tj.s.start, tj.qe.stop))
        child, k = k, tj.parent
    J = np.hstack(blocks)
    tj = tree.joints[i]
    n_e = tj.qe.stop - tj.qe.start
    T_i = np.zeros((7 + n_e, J.shape[1]))
    T_i[:3] = J[3:]
    T_i[3:7] = 0.5 * G_of(geo.e[i]).T @ J[:3]
    n_b = tj.s.stop - tj.s.start
    T_i[7:, n_b:n_b + n_e] = np.eye(n_e)      # block 0 is body i's own betabar_i
    return np.concatenate(cols), T_i


def cut_jacobian(tree: Tree, geo: PathGeometry, C_b, body_index: np.ndarray,
                 body_slices: dict) -> np.ndarray:
    """``G_c = C_b T`` (m_c, n_beta) from the sparse rows ``C_b`` (m_c, n_qb) of the cut
    joints and drives, body by body along the touched bodies' paths (module doc);
    ``body_index[c]``: the tree body of the descriptor coordinate ``c``."""
    C_b = sp.csc_matrix(C_b)
    G_c = np.zeros((C_b.shape[0], tree.n_beta))
    nonzero = C_b.tocoo()
    touched = np.unique(body_index[nonzero.col[nonzero.data != 0.0]])
    for i in touched:
        s = body_slices[tree.bodies[i].name]
        cols, T_i = body_velocity_map(tree, geo, int(i))
        G_c[:, cols] += C_b[:, s].toarray() @ T_i
    return G_c


def body_index_of(tree: Tree, body_slices: dict, n_qb: int) -> np.ndarray:
    """The tree body of each descriptor coordinate (n_qb,)."""
    out = np.full(n_qb, -1, dtype=int)
    for i, body in enumerate(tree.bodies):
        out[body_slices[body.name]] = i
    return out


def body_states(tree: Tree, geo: PathGeometry, v: list, ahat: list, beta: np.ndarray,
                betad: np.ndarray, body_slices: dict, n_qb: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q_b, qd_b, Td betad)`` of the descriptor form from the twists ``v[i]`` and
    velocity products ``ahat[i]`` (:mod:`flexmbs.relative.absolute_map`), O(n)."""
    q, qd, Tdbd = np.zeros(n_qb), np.zeros(n_qb), np.zeros(n_qb)
    for i, body in enumerate(tree.bodies):
        s, qe = body_slices[body.name], tree.joints[i].qe
        q[s.start:s.start + 3] = geo.r[i]
        q[s.start + 3:s.start + 7] = geo.e[i]
        qd[s.start:s.start + 7] = body_velocity(geo.e[i], v[i])
        Tdbd[s.start:s.start + 7] = body_acceleration(geo.e[i], v[i], ahat[i])
        q[s.start + 7:s.stop] = beta[qe]
        qd[s.start + 7:s.stop] = betad[qe]
    return q, qd, Tdbd


def velocity_map_product(tree: Tree, geo: PathGeometry, x: np.ndarray, body_slices: dict,
                         n_qb: int) -> np.ndarray:
    """``T x`` (n_qb,) without ``T``: the twists ``J_i x`` by the forward recursion
    ``J_i x = B_{p,i} J_p x + X_e,i x_e,p + C_i xbar_i``, then ``[v_O; 1/2 G(e_i)^T
    omega; x_e,i]`` per body, O(n)."""
    out = np.zeros(n_qb)
    y = []
    for i, (tj, body) in enumerate(zip(tree.joints, tree.bodies, strict=True)):
        C_i, p = geo.C[i], tj.parent
        y_i = C_i @ x[tj.s.start:tj.s.start + C_i.shape[1]]
        if p >= 0:
            y_i = y_i + transfer(geo.r[i] - geo.r[p], y[p])
            if geo.X_e[i] is not None:
                y_i = y_i + geo.X_e[i] @ x[tree.joints[p].qe]
        y.append(y_i)
        s = body_slices[body.name]
        out[s.start:s.start + 7] = body_velocity(geo.e[i], y_i)
        out[s.start + 7:s.stop] = x[tj.qe]
    return out
