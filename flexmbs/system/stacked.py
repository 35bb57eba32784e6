"""The first-order constraint rows of all joints and drives of a small system in one pass.

The residual needs ``g`` and ``G = dg/dq`` of every joint at every Newton iteration.
Evaluated joint by joint (:class:`flexmbs.kinematics.frames.PairFrames` and
:mod:`flexmbs.constraints.rows`) that is some twenty small array operations per joint;
here the marker frames of all joints are stacked once, over the global coordinates
``q`` (length ``N``):

    C (M, 4, 3):  rows p, x, y, z of every marker,   D = dC/dq (M, 4, 3, N),

with ``V = A(e) U + [r, 0, 0, 0]``, ``dV/de = Te . U`` and ``dV/dq_e = A W`` computed
marker by marker by the compiled :func:`flexmbs.kinematics.frame_kernel.fill_frame`.  The
joints' label rows (``alpha_r . beta_r``, :mod:`flexmbs.constraints.rows`) of the whole
system are then one compiled :func:`~flexmbs.kinematics.frame_kernel.label_rows` call
with global selection matrices ``S_alpha``, ``S_beta`` (R, 4M):

    g = sum_i alpha_i beta_i,   dg = alpha . dbeta + beta . dalpha.

Drives (``WeightedRow``) combine their label rows with the time weights afterwards.
The markers of the force elements that the compiled force kernel covers
(:mod:`flexmbs.forces.spring_kernel`) are stacked too, after the joints'.  Joints of
other kinds, markers on point masses and the Euler-parameter normalisations are left to
the caller (:meth:`StackedRows.handles`).  Used only for systems of at most
:data:`MAX_N` coordinates (``D`` is dense in ``q``); above, the same rows come sparse
from :class:`flexmbs.system.local_rows.LocalRows` (both on :class:`LabelRowSet`).
"""
from __future__ import annotations

import functools

import numpy as np

from flexmbs.constraints.rows import LabelRows, WeightedRow
from flexmbs.compiled import arg, backend
from flexmbs.forces.spring_columns import kind_code
from flexmbs.kinematics import frames as F
from flexmbs.kinematics import frame_kernel, frame_reference

#: The stacked rows' ``D`` and ``G`` are dense in ``q``: their work grows as (markers x
#: coordinates), the sparse :class:`~flexmbs.system.local_rows.LocalRows`' as the markers.
#: Measured per body and step (``benchmarks/scaling.py`` chain, same session): at 120
#: coordinates (8 links) the two are even, at 240 (16 links) the sparse rows are 20-35 %
#: cheaper, at 189 (``spatial_linkage_7x20``) the stacked rows 15 % cheaper.
MAX_N = 200


def _on_point_mass(marker) -> bool:
    """A marker on a point mass (3 coordinates ``r``, no rotation): its frame is the
    constant ``[s, R]`` moved by ``r`` (in the kernels: ``start = -(offset + 2)``)."""
    return getattr(marker.body, "n_coords", 0) == 3


def check_frames(who: str, C, D, M: int, n: int) -> None:
    """Raise ``ValueError`` naming ``who`` unless ``C`` is (>= M, 4, 3) and ``D``
    (C.shape, n): stacked frames for a kernel that reads ``M`` markers."""
    if C.ndim != 3 or C.shape[0] < M or C.shape[1:] != (4, 3) or D.shape != (*C.shape, n):
        raise ValueError(f"{who}: C must have shape (M >= {M}, 4, 3) and D (M, 4, 3, {n}), "
                         f"got {C.shape} and {D.shape}")


