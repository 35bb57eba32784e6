"""The assembled multibody DAE in descriptor form (THEORY (2.79), §1.5).

Generalized coordinates ``q`` stack the bodies' coordinates (rigid: ``[r, e]``, point
mass: ``r``).  The residual and constraints of :mod:`flexmbs.system.dae`:

    r = sum_bodies r_b(q_b, qd_b, qdd_b) - sum_forces Q_f + G^T lam,     g = [g_norm; g_joints]

with ``g_norm = e.e - 1`` per rigid body.  Every joint, drive and force element is
evaluated on its local vector ``x = [q_i; q_j; t]`` through jets, and scattered into
sparse global matrices.  Redundant constraint rows found by the rank test
(:mod:`flexmbs.system.dof`) are dropped from ``g``; their multipliers are reported as 0
and the affected reactions flagged as not unique.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from flexmbs.bodies.pack import BodyPack
from flexmbs.compiled import arg
from flexmbs.constraints.rows import LabelRows
from flexmbs.errors import ModelError
from flexmbs.forces.base import LocalContext
from flexmbs.kinematics import frames as F
from flexmbs.kinematics.frame_kernel import label_hessian_sum, stacked_hessian_sum
from flexmbs.kinematics.jet import Jet
from flexmbs.kinematics.rotation import G_of
from flexmbs.system.stacked import MAX_N as STACKED_MAX_N
from flexmbs.system.affine_step import AffineStep
from flexmbs.system.kernel import stacked_mu
from flexmbs.system.stacked import StackedRows

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Block:
    """A group of scalar constraint rows evaluated together on one local vector."""

    name: str
    kind: str          # "normalization" | "joint" | "drive"
    labels: tuple
    markers: tuple     # resolved markers (P, Q) or ()
    idx: np.ndarray    # global coordinate indices of the local vector (without time)
    offsets: tuple     # offset of each marker's body in the local vector (None: ground)
    owner: object      # the joint/drive/body


@dataclass(frozen=True)
class _ForceBlock:
    element: object
    markers: tuple
    idx: np.ndarray
    offsets: tuple


class CSRMatrix(NamedTuple):
    """A square CSR matrix as plain arrays (``indptr``, ``indices``, ``data``, ``shape``,
    as in ``scipy.sparse.csr_matrix``; sorted column indices, no duplicates)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple

    def tocsr(self) -> sp.csr_matrix:
        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)

    def toarray(self) -> np.ndarray:
        return self.tocsr().toarray()


class _NewtonPlan(NamedTuple):
    indptr: np.ndarray
    indices: np.ndarray
    inv: np.ndarray
    nnz: int
    N: int


def _local(bodies, offsets_global, markers):
    """Local index vector and per-marker local offsets for a set of markers."""
    idx, local_off, seen = [], [], {}
    for mk in markers:
        body = mk.body
        if getattr(body, "is_ground", False):
            local_off.append(None)
            continue
        key = id(body)
        if key not in seen:
            seen[key] = len(idx)
            start = offsets_global[key]
            idx.extend(range(start, start + body.n_coords))
        local_off.append(seen[key])
    return np.array(idx, dtype=int), tuple(local_off)


