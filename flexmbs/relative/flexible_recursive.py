"""The recursive formalism (THEORY §3.9, §3.11) for trees with flexible bodies (floating
frame of reference): recursive Newton-Euler with the modal coordinates of a body among
its generalized velocities, composite bodies for the mass matrix.

Body ``i``'s generalized velocity is ``y_i = [omega_i; v_Oi; qd_e,i]`` (6 + n_e,i; no
modal part for a rigid body) and its joint coordinates ``betabar_i = [beta_i; q_e,i]``
(contiguous in ``beta``).  The local quantities of
:func:`~flexmbs.relative.flexible_kinematics.local_kinematics` give

    y_i = X_i y_p + Cbar_i betabard_i,   X_i = [[B_{p,i}, X_e,i], [0, 0]],
                                       Cbar_i = [[C_i], [0, E]],

and the twist rates ``ydot_i = X_i ydot_p + Cbar_i betabardd_i + a_breve_i`` with
``a_breve_i = [ahat_i - B_{p,i} ahat_p; 0]`` from the velocity products ``ahat``
(:func:`~flexmbs.relative.flexible_kinematics.velocity_products`).  The bodies' equations
are those of the descriptor form (the same body-level quantities as the non-recursive
route): with ``qd_b,i = H_i y_i``, ``H_i = [[0, E, 0], [1/2 G(e_i)^T, 0, 0], [0, 0, E]]``
(rows ``r``, ``e``, ``q_e``) and ``r_b`` the bodies' residuals (mass matrix, quadratic
velocity, elastic and applied forces of the FFRF and rigid bodies, THEORY §2.1):

    forward:   ydot_i = X_i ydot_p + Cbar_i betabardd_i + a_breve_i
               qdd_b,i = H_i ydot_i + Hd_i y_i      (absolute_map.body_acceleration)
               f_i^k = H_i^T r_b,i(q_b, qd_b, qdd_b)          (one residual of all bodies)
    backward:  f_i^P = f_i^k + sum_{c in children(i)} X_c^T f_c^P
    tau_i = Cbar_i^T f_i^P,   tau = Jbar^T f^k = T^T r_b = Mbar betadd - k,

the elastic coordinates' generalized forces the rows ``q_e,i`` of ``tau_i``.  The first
six rows of ``f_i^P`` are the wrench ``[M; F]`` joint ``i`` exerts on body ``i`` about
``O_i`` (inertial components), its last ``n_e,i`` the generalized forces on body ``i``'s
modes of the joints of its children (through their markers' deformation) and of its
own loads.  Composite bodies: ``Mc_i = H_i^T M_b,i H_i + sum_c X_c^T Mc_c X_c``,
``Mbar_ii = Cbar_i^T Mc_i Cbar_i`` and ``Mbar_ji = Cbar_j^T X^T ... X^T Mc_i Cbar_i`` along
the path from ``i`` to the root (O(n d), d the depth).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics.rotation import G_of
from flexmbs.relative.absolute_map import body_acceleration, body_quaternions, body_velocity
from flexmbs.relative.flexible_kinematics import (
    LocalKinematics,
    local_kinematics,
    twists,
    velocity_products,
)
from flexmbs.relative.kinematics import B_of, transfer, transfer_T
from flexmbs.relative.tree import Tree


@dataclass(frozen=True, eq=False)
class FlexibleState:
    """The sweep at ``(beta, betad)``: local kinematics, Euler parameters ``e[i]``, twists
    ``v[i]`` and velocity products ``ahat[i]`` (6,) per body."""

    beta: np.ndarray
    betad: np.ndarray
    loc: LocalKinematics
    e: list
    v: list
    ahat: list


def state(tree: Tree, beta: np.ndarray, betad: np.ndarray, e_ref=None) -> FlexibleState:
    """The :class:`FlexibleState` (three O(n) sweeps; Euler parameters with the signs of
    ``e_ref`` if given)."""
    loc = local_kinematics(tree, beta)
    return FlexibleState(beta, betad, loc, body_quaternions(loc.A, e_ref),
                         twists(tree, loc, betad), velocity_products(tree, beta, betad))


def barred(tree: Tree, i: int) -> slice:
    """``betabar_i = [beta_i; q_e,i]`` in ``beta``."""
    return slice(tree.joints[i].s.start, tree.joints[i].qe.stop)


def _X(st: FlexibleState, i: int, y_p: np.ndarray, n_i: int) -> np.ndarray:
    """``X_i y_p`` (6 + n_i,)."""
    out = np.zeros(6 + n_i)
    out[:6] = transfer(st.loc.rho[i], y_p[:6])
    if st.loc.X_e[i] is not None:
        out[:6] += st.loc.X_e[i] @ y_p[6:]
    return out


def _X_T(st: FlexibleState, i: int, f: np.ndarray, n_p: int) -> np.ndarray:
    """``X_i^T f`` (6 + n_p,) of ``f`` (6 + n_i,)."""
    out = np.zeros(6 + n_p)
    out[:6] = transfer_T(st.loc.rho[i], f[:6])
    if st.loc.X_e[i] is not None:
        out[6:] = st.loc.X_e[i].T @ f[:6]
    return out


def _X_matrix(st: FlexibleState, i: int, n_i: int, n_p: int) -> np.ndarray:
    """``X_i`` (6 + n_i, 6 + n_p)."""
    X = np.zeros((6 + n_i, 6 + n_p))
    X[:6, :6] = B_of(st.loc.rho[i])
    if st.loc.X_e[i] is not None:
        X[:6, 6:] = st.loc.X_e[i]
    return X


def Cbar_matrix(loc: LocalKinematics, i: int, n_i: int) -> np.ndarray:
    """``Cbar_i`` (6 + n_i, n_beta_i + n_i)."""
    C = loc.C[i]
    out = np.zeros((6 + n_i, C.shape[1]))
    out[:6] = C
    out[6:, C.shape[1] - n_i:] = np.eye(n_i)
    return out


def H_matrix(e: np.ndarray, n_i: int) -> np.ndarray:
    """``H_i`` (7 + n_i, 6 + n_i), ``qd_b,i = H_i y_i`` (module doc)."""
    H = np.zeros((7 + n_i, 6 + n_i))
    H[:3, 3:6] = np.eye(3)
    H[3:7, :3] = 0.5 * G_of(e).T
    H[7:, 6:] = np.eye(n_i)
    return H


def n_modes(tree: Tree, i: int) -> int:
    """The number of body ``i``'s modal coordinates."""
    qe = tree.joints[i].qe
    return qe.stop - qe.start


