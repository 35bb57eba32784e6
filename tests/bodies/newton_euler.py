"""The rigid-body Newton-Euler rows and their derivatives written out with numpy (THEORY
§5.3, (2.4)): a second formulation, independent of the floating-frame kernels, that
``RigidBody.residual``/``tangent`` (the kernels with ``n_q = 0``) are tested against.

With ``omega' = 2 L(e) ed``, ``alpha' = 2 L(e) edd``, ``c`` the centre of mass and ``I_O``
the inertia about the body origin (body components):

    r_r = m rdd + A (m alpha' x c + m omega' x (omega' x c)) - m g
    r_e = 2 L^T (m c x (A^T (rdd - g)) + I_O alpha' + omega' x I_O omega')
"""
from __future__ import annotations

import numpy as np

from flexmbs.kinematics.frames import dATw_de, dAu_de
from flexmbs.kinematics.rotation import A_of, L_of, LT_matrix, tilde

E3 = np.eye(3)


def residual(body, q, qd, qdd, gravity) -> np.ndarray:
    """Rows ``[r_r; r_e]`` (7,) of the module docstring."""
    m, c, I_O = body.m, np.asarray(body.com, float), body.I_O
    e = q[3:7]
    A, L = A_of(e), L_of(e)
    w, al = 2.0 * (L @ qd[3:7]), 2.0 * (L @ qdd[3:7])
    wv = qdd[0:3] - gravity
    u = m * (np.cross(al, c) + np.cross(w, np.cross(w, c)))
    v = m * np.cross(c, A.T @ wv) + I_O @ al + np.cross(w, I_O @ w)
    return np.concatenate([m * wv + A @ u, 2.0 * (L.T @ v)])


def tangent(body, q, qd, qdd, gravity):
    """``(K, C, M)`` of :func:`residual`.  With ``dalpha'/de = -2 L(edd)``,
    ``domega'/de = -2 L(ed)``, ``D = d(w x (w x c))/dw`` and ``Dg = d(w x I_O w)/dw``:

        M = [[m E, -2 m A c~ L], [2 m L^T c~ A^T, 4 L^T I_O L]],
        C = [[0, 2 m A D L], [0, 4 L^T Dg L]],
        K_re = d(A u)/de + 2 m A (c~ L(edd) - D L(ed)),
        K_ee = 2 R_L(v) + 2 L^T (m c~ d(A^T (rdd - g))/de - 2 I_O L(edd) - 2 Dg L(ed)).
    """
    m, c, I_O = body.m, np.asarray(body.com, float), body.I_O
    ct = tilde(c)
    e, ed, edd, rdd = q[3:7], qd[3:7], qdd[3:7], qdd[0:3]
    A, L = A_of(e), L_of(e)
    w = 2.0 * (L @ ed)
    al = 2.0 * (L @ edd)
    Iw = I_O @ w
    D = (w @ c) * E3 + np.outer(w, c) - 2.0 * np.outer(c, w)
    Dg = tilde(w) @ I_O - tilde(Iw)
    u = m * (np.cross(al, c) + np.cross(w, np.cross(w, c)))
    wv = rdd - gravity
    v = m * np.cross(c, wv @ A) + I_O @ al + np.cross(w, Iw)
    Ldd, Ld = L_of(edd), L_of(ed)
    LT2 = 2.0 * L.T
    M = np.zeros((7, 7))
    C = np.zeros((7, 7))
    K = np.zeros((7, 7))
    M[0, 0] = M[1, 1] = M[2, 2] = m
    M[0:3, 3:7] = (-2.0 * m) * (A @ ct) @ L
    M[3:7, 0:3] = M[0:3, 3:7].T
    M[3:7, 3:7] = LT2 @ (2.0 * I_O) @ L
    C[0:3, 3:7] = (2.0 * m) * (A @ D) @ L
    C[3:7, 3:7] = LT2 @ (2.0 * Dg) @ L
    K[0:3, 3:7] = dAu_de(e, u) + (2.0 * m) * A @ (ct @ Ldd - D @ Ld)
    K[3:7, 3:7] = 2.0 * LT_matrix(v) + LT2 @ (
        m * ct @ dATw_de(e, wv) - 2.0 * (I_O @ Ldd + Dg @ Ld))
    return K, C, M
