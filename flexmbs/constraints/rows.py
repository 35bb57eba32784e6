"""Joint equations that are dot products of marker vectors, named by their labels.

Most joints (THEORY §5.5, Table 2.2) are built from three kinds of scalar rows of the
marker frames ``P`` (body i) and ``Q`` (body j), with ``d = r_Q - r_P``:

* ``"x"``, ``"y"``, ``"z"``: the inertial component of ``d`` (coincident origins),
* ``"a_P.b_Q"``: ``a_P . b_Q`` for axes ``a, b`` in ``x, y, z`` (relative orientation),
* ``"a_P.d"``: ``a_P . d`` (offset along an axis of P).

Each row is ``g_r = alpha_r . beta_r`` with two 3-vectors that are fixed linear
combinations of the eight frame vectors ``c = [p_P, x_P, y_P, z_P, p_Q, x_Q, y_Q, z_Q]``
plus a constant:

    alpha_r = S_alpha[r] c + k_r,    beta_r = S_beta[r] c,

so, with ``dc = dc/dx`` and ``hc = d2c/dx2`` of the frames (:class:`PairFrames`),

    dg_r  = alpha_r . dbeta_r + beta_r . dalpha_r,
    d2g_r = alpha_r . hbeta_r + beta_r . halpha_r + dalpha_r^T dbeta_r + dbeta_r^T dalpha_r.

:class:`LabelRows` evaluates all rows of a joint at once this way (a few array
operations instead of a jet expression per row); :meth:`LabelRows.jets` gives the same
rows through the jet algebra of :mod:`flexmbs.kinematics.jet` (what ``Joint.equations``
returns).
"""
from __future__ import annotations

import re

import numpy as np

from flexmbs.compiled import arg, backend
from flexmbs.kinematics import jet as J
from flexmbs.kinematics import frame_kernel, frame_reference

_AXIS = {"x": 0, "y": 1, "z": 2}
_DOT_Q = re.compile(r"([xyz])_P\.([xyz])_Q")
_DOT_D = re.compile(r"([xyz])_P\.d")


def is_label_row(label: str) -> bool:
    """Whether ``label`` names one of the rows of the module docstring."""
    return label in _AXIS or bool(_DOT_Q.fullmatch(label) or _DOT_D.fullmatch(label))


class LabelRows:
    """The rows named by ``labels`` (module docstring); ``ValueError`` for other labels."""

    def __init__(self, labels):
        self.labels = tuple(labels)
        R = len(self.labels)
        Sa, Sb, k = np.zeros((R, 8)), np.zeros((R, 8)), np.zeros((R, 3))
        for r, lab in enumerate(self.labels):
            m_q, m_d = _DOT_Q.fullmatch(lab), _DOT_D.fullmatch(lab)
            if lab in _AXIS:                         # e_i . (p_Q - p_P)
                k[r, _AXIS[lab]] = 1.0
                Sb[r, 4], Sb[r, 0] = 1.0, -1.0
            elif m_q:                                # a_P . b_Q
                Sa[r, 1 + _AXIS[m_q.group(1)]] = 1.0
                Sb[r, 5 + _AXIS[m_q.group(2)]] = 1.0
            elif m_d:                                # a_P . (p_Q - p_P)
                Sa[r, 1 + _AXIS[m_d.group(1)]] = 1.0
                Sb[r, 4], Sb[r, 0] = 1.0, -1.0
            else:
                raise ValueError(f"joint row label '{lab}' is not one of 'x', 'y', 'z', "
                                 f"'a_P.b_Q', 'a_P.d' (a, b in x, y, z)")
        for a in (Sa, Sb, k):
            a.setflags(write=False)
        self.S_alpha, self.S_beta, self.k = Sa, Sb, k

    def evaluate(self, C: np.ndarray, D: np.ndarray, H: np.ndarray | None, t: float = 0.0):
        """``(g (R,), dg/dx (R, n), d2g/dx2 (R, n, n) or None)`` from the frame arrays
        ``C`` (8, 3), ``D`` (8, 3, n), ``H`` (8, 3, n, n) of :class:`PairFrames` (the rows
        do not depend on the time ``t``)."""
        Sa, Sb = self.S_alpha, self.S_beta
        if H is None:                                          # compiled, same numbers
            return backend(frame_kernel, frame_reference).label_rows(*self._kernel_args(), arg(C), arg(D)) + (None,)
        R, n = len(self.labels), D.shape[-1]
        al = Sa @ C + self.k                                   # (R, 3)
        be = Sb @ C
        D2 = D.reshape(8, 3 * n)
        dal = (Sa @ D2).reshape(R, 3, n)
        dbe = (Sb @ D2).reshape(R, 3, n)
        g = np.einsum("ri,ri->r", al, be)
        dg = np.einsum("ri,rin->rn", al, dbe) + np.einsum("ri,rin->rn", be, dal)
        if H is None:
            return g, dg, None
        H2 = H.reshape(8, 3 * n * n)
        hal = (Sa @ H2).reshape(R, 3, n * n)
        hbe = (Sb @ H2).reshape(R, 3, n * n)
        X = np.einsum("rin,rim->rnm", dal, dbe)
        h = (np.einsum("ri,rik->rk", al, hbe) + np.einsum("ri,rik->rk", be, hal)) \
            .reshape(R, n, n) + X + X.transpose(0, 2, 1)
        return g, dg, h

    def _kernel_args(self):
        """Writable copies of ``S_alpha``, ``S_beta``, ``k`` for the compiled kernel."""
        a = self.__dict__.get("_kargs")
        if a is None:
            a = self.__dict__["_kargs"] = (arg(self.S_alpha), arg(self.S_beta), arg(self.k))
        return a

    def hessian_sum(self, C: np.ndarray, D: np.ndarray, contract, mu: np.ndarray,
                    t: float = 0.0) -> np.ndarray:
        """``sum_r mu_r d2g_r/dx2`` (n, n) without forming the rows' Hessians:

            sum_r mu_r (alpha_r . hbeta_r + beta_r . halpha_r) = sum_(v,i) W[v, i] hc[v, i],
            W = S_beta^T (mu alpha) + S_alpha^T (mu beta)   (8, 3),

        with ``contract(W)`` that frame-Hessian contraction
        (:meth:`flexmbs.kinematics.frames.PairFrames.hessian_contract`), plus ``X + X^T``
        with ``X = sum_r mu_r dalpha_r^T dbeta_r``."""
        Sa, Sb = self.S_alpha, self.S_beta
        R, n = len(self.labels), D.shape[-1]
        Wm = Sb.T @ (mu[:, None] * (Sa @ C + self.k)) + Sa.T @ (mu[:, None] * (Sb @ C))
        D2 = D.reshape(8, 3 * n)
        X = (mu[:, None] * (Sa @ D2)).reshape(3 * R, n).T @ (Sb @ D2).reshape(3 * R, n)
        return contract(Wm) + X + X.T

    def jets(self, P, Q) -> list[J.Jet]:
        """The same rows as scalar jets of the frame jets ``P``, ``Q``."""
        d = Q.p - P.p
        out = []
        for lab in self.labels:
            m_q, m_d = _DOT_Q.fullmatch(lab), _DOT_D.fullmatch(lab)
            if lab in _AXIS:
                out.append(d[_AXIS[lab]])
            elif m_q:
                out.append(J.dot(P.axis(_AXIS[m_q.group(1)]), Q.axis(_AXIS[m_q.group(2)])))
            else:
                out.append(J.dot(P.axis(_AXIS[m_d.group(1)]), d))
        return out