class LabelRowSet:
    """The label-row joints and drives of a system's :class:`~flexmbs.system.layout.
    Layout` with their markers, shared by :class:`StackedRows` (dense in ``q``) and
    :class:`flexmbs.system.local_rows.LocalRows` (sparse): ``markers`` ``[(marker, body
    slice or None for ground)]``, ``entries`` ``[(block, rows, LabelRows, (P, Q))]``, the
    label rows' system rows ``global_rows`` (-1: drives, listed in ``weighted``) and the
    normalisation rows."""

    def __init__(self, layout):
        self.N = layout.n_q
        markers, index = [], {}
        entries = []
        for bi, blk in enumerate(layout.blocks):
            if blk.kind == "normalization":
                continue
            rows = getattr(blk.owner, "rows", None)
            rows = rows() if rows is not None else None
            base = rows if isinstance(rows, LabelRows) else \
                rows.base if isinstance(rows, WeightedRow) else None
            if base is None:
                continue
            ms = []
            for mk, off in zip(blk.markers, blk.offsets):
                if id(mk) not in index:
                    index[id(mk)] = len(markers)
                    ground = off is None or getattr(mk.body, "is_ground", False)
                    markers.append((mk, None if ground else layout.body_slices[mk.body.name]))
                ms.append(index[id(mk)])
            entries.append((bi, rows, base, ms))
        self.markers, self.entries = markers, entries
        self.markers_of = {bi: tuple(ms) for bi, _, _, ms in entries}
        # every row of the system is covered when all joint and drive blocks are label rows
        norm = [bi for bi, blk in enumerate(layout.blocks) if blk.kind == "normalization"]
        self.complete = len(entries) + len(norm) == len(layout.blocks)
        self.norm_rows = np.array([layout.row_start[bi] for bi in norm], dtype=int)
        self.norm_idx = np.array([layout.blocks[bi].idx for bi in norm], dtype=int).reshape(-1, 4)
        self.n_rows_all = int(layout.row_start[-1])
        self.R = sum(len(b.labels) for _, _, b, _ in entries)
        self.blocks = {}
        self.global_rows = np.full(self.R, -1)        # row of the system (-1: drives)
        self.weighted = []                                # drives: (block, rows, WeightedRow, row)
        self._drive_cache = None
        r0 = 0
        for bi, rows, base, _ in entries:
            nr = len(base.labels)
            idx = layout.blocks[bi].idx
            self.blocks[bi] = (slice(r0, r0 + nr), None if rows is base else rows, idx)
            if rows is base:
                self.global_rows[r0:r0 + nr] = layout.row_start[bi] + np.arange(nr)
            else:        # a drive: one row of the system from the nr rows here
                self.weighted.append((bi, slice(r0, r0 + nr), rows, int(layout.row_start[bi])))
            r0 += nr
        self.plain = np.flatnonzero(self.global_rows >= 0)

    def handles(self, bi: int) -> bool:
        return bi in self.blocks

    def marker_data(self) -> tuple:
        """``(start, nq, U0T, W12, W_r, wptr)`` of :func:`~flexmbs.kinematics.frame_kernel.
        fill_frame` for every marker (``W12``/``W_r`` flattened, ``wptr`` in units of 12
        entries; ``start``: -1 ground, ``-(s + 2)`` a point mass at ``q[s]``)."""
        M = len(self.markers)
        start = np.full(M, -1, dtype=np.int64)
        nq = np.zeros(M, dtype=np.int64)
        U0T = np.zeros((M, 12))
        W12, W_r = [], []
        for m, (mk, sl) in enumerate(self.markers):
            if sl is None:
                continue
            if _on_point_mass(mk):                     # translation only: start -(s + 2)
                start[m] = -(sl.start + 2)
                continue
            u0t, w12, w_r = F.kernel_consts(mk, "flexible" if F.is_flexible(mk) else "rigid")
            start[m], nq[m], U0T[m] = sl.start, w12.shape[1], u0t
            W12.append(w12.ravel())
            W_r.append(w_r.ravel())
        wptr = np.zeros(M + 1, dtype=np.int64)
        np.cumsum(nq, out=wptr[1:])
        cat = lambda parts: arg(np.concatenate(parts)) if parts else np.zeros(0)  # noqa: E731
        return start, nq, U0T, cat(W12), cat(W_r), wptr

    def row_maps(self) -> tuple:
        """``(src, dst, norm_rows, norm_idx)``: label row ``src[i]`` is system row
        ``dst[i]``; the normalisations' rows and ``e`` indices (int64)."""
        return (np.asarray(self.plain, dtype=np.int64),
                np.asarray(self.global_rows[self.plain], dtype=np.int64),
                np.asarray(self.norm_rows, dtype=np.int64),
                np.asarray(self.norm_idx, dtype=np.int64).reshape(-1, 4))

    def drive_weights(self, t: float) -> tuple:
        """The drive rows for the compiled kernels at time ``t`` (memoised on ``t``):
        ``(row, lo, n, w, f)`` with drive ``d`` the system row ``row[d] = sum_j
        w[o_d + j] p[lo[d] + j] + f[d]`` over its ``n[d]`` label rows ``p`` (``o_d`` the
        running sum of ``n``)."""
        c = self._drive_cache
        if c is not None and c[0] == t:
            return c[1]
        D = len(self.weighted)
        row = np.array([r for _, _, _, r in self.weighted], dtype=np.int64)
        lo = np.array([rs.start for _, rs, _, _ in self.weighted], dtype=np.int64)
        n = np.array([rs.stop - rs.start for _, rs, _, _ in self.weighted], dtype=np.int64)
        w, f = [], np.zeros(D)
        for d, (_, _, rows, _) in enumerate(self.weighted):
            wd, _, _, fd, _, _ = rows.weights(t)
            w.append(np.asarray(wd, float))
            f[d] = fd
        out = (row, lo, n, arg(np.concatenate(w)) if w else np.zeros(0), f)
        self._drive_cache = (t, out)
        return out


