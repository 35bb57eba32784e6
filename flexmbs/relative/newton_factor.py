"""The Newton matrix of an implicit step of a rigid tree in joint coordinates, factored
(:class:`~flexmbs.integrate.protocol.FactoredNewton`), in O(n m) instead of O(n^3):

    W = [[c_K K + c_C C + c_M Mbar, G^T], [G, 0]]   ~   W_0 = [[c_M Mbar, G^T], [G, 0]]

(modified Newton: ``K`` and ``C`` dropped; the iteration converges to the same solution
while it contracts, at a rate ~ |c_K K + c_C C| / |c_M Mbar|, small for small steps).
``Mbar`` is singular along the Euler parameters ``e_j`` of spherical and free joints
(``G(e) e = 0``); their rows ``G_e = [2 e_j^T]`` of ``G`` make ``W_0`` regular.  With
``S = c_M Mbar + G_e^T Wt G_e`` (``Wt = diag(w_j)``, i.e. ``4 w_j e_j e_j^T`` on joint
j's coordinates, the ``Delta`` of :mod:`flexmbs.relative.articulated`), ``W_0 [x; y] =
[b; c]`` is, with the same ``x`` and ``y``,

    S x + G^T y = b + G_e^T Wt c_e,     G x = c

(``G_e x = c_e`` puts back what the added term takes), solved by the Schur complement

    u = S^-1 (b + G_e^T Wt c_e),   Z = S^-1 G^T,   (G Z) y = G u - c,   x = u - Z y

with ``S^-1`` the articulated-body solve: O(n) per column, ``m`` columns of ``Z`` at the
factorisation (``m`` rows: normalisations, cut joints, drives), O(n m) per solve.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from flexmbs.relative import articulated
from flexmbs.relative.newton_euler import body_mass


class SchurFactor:
    """``W_0^-1`` of the module doc: ``solve([b; c])`` returns ``[x; y]``."""

    def __init__(self, tree, kin, G: np.ndarray, c_M: float):
        n_e = len(tree.e_rows)
        self.w = np.zeros(n_e)           # w_j of the Euler rows (a rotational inertia)
        Delta, k = {}, 0
        for i, tj in enumerate(tree.joints):
            es = tj.motion.e_slice
            if es is None:
                continue
            I_i = body_mass(tree.bodies[i], kin.A[i])[:3, :3]
            self.w[k] = c_M * max(np.trace(I_i) / 3.0, 1e-12)
            e = np.zeros(tj.motion.n_beta)
            e[es] = 0.5 * G[k, tj.s][es]                 # G_e row j = 2 e_j^T
            Delta[i] = 4.0 * self.w[k] * np.outer(e, e)
            k += 1
        self.n, self.n_e, self.G = tree.n_beta, n_e, G
        self.S = articulated.factor(tree, kin, c_M, Delta)
        if len(G):
            self.Z = self.S.solve(G.T)
            Sc = G @ self.Z
            if not np.all(np.isfinite(Sc)):
                raise FloatingPointError("non-finite entries in the Newton matrix")
            self.lu = sla.lu_factor(Sc, check_finite=False)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        n, G = self.n, self.G
        b, c = rhs[:n], rhs[n:]
        b = b + G[:self.n_e].T @ (self.w * c[:self.n_e])
        u = self.S.solve(b)
        if not len(G):
            return u
        y = sla.lu_solve(self.lu, G @ u - c, check_finite=False)
        return np.concatenate([u - self.Z @ y, y])


class DenseFactor:
    """LU of a dense Newton matrix (the full one, when the modified one stalls)."""

    def __init__(self, W: np.ndarray):
        if not np.all(np.isfinite(W)):
            raise FloatingPointError("non-finite entries in the Newton matrix")
        self.lu = sla.lu_factor(W, check_finite=False)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        return sla.lu_solve(self.lu, rhs, check_finite=False)