class WeightedRow:
    """One row ``g = sum_j w_j(t) p_j + f(t)`` of label rows ``p_j`` (:class:`LabelRows`)
    with weights and offset given as functions of time (drives).  Time is the last local
    coordinate and the frames do not depend on it (``dp_j/dt = 0``), so with ``e_t`` the
    time direction:

        dg  = sum_j w_j dp_j + (sum_j w_j' p_j + f') e_t,
        d2g = sum_j w_j hp_j + u e_t^T + e_t u^T + (sum_j w_j'' p_j + f'') e_t e_t^T,
        u   = sum_j w_j' dp_j.

    ``weights(t)`` returns ``(w, w', w'', f, f', f'')`` (arrays over ``j``, then floats).
    """

    def __init__(self, labels, weights):
        self.base = LabelRows(labels)
        self.weights = weights

    def evaluate(self, C, D, H, t: float):
        w, w1, w2, f, f1, f2 = self.weights(t)
        p, dp, hp = self.base.evaluate(C, D, H)
        dg = w @ dp
        dg[-1] += w1 @ p + f1
        h = None
        if H is not None:
            n = dp.shape[1]
            h = (w @ hp.reshape(len(w), n * n)).reshape(n, n)
            u = w1 @ dp
            h[-1, :] += u
            h[:, -1] += u
            h[-1, -1] += w2 @ p + f2
            h = h[None]
        return np.array([w @ p + f]), dg[None], h

    def hessian_sum(self, C, D, contract, mu, t: float):
        """``mu d2g/dx2`` (one row) through :meth:`LabelRows.hessian_sum`."""
        w, w1, w2, f, f1, f2 = self.weights(t)
        h = self.base.hessian_sum(C, D, contract, mu[0] * w)
        p, dp, _ = self.base.evaluate(C, D, None)
        u = mu[0] * (w1 @ dp)
        h[-1, :] += u
        h[:, -1] += u
        h[-1, -1] += mu[0] * (w2 @ p + f2)
        return h

    def jets(self, P, Q, t: J.Jet) -> list[J.Jet]:
        """The row as a scalar jet (``t`` the time jet)."""
        w, w1, w2, f, f1, f2 = self.weights(float(t.v))
        tt = np.outer(t.d, t.d)

        def of_time(a, a1, a2):                      # chain rule, as drives.time_jet
            h = None if t.h is None else a2 * tt + a1 * t.h
            return J.Jet(np.asarray(float(a)), a1 * t.d, h)

        g = of_time(f, f1, f2)
        for j, pj in enumerate(self.base.jets(P, Q)):
            g = g + J.mul(of_time(w[j], w1[j], w2[j]), pj)
        return [g]