def body_state(tree: Tree, st: FlexibleState, body_slices: dict, n_q: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """``(q_b, qd_b)`` of the descriptor form, O(n)."""
    q, qd = np.zeros(n_q), np.zeros(n_q)
    for i, body in enumerate(tree.bodies):
        s, qe = body_slices[body.name], tree.joints[i].qe
        q[s.start:s.start + 7] = np.concatenate([st.loc.r[i], st.e[i]])
        qd[s.start:s.start + 7] = body_velocity(st.e[i], st.v[i])
        q[s.start + 7:s.stop] = st.beta[qe]
        qd[s.start + 7:s.stop] = st.betad[qe]
    return q, qd


def joint_wrenches(tree: Tree, st: FlexibleState, betadd: np.ndarray,
                   residual_b: Callable, body_slices: dict, n_q: int) -> list:
    """``f^P`` (one (6 + n_e,i,) per body) for ``betadd``; ``residual_b(q_b, qd_b,
    qdd_b)``: the bodies' residuals (descriptor form; with the cut joints' multipliers
    their forces are applied loads)."""
    n = tree.n
    ydot, qdd = [None] * n, np.zeros(n_q)
    for i, tj in enumerate(tree.joints):
        n_i = n_modes(tree, i)
        a = Cbar_matrix(st.loc, i, n_i) @ betadd[barred(tree, i)]
        a[:6] += st.ahat[i]
        if tj.parent >= 0:
            a += _X(st, i, ydot[tj.parent], n_i)
            a[:6] -= transfer(st.loc.rho[i], st.ahat[tj.parent])
        ydot[i] = a
        s = body_slices[tree.bodies[i].name]
        qdd[s.start:s.start + 7] = body_acceleration(st.e[i], st.v[i], a[:6])
        qdd[s.start + 7:s.stop] = a[6:]
    q_b, qd_b = body_state(tree, st, body_slices, n_q)
    r_b = residual_b(q_b, qd_b, qdd)
    fP = []
    for i, body in enumerate(tree.bodies):
        s = body_slices[body.name]
        r_i = r_b[s]
        fP.append(np.concatenate([0.5 * G_of(st.e[i]) @ r_i[3:7], r_i[:3], r_i[7:]]))
    for i in range(n - 1, -1, -1):
        for c in tree.children[i]:
            fP[i] = fP[i] + _X_T(st, c, fP[c], n_modes(tree, i))
    return fP


def inverse_dynamics(tree: Tree, st: FlexibleState, betadd: np.ndarray,
                     residual_b: Callable, body_slices: dict, n_q: int) -> np.ndarray:
    """``tau = Mbar betadd - k`` (n_beta,) by recursive Newton-Euler (module doc)."""
    fP = joint_wrenches(tree, st, betadd, residual_b, body_slices, n_q)
    tau = np.zeros(tree.n_beta)
    for i in range(tree.n):
        tau[barred(tree, i)] = Cbar_matrix(st.loc, i, n_modes(tree, i)).T @ fP[i]
    return tau


def mass_matrix(tree: Tree, st: FlexibleState, M_b, body_slices: dict) -> np.ndarray:
    """``Mbar`` (n_beta, n_beta) by composite bodies from the bodies' mass matrix ``M_b``
    (descriptor form, block diagonal; dense or sparse)."""
    Mc = []
    for i, body in enumerate(tree.bodies):
        s = body_slices[body.name]
        M_i = M_b[s, s]
        M_i = np.asarray(M_i.toarray() if hasattr(M_i, "toarray") else M_i)
        H = H_matrix(st.e[i], n_modes(tree, i))
        Mc.append(H.T @ M_i @ H)
    for i in range(tree.n - 1, -1, -1):
        p = tree.joints[i].parent
        if p >= 0:
            X = _X_matrix(st, i, n_modes(tree, i), n_modes(tree, p))
            Mc[p] = Mc[p] + X.T @ Mc[i] @ X
    Mbar = np.zeros((tree.n_beta, tree.n_beta))
    for i in range(tree.n):
        si = barred(tree, i)
        Cb = Cbar_matrix(st.loc, i, n_modes(tree, i))
        F = Mc[i] @ Cb
        Mbar[si, si] = Cb.T @ F
        j = i
        while tree.joints[j].parent >= 0:
            p = tree.joints[j].parent
            F = _X_matrix(st, j, n_modes(tree, j), n_modes(tree, p)).T @ F
            j = p
            sj = barred(tree, j)
            Mbar[sj, si] = Cbar_matrix(st.loc, j, n_modes(tree, j)).T @ F
            Mbar[si, sj] = Mbar[sj, si].T
    return Mbar
