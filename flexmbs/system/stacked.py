"""The first-order constraint rows of all joints and drives of a small system in one pass.

The residual needs ``g`` and ``G = dg/dq`` of every joint at every Newton iteration.
Evaluated joint by joint (:class:`flexmbs.kinematics.frames.PairFrames` and
:mod:`flexmbs.constraints.rows`) that is some twenty small array operations per joint;
here the marker frames of all joints are stacked once, over the global coordinates
``q`` (length ``N``):

    C (M, 4, 3):  rows p, x, y, z of every marker,   D = dC/dq (M, 4, 3, N),

with ``V = A(e) U + [r, 0, 0, 0]`` and ``dV/de = Te . U`` (frames module) computed for
all rigid-body markers in one batch from the stacked ``A`` and ``Te`` of all bodies.  The
joints' label rows (``alpha_r . beta_r``, :mod:`flexmbs.constraints.rows`) of the whole
system are then a few products with global selection matrices ``S_alpha``, ``S_beta``
(R, 4M):

    g = sum_i alpha_i beta_i,   dg = alpha . dbeta + beta . dalpha.

Drives (``WeightedRow``) combine their label rows with the time weights afterwards.
Joints of other kinds, markers on point masses and the Euler-parameter normalisations are
left to the caller (:meth:`StackedRows.handles`).  Used only for systems of at most
:data:`MAX_N` coordinates (``D`` is dense in ``q``).
"""
from __future__ import annotations

import numpy as np

from flexmbs.constraints.rows import LabelRows, WeightedRow
from flexmbs.kinematics import frames as F

MAX_N = 400


class StackedRows:
    """Stacked first-order rows of the label-row joints and drives of an assembled system."""

    def __init__(self, asm):
        N = self.N = asm.n_q
        markers, index = [], {}
        entries = []
        for bi, blk in enumerate(asm.blocks):
            if blk.kind == "normalization":
                continue
            rows = getattr(blk.owner, "rows", None)
            rows = rows() if rows is not None else None
            base = rows if isinstance(rows, LabelRows) else \
                rows.base if isinstance(rows, WeightedRow) else None
            if base is None or any(getattr(m.body, "n_coords", 0) == 3 for m in blk.markers):
                continue
            ms = []
            for mk, off in zip(blk.markers, blk.offsets):
                if id(mk) not in index:
                    index[id(mk)] = len(markers)
                    ground = off is None or getattr(mk.body, "is_ground", False)
                    markers.append((mk, None if ground else asm.body_slices[mk.body.name]))
                ms.append(index[id(mk)])
            entries.append((bi, rows, base, ms))
        self.markers_of = {bi: tuple(ms) for bi, _, _, ms in entries}
        self.last_key = None
        self.M = M = len(markers)
        R = sum(len(b.labels) for _, _, b, _ in entries)
        Sa, Sb, k = np.zeros((R, 4 * M)), np.zeros((R, 4 * M)), np.zeros((R, 3))
        self.blocks = {}
        r0 = 0
        for bi, rows, base, (mP, mQ) in entries:
            nr = len(base.labels)
            for S, Sl in ((Sa, base.S_alpha), (Sb, base.S_beta)):
                S[r0:r0 + nr, 4 * mP:4 * mP + 4] += Sl[:, 0:4]
                S[r0:r0 + nr, 4 * mQ:4 * mQ + 4] += Sl[:, 4:8]
            k[r0:r0 + nr] = base.k
            idx = asm.blocks[bi].idx
            self.blocks[bi] = (slice(r0, r0 + nr), None if rows is base else rows, idx)
            r0 += nr
        self.S_alpha, self.S_beta, self.k, self.R = Sa, Sb, k, R
        # constant parts: ground markers' vectors, dp/dr = E of the others
        C0, D0 = np.zeros((M, 4, 3)), np.zeros((M, 4, 3, N))
        bodies, bindex = [], {}
        rigid, flexible = [], []
        for m, (mk, sl) in enumerate(markers):
            if sl is None:
                C0[m] = F._rigid_U(mk).T
                continue
            D0[m, 0, :, sl.start:sl.start + 3] = np.eye(3)
            if sl.start not in bindex:
                bindex[sl.start] = len(bodies)
                bodies.append(sl)
            (flexible if F._is_flexible(mk) else rigid).append((m, mk, bindex[sl.start], sl))
        self.C0, self.D0 = C0, D0
        self.e_index = np.array([np.arange(s.start + 3, s.start + 7) for s in bodies],
                                dtype=int).reshape(-1, 4)
        # rigid markers in one batch: U^T (Mr, 4, 3), their bodies, position and e columns
        self.r_m = np.array([m for m, _, _, _ in rigid], dtype=int)
        self.r_body = np.array([b for _, _, b, _ in rigid], dtype=int)
        self.r_UT = np.array([F._rigid_U(mk).T for _, mk, _, _ in rigid]).reshape(-1, 4, 3)
        self.r_pos = np.array([np.arange(s.start, s.start + 3) for _, _, _, s in rigid],
                              dtype=int).reshape(-1, 3)
        # flat positions of the (4, 3, 4) e-blocks of the rigid markers in D
        u, c, a = np.meshgrid(np.arange(4), np.arange(3), np.arange(4), indexing="ij")
        self.r_epos = np.array([((m * 4 + u) * 3 + c) * N + s.start + 3 + a
                                for m, _, _, s in rigid], dtype=int).reshape(-1)
        self.flexible = flexible

    def handles(self, bi: int) -> bool:
        return bi in self.blocks

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
        N, M = self.N, self.M
        C, D = self.C0.copy(), self.D0.copy()
        B = len(self.e_index)
        if B:
            E = q[self.e_index]                                            # (B, 4)
            Ter = 2.0 * (E @ F._T_A_E.T).reshape(B, 3, 12)                # [b, l, k a]
            AT = 0.5 * np.einsum("blka,ba->blk", Ter.reshape(B, 3, 3, 4), E)   # A^T
        if len(self.r_m):
            rb = self.r_body
            C[self.r_m] = self.r_UT @ AT[rb]
            C[self.r_m, 0] += q[self.r_pos]
            D.reshape(-1)[self.r_epos] = (self.r_UT @ Ter[rb]).reshape(-1)
        for m, mk, b, sl in self.flexible:
            q_b = q[sl]
            A = AT[b].T
            rot = (A, Ter[b].reshape(3, 3, 4).transpose(1, 0, 2), Ter[b])
            V = np.empty((4, 3))
            F._fill_flexible(q_b, mk, sl.start, 1, rot, V, D[m], None)
            C[m] = V
        self.last = (C, D)
        self.last_key = (q.tobytes(), float(t))
        Sa, Sb = self.S_alpha, self.S_beta
        R = self.R
        C2, D2 = C.reshape(4 * M, 3), D.reshape(4 * M, 3 * N)
        al = Sa @ C2 + self.k
        be = Sb @ C2
        dal = (Sa @ D2).reshape(R, 3, N)
        dbe = (Sb @ D2).reshape(R, 3, N)
        p = np.einsum("ri,ri->r", al, be)
        dp = np.einsum("ri,rin->rn", al, dbe) + np.einsum("ri,rin->rn", be, dal)
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
