"""The Newton matrix of an implicit step of a rigid tree in joint coordinates, factored
(:class:`~flexmbs.integrate.protocol.FactoredNewton`), in O(n (1 + m_c)) instead of O(n^3):

    W = [[c_K K + c_C C + c_M Mbar, G^T], [G, 0]]   ~   W_0 = [[c_M Mbar, G^T], [G, 0]]

(modified Newton: ``K`` and ``C`` dropped; the iteration converges to the same solution
while it contracts, at a rate ~ |c_K K + c_C C| / |c_M Mbar|, small for small steps).
``Mbar`` is singular along the Euler parameters ``e_j`` of spherical and free joints
(``G(e) e = 0``); their rows ``G_e = [2 e_j^T]`` of ``G`` make ``W_0`` regular.  Each
such row sits on one joint's coordinates, so the articulated-body recursion
(:mod:`flexmbs.relative.articulated`, local rows) eliminates it inside the joint's own
saddle ``[[D_j, 2 e_j], [2 e_j^T, 0]]``: with ``G = [G_e; G_c]`` (``G_c`` the rows of cut
joints and drives, which couple several joints) and ``K_e = [[c_M Mbar, G_e^T], [G_e,
0]]`` solved by that recursion in O(n) per column, ``W_0 [x; y_e; y_c] = [b; c_e; c_c]``
is the Schur complement on ``G_c`` alone

    [u; v] = K_e^-1 [b; c_e],   [Z; Y] = K_e^-1 [G_c^T; 0],
    (G_c Z) y_c = G_c u - c_c,  x = u - Z y_c,   y_e = v - Y y_c:

``m_c`` columns of ``Z`` at the factorisation, O(n m_c) per solve; a chain of spherical
joints without cut joints costs O(n) (the normalisations no longer count in ``m_c``).

When the modified iteration stops contracting (the dropped ``c_K K + c_C C`` grows as
about n^2 on a chain of spherical joints), :class:`KrylovFactor` solves the full ``W``
by GMRES preconditioned by ``W_0^-1``: ``W v`` matrix-free (a directional difference of
the residual, O(n) per product), ``k`` products and ``k`` solves of ``W_0`` per Newton
iteration, O(n k) instead of the dense tangent's O(n^2) residual evaluations; a solve
GMRES does not finish falls back to the dense ``W`` (:class:`DenseFactor`, counted).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse.linalg as spla

from flexmbs.relative import articulated


def euler_rows(tree, beta: np.ndarray, width) -> dict:
    """The Euler rows ``G_e`` of ``beta``, one per spherical or free joint: {joint index
    j: ``2 e_j^T`` placed in the joint's ``width(j)`` local coordinates}."""
    rows = {}
    for i, tj in enumerate(tree.joints):
        es = tj.motion.e_slice
        if es is not None:
            g = np.zeros(width(i))
            g[es] = 2.0 * beta[tj.s][es]                        # G_e row j = 2 e_j^T
            rows[i] = g
    return rows


class SchurFactor:
    """``W_0^-1`` of the module doc: ``solve([b; c_e; c_c])`` returns ``[x; y_e; y_c]``.

    ``beta``: the joint coordinates (the Euler rows ``2 e_j^T`` are read from them, in the
    order of ``tree.e_rows``); ``G_c``: the rows of the cut joints and drives (m_c, n_beta)."""

    def __init__(self, tree, kin, beta: np.ndarray, G_c: np.ndarray, c_M: float):
        rows = euler_rows(tree, beta, lambda i: tree.joints[i].motion.n_beta)
        self.setup(lambda: articulated.factor(tree, kin, c_M, rows=rows), tree.n_beta,
                   len(rows), G_c)

    def setup(self, make_K_e, n: int, n_e: int, G_c: np.ndarray) -> None:
        """Factor: ``K_e = make_K_e()`` (the articulated factor of ``[[S, G_e^T], [G_e,
        0]]``, ``n`` joint coordinates, ``n_e`` Euler rows), then the Schur complement
        ``G_c Z`` on the rows ``G_c`` (m_c, n) (module doc); FloatingPointError on a
        singular joint block or non-finite entries."""
        self.n, self.n_e, self.G_c = n, n_e, np.asarray(G_c, dtype=float)
        try:
            self.K_e = make_K_e()
        except np.linalg.LinAlgError:           # a singular joint block (e.g. e_j = 0)
            raise FloatingPointError("a singular joint block in the Newton matrix") from None
        if not all(np.all(np.isfinite(X)) for X in self.K_e.P + [Q for Q in self.K_e.Q
                                                                  if Q is not None]):
            raise FloatingPointError("non-finite entries in the Newton matrix")
        if len(self.G_c):
            self.Z, self.Y = self.K_e.solve_rows(self.G_c.T)
            Sc = self.G_c @ self.Z
            if not np.all(np.isfinite(Sc)):
                raise FloatingPointError("non-finite entries in the Newton matrix")
            self.lu = sla.lu_factor(Sc, check_finite=False)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        n, n_e, G_c = self.n, self.n_e, self.G_c
        b, c_e, c_c = rhs[:n], rhs[n:n + n_e], rhs[n + n_e:]
        u, v = self.K_e.solve_rows(b, c_e)
        if not len(G_c):
            return np.concatenate([u, v])
        y_c = sla.lu_solve(self.lu, G_c @ u - c_c, check_finite=False)
        return np.concatenate([u - self.Z @ y_c, v - self.Y @ y_c, y_c])


class DenseFactor:
    """LU of a dense Newton matrix (the full one, when the modified one stalls)."""

    def __init__(self, W: np.ndarray):
        if not np.all(np.isfinite(W)):
            raise FloatingPointError("non-finite entries in the Newton matrix")
        self.lu = sla.lu_factor(W, check_finite=False)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        return sla.lu_solve(self.lu, rhs, check_finite=False)


class KrylovFactor:
    """``W^-1`` of the full Newton matrix by GMRES (module doc), preconditioned on the
    right, ``W P z = rhs``, ``x = P z`` with ``P = W_0^-1``, so that GMRES minimises the
    residual ``|W x - rhs|`` itself: it stops at ``rtol |rhs|``, and its ``x`` is taken
    when ``|W x - rhs| <= accept |rhs|`` (an inexact Newton step, its forcing term
    ``accept``: Newton's own test decides convergence; the product ``W v`` is a
    difference quotient, its round-off can keep GMRES from ``rtol``, and on long chains
    of spherical joints (256 links) GMRES can stall near 1e-4 within ``maxiter``).

    ``apply``: ``v -> W v`` (N,); ``preconditioner``: an object whose ``solve`` is
    ``W_0^-1`` (e.g. :class:`SchurFactor`); ``dense``: ``() -> W`` (N, N), built only if
    GMRES does not reach ``accept`` in ``maxiter`` iterations (then the solves are
    ``W``'s LU).  ``iterations``, ``residuals``: GMRES iterations and ``|W x - rhs| /
    |rhs|`` of each solve; ``dense_solves``: the solves by ``W``."""

    def __init__(self, apply, preconditioner, dense, n: int, rtol: float = 1e-9,
                 accept: float = 1e-3, maxiter: int = 50):
        self.n, self.rtol, self.accept, self.maxiter = n, rtol, accept, maxiter
        self.apply, self.P = apply, preconditioner.solve
        self.WP = spla.LinearOperator((n, n), matvec=lambda z: apply(self.P(z)),
                                      dtype=float)
        self._dense, self._fallback = dense, None
        self.iterations: list[int] = []
        self.residuals: list[float] = []        # |W x - rhs| / |rhs| of each solve
        self.dense_solves = 0

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        rhs = np.asarray(rhs, dtype=float)
        if self._fallback is None:
            its = [0]

            def count(_):
                its[0] += 1
            z, _ = spla.gmres(self.WP, rhs, rtol=self.rtol, atol=0.0, restart=self.maxiter,
                              maxiter=1, callback=count, callback_type="pr_norm")
            x = self.P(z)
            self.iterations.append(its[0])
            res = np.linalg.norm(self.apply(x) - rhs)
            self.residuals.append(res / np.linalg.norm(rhs))
            if res <= self.accept * np.linalg.norm(rhs):     # (False when not finite)
                return x
            self._fallback = DenseFactor(self._dense())
        self.dense_solves += 1
        return self._fallback.solve(rhs)
