"""From joint coordinates to the absolute (descriptor) coordinates of the bodies
(THEORY (2.82) -> (2.79)): ``q_b = [r_i, e_i]`` per rigid body (``[r_i, e_i, q_e]`` per
flexible body, its modal coordinates ``q_e`` passed through from ``beta``), with

    qd_b  = T(beta) betad,        T = [J_Ti; 1/2 G(e_i)^T J_Ri]   per body,
    qdd_b = T betadd + Td betad,  Td betad = [ahat_Ti; 1/2 G(ed_i)^T omega_i
                                             + 1/2 G(e_i)^T ahat_Ri]

(and the rows of ``q_e``: ``T = [0 .. E .. 0]`` on its slice of ``beta``, ``Td = 0``)

(``ed = 1/2 G^T omega`` for unit ``e``, THEORY §5.3).  The cut joints' and drives'
equations, the force elements and the outputs of the descriptor form are evaluated on
``q_b``; a generalized force ``Q_b = [Q_r; Q_e]`` on a body's coordinates is the wrench
``[1/2 G(e) Q_e; Q_r]`` about its origin (``Q_e = 2 G^T n`` for a moment ``n``).
"""
from __future__ import annotations

import numpy as np

from flexmbs.kinematics.rotation import G_of, e_from_matrix
from flexmbs.relative.kinematics import TreeKinematics
from flexmbs.relative.tree import Tree


def absolute_state(tree: Tree, kin: TreeKinematics, J: list, ahat: list, body_slices: dict,
                   n_q: int, beta=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q_b, T, Td betad)`` on the layout ``body_slices`` (n_q coordinates); ``beta``
    gives the flexible bodies' modal coordinates (needed if the tree has any)."""
    q, T, es = body_placement(tree, kin.A, kin.r, J, body_slices, n_q, beta)
    return q, T, rate_products(tree, es, kin.v, ahat, body_slices, n_q)


def body_placement(tree: Tree, A: list, r: list, J: list, body_slices: dict, n_q: int,
                   beta=None) -> tuple[np.ndarray, np.ndarray, list]:
    """``(q_b, T, e)`` of :func:`absolute_state` from the poses ``A``, ``r`` and twist
    Jacobians ``J`` (functions of ``beta`` alone), with the bodies' Euler parameters."""
    es = body_quaternions(A)
    T = velocity_map(tree, es, J, body_slices, n_q)
    q = np.zeros(n_q)
    for i, body in enumerate(tree.bodies):
        s = body_slices[body.name]
        q[s.start:s.start + 7] = np.concatenate([r[i], es[i]])
        qe = tree.joints[i].qe
        if qe.stop > qe.start:
            q[s.start + 7:s.stop] = beta[qe]
    return q, T, es


def rate_products(tree: Tree, es: list, v: list, ahat: list, body_slices: dict,
                  n_q: int) -> np.ndarray:
    """``Td betad`` of :func:`absolute_state` from the Euler parameters, twists and
    velocity products of the bodies."""
    Tdbd = np.zeros(n_q)
    for i, body in enumerate(tree.bodies):
        s = body_slices[body.name]
        Tdbd[s.start:s.start + 7] = body_acceleration(es[i], v[i], ahat[i])
    return Tdbd


def body_velocity(e: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``[rd; ed]`` (7,) of a body with Euler parameters ``e`` and twist ``v = [omega;
    v_O]``: ``[v_O; 1/2 G(e)^T omega]``."""
    return np.concatenate([v[3:], 0.5 * G_of(e).T @ v[:3]])


def body_acceleration(e: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``[rdd; edd]`` (7,) of a body with Euler parameters ``e``, twist ``v`` and twist
    rate ``a = [omegad; vd_O]``: ``[vd_O; 1/2 G(ed)^T omega + 1/2 G(e)^T omegad]``,
    ``ed = 1/2 G(e)^T omega``."""
    omega = v[:3]
    G = G_of(e)
    ed = 0.5 * G.T @ omega
    return np.concatenate([a[3:], 0.5 * G_of(ed).T @ omega + 0.5 * G.T @ a[:3]])


def body_quaternions(A: list, e_ref: list | None = None, moved: list | None = None) -> list:
    """Unit Euler parameters ``e_i`` of the bodies' rotations ``A[i]``, each with the sign
    of ``e_ref[i]`` if given (so that ``e`` is continuous about a reference pose); with
    ``moved`` (per body) only those of the moved bodies, None for the others."""
    es = [e_from_matrix(a) if moved is None or moved[i] else None for i, a in enumerate(A)]
    if e_ref is not None:
        es = [-e if e is not None and e @ f < 0.0 else e
              for e, f in zip(es, e_ref, strict=True)]
    return es


def velocity_map(tree: Tree, es: list, J: list, body_slices: dict, n_q: int,
                 moved: list | None = None) -> np.ndarray:
    """``T = dq_b/dbeta`` (n_q, n_beta) from the bodies' Euler parameters ``es`` and twist
    Jacobians ``J`` (module doc); with ``moved`` (per body) only the rows of the moved
    bodies, zero elsewhere."""
    T = np.zeros((n_q, tree.n_beta))
    for i, body in enumerate(tree.bodies):
        if moved is not None and not moved[i]:
            continue
        s = body_slices[body.name]
        T[s.start:s.start + 3] = J[i][3:]
        T[s.start + 3:s.start + 7] = 0.5 * G_of(es[i]).T @ J[i][:3]
        qe = tree.joints[i].qe
        if qe.stop > qe.start:
            T[s.start + 7:s.stop, qe] = np.eye(qe.stop - qe.start)
    return T


def body_wrenches(tree: Tree, body_slices: dict, q_b: np.ndarray, Q: np.ndarray) -> list:
    """Wrench ``[M; F]`` about ``O_i`` (inertial) of the generalized force ``Q`` on the
    bodies' coordinates, one (6,) per tree body."""
    out = []
    for body in tree.bodies:
        s = body_slices[body.name]
        Q_b = Q[s]
        out.append(np.concatenate([0.5 * G_of(q_b[s][3:7]) @ Q_b[3:7], Q_b[:3]]))
    return out