class AssembledSystem:
    """The DAE of a validated :class:`~flexmbs.system.model.System` (implements ``DAE``)."""

    def __init__(self, model, *, redundancy_tol: float = 1e-9):
        self.model = model
        self.gravity = np.asarray(model.gravity, dtype=float)
        self.bodies = list(model.bodies)
        self.offset = {}
        n = 0
        for b in self.bodies:
            self.offset[id(b)] = n
            n += b.n_coords
        self.n_q = n
        self.body_slices = {b.name: slice(self.offset[id(b)], self.offset[id(b)] + b.n_coords)
                            for b in self.bodies}
        self.joint_markers = {}
        blocks = []
        for b in self.bodies:
            if b.n_coords >= 7:
                o = self.offset[id(b)]
                blocks.append(_Block(b.name, "normalization", ("Euler normalisation",), (),
                                     np.arange(o + 3, o + 7), (), b))
        for j in model.joints:
            P, Q = j.resolve()
            self.joint_markers[j.name] = (P, Q)
            idx, offs = _local(self.bodies, self.offset, (P, Q))
            blocks.append(_Block(j.name, "joint", tuple(j.labels), (P, Q), idx, offs, j))
        for d in model.drives:
            P, Q = self.joint_markers[d.joint]
            idx, offs = _local(self.bodies, self.offset, (P, Q))
            drive = d
            if getattr(d, "needs_initial", False):
                n = len(idx) + 1
                frames = self._frames((P, Q), offs, self.initial_q(), idx, n, 1)
                drive = d.with_initial(d.measure(*frames), 0.0)
            blocks.append(_Block(d.name, "drive", tuple(drive.labels), (P, Q), idx, offs, drive))
        self.blocks = blocks
        self.row_labels = [f"{b.kind} '{b.name}': {lab}" for b in blocks for lab in b.labels]
        self.n_rows_all = len(self.row_labels)
        self.active = np.ones(self.n_rows_all, dtype=bool)
        self.redundant: list[str] = []
        self._row_start = np.cumsum([0] + [len(b.labels) for b in blocks])
        self.force_blocks = []
        for f in model.forces:
            mks = tuple(m for m in f.resolve() if m is not None)
            idx, offs = _local(self.bodies, self.offset, mks)
            self.force_blocks.append(_ForceBlock(f, mks, idx, offs))
        self.sensors = list(model.sensors)
        self.sensor_markers = {s.name: tuple(s.resolve()) for s in self.sensors}
        self.redundancy_tol = redundancy_tol
        self._cache = None
        self._G_cache = None
        self._pattern_cache = None
        self._plan_cache = None
        self._stacked_rows = None
        self._dense_cache = None
        self._affine_step = None
        self._affine_cache = None
        self._hpairs_cache = None
        self._pack = None
        self._grids: dict = {}
        self._time_jets: dict = {}
        # columns of a block's rows in ascending global order (the CSR order of G)
        self._perm = [np.argsort(b.idx, kind="stable") for b in blocks]
        # joint/drive blocks: stacked marker frames and the markers' body slices of q
        self._pairs = [None if b.kind == "normalization" else
                       F.PairFrames(b.markers, b.offsets, len(b.idx) + 1) for b in blocks]
        self._qslices = [tuple(None if o is None else self.body_slices[m.body.name]
                               for m, o in zip(b.markers, b.offsets)) for b in blocks]

    @property
    def n_lam(self) -> int:
        return self._n_lam

    @property
    def active(self) -> np.ndarray:
        """Mask of the constraint rows in ``g`` (redundant rows dropped), read-only:
        assign a new mask (the memoised rows and patterns are keyed on it)."""
        return self._active

    @active.setter
    def active(self, mask) -> None:
        a = np.array(mask, dtype=bool)
        if a.shape != (self.n_rows_all,):
            raise ValueError(f"AssembledSystem.active: expected {self.n_rows_all} flags, "
                             f"got shape {a.shape}")
        a.setflags(write=False)
        self._active, self._active_key, self._n_lam = a, a.tobytes(), int(a.sum())

    @property
    def active_row_labels(self) -> list[str]:
        """Labels of the active constraint rows (the rows of ``g``), in order."""
        return [lab for lab, a in zip(self.row_labels, self._active) if a]

    @property
    def coordinate_labels(self) -> list[str]:
        """One label per coordinate of ``q``: ``body 'arm' x`` ... ``body 'rod' q_e3``
        (positions, Euler parameters ``e0..e3``, elastic coordinates ``q_e1...``)."""
        out = []
        for b in self.bodies:
            names = ("x", "y", "z", "e0", "e1", "e2", "e3") if b.n_coords >= 7 else \
                ("x", "y", "z")[:b.n_coords]
            names += tuple(f"q_e{k}" for k in range(1, b.n_coords - len(names) + 1))
            out.extend(f"body '{b.name}' {c}" for c in names)
        return out

    # -- initial state ------------------------------------------------------------
    def initial_q(self) -> np.ndarray:
        return np.concatenate([b.initial_q() for b in self.bodies]) if self.bodies else np.zeros(0)

    def initial_qd(self) -> np.ndarray:
        return np.concatenate([b.initial_qd() for b in self.bodies]) if self.bodies else np.zeros(0)

    def normalize(self, q: np.ndarray) -> np.ndarray:
        q = np.array(q, dtype=float)
        for b in self.bodies:
            if b.n_coords >= 7:
                o = self.offset[id(b)]
                q[o + 3:o + 7] /= np.linalg.norm(q[o + 3:o + 7])
        return q

    # -- constraint jets ----------------------------------------------------------
    def _frames(self, markers, offsets, q, idx, n, order, rot=None):
        """Frame jets of ``markers``; ``rot`` ({body id: (A, Te)}) shares the rotation
        data of a body between the markers of one evaluation."""
        out = []
        for mk, off in zip(markers, offsets):
            if off is None:
                out.append(F.frame_jet(mk, None, n, 0, order))
                continue
            nb = mk.body.n_coords
            qb = q[idx[off:off + nb]]
            r = None
            if rot is not None and nb >= 7:
                r = rot.get(id(mk.body))
                if r is None:
                    r = rot[id(mk.body)] = F.rotation_data(qb[3:7])
            out.append(F.frame_jet(mk, qb, n, off, order, r))
        return out

    def _time_jet(self, t, n, order) -> Jet:
        """The jet of time, the last local coordinate (constant gradient/Hessian cached)."""
        c = self._time_jets.get((n, order))
        if c is None:
            c = self._time_jets[(n, order)] = Jet.variable(n - 1, 0.0, n, order)
            c.d.setflags(write=False)
            if c.h is not None:
                c.h.setflags(write=False)
        return Jet(np.asarray(float(t)), c.d, c.h)

    def _block_rows(self, bi, q, t, order, rot):
        """``(g, dg/dx, d2g/dx2 or None)`` of all rows of block ``bi`` stacked (over the
        block's local vector ``x``): label rows vectorised (:mod:`flexmbs.constraints.rows`),
        other joints and drives through their jets."""
        blk = self.blocks[bi]
        if blk.kind == "normalization":
            e = q[blk.idx]
            D = np.append(2.0 * e, 0.0)[None, :]
            H = None
            if order == 2:
                H = np.zeros((1, 5, 5))
                H[0, :4, :4] = 2.0 * np.eye(4)
            return np.array([e @ e - 1.0]), D, H
        pf = self._pairs[bi]
        C, Dc, Hc = pf.evaluate([None if s is None else q[s] for s in self._qslices[bi]],
                                order, rot)
        rows = getattr(blk.owner, "rows", None)
        rows = rows() if rows is not None else None
        if rows is not None:
            return rows.evaluate(C, Dc, Hc, t)
        P, Q = pf.frame_jets(C, Dc, Hc)
        jets = blk.owner.equations(P, Q, self._time_jet(t, pf.n, order))
        if len(jets) != len(blk.labels):
            raise ModelError(f"{blk.kind} '{blk.name}': returned {len(jets)} equations, "
                             f"expected {len(blk.labels)}")
        V = np.array([float(j.v) for j in jets])
        D = np.array([j.d for j in jets], dtype=float)
        H = np.array([j.h for j in jets], dtype=float) if order == 2 else None
        return V, D, H

    def _eval_coords(self, joint, markers, q, t):
        idx, offs = _local(self.bodies, self.offset, markers)
        n = len(idx) + 1
        frames = self._frames(markers, offs, q, idx, n, 1)
        return joint.coordinates(frames[0], frames[1])

    def _active_blocks(self):
        """``[(block index, active local rows or None for all)]`` of the blocks with at
        least one active row (memoised on the active set)."""
        key = self._active_key
        pc = self._pattern_cache
        if pc is not None and pc[0] == key:
            return pc[1]
        plan = []
        for bi, blk in enumerate(self.blocks):
            act = self.active[self._row_start[bi]:self._row_start[bi + 1]]
            if act.all():
                plan.append((bi, None))
            elif act.any():
                plan.append((bi, np.flatnonzero(act)))
        indptr, indices = [0], []
        for bi, sel in plan:
            k = len(self.blocks[bi].labels) if sel is None else len(sel)
            cols = self.blocks[bi].idx[self._perm[bi]]
            for _ in range(k):
                indices.append(cols)
                indptr.append(indptr[-1] + len(cols))
        indices = np.concatenate(indices) if indices else np.zeros(0, int)
        indptr = np.array(indptr)
        g_row = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))   # row of each entry
        self._pattern_cache = (key, plan, indptr, indices, g_row)
        return plan

    def _rows(self, q, t, order):
        """The active constraint rows at ``(q, t)``, stacked per block: a list of
        ``(block index, g (k,), dg/dx (k, n_loc), d2g/dx2 (k, n_loc, n_loc) or None)``
        over the local vectors ``x = [q_i; q_j; t]`` (memoised on the last ``q, t``)."""
        key = (q.tobytes(), float(t), self._active_key)
        cache = self._cache
        if cache is not None and cache[0] == key and cache[1] >= order:
            return cache[2]
        parts = []
        rot: dict = {}
        st = self._stacked() if order == 1 else None
        stacked = st.evaluate(q, t) if st is not None else {}
        for bi, sel in self._active_blocks():
            if bi in stacked:
                V, D = stacked[bi]
                H = None
            else:
                V, D, H = self._block_rows(bi, q, t, order, rot)
            if sel is not None:
                V, D = V[sel], D[sel]
                H = None if H is None else H[sel]
            parts.append((bi, V, D, H))
        self._cache = (key, order, parts)
        self._G_cache = None
        return parts

    def _stacked(self):
        """The :class:`~flexmbs.system.stacked.StackedRows` of this system (first-order rows
        of all label-row joints in one pass), or None (large systems, fewer than two such
        joints)."""
        if self._stacked_rows is None:
            st = StackedRows(self) if self.n_q <= STACKED_MAX_N else None
            self._stacked_rows = st if st is not None and len(st.blocks) >= 1 else False
        return self._stacked_rows or None

    def _G_data(self, q, t):
        """Values of ``G`` in the CSR order of :meth:`_pattern` (memoised with the rows);
        taken from the dense rows when the system has them."""
        dense = self._dense_rows(q, t)
        if dense is not None:
            self._active_blocks()
            _, _, _, indices, g_row = self._pattern_cache
            return dense[1][g_row, indices]
        parts = self._rows(q, t, 1)
        if self._G_cache is not None and self._G_cache[0] is parts:
            return self._G_cache[1]
        data = np.concatenate([D[:, :-1][:, self._perm[bi]].ravel() for bi, _, D, _ in parts]) \
            if parts else np.zeros(0)
        self._G_cache = (parts, data)
        return data

    def _pattern(self):
        """CSR structure ``(indptr, indices)`` of ``G`` for the current active rows (each
        row's columns are its block's ``idx`` in ascending order)."""
        self._active_blocks()
        return self._pattern_cache[2:4]

    def affine_residual(self, x, q0, v0, w0, gp, bp, t):
        """``[r(q, v0 + gp (q - q0), w0 + bp (q - q0), bp x[n:], t) / bp;  g_A(q, t)]`` with
        ``q = x[:n]`` (the residual of an implicit Newmark-type step, generalized-α), by
        :meth:`affine_step`; None when the system has bodies or rows the kernel does not
        cover (point masses, joints other than label rows and drives of them)."""
        f = self.affine_step(q0, v0, w0, gp, bp, t)
        if f is None:
            return None
        out = np.empty(self.n_q + self.n_lam)
        f(arg(x), out)
        return out

    def affine_step(self, q0, v0, w0, gp, bp, t):
        """The residual of one implicit step (:meth:`affine_residual`) as a function
        ``f(x, out)`` of ``x`` alone, writing into ``out`` (e.g. a PETSc vector's array),
        also callable by PETSc as a C function: the system's
        :class:`~flexmbs.system.affine_step.AffineStep` (one per active set) bound to
        this step.  None when the compiled kernel does not cover the system."""
        plan = self._affine_plan()
        if plan is None:
            return None
        c = self._affine_step
        if c is None or c[0] is not plan:
            c = self._affine_step = (plan, AffineStep(self, plan))
        return c[1].set(q0, v0, w0, gp, bp, t)

    def _sync_affine(self) -> None:
        """Caches of rows and frames from the step residual's last call (see
        :meth:`AffineStep.sync <flexmbs.system.affine_step.AffineStep.sync>`)."""
        c, p = self._affine_step, self._affine_cache
        if c is not None and p is not None and c[0] is p[1]:
            c[1].sync()

    def _affine_plan(self):
        """``(BodyPack, StackedRows, active row indices)`` for :meth:`affine_residual`, or
        None (memoised on the active set)."""
        key = self._active_key
        c = self._affine_cache
        if c is not None and c[0] == key:
            return c[1]
        pack, st = self._body_pack(), self._stacked()
        plan = None
        if pack is not None and st is not None and st.complete:
            plan = (pack, st, np.flatnonzero(self.active).astype(np.int64))
        self._affine_cache = (key, plan)
        return plan

    def _dense_rows(self, q, t):
        """``(g, G)`` of the active rows, ``G`` dense (n_lam, n_q), from
        :meth:`StackedRows.dense <flexmbs.system.stacked.StackedRows.dense>` when it covers
        every row of the system, else None (memoised on ``q, t`` and the active set)."""
        st = self._stacked()
        if st is None or not st.complete:
            return None
        key = (q.tobytes(), float(t), self._active_key)
        c = self._dense_cache
        if c is not None and c[0] == key:
            if c[2]:
                return c[1]
            g, G = c[1]                       # all rows (from affine_step): select
            g, G = g.copy(), G.copy()         # (its buffers are overwritten by the next)
        else:
            g, G = st.dense(q, t)
        if not self.active.all():
            act = np.flatnonzero(self.active)
            g, G = g[act], G[act]
        self._dense_cache = (key, (g, G), True)
        return g, G

    def constraint(self, q, t):
        dense = self._dense_rows(q, t)
        if dense is not None:
            return dense[0].copy()
        parts = self._rows(q, t, 1)
        return np.concatenate([V for _, V, _, _ in parts]) if parts else np.zeros(0)

    def constraint_jacobian(self, q, t, *, all_rows=False):
        if all_rows:
            active = self.active
            self.active = np.ones(self.n_rows_all, dtype=bool)
            try:
                return self.constraint_jacobian(q, t)
            finally:
                self.active = active
        indptr, indices = self._pattern()
        if not self.n_lam:
            return sp.csr_matrix((0, self.n_q))
        return sp.csr_matrix((self._G_data(q, t), indices, indptr),
                             shape=(self.n_lam, self.n_q))

    def rows_all(self, q, qd, t, rows=None):
        """``(g, gd)`` of every constraint row, the dropped (redundant) ones too:
        ``g(q, t)`` and ``gd = G qd + g_t`` (n_rows_all,), in :attr:`row_labels` order;
        with ``rows`` (indices into :attr:`row_labels`) only those, evaluating only the
        blocks that hold them."""
        rows = np.arange(self.n_rows_all) if rows is None else np.asarray(rows, dtype=int)
        g, gd = np.zeros(self.n_rows_all), np.zeros(self.n_rows_all)
        rot: dict = {}
        starts = self._row_start
        for bi in np.unique(np.searchsorted(starts, rows, side="right") - 1):
            blk, a, b = self.blocks[bi], starts[bi], starts[bi + 1]
            V, D, _ = self._block_rows(bi, q, t, 1, rot)
            g[a:b] = V
            gd[a:b] = D[:, :-1] @ qd[blk.idx] + D[:, -1]
        return g[rows], gd[rows]

    def row_owner(self, row: int) -> str:
        """``"joint 'J1'"`` / ``"drive 'spin'"`` / ``"normalization 'arm'"`` of row ``row``
        (an index into :attr:`row_labels`)."""
        bi = int(np.searchsorted(self._row_start, row, side="right") - 1)
        return f"{self.blocks[bi].kind} '{self.blocks[bi].name}'"

    def constraint_time_derivative(self, q, t):
        """``g_t = dg/dt`` at fixed ``q`` (the part of ``dg/dt = G qd + g_t`` of
        :meth:`constraint_rates` that needs no second derivatives)."""
        parts = self._rows(q, t, 1)
        return np.concatenate([D[:, -1] for _, _, D, _ in parts]) if parts else np.zeros(0)

    def constraint_rates(self, q, qd, t):
        g_t, gamma = [], []
        for bi, _, D, H in self._rows(q, t, 2):
            xd = np.append(qd[self.blocks[bi].idx], 1.0)
            g_t.append(D[:, -1])
            gamma.append((H @ xd) @ xd)
        if not g_t:
            return np.zeros(0), np.zeros(0)
        return np.concatenate(g_t), np.concatenate(gamma)

    def _grid(self, key, idx):
        """Row and column indices of the dense block ``idx x idx`` (cached per block)."""
        g = self._grids.get(key)
        if g is None:
            rr, cc = np.meshgrid(idx, idx, indexing="ij")
            g = self._grids[key] = (rr.ravel(), cc.ravel())
        return g

    def _hessian_sums(self, q, mu, t):
        """``sum_i mu_i h_i`` over the rows of each block with active rows, without the
        time row/column: ``[(block index, (n_b, n_b))]`` in :meth:`_rows` order.  Label-row
        joints contract ``mu`` with the frame Hessians directly
        (:meth:`flexmbs.constraints.rows.LabelRows.hessian_sum`); the others sum their
        rows' Hessians."""
        out, off, rot = [], 0, {}
        st = self._stacked()
        if st is not None and st.last_key != (q.tobytes(), float(t)):
            st.evaluate(q, t)            # normally done already by the residual at q
        for bi, sel in self._active_blocks():
            blk = self.blocks[bi]
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
                pf = self._pairs[bi]
                qs = [None if s is None else q[s] for s in self._qslices[bi]]
                C, Dc = st.block_frames(bi) if st is not None and st.handles(bi) else \
                    pf.evaluate(qs, 1, rot)[:2]
                mk = pf.kernel_markers(qs) if type(rows) is LabelRows else None
                if mk is not None:                   # compiled, the same sum
                    hs = label_hessian_sum(*rows._kernel_args(), arg(C), arg(Dc), arg(mu_b),
                                           F.T_A_KERNEL, *mk)
                else:
                    hs = rows.hessian_sum(C, Dc, lambda W: pf.hessian_contract(W, qs, rot),
                                          mu_b, t)
                out.append((bi, hs[:-1, :-1]))
                continue
            _, _, H = self._block_rows(bi, q, t, 2, rot)
            nl = H.shape[-1]
            out.append((bi, (mu_b @ H.reshape(len(mu_b), nl * nl)).reshape(nl, nl)[:-1, :-1]))
        return out

    def _constraint_force_blocks(self, q, mu, t):
        """``sum_i mu_i h_i`` per constraint block, as (rows, cols, values) chunks."""
        rows, cols, vals = [], [], []
        for bi, Hs in self._hessian_sums(q, np.asarray(mu, float), t):
            blk = self.blocks[bi]
            rr, cc = self._grid(("c", blk.name, blk.kind), blk.idx)
            rows.append(rr); cols.append(cc); vals.append(Hs.ravel())
        return rows, cols, vals

    def constraint_force_jacobian(self, q, mu, t):
        rows, cols, vals = self._constraint_force_blocks(q, mu, t)
        return _coo(rows, cols, vals, (self.n_q, self.n_q))

    def constraint_velocity_jacobian(self, q, v, t):
        rows, cols, vals, i0 = [], [], [], 0
        for bi, V, _, H in self._rows(q, t, 2):
            idx = self.blocks[bi].idx
            k = len(V)
            R = H[:, :-1, :-1] @ v[idx]                       # (k, n_b)
            rows.append(np.repeat(np.arange(i0, i0 + k), len(idx)))
            cols.append(np.tile(idx, k)); vals.append(R.ravel())
            i0 += k
        return _coo(rows, cols, vals, (self.n_lam, self.n_q))

    # -- forces --------------------------------------------------------------------
    def _force_contributions(self, q, qd, t, order, blocks=None):
        rot: dict = {}
        for fb in self.force_blocks if blocks is None else blocks:
            c = self._body_force(fb, q, t, order)
            if c is not None:
                yield fb, c
                continue
            n = len(fb.idx) + 1
            x, xd = np.empty(n), np.empty(n)
            x[:-1], x[-1] = q[fb.idx], t
            xd[:-1], xd[-1] = qd[fb.idx], 1.0
            def frames(fb=fb, n=n):
                return self._frames(fb.markers, fb.offsets, q, fb.idx, n, order, rot)
            q_b = tuple(None if o is None else q[fb.idx[o:o + m.body.n_coords]]
                        for m, o in zip(fb.markers, fb.offsets))
            qd_b = tuple(None if o is None else qd[fb.idx[o:o + m.body.n_coords]]
                         for m, o in zip(fb.markers, fb.offsets))
            ctx = LocalContext(fb.markers, frames, x, xd, t, n, fb.offsets, q_b, qd_b, order)
            yield fb, fb.element.contribution(ctx)

    @staticmethod
    def _body_force(fb, q, t, order):
        """The element's ``body_force`` shortcut (one body's load without frame jets, e.g.
        a torque), or None when it has none or declines."""
        fast = getattr(fb.element, "body_force", None)
        if fast is None or len(fb.markers) != 1 or fb.offsets[0] != 0:
            return None
        return fast(fb.markers[0], q[fb.idx], t, order)

    # -- DAE -----------------------------------------------------------------------
    def _body_pack(self):
        """All bodies packed for one compiled residual call (:class:`~flexmbs.bodies.pack.
        BodyPack`), or None if some body has no compiled residual (point masses)."""
        if self._pack is None:
            self._pack = BodyPack(self.bodies, [self.offset[id(b)] for b in self.bodies]) \
                if BodyPack.supports(self.bodies) else False
        return self._pack or None

    def residual(self, q, qd, qdd, lam, t):
        pack = self._body_pack()
        if pack is not None:
            r = pack.residual(q, qd, qdd, self.gravity)
        else:
            r = np.empty(self.n_q)
            for b in self.bodies:                       # the bodies' slices tile q
                s = self.body_slices[b.name]
                r[s] = b.residual(q[s], qd[s], qdd[s], self.gravity)
        for fb, c in self._force_contributions(q, qd, t, 1):
            r[fb.idx] -= c.Q[:-1]                   # a block's coordinates are distinct
        if self.n_lam:
            lam = np.asarray(lam, float)
            dense = self._dense_rows(q, t)
            if dense is not None:
                r += lam @ dense[1]
            else:   # G^T lam, block by block
                i0 = 0
                for bi, V, D, _ in self._rows(q, t, 1):
                    k = len(V)
                    r[self.blocks[bi].idx] += lam[i0:i0 + k] @ D[:, :-1]
                    i0 += k
        # a finite sum has finite terms (the full test only when the sum is not finite)
        if not math.isfinite(float(r.sum())) and not np.all(np.isfinite(r)):
            bad = self._nonfinite_source(q, qd, qdd, t)
            raise FloatingPointError(f"non-finite residual at t = {t:.6g} s from {bad}")
        return r

    def _nonfinite_source(self, q, qd, qdd, t):
        for b in self.bodies:
            s = self.body_slices[b.name]
            if not np.all(np.isfinite(b.residual(q[s], qd[s], qdd[s], self.gravity))):
                return f"body '{b.name}'"
        for fb, c in self._force_contributions(q, qd, t, 1):
            if not np.all(np.isfinite(c.Q)):
                return f"force element '{fb.element.name}'"
        return "the constraints"

    def _tangent_chunks(self, q, qd, qdd, t):
        rows, cols, vk, vc, vm = [], [], [], [], []
        for b in self.bodies:
            s = self.body_slices[b.name]
            K, C, M = b.tangent(q[s], qd[s], qdd[s], self.gravity)
            rr, cc = self._grid(("b", b.name), np.arange(s.start, s.stop))
            rows.append(rr); cols.append(cc)
            vk.append(K.ravel()); vc.append(C.ravel()); vm.append(M.ravel())
        for k, (fb, c) in enumerate(self._force_contributions(q, qd, t, 2)):
            rr, cc = self._grid(("f", k), fb.idx)
            rows.append(rr); cols.append(cc)
            vk.append(-c.dQ_dx[:-1, :-1].ravel()); vc.append(-c.dQ_dxd[:-1, :-1].ravel())
            vm.append(None)
        return rows, cols, vk, vc, vm

    def tangent(self, q, qd, qdd, lam, t):
        rows, cols, vk, vc, vm = self._tangent_chunks(q, qd, qdd, t)
        vm = [np.zeros(r.size) if v is None else v for r, v in zip(rows, vm)]
        shape = (self.n_q, self.n_q)
        K = _coo(rows, cols, vk, shape)
        C = _coo(rows, cols, vc, shape)
        M = _coo(rows, cols, vm, shape)
        if self.n_lam:
            K = K + self.constraint_force_jacobian(q, lam, t)
        return K.tocsr(), C.tocsr(), M.tocsr()

    def iteration_matrix(self, q, qd, qdd, lam, t, c_K, c_C, c_M) -> sp.csr_matrix:
        """``c_K K + c_C C + c_M M`` of :meth:`tangent` (``K`` with the constraint term
        ``d(G^T lam)/dq``) as one CSR matrix, built from one COO array (no sums of
        sparse matrices)."""
        rows, cols, vk, vc, vm = self._tangent_chunks(q, qd, qdd, t)
        vals = [c_K * k + c_C * c + (0.0 if m is None else c_M * m)
                for k, c, m in zip(vk, vc, vm)]
        if self.n_lam:
            r2, c2, v2 = self._constraint_force_blocks(q, lam, t)
            rows += r2; cols += c2; vals += [c_K * v for v in v2]
        return _coo(rows, cols, vals, (self.n_q, self.n_q))

    def _hessian_pairs(self):
        """``(rows, cols)`` of the union of the constraint blocks' grids (unique pairs, the
        support of ``sum_i mu_i h_i``), memoised on the active set."""
        key = self._active_key
        c = self._hpairs_cache
        if c is not None and c[0] == key:
            return c[1]
        N = self.n_q
        keys = np.unique(np.concatenate(
            [np.add.outer(self.blocks[bi].idx * N, self.blocks[bi].idx).ravel()
             for bi, _ in self._active_blocks()] or [np.zeros(0, dtype=np.int64)]))
        pairs = (keys // N, keys % N)
        self._hpairs_cache = (key, pairs)
        return pairs

    def _stacked_hessian(self, q, lam, t):
        """``sum_i mu_i h_i`` (n_q, n_q) dense over all active rows in one compiled call
        (:func:`flexmbs.kinematics.frame_kernel.stacked_hessian_sum`) when the system has
        an :meth:`_affine_plan`, else None."""
        plan = self._affine_plan()
        if plan is None:
            return None
        _, st, act = plan
        if st.last_key != (q.tobytes(), float(t)):
            st.dense(q, t)
        C, D = st.last
        (_, _, start, nq, U0T, W12, _, wptr, Sa, Sb, kc, src, dst, norm_rows,
         norm_idx) = st._kernel_data
        row, lo, n, w, _ = st.drive_weights(float(t))   # a drive row: sum_j w_j h_pj
        mu_st, mu_norm = stacked_mu(arg(lam), act, st.n_rows_all, Sa.shape[0], src, dst, row,
                                    lo, n, w, norm_rows)
        return stacked_hessian_sum(arg(q), C, D, start, nq, U0T, W12, wptr, Sa, Sb, kc, mu_st,
                                   F.T_A_KERNEL, norm_idx, mu_norm)

    def _newton_plan(self, stacked: bool = False):
        """Fixed CSR pattern of the Newton matrix ``[[S, G^T], [G, 0]]`` (memoised on the
        active set): every body, force and constraint-Hessian block, ``G``, ``G^T`` and
        the whole diagonal (explicit zeros keep the pattern stable and no row empty).
        ``inv`` maps the concatenated chunk values of :meth:`newton_matrix` to the CSR
        data positions (duplicates are summed)."""
        key = (self._active_key, stacked)
        if self._plan_cache is not None and self._plan_cache[0] == key:
            return self._plan_cache[1]
        n, m = self.n_q, self.n_lam
        N = n + m
        rows, cols = [], []
        for b in self.bodies:
            s = self.body_slices[b.name]
            rr, cc = self._grid(("b", b.name), np.arange(s.start, s.stop))
            rows.append(rr); cols.append(cc)
        for k, fb in enumerate(self.force_blocks):
            rr, cc = self._grid(("f", k), fb.idx)
            rows.append(rr); cols.append(cc)
        if m and stacked:        # the constraint Hessian as one chunk of unique pairs
            rr, cc = self._hessian_pairs()
            rows.append(rr); cols.append(cc)
        elif m:
            for bi, _ in self._active_blocks():
                blk = self.blocks[bi]
                rr, cc = self._grid(("c", blk.name, blk.kind), blk.idx)
                rows.append(rr); cols.append(cc)
        if m:
            indptr, indices = self._pattern()
            g_rows = n + np.repeat(np.arange(m), np.diff(indptr))
            rows += [g_rows, indices]
            cols += [indices, g_rows]
        n_vals = sum(len(r) for r in rows)
        rows.append(np.arange(N)); cols.append(np.arange(N))
        keys = np.concatenate(rows).astype(np.int64) * N + np.concatenate(cols)
        uniq, inv = np.unique(keys, return_inverse=True)
        ip = np.zeros(N + 1, dtype=np.int64)
        np.cumsum(np.bincount(uniq // N, minlength=N), out=ip[1:])
        plan = _NewtonPlan(ip, uniq % N, inv[:n_vals].ravel(), len(uniq), N)
        self._plan_cache = (key, plan)
        return plan

    def newton_matrix(self, q, qd, qdd, lam, t, c_K, c_C, c_M) -> CSRMatrix:
        """The Newton matrix of an implicit step on ``[q; lam~]``,

            [[c_K (K + d(G^T lam)/dq) + c_C C + c_M M,  G^T],
             [G,                                        0  ]],

        in the fixed CSR pattern of :meth:`_newton_plan` (the same ``indptr`` and
        ``indices`` arrays at every call, so a solver can overwrite its matrix values in
        place).  ``(K, C, M)`` are those of :meth:`tangent`."""
        self._sync_affine()
        H = self._stacked_hessian(q, np.asarray(lam, float), t) if self.n_lam else None
        plan = self._newton_plan(stacked=H is not None)
        pack = self._body_pack()
        if pack is not None:            # all bodies in one compiled call
            vals = [pack.newton_values(q, qd, qdd, self.gravity, c_K, c_C, c_M)]
        else:
            vals = []
            for b in self.bodies:
                s = self.body_slices[b.name]
                K, C, M = b.tangent(q[s], qd[s], qdd[s], self.gravity)
                vals.append((c_K * K + c_C * C + c_M * M).ravel())
        for _, c in self._force_contributions(q, qd, t, 2):
            vals.append((c_K * c.dQ_dx[:-1, :-1] + c_C * c.dQ_dxd[:-1, :-1]).ravel() * -1.0)
        if H is not None:
            vals.append(c_K * H[self._hessian_pairs()])
        elif self.n_lam:
            for _, Hs in self._hessian_sums(q, np.asarray(lam, float), t):
                vals.append((c_K * Hs).ravel())
        if self.n_lam:
            Gd = self._G_data(q, t)
            vals += [Gd, Gd]
        data = np.bincount(plan.inv, weights=np.concatenate(vals), minlength=plan.nnz) \
            if vals else np.zeros(plan.nnz)
        return CSRMatrix(plan.indptr, plan.indices, data, (plan.N, plan.N))

    # -- outputs -------------------------------------------------------------------
    def marker_kinematics(self, marker, q, qd, qdd):
        """Inertial position, axes, velocity, angular velocity, acceleration, angular
        acceleration of a marker: ``v = J_T qd``, ``a = J_T qdd + Jd_T qd`` (via jets)."""
        from flexmbs.sensors.base import MarkerState
        body = marker.body
        if getattr(body, "is_ground", False):
            z = np.zeros(3)
            return MarkerState(np.array(marker.s), np.array(marker.R), z, z, z, z)
        s = self.body_slices[body.name]
        qb, qdb, qddb = q[s], qd[s], qdd[s]
        nb = body.n_coords
        fj = F.frame_jet(marker, qb, nb + 1, 0, 2)
        xd = np.append(qdb, 0.0)
        xdd = np.append(qddb, 0.0)
        p = fj.p.v
        v = fj.p.d @ xd
        a = fj.p.d @ xdd + np.einsum("kij,i,j->k", fj.p.h, xd, xd)
        R = np.column_stack([fj.x.v, fj.y.v, fj.z.v])
        if nb >= 7:
            e, ed, edd = qb[3:7], qdb[3:7], qddb[3:7]
            w = 2.0 * G_of(e) @ ed
            al = 2.0 * G_of(e) @ edd        # G(ed) ed = 0
            Psi = getattr(marker, "Psi", None)
            if nb > 7 and Psi is not None:
                # flexible marker: omega_P = omega + A Psi qd_e (J_R = [0, 2G, A Psi]),
                # alpha_P = alpha + A Psi qdd_e + omega x (A Psi qd_e)   (A' = omega~ A)
                A = F.A_of(e)
                wv = A @ (Psi @ qdb[7:])
                al = al + A @ (Psi @ qddb[7:]) + np.cross(w, wv)
                w = w + wv
        else:
            w = al = np.zeros(3)
        return MarkerState(p, R, v, w, a, al)

    def reactions(self, q, lam, t):
        """Joint reactions ``{name: (force, torque)}``: the wrench exerted by the joint on
        the body of its second marker Q, about Q's origin, in Q's (joint) frame [N, N m].
        From the generalized constraint force ``-G_j^T lam_j`` of that body (rigid:
        force = translational rows, torque about O = 1/2 G(e) (rotational rows))."""
        out = {}
        lam_all = np.zeros(self.n_rows_all)
        lam_all[self.active] = lam
        for bi, blk in enumerate(self.blocks):
            if blk.kind == "normalization":
                continue
            lam_b = lam_all[self._row_start[bi]:self._row_start[bi + 1]]   # 0 if inactive
            _, D, _ = self._block_rows(bi, q, t, 1, {})
            gen = -(lam_b @ D[:, :-1])
            P, Q = blk.markers
            sign, mk, off = 1.0, Q, blk.offsets[1]
            if off is None:
                sign, mk, off = -1.0, P, blk.offsets[0]
            if off is None:
                out[blk.name] = (np.zeros(3), np.zeros(3))
                continue
            body = mk.body
            qb = q[blk.idx[off:off + body.n_coords]]
            g_b = gen[off:off + body.n_coords]
            f = g_b[0:3].copy()
            p_Q = F.position(Q, q[self.body_slices[Q.body.name]]) if blk.offsets[1] is not None \
                else np.array(Q.s)
            if body.n_coords >= 7:
                m_O = 0.5 * G_of(qb[3:7]) @ g_b[3:7]
                m_Q = m_O - np.cross(p_Q - qb[0:3], f)
            else:
                m_Q = -np.cross(p_Q - qb[0:3], f)
            RQ = F.orientation(Q, None if blk.offsets[1] is None else q[self.body_slices[Q.body.name]])
            out[blk.name] = (sign * RQ.T @ f, sign * RQ.T @ m_Q)
        return out

    def joint_coordinates(self, q):
        """``{joint name: [coordinates]}`` (angles in rad, displacements in m)."""
        out = {}
        for j in self.model.joints:
            if j.coordinate_names:
                out[j.name] = np.array([float(c.v) for c in
                                        self._eval_coords(j, self.joint_markers[j.name], q, 0.0)])
        return out

    def _potential_context(self, fb, q, t) -> LocalContext:
        """The first-order :class:`LocalContext` of force block ``fb`` at ``(q, t)`` and
        rest (what the residual hands ``contribution``), for the element's ``potential``."""
        n = len(fb.idx) + 1
        frames = tuple(self._frames(fb.markers, fb.offsets, q, fb.idx, n, 1))
        q_b = tuple(None if o is None else q[fb.idx[o:o + m.body.n_coords]]
                    for m, o in zip(fb.markers, fb.offsets))
        qd_b = tuple(None if o is None else np.zeros(m.body.n_coords)
                     for m, o in zip(fb.markers, fb.offsets))
        xd = np.zeros(n)
        xd[-1] = 1.0
        return LocalContext(fb.markers, frames, np.append(q[fb.idx], t), xd, t, n,
                            fb.offsets, q_b, qd_b, 1)

    def force_potentials(self, q, t=0.0) -> dict:
        """``{name: V_f}`` [J]: the potential of each force element that has one (springs,
        bushings, stops, constant inertial forces; ``V_f`` with ``dV_f/dq = -Q_f`` of its
        conservative part, see :mod:`flexmbs.forces.base`)."""
        q = np.asarray(q, dtype=float)
        out = {}
        for fb in self.force_blocks:
            pot = getattr(fb.element, "potential", None)
            if pot is not None:
                out[fb.element.name] = float(pot(self._potential_context(fb, q, t)))
        return out

    def energy(self, q, qd, t=0.0):
        """Energies [J] at ``(q, qd, t)``:

            kinetic            T   = sum_b T_b(q_b, qd_b),
            potential_gravity  V_g = sum_b -m_b g . r_S,b           (r_S,b: centre of mass),
            potential_elastic  V_e = sum_b V_e,b(q_e,b) + sum_f V_f  (strain energy of the
                                     flexible bodies, potentials of the force elements),
            total              E   = T + V_g + V_e.

        ``dE/dt`` is the power of what has no potential (dampers, structural damping,
        drives, time-varying or follower loads; :mod:`flexmbs.post.energy`), so ``E`` is
        constant for a model without them."""
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        T = V = W = 0.0
        for b in self.bodies:
            s = self.body_slices[b.name]
            T += b.kinetic_energy(q[s], qd[s])
            V += b.potential_energy(q[s], self.gravity)
            strain = getattr(b, "elastic_energy", None)
            if strain is not None:
                W += float(strain(q[s]))
        W += sum(self.force_potentials(q, t).values())
        return {"kinetic": T, "potential_gravity": V, "potential_elastic": W, "total": T + V + W}


def _coo(rows, cols, vals, shape):
    if not rows:
        return sp.csr_matrix(shape)
    return sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=shape).tocsr()
