"""The constraint-force Jacobian ``d(G(q)^T mu)/dq = sum_i mu_i h_i``, ``h_i = d2g_i/dq2``.

Per block with active rows (:class:`~flexmbs.system.constraint_rows.ConstraintRows`):
normalisations ``2 mu E``; label-row joints contract ``mu`` with the frame Hessians
directly (:meth:`flexmbs.constraints.rows.LabelRows.hessian_sum`, compiled
:func:`flexmbs.kinematics.frame_kernel.label_hessian_sum` on rigid and flexible markers);
other joints and drives sum their rows' Hessians.  A system the compiled step covers
(an :class:`~flexmbs.system.affine_plan.AffinePlan`) has the whole dense sum in one
compiled call instead (:meth:`ConstraintHessian.stacked`, with the weights ``mu`` of
:func:`flexmbs.system.stacked_kernel.stacked_mu`).
"""
from __future__ import annotations

import numpy as np

from flexmbs.compiled import arg, backend
from flexmbs.constraints.rows import LabelRows
from flexmbs.kinematics import frames as F
from flexmbs.kinematics import frame_kernel, frame_reference
from flexmbs.system.sparse import Grids, coo
from flexmbs.system.stacked_kernel import stacked_mu


class ConstraintHessian:
    """``sum_i mu_i h_i`` of the active rows of ``rows`` (a
    :class:`~flexmbs.system.constraint_rows.ConstraintRows`), as dense blocks on the
    grids of ``grids`` (keys ``("c", name, kind)``)."""

    def __init__(self, rows, grids: Grids):
        self.rows, self.grids = rows, grids
        self._pairs_cache = None
        self._label_args: dict = {}

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cols)`` of the union of the constraint blocks' grids (unique pairs, the
        support of ``sum_i mu_i h_i``), memoised on the active set."""
        key = self.rows.layout.active_key
        c = self._pairs_cache
        if c is not None and c[0] == key:
            return c[1]
        lay = self.rows.layout
        N = lay.n_q
        keys = np.unique(np.concatenate(
            [np.add.outer(lay.blocks[bi].idx * N, lay.blocks[bi].idx).ravel()
             for bi, _ in self.rows.active_blocks()] or [np.zeros(0, dtype=np.int64)]))
        pairs = (keys // N, keys % N)
        self._pairs_cache = (key, pairs)
        return pairs

    def _kernel_rows(self, bi, rows) -> tuple:
        """Writable copies of ``S_alpha``, ``S_beta``, ``k`` of block ``bi``'s label rows
        for :func:`~flexmbs.kinematics.frame_kernel.label_hessian_sum` (made once)."""
        a = self._label_args.get(bi)
        if a is None:
            a = self._label_args[bi] = (arg(rows.S_alpha), arg(rows.S_beta), arg(rows.k))
        return a

    def sums(self, q, mu, t):
        """``sum_i mu_i h_i`` over the rows of each block with active rows, without the
        time row/column: ``[(block index, (n_b, n_b))]`` in ``ConstraintRows.rows`` order."""
        R = self.rows
        out, off, rot = [], 0, {}
        st = R.stacked()
        if st is not None and st.last_key != (q.tobytes(), float(t)):
            st.evaluate(q, t)            # normally done already by the residual at q
        for bi, sel in R.active_blocks():
            blk = R.layout.blocks[bi]
            k = len(blk.labels) if sel is None else len(sel)
            mu_b = mu[off:off + k]
            off += k
            if sel is not None:
                full = np.zeros(len(blk.labels))
                full[sel] = mu_b
                mu_b = full
            if blk.kind == "normalization":
                out.append((bi, 2.0 * mu_b[0] * np.eye(4)))
                continue
            rows = getattr(blk.owner, "rows", None)
            rows = rows() if rows is not None else None
            if rows is not None:
                pf = R.pairs[bi]
                qs = [None if s is None else q[s] for s in R.qslices[bi]]
                C, Dc = st.block_frames(bi) if st is not None and st.handles(bi) else \
                    pf.evaluate(qs, 1, rot)[:2]
                mk = pf.kernel_markers(qs) if type(rows) is LabelRows else None
                if mk is not None:                   # compiled, the same sum
                    hs = backend(frame_kernel, frame_reference).label_hessian_sum(*self._kernel_rows(bi, rows), arg(C), arg(Dc),
                                           arg(mu_b), F.T_A_KERNEL, *mk)
                else:
                    hs = rows.hessian_sum(C, Dc, lambda W: pf.hessian_contract(W, qs, rot),
                                          mu_b, t)
                out.append((bi, hs[:-1, :-1]))
                continue
            _, _, H = R.block_rows(bi, q, t, 2, rot)
            nl = H.shape[-1]
            out.append((bi, (mu_b @ H.reshape(len(mu_b), nl * nl)).reshape(nl, nl)[:-1, :-1]))
        return out

    def local_values(self, q, mu, t):
        """The values of :meth:`sums` end to end in one compiled call
        (:meth:`flexmbs.system.local_rows.LocalRows.hessian_values`) for the systems whose
        rows :meth:`ConstraintRows.sparse_rows
        <flexmbs.system.constraint_rows.ConstraintRows.sparse_rows>` covers, else None."""
        R = self.rows
        if R.sparse_rows(q, t) is None:
            return None
        return R.local().hessian_values(q, np.asarray(mu, float), t, R.active_blocks(),
                                        F.T_A_KERNEL)

    def chunks(self, q, mu, t):
        """``sum_i mu_i h_i`` per constraint block, as (rows, cols, values) chunks."""
        rows, cols, vals = [], [], []
        for bi, Hs in self.sums(q, np.asarray(mu, float), t):
            blk = self.rows.layout.blocks[bi]
            rr, cc = self.grids(("c", blk.name, blk.kind), blk.idx)
            rows.append(rr); cols.append(cc); vals.append(Hs.ravel())
        return rows, cols, vals

    def jacobian(self, q, mu, t):
        """``d(G(q)^T mu)/dq``, CSR (n_q, n_q)."""
        rows, cols, vals = self.chunks(q, mu, t)
        n = self.rows.layout.n_q
        return coo(rows, cols, vals, (n, n))

    @staticmethod
    def stacked(q, lam, t, plan):
        """``sum_i mu_i h_i`` (n_q, n_q) dense over all active rows in one compiled call
        (:func:`flexmbs.kinematics.frame_kernel.stacked_hessian_sum`) with the stacked
        rows of ``plan`` (an :class:`~flexmbs.system.affine_plan.AffinePlan`)."""
        st, act = plan.stacked, plan.active
        if st.last_key != (q.tobytes(), float(t)):
            st.dense(q, t)
        C, D = st.last
        (_, _, start, nq, U0T, W12, _, wptr, Sa, Sb, kc, src, dst, norm_rows,
         norm_idx) = st.kernel_data
        row, lo, n, w, _ = st.drive_weights(float(t))   # a drive row: sum_j w_j h_pj
        mu_st, mu_norm = stacked_mu(arg(lam), act, st.n_rows_all, Sa.shape[0], src, dst, row,
                                    lo, n, w, norm_rows)
        return backend(frame_kernel, frame_reference).stacked_hessian_sum(arg(q), C, D, start, nq, U0T, W12, wptr, Sa, Sb, kc, mu_st,
                                   F.T_A_KERNEL, norm_idx, mu_norm)
