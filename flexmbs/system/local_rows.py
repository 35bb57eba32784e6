"""The first-order constraint rows of a system of any size in one compiled pass, sparse.

For systems above :data:`flexmbs.system.stacked.MAX_N` coordinates the dense stacked
rows (``D`` (M, 4, 3, N), ``G`` (n_rows, N)) would cost O(N) per row; here every marker
keeps its frame derivatives on its own body's coordinates only and every row on its two
markers' (:mod:`flexmbs.system.local_rows_kernel`):

    g_A(q, t) (n_lam,),   G_A = dg_A/dq   in the CSR pattern of
    :meth:`ConstraintRows.pattern <flexmbs.system.constraint_rows.ConstraintRows.pattern>`

(each row's columns: its block's ``idx``, ascending).  Covers systems whose rows are all
label rows, drives of them and Euler-parameter normalisations (``complete``); the gather
map from the local slots to the pattern is made once per active set.
"""
from __future__ import annotations

import numpy as np

from flexmbs.compiled import arg
from flexmbs.kinematics import frames as F
from flexmbs.system.local_rows_kernel import local_hessian, local_rows
from flexmbs.system.stacked import LabelRowSet
from flexmbs.system.stacked_kernel import stacked_mu


class LocalRows(LabelRowSet):
    """All rows ``g_A`` and the CSR values of ``G_A`` of a complete label-row system,
    sparse in ``q`` (module docstring)."""

    def __init__(self, layout):
        super().__init__(layout)
        markers = self.markers
        M, R = len(markers), self.R
        width = np.zeros(M, dtype=np.int64)            # local columns of each marker
        col0 = np.full(M, -1, dtype=np.int64)          # their first column in q
        for m, (mk, sl) in enumerate(markers):
            if sl is not None:
                col0[m] = sl.start
                width[m] = 3 if getattr(mk.body, "n_coords", 0) == 3 else sl.stop - sl.start
        L = self.L = max(4, int(width.max()) if M else 4)
        C0, D0 = np.zeros((M, 4, 3)), np.zeros((M, 4, 3, L))
        for m, (mk, sl) in enumerate(markers):
            if sl is None or width[m] == 3:            # axes constant (origin: + r)
                C0[m] = F.rigid_U(mk).T
            if sl is not None:
                D0[m, 0, :, 0:3] = np.eye(3)
        e_lo = np.zeros(len(self.entries) + 1, dtype=np.int64)   # rows of each block
        e_m = np.zeros((len(self.entries), 2), dtype=np.int64)   # and its markers
        Sa, Sb, k = np.zeros((R, 8)), np.zeros((R, 8)), np.zeros((R, 3))
        for e, (bi, _, base, (mP, mQ)) in enumerate(self.entries):
            rs = self.blocks[bi][0]
            e_lo[e + 1], e_m[e] = rs.stop, (mP, mQ)
            Sa[rs], Sb[rs], k[rs] = base.S_alpha, base.S_beta, base.k
        # global column of each local slot of each system row (-1: none)
        cols = np.full((self.n_rows_all, 2 * L), -1, dtype=np.int64)
        for bi, (rs, _, _) in self.blocks.items():
            rows = self.global_rows[rs] if self.blocks[bi][1] is None else \
                np.array([r for b, _, _, r in self.weighted if b == bi])
            for side, m in enumerate(self.markers_of[bi][:2]):
                if col0[m] >= 0:
                    cols[rows[:, None], side * L + np.arange(width[m])] = \
                        col0[m] + np.arange(width[m])
        cols[self.norm_rows, 0:4] = self.norm_idx
        self.cols = cols
        self.kernel_data = (arg(C0), arg(D0), *self.marker_data(), e_lo, e_m, arg(Sa), arg(Sb),
                            arg(k), *self.row_maps(), self.n_rows_all)
        self.layout = layout
        self._hessian_plan = None

    def gather(self, active: np.ndarray, indptr: np.ndarray,
               indices: np.ndarray) -> tuple | None:
        """``(act, pos1, pos2)``: the active rows and, for every entry of the CSR pattern
        ``(indptr, indices)`` over them, its one or two flat positions in the local rows
        (two when both markers of a row sit on one body; -1: none); None when a row has
        columns that are not its two markers' (e.g. a drive that reads a sensor)."""
        act = np.flatnonzero(active).astype(np.int64)
        rows = np.repeat(act, np.diff(indptr))
        L2 = self.cols.shape[1]
        hit = self.cols[rows] == indices[:, None]          # (nnz, 2 L)
        n_hit = hit.sum(axis=1)
        if np.any(n_hit == 0) or np.any(n_hit > 2):
            return None
        first = np.argmax(hit, axis=1)
        hit[np.arange(len(first)), first] = False
        second = np.where(n_hit == 2, np.argmax(hit, axis=1), -1)
        pos1 = (rows * L2 + first).astype(np.int64)
        pos2 = np.where(second >= 0, rows * L2 + second, -1).astype(np.int64)
        return act, pos1, pos2

    def evaluate(self, q: np.ndarray, t: float, maps: tuple) -> tuple[np.ndarray, np.ndarray]:
        """``(g_A, G_A values)`` at ``(q, t)`` with the maps of :meth:`gather`."""
        act, pos1, pos2 = maps
        g = np.empty(len(act))
        data = np.empty(len(pos1))
        local_rows(arg(q), *self.kernel_data, *self.drive_weights(float(t)), act, pos1, pos2,
                   g, data)
        return g, data

    def hessian_plan(self, active_blocks) -> tuple:
        """The block arrays of :func:`~flexmbs.system.local_rows_kernel.local_hessian` for
        the active blocks ``[(block index, sel)]`` (memoised on the active set)."""
        key = self.layout.active_key
        c = self._hessian_plan
        if c is not None and c[0] == key:
            return c[1]
        blocks, norm = self.layout.blocks, {int(r): i for i, r in enumerate(self.norm_rows)}
        kind, lo, nr, mk, off, nb = [], [], [], [], [], []
        for bi, _ in active_blocks:
            blk = blocks[bi]
            nb.append(len(blk.idx))
            if blk.kind == "normalization":
                kind.append(0); lo.append(norm[int(self.layout.row_start[bi])]); nr.append(1)
                mk.append((0, 0)); off.append((-1, -1))
                continue
            rs = self.blocks[bi][0]
            kind.append(1); lo.append(rs.start); nr.append(rs.stop - rs.start)
            mk.append(self.markers_of[bi][:2])
            off.append(tuple(-1 if o is None else o for o in blk.offsets[:2]))
        nb = np.array(nb, dtype=np.int64)
        ptr = np.zeros(len(nb) + 1, dtype=np.int64)
        np.cumsum(nb * nb, out=ptr[1:])
        i8 = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
        plan = (i8(kind), i8(lo), i8(nr), i8(mk).reshape(-1, 2), i8(off).reshape(-1, 2), nb,
                ptr)
        self._hessian_plan = (key, plan)
        return plan

    def hessian_values(self, q, lam, t, active_blocks, TA) -> np.ndarray:
        """``sum_i lam_i d2g_i/dx2`` of the active blocks, each ``(n_b, n_b)`` on its
        ``idx`` row-major, end to end (the order of :meth:`ConstraintHessian.sums
        <flexmbs.system.constraint_hessian.ConstraintHessian.sums>`); ``lam`` over the
        active rows, ``TA`` the frame-derivative tensor."""
        (C0, D0, start, nq, U0T, W12, W_r, wptr, _, _, Sa, Sb, kc, src, dst, norm_rows, _,
         n_rows) = self.kernel_data
        row, lo, n, w, _ = self.drive_weights(float(t))
        act = np.flatnonzero(self.layout.active).astype(np.int64)
        mu_st, mu_norm = stacked_mu(arg(lam), act, n_rows, self.R, src, dst, row, lo, n, w,
                                    norm_rows)
        plan = self.hessian_plan(active_blocks)
        vals = np.empty(int(plan[-1][-1]))
        local_hessian(arg(q), mu_st, mu_norm, C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb,
                      kc, TA, *plan, vals)
        return vals
