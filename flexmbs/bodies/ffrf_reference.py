"""Numpy reference of :mod:`flexmbs.bodies.ffrf_kernel` (same names, same arguments).

The residual of the floating-frame body (THEORY §2.7, §2.8; see
:mod:`flexmbs.bodies.flexible`),

    residual = [ m (rdd - g) + A f_t;   2 L^T f_r;   f_e ],

    f_t = m (alpha' x c + omega' x (omega' x c)) + C_t^T qdd_e + 2 omega' x (C_t^T qd_e)
    f_r = m c x (A^T (rdd - g)) + omega' x (I omega') + I alpha' + C_r^T qdd_e + G_r omega'
    f_e = C_r alpha' + [omega'^T O_e^k omega']_k + C_t A^T (rdd - g) + G_e omega'
          + M_e qdd_e + h_e(q_e) + D_e qd_e,

and its tangent ``(K, C, M)``, written as whole-array numpy products on the same
arguments as the kernels (``lin = lin0 + q_e lin_q`` holds ``[m c, I_0 + I_1 q,
-dG_r/dqd / 2, [C_r | O_e]]``, see ``FlexibleBody.kernel_args``).  The kernels sum in
other orders, so the two agree to round-off, not bitwise.
"""
from __future__ import annotations

import numpy as np

from flexmbs.kinematics.frames import dATw_de, dAu_de
from flexmbs.kinematics.rotation import A_of, L_of, LT_matrix, tilde
from flexmbs.reduction.invariants import matvec, vecmat
from flexmbs.reduction.stiffening import h3_pairs, h3_pairs_tangent

E3 = np.eye(3)


def _state(q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd) -> dict:
    """The body-frame quantities of the module docstring at one state."""
    n = q.shape[0] - 7
    e = q[3:7]
    qe, qed, qedd = q[7:], qd[7:], qdd[7:]
    A, L = A_of(e), L_of(e)
    w = qdd[0:3] - g
    d = A.T @ w                                        # A^T (rdd - g)
    om = 2.0 * (L @ qd[3:7])                           # omega' = 2 L(e) ed
    al = 2.0 * (L @ qdd[3:7])                          # alpha' = 2 L(e) edd
    lin = lin0 + vecmat(qe, lin_q)
    o = 12 + 9 * n
    c = lin[0:3] / m
    Iq = (lin[3:12] + qe @ vecmat(qe, I2).reshape(n, 9)).reshape(3, 3)
    Gm = lin[12:o].reshape(n, 9)                       # -dG_r/dqd_m / 2, (m, ij)
    CrOe = lin[o:].reshape(n, 12)                      # [C_r | O_e], (k, 12)
    Gr = -2.0 * (qed @ Gm).reshape(3, 3)
    lqd = vecmat(qed, lin_qd)                             # [C_t^T qd, C_r1 qd (3n), D qd]
    lqdd = vecmat(qedd, lin_qdd)                          # [C_t^T qdd, M_e qdd]
    vt = lqd[0:3]
    Iw = Iq @ om
    f_t = m * (np.cross(al, c) + np.cross(om, np.cross(om, c))) + lqdd[0:3] \
        + 2.0 * np.cross(om, vt)                       # without m (rdd - g)
    f_r = m * np.cross(c, d) + np.cross(om, Iw) + Iq @ al + qedd @ CrOe[:, 0:3] + Gr @ om
    return {"n": n, "e": e, "A": A, "L": L, "w": w, "d": d, "om": om, "al": al, "c": c,
            "Iq": Iq, "Gm": Gm, "CrOe": CrOe, "Gr": Gr, "lqd": lqd, "lqdd": lqdd, "vt": vt,
            "Iw": Iw, "f_t": f_t, "f_r": f_r}


def _h_e(qe, K_e, K2, H_p, stiff) -> np.ndarray:
    """``K_e q + K2:q q + K3:q q q`` (``K2`` as (k a, b), ``K3 : q q q`` in the pair form
    of :func:`flexmbs.reduction.stiffening.h3_pairs` with ``H_p`` (n_p, n_p)) or ``K_e q``."""
    f = K_e @ qe
    if stiff:
        n = qe.shape[0]
        f = f + matvec(K2, qe).reshape(n, n) @ qe + h3_pairs(H_p, qe)
    return f


def ffrf_residual(q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd, C_t, K_e, K2, H_p,
                  stiff) -> np.ndarray:
    """``[m (rdd - g) + A f_t; 2 L^T f_r; f_e]`` (module docstring), shape (7 + n_q,)."""
    s = _state(q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd)
    n, om, al, lqd = s["n"], s["om"], s["al"], s["lqd"]
    zeta = np.concatenate([al, np.outer(om, om).ravel()])   # [alpha'; vec(omega' omega'^T)]
    f_e = s["CrOe"] @ zeta + C_t @ s["d"] + 2.0 * lqd[3:3 + 3 * n].reshape(n, 3) @ om \
        + s["lqdd"][3:] + lqd[3 + 3 * n:] + _h_e(q[7:], K_e, K2, H_p, stiff)
    return np.concatenate([m * s["w"] + s["A"] @ s["f_t"], 2.0 * (s["L"].T @ s["f_r"]), f_e])


