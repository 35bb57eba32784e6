"""The active constraint rows ``g(q, t)`` of a system and their Jacobian ``G = dg/dq``.

Rows are evaluated block by block on the blocks' local vectors ``x = [q_i; q_j; t]``
(:mod:`flexmbs.system.layout`), each block one of three ways:

* Euler-parameter normalisation ``e.e - 1`` (gradient ``2 e``, Hessian ``2 E``),
* label rows (:class:`flexmbs.constraints.rows.LabelRows`, drives of them) on the stacked
  marker frames of the block (:class:`flexmbs.kinematics.frames.PairFrames`),
* other joints and drives through the jets of their ``equations`` (a joint that reads
  its bodies' whole coordinates, ``reads_coordinates``, gets them as jets too);

or, for systems the compiled :class:`~flexmbs.system.stacked.StackedRows` covers, all
first-order label rows in one pass (and, when it covers every row, ``g`` and a dense
``G`` of all rows at once, :meth:`ConstraintRows.dense_rows`); above that size, for a
system whose rows are all label rows, drives of them and normalisations, ``g`` and the
CSR values of ``G`` in one compiled pass sparse in ``q`` (:meth:`ConstraintRows.
sparse_rows`, :class:`~flexmbs.system.local_rows.LocalRows`).  Which way is chosen here,
and the results are memoised on ``(q, t)`` and the active set.  Redundant rows found by
the rank test (:mod:`flexmbs.system.dof`) are inactive: they are not in ``g``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from flexmbs.compiled import use_compiled
from flexmbs.errors import ModelError
from flexmbs.kinematics import frames as F
from flexmbs.kinematics.jet import Jet
from flexmbs.system.layout import coordinate_jets
from flexmbs.system.local_rows import LocalRows
from flexmbs.system.output_rows import RowsAt, rows_at
from flexmbs.system.sparse import coo
from flexmbs.system.stacked import MAX_N as STACKED_MAX_N
from flexmbs.system.stacked import StackedRows


class ConstraintRows:
    """The rows of a :class:`~flexmbs.system.layout.Layout` with an active set."""

    def __init__(self, layout):
        self.layout = layout
        self._cache = None
        self._G_cache = None
        self._pattern_cache = None
        self._stacked_rows = None
        self._dense_cache = None
        self._local_rows = None
        self._local_cache = None
        self._time_jets: dict = {}
        self._rows_at = None
        blocks = layout.blocks
        #: joint/drive blocks: stacked marker frames (None for normalisations)
        self.pairs = [None if b.kind == "normalization" else
                      F.PairFrames(b.markers, b.offsets, len(b.idx) + 1) for b in blocks]
        #: the markers' body slices of ``q`` per block (None: ground)
        self.qslices = [tuple(None if o is None else layout.body_slices[m.body.name]
                              for m, o in zip(b.markers, b.offsets)) for b in blocks]

    # -- the active set (:attr:`Layout.active <flexmbs.system.layout.Layout.active>`) ----
    @property
    def active(self) -> np.ndarray:
        return self.layout.active

    @property
    def n_lam(self) -> int:
        return self.layout.n_lam

    def active_blocks(self):
        """``[(block index, active local rows or None for all)]`` of the blocks with at
        least one active row (memoised on the active set)."""
        key = self.layout.active_key
        pc = self._pattern_cache
        if pc is not None and pc[0] == key:
            return pc[1]
        blocks, start, perm = self.layout.blocks, self.layout.row_start, self.layout.perm
        plan = []
        for bi in range(len(blocks)):
            act = self.active[start[bi]:start[bi + 1]]
            if act.all():
                plan.append((bi, None))
            elif act.any():
                plan.append((bi, np.flatnonzero(act)))
        indptr, indices = [0], []
        for bi, sel in plan:
            k = len(blocks[bi].labels) if sel is None else len(sel)
            cols = blocks[bi].idx[perm[bi]]
            for _ in range(k):
                indices.append(cols)
                indptr.append(indptr[-1] + len(cols))
        indices = np.concatenate(indices) if indices else np.zeros(0, int)
        indptr = np.array(indptr)
        g_row = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))   # row of each entry
        self._pattern_cache = (key, plan, indptr, indices, g_row)
        return plan

    def pattern(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR structure ``(indptr, indices)`` of ``G`` for the current active rows (each
        row's columns are its block's ``idx`` in ascending order)."""
        self.active_blocks()
        return self._pattern_cache[2:4]

    # -- one block ----------------------------------------------------------------------
    def time_jet(self, t, n, order) -> Jet:
        """The jet of time, the last local coordinate (constant gradient/Hessian cached)."""
        c = self._time_jets.get((n, order))
        if c is None:
            c = self._time_jets[(n, order)] = Jet.variable(n - 1, 0.0, n, order)
            c.d.setflags(write=False)
            if c.h is not None:
                c.h.setflags(write=False)
        return Jet(np.asarray(float(t)), c.d, c.h)

    def block_rows(self, bi, q, t, order, rot):
        """``(g, dg/dx, d2g/dx2 or None)`` of all rows of block ``bi`` stacked (over the
        block's local vector ``x``): label rows vectorised (:mod:`flexmbs.constraints.rows`),
        other joints and drives through their jets."""
        blk = self.layout.blocks[bi]
        if blk.kind == "normalization":
            e = q[blk.idx]
            D = np.append(2.0 * e, 0.0)[None, :]
            H = None
            if order == 2:
                H = np.zeros((1, 5, 5))
                H[0, :4, :4] = 2.0 * np.eye(4)
            return np.array([e @ e - 1.0]), D, H
        pf = self.pairs[bi]
        C, Dc, Hc = pf.evaluate([None if s is None else q[s] for s in self.qslices[bi]],
                                order, rot)
        rows = getattr(blk.owner, "rows", None)
        rows = rows() if rows is not None else None
        if rows is not None:
            return rows.evaluate(C, Dc, Hc, t)
        P, Q, *sensor_frames = pf.frame_jets(C, Dc, Hc)    # a fed drive: its sensor's
        kw = {}
        if getattr(blk.owner, "reads_coordinates", False):  # the bodies' coordinates too
            kw["coordinates"] = coordinate_jets(
                blk.offsets, [None if s is None else q[s] for s in self.qslices[bi]],
                pf.n, order)
        jets = blk.owner.equations(P, Q, self.time_jet(t, pf.n, order), *sensor_frames, **kw)
        if len(jets) != len(blk.labels):
            raise ModelError(f"{blk.kind} '{blk.name}': returned {len(jets)} equations, "
                             f"expected {len(blk.labels)}")
        V = np.array([float(j.v) for j in jets])
        D = np.array([j.d for j in jets], dtype=float)
        H = np.array([j.h for j in jets], dtype=float) if order == 2 else None
        return V, D, H

    # -- all active rows ----------------------------------------------------------------
    def rows(self, q, t, order):
        """The active constraint rows at ``(q, t)``, stacked per block: a list of
        ``(block index, g (k,), dg/dx (k, n_loc), d2g/dx2 (k, n_loc, n_loc) or None)``
        over the local vectors ``x = [q_i; q_j; t]`` (memoised on the last ``q, t``)."""
        key = (q.tobytes(), float(t), self.layout.active_key)
        cache = self._cache
        if cache is not None and cache[0] == key and cache[1] >= order:
            return cache[2]
        parts = []
        rot: dict = {}
        st = self.stacked() if order == 1 else None
        stacked = st.evaluate(q, t) if st is not None else {}
        for bi, sel in self.active_blocks():
            if bi in stacked:
                V, D = stacked[bi]
                H = None
            else:
                V, D, H = self.block_rows(bi, q, t, order, rot)
            if sel is not None:
                V, D = V[sel], D[sel]
                H = None if H is None else H[sel]
            parts.append((bi, V, D, H))
        self._cache = (key, order, parts)
        self._G_cache = None
        return parts

    def stacked(self) -> StackedRows | None:
        """The :class:`~flexmbs.system.stacked.StackedRows` of this system (first-order rows
        of all label-row joints in one compiled pass), or None (large systems, no such
        joints, or the reference kernels chosen, :func:`flexmbs.compiled.use_compiled`)."""
        if self._stacked_rows is None:
            lay = self.layout
            st = StackedRows(lay) if lay.n_q <= STACKED_MAX_N and use_compiled() else None
            self._stacked_rows = st if st is not None and len(st.blocks) >= 1 else False
        return self._stacked_rows or None

    def local(self) -> LocalRows | None:
        """The :class:`~flexmbs.system.local_rows.LocalRows` of a system too large for the
        dense stacked rows whose rows it covers completely, or None."""
        if self._local_rows is None:
            lay = self.layout
            lr = None
            if lay.n_q > STACKED_MAX_N and use_compiled():
                lr = LocalRows(lay)
                lr = lr if lr.complete and lr.blocks else None
            self._local_rows = lr or False
        return self._local_rows or None

    def sparse_rows(self, q, t):
        """``(g, G values in the CSR order of :meth:`pattern`)`` of the active rows from
        :meth:`local` (one compiled call), else None (memoised on ``q, t`` and the
        active set)."""
        lr = self.local()
        if lr is None:
            return None
        key = (q.tobytes(), float(t), self.layout.active_key)
        c = self._local_cache
        if c is not None and c[0] == key:
            return c[1]
        maps = c[2] if c is not None and c[0][2] == key[2] else None
        if maps is None:
            maps = lr.gather(self.active, *self.pattern())
            if maps is None:                 # rows on other columns: block by block
                self._local_rows = False
                return None
        out = lr.evaluate(q, t, maps)
        self._local_cache = (key, out, maps)
        return out

    def transpose_product(self, q, t, lam):
        """``G_A^T lam`` (n_q,) from :meth:`sparse_rows`, or None when it does not apply."""
        sparse = self.sparse_rows(q, t)
        if sparse is None:
            return None
        self.active_blocks()                 # the pattern of the current active set
        _, _, _, indices, g_row = self._pattern_cache
        return np.bincount(indices, weights=sparse[1] * lam[g_row], minlength=self.layout.n_q)

    def dense_rows(self, q, t):
        """``(g, G)`` of the active rows, ``G`` dense (n_lam, n_q), from
        :meth:`StackedRows.dense <flexmbs.system.stacked.StackedRows.dense>` when it covers
        every row of the system, else None (memoised on ``q, t`` and the active set)."""
        st = self.stacked()
        if st is None or not st.complete:
            return None
        key = (q.tobytes(), float(t), self.layout.active_key)
        c = self._dense_cache
        if c is not None and c[0] == key:
            if c[2]:
                return c[1]
            g, G = c[1]                       # all rows (from the step kernel): select
            g, G = g.copy(), G.copy()         # (its buffers are overwritten by the next)
        else:
            g, G = st.dense(q, t)
        if not self.active.all():
            act = np.flatnonzero(self.active)
            g, G = g[act], G[act]
        self._dense_cache = (key, (g, G), True)
        return g, G

    def adopt_dense(self, q_key: bytes, t: float, active_key: bytes, g, G) -> None:
        """Take ``g``, ``G`` of all rows (active or not) evaluated elsewhere (the step
        kernel's buffers) at ``q`` (``q.tobytes()``), ``t`` as the memo of
        :meth:`dense_rows`; they are copied when used."""
        self._dense_cache = ((q_key, t, active_key), (g, G), False)

    def forget_dense(self) -> None:
        """Drop the memo of :meth:`dense_rows` (adopted buffers about to change)."""
        self._dense_cache = None

    def G_data(self, q, t):
        """Values of ``G`` in the CSR order of :meth:`pattern` (memoised with the rows);
        taken from the dense rows when the system has them."""
        dense = self.dense_rows(q, t)
        if dense is not None:
            self.active_blocks()
            _, _, _, indices, g_row = self._pattern_cache
            return dense[1][g_row, indices]
        sparse = self.sparse_rows(q, t)
        if sparse is not None:
            return sparse[1]
        parts = self.rows(q, t, 1)
        if self._G_cache is not None and self._G_cache[0] is parts:
            return self._G_cache[1]
        perm = self.layout.perm
        data = np.concatenate([D[:, :-1][:, perm[bi]].ravel() for bi, _, D, _ in parts]) \
            if parts else np.zeros(0)
        self._G_cache = (parts, data)
        return data

    # -- the DAE's constraint functions ---------------------------------------------
    def constraint(self, q, t):
        dense = self.dense_rows(q, t)
        if dense is not None:
            return dense[0].copy()
        sparse = self.sparse_rows(q, t)
        if sparse is not None:
            return sparse[0].copy()
        parts = self.rows(q, t, 1)
        return np.concatenate([V for _, V, _, _ in parts]) if parts else np.zeros(0)

    def constraint_jacobian(self, q, t, *, all_rows=False):
        if all_rows:
            lay = self.layout
            active = lay.active
            lay.active = np.ones(lay.n_rows_all, dtype=bool)
            try:
                return self.constraint_jacobian(q, t)
            finally:
                lay.active = active
        indptr, indices = self.pattern()
        if not self.n_lam:
            return sp.csr_matrix((0, self.layout.n_q))
        return sp.csr_matrix((self.G_data(q, t), indices, indptr),
                             shape=(self.n_lam, self.layout.n_q))

    def rows_all(self, q, qd, t, rows=None):
        """``(g, gd)`` of every constraint row, the dropped (redundant) ones too:
        ``g(q, t)`` and ``gd = G qd + g_t`` (n_rows_all,), in ``row_labels`` order; with
        ``rows`` (indices into ``row_labels``) only those, evaluating only the blocks that
        hold them."""
        lay = self.layout
        rows = np.arange(lay.n_rows_all) if rows is None else np.asarray(rows, dtype=int)
        g, gd = np.zeros(lay.n_rows_all), np.zeros(lay.n_rows_all)
        rot: dict = {}
        starts = lay.row_start
        for bi in np.unique(np.searchsorted(starts, rows, side="right") - 1):
            blk, a, b = lay.blocks[bi], starts[bi], starts[bi + 1]
            V, D, _ = self.block_rows(bi, q, t, 1, rot)
            g[a:b] = V
            gd[a:b] = D[:, :-1] @ qd[blk.idx] + D[:, -1]
        return g[rows], gd[rows]

    def constraint_time_derivative(self, q, t):
        """``g_t = dg/dt`` at fixed ``q``."""
        parts = self.rows(q, t, 1)
        return np.concatenate([D[:, -1] for _, _, D, _ in parts]) if parts else np.zeros(0)

    def constraint_rates(self, q, qd, t):
        """``(g_t, gamma)``: ``dg/dt = G qd + g_t``, ``d2g/dt2 = G qdd + gamma``."""
        g_t, gamma = [], []
        for bi, _, D, H in self.rows(q, t, 2):
            xd = np.append(qd[self.layout.blocks[bi].idx], 1.0)
            g_t.append(D[:, -1])
            gamma.append((H @ xd) @ xd)
        if not g_t:
            return np.zeros(0), np.zeros(0)
        return np.concatenate(g_t), np.concatenate(gamma)

    def constraint_velocity_jacobian(self, q, v, t):
        """``d(G(q) v)/dq`` for a fixed ``v``, CSR (n_lam, n_q)."""
        rows, cols, vals, i0 = [], [], [], 0
        for bi, V, _, H in self.rows(q, t, 2):
            idx = self.layout.blocks[bi].idx
            k = len(V)
            R = H[:, :-1, :-1] @ v[idx]                       # (k, n_b)
            rows.append(np.repeat(np.arange(i0, i0 + k), len(idx)))
            cols.append(np.tile(idx, k)); vals.append(R.ravel())
            i0 += k
        return coo(rows, cols, vals, (self.n_lam, self.layout.n_q))

    # -- one recorded state (:mod:`flexmbs.system.output_rows`) -------------------------
    def at_state(self, q, t) -> RowsAt:
        """``G``, ``g_t``, the values of every row and the marker frames at ``(q, t)``
        in one pass (:func:`~flexmbs.system.output_rows.rows_at`), shared by the
        velocity projection, the reactions and the health checks of an output point
        (memoised on ``q, t`` and the active set)."""
        key = (q.tobytes(), float(t), self.layout.active_key)
        c = self._rows_at
        if c is None or c[0] != key:
            c = self._rows_at = (key, rows_at(self, q, t))
        return c[1]