class StackedRows(LabelRowSet):
    """Stacked first-order rows of the label-row joints and drives of a system's
    :class:`~flexmbs.system.layout.Layout`, dense in ``q``."""

    def __init__(self, layout):
        super().__init__(layout)
        # (an incomplete set gets no compiled plan, so no force element reads its frames)
        self.force_markers = self._add_force_markers(layout) if self.complete else {}
        N, markers, entries = self.N, self.markers, self.entries
        self.last_key = None
        M, R = len(markers), self.R
        Sa, Sb, k = np.zeros((R, 4 * M)), np.zeros((R, 4 * M)), np.zeros((R, 3))
        for bi, _, base, (mP, mQ) in entries:
            rs = self.blocks[bi][0]
            for S, Sl in ((Sa, base.S_alpha), (Sb, base.S_beta)):
                S[rs, 4 * mP:4 * mP + 4] += Sl[:, 0:4]
                S[rs, 4 * mQ:4 * mQ + 4] += Sl[:, 4:8]
            k[rs] = base.k
        self.S_alpha, self.S_beta, self.k = Sa, Sb, k
        # constant parts: ground markers' vectors, dp/dr = E of the others
        C0, D0 = np.zeros((M, 4, 3)), np.zeros((M, 4, 3, N))
        for m, (mk, sl) in enumerate(markers):
            if sl is None or _on_point_mass(mk):      # axes constant (origin: + r)
                C0[m] = F.rigid_U(mk).T
            if sl is not None:
                D0[m, 0, :, sl.start:sl.start + 3] = np.eye(3)
        self.C0, self.D0 = C0, D0
        #: the arguments of :func:`~flexmbs.kinematics.frame_kernel.stacked_rows` between
        #: ``q`` and ``n_rows`` (:meth:`_pack`)
        self.kernel_data = self._pack(markers)

    @functools.cached_property
    def marker_index(self) -> dict:
        """``{id(marker): m}``: the row ``m`` of each marker in the frames ``C``."""
        return {id(mk): m for m, (mk, _) in enumerate(self.markers)}

    def _add_force_markers(self, layout) -> dict:
        """Append the markers of the force elements the compiled force kernel covers
        (:func:`flexmbs.forces.spring_columns.kind_code`) to :attr:`markers`; returns
        ``{force block index: its markers' indices}``."""
        index = {id(mk): m for m, (mk, _) in enumerate(self.markers)}
        out = {}
        for fi, fb in enumerate(layout.force_blocks):
            if kind_code(fb.element) is None or fb.n_own != len(fb.markers):
                continue
            ms = []
            for mk, off in zip(fb.markers, fb.offsets):
                if id(mk) not in index:
                    index[id(mk)] = len(self.markers)
                    ground = off is None or getattr(mk.body, "is_ground", False)
                    self.markers.append((mk, None if ground else
                                         layout.body_slices[mk.body.name]))
                ms.append(index[id(mk)])
            out[fi] = tuple(ms)
        return out

    def _pack(self, markers) -> tuple:
        """The arguments of :func:`~flexmbs.kinematics.frame_kernel.stacked_rows` before
        ``n_rows``: templates, marker data (:meth:`marker_data`), the selection matrices
        and the row maps (:meth:`row_maps`)."""
        return (arg(self.C0), arg(self.D0), *self.marker_data(),
                arg(self.S_alpha), arg(self.S_beta), arg(self.k), *self.row_maps())

    def remember(self, C: np.ndarray, D: np.ndarray, q_key: bytes, t: float) -> None:
        """Take ``(C, D)`` evaluated elsewhere (the step kernel) at ``q`` (``q.tobytes()``)
        and ``t`` as the last evaluation."""
        self.last, self.last_key = (C, D), (q_key, t)

    def forget(self) -> None:
        """Drop the last evaluation (its arrays are about to be overwritten)."""
        self.last_key = None

    def block_frames(self, bi: int) -> tuple[np.ndarray, np.ndarray]:
        """``(C, D)`` of block ``bi``'s markers from the last :meth:`evaluate`, in the
        layout of :class:`flexmbs.kinematics.frames.PairFrames` (local vector with the
        time column, which is zero)."""
        C, D = self.last
        mP, mQ = self.markers_of[bi]
        idx = self.blocks[bi][2]
        Db = np.zeros((8, 3, len(idx) + 1))
        Db[0:4, :, :-1] = D[mP][:, :, idx]
        Db[4:8, :, :-1] = D[mQ][:, :, idx]
        return np.concatenate([C[mP], C[mQ]]), Db

    def evaluate(self, q: np.ndarray, t: float) -> dict:
        """``{block index: (g (k,), dg/dx (k, n_loc + 1))}`` of the handled blocks, the
        derivatives over the block's local vector ``x = [q_i; q_j; t]``."""
        _, _, C, D, p, dp = backend(frame_kernel, frame_reference).stacked_rows(arg(q), *self.kernel_data, self.n_rows_all)
        self.last = (C, D)
        self.last_key = (q.tobytes(), float(t))
        out = {}
        for bi, (rs, weighted, idx) in self.blocks.items():
            pb, dpb = p[rs], dp[rs][:, idx]
            if weighted is None:
                Dl = np.zeros((len(pb), len(idx) + 1))
                Dl[:, :-1] = dpb
                out[bi] = (pb, Dl)
                continue
            w, w1, _, f, f1, _ = weighted.weights(t)
            Dl = np.empty((1, len(idx) + 1))
            Dl[0, :-1] = w @ dpb
            Dl[0, -1] = w1 @ pb + f1
            out[bi] = (np.array([w @ pb + f]), Dl)
        return out

    def dense(self, q: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
        """``(g, G)`` of all rows of the system, active or not (``n_rows_all``,
        ``(n_rows_all, N)`` dense), when :attr:`complete`: the label rows of
        :meth:`evaluate`, a drive row ``w(t) . p + f(t)`` with gradient ``w . dp``, and the
        Euler-parameter normalisations ``e.e - 1`` with gradient ``2 e``."""
        g, G, C, D, p, dp = backend(frame_kernel, frame_reference).stacked_rows(arg(q), *self.kernel_data, self.n_rows_all)
        self.last = (C, D)
        self.last_key = (q.tobytes(), float(t))
        for _, rs, rows, r in self.weighted:
            w, _, _, f, _, _ = rows.weights(t)
            g[r] = w @ p[rs] + f
            G[r] = w @ dp[rs]
        return g, G
