"""Forward kinematic sweep of a tree (THEORY §3.3, (9)-(11)): from the joint coordinates
``beta`` and rates ``betad`` to the pose, the twist ``v_i = [omega_i; v_Oi]`` and the
matrices ``B_{p(i),i}``, ``C_i`` and velocity-product accelerations of every body, all
in inertial components (rotational part first).

With ``A_PR = A_p R_P`` (P's axes), ``rho = r_i - r_p``, ``rho_Q = r_i - r_Q`` and the
joint quantities of :mod:`flexmbs.relative.joints`:

    A_i = A_PR A_rel R_Q^T,     r_i = r_p + A_p s_P + A_PR d - A_i s_Q
    B_{p,i} = [[E, 0], [-rho~, E]],   C_i = [[A_PR S_omega], [A_PR S_v - rho_Q~ A_PR S_omega]]
    v_i = B_{p,i} v_p + C_i betad_i                                          (10)
    a_i = B_{p,i} a_p + C_i betadd_i + a_breve_i                             (11)
    a_breve_i = [omega_p x w + A_PR s_omega;
                 omega_p x (v_Oi - v_Op) + omega_p x (A_PR v_rel)
                 + A_PR s_v + (omega_p x w + A_PR s_omega) x rho_Q + w x (omega_i x rho_Q)]

with ``w = A_PR omega_rel`` the relative angular velocity.  ``B`` is never inverted:
products with ``B^{-1}`` are this forward sweep, with ``B^{-T}`` the backward sweep of
:mod:`flexmbs.relative.recursive`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics.rotation import tilde
from flexmbs.relative.newton_euler import cross
from flexmbs.relative.tree import Tree


@dataclass(frozen=True, eq=False)
class TreeKinematics:
    """Per body ``i`` (tree order): ``A[i]`` (3, 3), ``r[i]`` (3,) [m], twist ``v[i]`` (6,)
    ``[omega; v_O]`` [rad/s, m/s], ``rho[i] = r_i - r_p(i)`` (defines ``B_{p(i),i}``),
    ``C[i]`` (6, n_beta_i) and ``a_breve[i]`` (6,) [rad/s^2, m/s^2]."""

    A: list
    r: list
    v: list
    rho: list
    C: list
    a_breve: list


def B_of(rho: np.ndarray) -> np.ndarray:
    """``B_{p(i),i} = [[E, 0], [-rho~, E]]`` (6, 6), ``rho = r_{O_p O_i}``."""
    B = np.eye(6)
    B[3:, :3] = -tilde(rho)
    return B


def transfer(rho: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``B_{p,i} x`` for a twist (or columns of twists) ``x = [omega; v]``."""
    out = np.array(x, dtype=float, copy=True)
    out[3:] -= tilde(rho) @ x[:3]
    return out


def transfer_T(rho: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``B_{p,i}^T f`` for a wrench (or columns) ``f = [M; F]``: moves it from O_i to
    O_p, ``[M + rho x F; F]``."""
    out = np.array(f, dtype=float, copy=True)
    out[:3] += tilde(rho) @ f[3:]
    return out


def forward(tree: Tree, beta: np.ndarray, betad: np.ndarray) -> TreeKinematics:
    """The forward sweep at ``(beta, betad)`` (module doc)."""
    A, r, v, rho, C, a_breve = [], [], [], [], [], []
    for tj in tree.joints:
        if tj.parent < 0:
            A_p, r_p, v_p = np.eye(3), np.zeros(3), np.zeros(6)
        else:
            p = tj.parent
            A_p, r_p, v_p = A[p], r[p], v[p]
        b, bd = beta[tj.s], betad[tj.s]
        A_rel, d = tj.motion.pose(b)
        S_w, S_v = tj.motion.subspace(b)
        s_w, s_v = tj.motion.bias(b, bd)
        A_PR = A_p @ tj.P.R
        A_i = A_PR @ A_rel @ tj.Q.R.T
        r_Q = r_p + A_p @ tj.P.s + A_PR @ d
        r_i = r_Q - A_i @ tj.Q.s
        rho_i, rho_Q = r_i - r_p, r_i - r_Q
        CR = A_PR @ S_w
        C_i = np.vstack([CR, A_PR @ S_v - tilde(rho_Q) @ CR])
        v_i = transfer(rho_i, v_p) + C_i @ bd
        w_p, w = v_p[:3], CR @ bd
        eps = cross(w_p, w) + A_PR @ s_w
        acc = (cross(w_p, v_i[3:] - v_p[3:] + A_PR @ (S_v @ bd))
               + A_PR @ s_v + cross(eps, rho_Q) + cross(w, cross(v_i[:3], rho_Q)))
        A.append(A_i)
        r.append(r_i)
        v.append(v_i)
        rho.append(rho_i)
        C.append(C_i)
        a_breve.append(np.concatenate([eps, acc]))
    return TreeKinematics(A, r, v, rho, C, a_breve)
