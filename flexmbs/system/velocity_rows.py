"""The velocity-constraint rows of a system (THEORY §4): ``A(q, t) qd + a(q, t) = 0``.

Each :class:`~flexmbs.constraints.velocity.VelocityConstraint` gives ``c(x, xd, t)`` on
its local vector ``x = q[idx]`` (the coordinates of its markers' bodies,
:mod:`flexmbs.system.layout`); stacked over the constraints (``n_mu`` rows):

    c   = A(q, t) qd + a(q, t)
    A   = dc/dqd:  column j = c(x, e_j, t) - c(x, 0, t)       (exact: c is linear in xd)
    a   = c(x, 0, t)
    B   = d(A qd + a)/dq:  Im c(x + i h e_j, xd, t) / h       (complex step, h = 1e-30)
    c_t = dc/dt at fixed q, qd (central difference; zero when c does not read t)
    H_mu = d(A^T mu)/dq  (complex step of A(x)^T mu)

so that ``d c/dt = A qdd + B qd + c_t`` (the acceleration-level row of consistent initial
conditions) and the Newton matrix of a step gets ``B`` and ``A``.  A constraint that is
not ``complex_safe`` (a user callback) gets central differences of step
``1e-7 (1 + |x_j|)`` instead.

The multipliers ``mu`` add ``A^T mu`` to the residual; :meth:`VelocityRows.reactions`
turns them into the force and torque on the body of the constraint's last marker.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from flexmbs.kinematics.rotation import G_of

H_COMPLEX = 1e-30


@dataclass(frozen=True)
class VelocityBlock:
    """One velocity constraint on its local vector: its ``markers``, global indices
    ``idx``, each marker's ``slices`` of the local vector (None: ground) and its ``rows``
    of ``c``."""

    constraint: object
    markers: tuple
    idx: np.ndarray
    slices: tuple
    rows: slice


@dataclass(frozen=True)
class LocalTerms:
    """``c, A, a, B, c_t`` of one block on its local vector (see module doc)."""

    c: np.ndarray
    A: np.ndarray
    B: np.ndarray
    c_t: np.ndarray


class VelocityRows:
    """The velocity rows of the constraints ``constraints`` in the layout ``layout``."""

    def __init__(self, layout, constraints):
        self.n_q = layout.n_q
        blocks, i0 = [], 0
        for vc in constraints:
            mks = vc.markers()
            idx, offs = layout.local(mks)
            slices = tuple(None if o is None else slice(o, o + mk.body.n_coords)
                           for mk, o in zip(mks, offs))
            k = len(vc.labels)
            blocks.append(VelocityBlock(vc, tuple(mks), idx, slices, slice(i0, i0 + k)))
            i0 += k
        self.blocks = blocks
        #: number of velocity rows (their multipliers ``mu`` follow ``lam``)
        self.n_mu = i0
        self.labels = [f"velocity constraint '{b.constraint.name}': {lab}"
                       for b in blocks for lab in b.constraint.labels]
        self._memo = None

    # -- one block ------------------------------------------------------------------
    @staticmethod
    def _rates(b: VelocityBlock, x, xd, t):
        return np.asarray(b.constraint.local_rates(x, xd, t, b.slices, b.markers))

    def _matrix(self, b: VelocityBlock, x, t) -> np.ndarray:
        """``A(x, t)`` of a block by linearity in ``xd`` (complex ``x`` allowed)."""
        n = len(x)
        a = self._rates(b, x, np.zeros(n), t)
        E = np.eye(n)
        return np.stack([self._rates(b, x, E[j], t) - a for j in range(n)], axis=1)

    def _d_dx(self, b: VelocityBlock, fun, x) -> np.ndarray:
        """``d fun(x)/dx`` (columns), complex step or central differences."""
        n = len(x)
        cols = []
        for j in range(n):
            if b.constraint.complex_safe:
                xc = x.astype(complex)
                xc[j] += 1j * H_COMPLEX
                cols.append(np.imag(fun(xc)) / H_COMPLEX)
            else:
                h = 1e-7 * (1.0 + abs(x[j]))
                xp, xm = x.copy(), x.copy()
                xp[j] += h
                xm[j] -= h
                cols.append((fun(xp) - fun(xm)) / (2.0 * h))
        return np.stack(cols, axis=-1)

    def local_terms(self, b: VelocityBlock, q, qd, t) -> LocalTerms:
        x, xd = np.asarray(q, float)[b.idx], np.asarray(qd, float)[b.idx]
        c = self._rates(b, x, xd, t)
        A = self._matrix(b, x, t)
        B = self._d_dx(b, lambda y: self._rates(b, y, xd, t), x)
        ht = 1e-6 * max(1.0, abs(t))
        c_t = (self._rates(b, x, xd, t + ht) - self._rates(b, x, xd, t - ht)) / (2.0 * ht)
        return LocalTerms(np.real(c), np.real(A), B, np.real(c_t))

    # -- all rows -------------------------------------------------------------------
    def terms(self, q, qd, t) -> list[LocalTerms]:
        """:class:`LocalTerms` of every block (memoised on the last ``q, qd, t``)."""
        key = (np.asarray(q, float).tobytes(), np.asarray(qd, float).tobytes(), float(t))
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        out = [self.local_terms(b, q, qd, t) for b in self.blocks]
        self._memo = (key, out)
        return out

    def _scatter(self, mats) -> sp.csr_matrix:
        rows, cols, vals = [], [], []
        for b, m in zip(self.blocks, mats):
            r = np.arange(b.rows.start, b.rows.stop)
            rows.append(np.repeat(r, len(b.idx)))
            cols.append(np.tile(b.idx, len(r)))
            vals.append(np.ravel(m))
        if not rows:
            return sp.csr_matrix((self.n_mu, self.n_q))
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                     np.concatenate(cols))),
                             shape=(self.n_mu, self.n_q))

    def constraint(self, q, qd, t) -> np.ndarray:
        """``c = A qd + a`` (n_mu,)."""
        parts = [self._rates(b, np.asarray(q, float)[b.idx], np.asarray(qd, float)[b.idx], t)
                 for b in self.blocks]
        return np.real(np.concatenate(parts)) if parts else np.zeros(0)

    def jacobians(self, q, qd, t) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray]:
        """``(A, B, c_t)``: ``A = dc/dqd``, ``B = d(A qd + a)/dq`` (CSR (n_mu, n_q)) and
        ``c_t = dc/dt`` (n_mu,)."""
        T = self.terms(q, qd, t)
        c_t = np.concatenate([x.c_t for x in T]) if T else np.zeros(0)
        return self._scatter([x.A for x in T]), self._scatter([x.B for x in T]), c_t

    def generalized_force(self, q, mu, t) -> np.ndarray:
        """``A(q, t)^T mu`` (n_q,)."""
        out = np.zeros(self.n_q)
        q = np.asarray(q, float)
        for b in self.blocks:
            out[b.idx] += np.real(self._matrix(b, q[b.idx], t)).T @ mu[b.rows]
        return out

    def force_jacobian(self, q, mu, t) -> sp.csr_matrix:
        """``d(A(q, t)^T mu)/dq`` for a fixed ``mu``, CSR (n_q, n_q)."""
        rows, cols, vals = [], [], []
        q = np.asarray(q, float)
        for b in self.blocks:
            m = mu[b.rows]
            D = self._d_dx(b, lambda y, b=b, m=m: self._matrix(b, y, t).T @ m, q[b.idx])
            n = len(b.idx)
            rows.append(np.repeat(b.idx, n))
            cols.append(np.tile(b.idx, n))
            vals.append(D.ravel())
        if not rows:
            return sp.csr_matrix((self.n_q, self.n_q))
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                     np.concatenate(cols))),
                             shape=(self.n_q, self.n_q))

    def reactions(self, q, qd, mu, t) -> dict:
        """``{name: (force, torque)}`` [N, N m], inertial components: the wrench of the
        constraint force ``-A_b^T mu`` on the body of the constraint's last marker, about
        its ``reaction_point`` (the contact point; the body's frame origin when it has
        none).  Rigid body: force = translational rows, torque about the origin
        ``1/2 G(e)`` (rotational rows), as the joints' reactions."""
        out = {}
        q = np.asarray(q, float)
        for b in self.blocks:
            vc, sl = b.constraint, b.slices[-1]
            if sl is None:
                out[vc.name] = (np.zeros(3), np.zeros(3))
                continue
            x = q[b.idx]
            gen = -(np.real(self._matrix(b, x, t)).T @ mu[b.rows])[sl]
            qb = x[sl]
            f = gen[:3]
            m_O = 0.5 * G_of(qb[3:7]) @ gen[3:7] if len(qb) >= 7 else np.zeros(3)
            point = vc.local_reaction_point(x, np.asarray(qd, float)[b.idx], b.slices,
                                            b.markers)
            if point is not None:
                m_O = m_O - np.cross(np.real(point) - qb[:3], f)
            out[vc.name] = (f, m_O)
        return out
