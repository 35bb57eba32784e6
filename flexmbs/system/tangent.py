"""The tangent ``(K, C, M) = (dr/dq, dr/dqd, dr/dqdd)`` of a system's residual and the
Newton matrix of an implicit step built from it.

``K`` includes the constraint-force term ``d(G^T lam)/dq``
(:class:`~flexmbs.system.constraint_hessian.ConstraintHessian`).  Every body and force
element gives a dense block on its local grid (:class:`~flexmbs.system.sparse.Grids`),
and the Newton matrix of an implicit step on ``[q; lam~]``

    [[c_K K + c_C C + c_M M,  G^T],
     [G,                      0  ]]

is made in a fixed CSR pattern (:meth:`TangentAssembly.newton_plan`), so a solver can
overwrite its matrix values in place.  A force element that reads its joint's reaction
(joint friction) adds ``-dQ/dlam`` to the upper right block beside ``G^T``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from flexmbs.system.sparse import CSRMatrix, coo


class NewtonPlan(NamedTuple):
    """The fixed CSR pattern of the Newton matrix and where each chunk value goes."""

    indptr: np.ndarray
    indices: np.ndarray
    inv: np.ndarray
    nnz: int
    N: int


class TangentAssembly:
    """Sparse tangents of the bodies, force elements and constraint Hessian of a system
    (its :class:`~flexmbs.system.layout.Layout`, constraint rows, constraint Hessian,
    force terms and block grids)."""

    def __init__(self, layout, rows, hessian, forces, grids):
        self.layout, self.rows, self.hessian, self.forces = layout, rows, hessian, forces
        self.grids = grids
        self._plan_cache = None
        self._mass_last: tuple | None = None     # (q bytes, M(q)) of tangent_mass
        self._mass_plan: tuple | None = None     # (bodies, indptr, indices) of M

    def chunks(self, q, qd, qdd, t, lam=None):
        """``(rows, cols, K values, C values, M values or None)`` per body and force block
        (``lam``: the multipliers, for the force elements that read a reaction)."""
        lay = self.layout
        rows, cols, vk, vc, vm = [], [], [], [], []
        for b in lay.bodies:
            s = lay.body_slices[b.name]
            K, C, M = b.tangent(q[s], qd[s], qdd[s], lay.gravity)
            rr, cc = self.grids(("b", b.name), np.arange(s.start, s.stop))
            rows.append(rr); cols.append(cc)
            vk.append(K.ravel()); vc.append(C.ravel()); vm.append(M.ravel())
        z = lay.state_indices
        if z.size:          # r_z = zd - f: dr_z/dzd = I
            rows.append(z); cols.append(z)
            vk.append(np.zeros(z.size)); vc.append(np.ones(z.size)); vm.append(None)
        for k, (fb, c) in enumerate(self.forces.contributions(q, qd, t, 2, lam=lam)):
            rr, cc = self.grids(("f", k), fb.idx)
            rows.append(rr); cols.append(cc)
            vk.append(-c.dQ_dx[:-1, :-1].ravel()); vc.append(-c.dQ_dxd[:-1, :-1].ravel())
            vm.append(None)
        return rows, cols, vk, vc, vm

    def tangent(self, q, qd, qdd, lam, t):
        """``(K, C, M)``, each CSR (n_q, n_q)."""
        rows, cols, vk, vc, vm = self.chunks(q, qd, qdd, t, lam)
        n = self.layout.n_q
        shape = (n, n)
        K = coo(rows, cols, vk, shape)
        C = coo(rows, cols, vc, shape)
        if self.rows.n_lam:
            K = K + self.hessian.jacobian(q, lam, t)
        return K.tocsr(), C.tocsr(), self._mass(rows, cols, vm)

    def tangent_mass(self, q, qd, qdd, lam, t) -> sp.csr_matrix:
        """``M`` of :meth:`tangent` alone (CSR): ``K``, ``C``, the force elements (no mass)
        and the constraint Hessian are not assembled (the set-up needs ``M`` only).
        ``M = M(q)``: only the bodies have mass, and their mass matrices depend on ``q``
        alone, so the last one is kept with its ``q`` (the set-up asks twice at the
        start: the initial accelerations and the Newton test's scales) and a copy
        returned."""
        key = np.asarray(q, dtype=float).tobytes()
        if self._mass_last is not None and self._mass_last[0] == key:
            return self._mass_last[1].copy()
        lay = self.layout
        bodies, indptr, indices = self._mass_pattern()
        vals = [b.tangent(q[s], qd[s], qdd[s], lay.gravity)[2].ravel() for b, s in bodies]
        data = np.concatenate(vals) if vals else np.zeros(0)
        M = sp.csr_matrix((data, indices, indptr), shape=(lay.n_q, lay.n_q))
        self._mass_last = (key, M.copy())
        return M

    def _mass_pattern(self) -> tuple[list, np.ndarray, np.ndarray]:
        """``(bodies, indptr, indices)`` of ``M``: the bodies with their slices in the
        order of their coordinates and the CSR pattern of their dense blocks (disjoint,
        each row of a block holds the block's columns), in which the blocks' values,
        row by row, are the CSR values (made once)."""
        if self._mass_plan is None:
            lay = self.layout
            bodies = sorted(((b, lay.body_slices[b.name]) for b in lay.bodies),
                            key=lambda bs: bs[1].start)
            counts = np.zeros(lay.n_q, dtype=np.int32)
            cols = [np.zeros(0, dtype=np.int32)]
            for _, s in bodies:
                k = s.stop - s.start
                counts[s] = k
                cols.append(np.tile(np.arange(s.start, s.stop, dtype=np.int32), k))
            indptr = np.zeros(lay.n_q + 1, dtype=np.int32)
            np.cumsum(counts, out=indptr[1:])
            self._mass_plan = (bodies, indptr, np.concatenate(cols))
        return self._mass_plan

    def _mass(self, rows, cols, vm) -> sp.csr_matrix:
        vm = [np.zeros(r.size) if v is None else v for r, v in zip(rows, vm)]
        n = self.layout.n_q
        return coo(rows, cols, vm, (n, n)).tocsr()

    def iteration_matrix(self, q, qd, qdd, lam, t, c_K, c_C, c_M) -> sp.csr_matrix:
        """``c_K K + c_C C + c_M M`` of :meth:`tangent` as one CSR matrix, built from one
        COO array (no sums of sparse matrices)."""
        rows, cols, vk, vc, vm = self.chunks(q, qd, qdd, t, lam)
        vals = [c_K * k + c_C * c + (0.0 if m is None else c_M * m)
                for k, c, m in zip(vk, vc, vm)]
        if self.rows.n_lam:
            r2, c2, v2 = self.hessian.chunks(q, lam, t)
            rows += r2; cols += c2; vals += [c_K * v for v in v2]
        n = self.layout.n_q
        return coo(rows, cols, vals, (n, n))

    def newton_plan(self, stacked: bool = False) -> NewtonPlan:
        """Fixed CSR pattern of the Newton matrix ``[[S, G^T], [G, 0]]`` (memoised on the
        active set): every body, force and constraint-Hessian block (``stacked``: the
        Hessian as one chunk of unique pairs), ``G``, ``G^T`` and the whole diagonal
        (explicit zeros keep the pattern stable and no row empty).  ``inv`` maps the
        concatenated chunk values of :meth:`newton_matrix` to the CSR data positions
        (duplicates are summed)."""
        lay, R = self.layout, self.rows
        key = (lay.active_key, stacked)
        if self._plan_cache is not None and self._plan_cache[0] == key:
            return self._plan_cache[1]
        n, m = lay.n_q, R.n_lam
        N = n + m
        rows, cols = [], []
        for b in lay.bodies:
            s = lay.body_slices[b.name]
            rr, cc = self.grids(("b", b.name), np.arange(s.start, s.stop))
            rows.append(rr); cols.append(cc)
        if lay.state_indices.size:
            rows.append(lay.state_indices); cols.append(lay.state_indices)
        for k, fb in enumerate(lay.force_blocks):
            rr, cc = self.grids(("f", k), fb.idx)
            rows.append(rr); cols.append(cc)
        if m and stacked:        # the constraint Hessian as one chunk of unique pairs
            rr, cc = self.hessian.pairs()
            rows.append(rr); cols.append(cc)
        elif m:
            for bi, _ in R.active_blocks():
                blk = lay.blocks[bi]
                rr, cc = self.grids(("c", blk.name, blk.kind), blk.idx)
                rows.append(rr); cols.append(cc)
        if m:
            indptr, indices = R.pattern()
            g_rows = n + np.repeat(np.arange(m), np.diff(indptr))
            rows += [g_rows, indices]
            cols += [indices, g_rows]
            for fb, _, lam_cols in self.forces.reaction_blocks():     # -dQ/dlam
                rows.append(np.repeat(fb.idx, lam_cols.size))
                cols.append(np.tile(n + lam_cols, fb.idx.size))
        n_vals = sum(len(r) for r in rows)
        rows.append(np.arange(N)); cols.append(np.arange(N))
        keys = np.concatenate(rows).astype(np.int64) * N + np.concatenate(cols)
        uniq, inv = np.unique(keys, return_inverse=True)
        ip = np.zeros(N + 1, dtype=np.int64)
        np.cumsum(np.bincount(uniq // N, minlength=N), out=ip[1:])
        plan = NewtonPlan(ip, uniq % N, inv[:n_vals].ravel(), len(uniq), N)
        self._plan_cache = (key, plan)
        return plan

    def newton_matrix(self, q, qd, qdd, lam, t, c_K, c_C, c_M, *, pack=None,
                      plan=None, springs=None) -> CSRMatrix:
        """The Newton matrix of the module docstring in the fixed pattern of
        :meth:`newton_plan`; all bodies in one compiled call with ``pack`` (a
        :class:`~flexmbs.bodies.pack.BodyPack`), the constraint Hessian in one with
        ``plan`` (an :class:`~flexmbs.system.affine_plan.AffinePlan`), the force elements
        ``springs`` covers in one (a :class:`~flexmbs.system.spring_pack.LocalSprings`)."""
        lay, R = self.layout, self.rows
        H = None
        if R.n_lam and plan is not None:
            H = self.hessian.stacked(q, np.asarray(lam, float), t, plan)
        nplan = self.newton_plan(stacked=H is not None)
        if pack is not None:            # all bodies in one compiled call
            vals = [pack.newton_values(q, qd, qdd, lay.gravity, c_K, c_C, c_M)]
        else:
            vals = []
            for b in lay.bodies:
                s = lay.body_slices[b.name]
                K, C, M = b.tangent(q[s], qd[s], qdd[s], lay.gravity)
                vals.append((c_K * K + c_C * C + c_M * M).ravel())
        if lay.state_indices.size:
            vals.append(np.full(lay.state_indices.size, float(c_C)))
        dQ_dlam = {}
        done = {} if springs is None else springs.newton_values(q, qd, t, c_K, c_C)
        py = dict((id(fb), c) for fb, c in self.forces.contributions(
            q, qd, t, 2, None if springs is None else springs.others, lam=lam))
        for fb in lay.force_blocks:            # in the order of the plan's chunks
            v = done.get(id(fb))
            if v is None:
                c = py[id(fb)]
                v = (c_K * c.dQ_dx[:-1, :-1] + c_C * c.dQ_dxd[:-1, :-1]).ravel() * -1.0
                dQ_dlam[id(fb)] = c.dQ_dlam
            vals.append(v)
        if H is not None:
            vals.append(c_K * H[self.hessian.pairs()])
        elif R.n_lam:
            hv = self.hessian.local_values(q, lam, t)
            if hv is not None:                  # all blocks in one compiled call
                vals.append(c_K * hv)
            else:
                for _, Hs in self.hessian.sums(q, np.asarray(lam, float), t):
                    vals.append((c_K * Hs).ravel())
        if R.n_lam:
            Gd = R.G_data(q, t)
            vals += [Gd, Gd]
            for fb, act, lam_cols in self.forces.reaction_blocks():
                D = dQ_dlam.get(id(fb))
                vals.append(np.zeros(fb.idx.size * lam_cols.size) if D is None
                            else -D[:-1][:, act].ravel())
        data = np.bincount(nplan.inv, weights=np.concatenate(vals), minlength=nplan.nnz) \
            if vals else np.zeros(nplan.nnz)
        return CSRMatrix(nplan.indptr, nplan.indices, data, (nplan.N, nplan.N))