def ffrf_tangent(q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd, C_t, M_e, D_e, I1,
                 I2s_l, G2_m, C_r1_kl, C_r1_k, O_e1_kl, K_e, K2s, H_p, stiff):
    """``(K, C, M)``: the exact derivatives of :func:`ffrf_residual` by ``q``, ``qd``,
    ``qdd``: the partial derivatives of ``f = [f_t; f_r; f_e]`` by ``(A^T (rdd - g),
    alpha', omega', qd_e, q_e)`` and ``qdd_e``, chained with ``d(A^T w)/de``,
    ``dalpha'/de = -2 L(edd)``, ``domega'/de = -2 L(ed)`` and projected by
    ``blockdiag(A, 2 L^T, E)``, plus the derivatives of the projections ``A`` and
    ``2 L^T`` themselves."""
    s = _state(q, qd, qdd, g, m, lin0, lin_q, I2, lin_qd, lin_qdd)
    n, e, A, L = s["n"], s["e"], s["A"], s["L"]
    qe, qed, qedd = q[7:], qd[7:], qdd[7:]
    c, d, om, al, Iq, CrOe, lqd = (s[k] for k in ("c", "d", "om", "al", "Iq", "CrOe", "lqd"))
    Cr, Oe3 = CrOe[:, 0:3], CrOe[:, 3:].reshape(n, 3, 3)
    Ge = 2.0 * lqd[3:3 + 3 * n].reshape(n, 3)
    N = 6 + n
    ct, ot = tilde(c), tilde(om)
    C_tT = C_t.T
    # partial derivatives of f by (d, alpha', omega', qd_e, q_e) (column blocks)
    Fx = np.zeros((N, 9 + 2 * n))
    f_d, f_al, f_om = Fx[:, 0:3], Fx[:, 3:6], Fx[:, 6:9]
    f_qd, f_q = Fx[:, 9:9 + n], Fx[:, 9 + n:]
    f_d[3:6], f_d[6:] = m * ct, C_t
    f_al[0:3], f_al[3:6], f_al[6:] = -m * ct, Iq, Cr
    Dw = (om @ c) * E3 + np.outer(om, c) - 2.0 * np.outer(c, om)   # d(w x (w x c))/dw
    f_om[0:3] = m * Dw - 2.0 * tilde(s["vt"])
    f_om[3:6] = ot @ Iq - tilde(s["Iw"]) + s["Gr"]
    f_om[6:] = Oe3 @ om + om @ Oe3 + Ge
    f_qd[0:3] = 2.0 * ot @ C_tT
    f_qd[3:6] = -2.0 * (s["Gm"].reshape(n, 3, 3) @ om).T
    f_qd[6:] = 2.0 * matvec(C_r1_kl, om).reshape(n, n) + D_e
    f_q[0:3] = (tilde(al) + ot @ ot) @ C_tT
    dI = I1.reshape(n, 3, 3) + vecmat(qe, I2s_l).reshape(n, 3, 3)     # dI/dq_j
    G2qd = vecmat(qed, G2_m).reshape(n, 3, 3)                         # sum_m qd_m G2[m, l]
    f_q[3:6] = (-tilde(d) @ C_tT + (dI @ al).T + ot @ (dI @ om).T
                + vecmat(qedd, C_r1_k).reshape(n, 3).T - 2.0 * (G2qd @ om).T)
    f_q[6:] = matvec(C_r1_kl, al).reshape(n, n) + matvec(O_e1_kl, np.outer(om, om).ravel()) \
        .reshape(n, n) + K_e
    if stiff:
        f_q[6:] += matvec(K2s, qe).reshape(n, n) + h3_pairs_tangent(H_p, qe)
    f_qdd = np.concatenate([C_tT, Cr.T, M_e])
    # derivatives of the body-frame variables by e
    L2 = 2.0 * L
    dd_de = dATw_de(e, s["w"])                                     # d(A^T w)/de
    dal_de, dom_de = -2.0 * L_of(qdd[3:7]), -2.0 * L_of(qd[3:7])
    # the column blocks [d/d rdd, d/d edd, d/d qdd_e | d/d ed, d/d qd_e | d/de, d/dq_e]
    X = np.hstack([f_d @ A.T, f_al @ L2, f_qdd,
                   f_om @ L2, f_qd,
                   f_d @ dd_de + f_al @ dal_de + f_om @ dom_de, f_q])
    Y = np.vstack([A @ X[0:3], L2.T @ X[3:6], X[6:]])              # blockdiag(A, 2 L^T, E)
    nc = 7 + n
    M = Y[:, 0:nc].copy()
    Cm = np.zeros((nc, nc))
    K = np.zeros((nc, nc))
    M[0:3, 0:3] += m * E3                                          # d(m (rdd - g))/drdd
    Cm[:, 3:] = Y[:, nc:nc + 4 + n]
    K[:, 3:] = Y[:, nc + 4 + n:]
    K[0:3, 3:7] += dAu_de(e, s["f_t"])                             # d(A f_t)/de at fixed f_t
    K[3:7, 3:7] += 2.0 * LT_matrix(s["f_r"])                       # d(2 L^T f_r)/de
    return K, Cm, M


def _n_p(n, stiff) -> int:
    """The side of ``H_p``: ``n (n + 1) / 2`` pairs with stiffening, 0 without."""
    return n * (n + 1) // 2 if stiff else 0


def _rows(a, p0, p1, k, shape) -> np.ndarray:
    return a[p0[k]:p1[k]].reshape(shape)


def bodies_residual(q, qd, qdd, g, off, nq, m, stiff, ptr, lin0, lin_q, I2, lin_qd, lin_qdd,
                    C_t, K_e, K2, H_p) -> np.ndarray:
    """The residuals of all floating-frame bodies of a system: body ``b`` has coordinates
    ``q[off[b]:off[b] + 7 + nq[b]]`` (``nq[b] = -4``: a point mass, ``m (rdd - g)`` on its
    3 coordinates) and its constant arrays of :func:`ffrf_residual` flattened in
    ``lin0 ... H_p`` from ``ptr[b, k]`` to ``ptr[b + 1, k]`` (``k`` the array)."""
    out = np.empty(q.shape[0])
    for b in range(off.shape[0]):
        n, o = int(nq[b]), int(off[b])
        if n < 0:
            out[o:o + 3] = m[b] * (qdd[o:o + 3] - g)
            continue
        nc, p0, p1, s = 7 + n, ptr[b], ptr[b + 1], bool(stiff[b])
        out[o:o + nc] = ffrf_residual(
            q[o:o + nc], qd[o:o + nc], qdd[o:o + nc], g, m[b], lin0[p0[0]:p1[0]],
            _rows(lin_q, p0, p1, 1, (n, 12 + 21 * n)), _rows(I2, p0, p1, 2, (n, 9 * n)),
            _rows(lin_qd, p0, p1, 3, (n, 3 + 4 * n)), _rows(lin_qdd, p0, p1, 4, (n, 3 + n)),
            _rows(C_t, p0, p1, 5, (n, 3)), _rows(K_e, p0, p1, 6, (n, n)),
            _rows(K2, p0, p1, 7, (n * n if s else 0, n if s else 0)),
            _rows(H_p, p0, p1, 8, (_n_p(n, s),) * 2), s)
    return out


def bodies_newton_values(q, qd, qdd, g, cK, cC, cM, off, nq, m, stiff, ptr, lin0, lin_q, I2,
                         lin_qd, lin_qdd, tptr, C_t, M_e, D_e, I1, I2s_l, G2_m, C_r1_kl,
                         C_r1_k, O_e1_kl, K_e, K2s, H_p) -> np.ndarray:
    """``c_K K + c_C C + c_M M`` (:func:`ffrf_tangent`) of every body, each block
    row-major, concatenated in body order; the residual's arrays as in
    :func:`bodies_residual`, the tangent's own flattened from ``tptr[b, k]``."""
    blocks = []
    for b in range(off.shape[0]):
        n, o = int(nq[b]), int(off[b])
        if n < 0:                                  # a point mass: K = C = 0, M = m I
            blocks.append((cM * m[b] * E3).ravel())
            continue
        nc, p0, p1, t0, t1, s = 7 + n, ptr[b], ptr[b + 1], tptr[b], tptr[b + 1], bool(stiff[b])
        K, Cm, M = ffrf_tangent(
            q[o:o + nc], qd[o:o + nc], qdd[o:o + nc], g, m[b], lin0[p0[0]:p1[0]],
            _rows(lin_q, p0, p1, 1, (n, 12 + 21 * n)), _rows(I2, p0, p1, 2, (n, 9 * n)),
            _rows(lin_qd, p0, p1, 3, (n, 3 + 4 * n)), _rows(lin_qdd, p0, p1, 4, (n, 3 + n)),
            _rows(C_t, t0, t1, 0, (n, 3)), _rows(M_e, t0, t1, 1, (n, n)),
            _rows(D_e, t0, t1, 2, (n, n)), _rows(I1, t0, t1, 3, (n, 9)),
            _rows(I2s_l, t0, t1, 4, (n, 9 * n)), _rows(G2_m, t0, t1, 5, (n, 9 * n)),
            _rows(C_r1_kl, t0, t1, 6, (n * n, 3)), _rows(C_r1_k, t0, t1, 7, (n, 3 * n)),
            _rows(O_e1_kl, t0, t1, 8, (n * n, 9)), _rows(K_e, t0, t1, 9, (n, n)),
            _rows(K2s, t0, t1, 10, (n * n if s else 0, n if s else 0)),
            _rows(H_p, t0, t1, 11, (_n_p(n, s),) * 2), s)
        blocks.append((cK * K + cC * Cm + cM * M).ravel())
    return np.concatenate(blocks) if blocks else np.zeros(0)
