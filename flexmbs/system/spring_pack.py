"""The force elements of a system as tables for the compiled whole step
(:mod:`flexmbs.forces.spring_kernel`, numpy reference :mod:`flexmbs.forces.
spring_reference`).

A point-to-point or torsion spring-damper (linear, or a nonlinear one with a tabulated
curve), a bushing, a point force, a rope, a compression spring or a stop on a joint
angle or displacement (:func:`~flexmbs.forces.spring_columns.kind_code`)
whose markers the stacked frames hold (:attr:`StackedRows.force_markers
<flexmbs.system.stacked.StackedRows>`) is one row of ``sp_int`` and ``sp_par``
(:mod:`flexmbs.forces.spring_columns`), its curve rows of ``sp_tab``.  A point force's
``F(t)`` is written into ``sp_par`` by :meth:`SpringPack.at_time` (constant during a
step).  :meth:`SpringPack.residual` and :meth:`SpringPack.newton` check the shapes of
their inputs (the kernels do not check indices) and call the kernel or the reference
(``FLEXMBS_KERNELS``).
"""
from __future__ import annotations

import numpy as np
from scipy.interpolate import PchipInterpolator

from flexmbs.compiled import arg, backend
from flexmbs.forces import spring_columns as col
from flexmbs.forces import spring_kernel, spring_reference
from flexmbs.forces.spring_local_kernel import spring_local_newton, spring_local_residual
from flexmbs.kinematics import frames as F
from flexmbs.kinematics.time_functions import Constant, as_time_function
from flexmbs.system.element_pack import ElementPack, check_residual, check_vectors
from flexmbs.system.local_rows_kernel import local_frames
from flexmbs.system.stacked import LabelRowSet


def _parameters(el, kind: int) -> tuple[np.ndarray, tuple]:
    """``(sp_par row, curve table (s, F))`` of element ``el`` of ``kind``."""
    par = np.zeros(col.N_PAR)
    if kind in col.STOPS:
        par[col.P_K], par[col.P_D], par[col.P_W] = el.k, el.d, el.smoothing
        if kind == col.AXIAL_STOP:
            lower, upper = el.limits()
        else:
            lower, upper = el.lower, el.upper
            par[col.P_AXIS] = col.stop_coordinate(el)[1]
        par[col.P_LOWER], par[col.P_UPPER] = lower, upper
        return par, ((), ())
    if kind == col.BUSHING:
        par[col.P_K:col.P_K + 6] = np.asarray(el.K, float)
        par[col.P_D:col.P_D + 6] = np.asarray(el.D, float)
        par[col.P_S0:col.P_S0 + 6] = el.unloaded()
        return par, ((), ())
    if kind == col.FORCE:
        par[col.P_FRAME] = 1.0 if el.frame == "body" else 0.0
        return par, ((), ())
    par[col.P_K], par[col.P_D] = el.k, el.d
    par[col.P_S0] = el.free_length() if kind == col.AXIAL else el.angle0
    return par, (el.curve_table() if hasattr(el, "curve_table") else ((), ()))


class SpringPack(ElementPack):
    """Tables ``sp_int`` (k, 5), ``sp_par`` (k, 18), ``sp_tab`` (T, 3) of the force
    elements of ``blocks``; ``loads``: ``[(row, F(t))]`` of the point forces."""

    def __init__(self, sp_int, sp_par, sp_tab, blocks, loads, n_q: int):
        self.sp_int = np.ascontiguousarray(sp_int, dtype=np.int64).reshape(-1, col.N_INT)
        self.sp_par = arg(np.asarray(sp_par, dtype=float).reshape(-1, col.N_PAR))
        self.sp_tab = arg(np.asarray(sp_tab, dtype=float).reshape(-1, 3))
        super().__init__(self.sp_int, blocks, n_q)
        self.loads = list(loads)
        self.time_free = all(isinstance(fn, Constant) for _, fn in self.loads)
        self.at_time(0.0)

    @classmethod
    def of(cls, layout, stacked) -> SpringPack:
        """The elements of ``layout`` whose markers ``stacked`` holds."""
        return cls.tables(layout, stacked.force_markers)

    @classmethod
    def tables(cls, layout, force_markers: dict) -> SpringPack:
        """The elements ``{force block index: its markers' indices}`` of ``layout``."""
        rows_int, rows_par, tabs, blocks, loads = [], [], [], [], []
        t0 = 0
        for fi, ms in force_markers.items():
            fb = layout.force_blocks[fi]
            el = fb.element
            kind = col.kind_code(el)
            par, (s, F) = _parameters(el, kind)
            if len(s):
                s, F = np.asarray(s, float), np.asarray(F, float)
                tabs.append(np.column_stack([s, F, PchipInterpolator(s, F)(s, 1)]))
            if kind == col.FORCE:
                loads.append((len(rows_int), as_time_function(el.force, el.name)))
            rows_int.append((kind, ms[0], ms[-1], t0, t0 + len(s)))
            t0 += len(s)
            rows_par.append(par)
            blocks.append(fb)
        tab = np.concatenate(tabs) if tabs else np.zeros((0, 3))
        return cls(rows_int, rows_par, tab, blocks, loads, layout.n_q)

    def at_time(self, t: float) -> None:
        """Write the point forces ``F(t)`` [N] into ``sp_par`` (in place)."""
        for e, fn in self.loads:
            self.sp_par[e, 0:3] = np.asarray(fn(t)[0], float)

    def _inputs(self, q, qd, C, D) -> tuple:
        n = self.n_q
        return self.checked((("q", q, (n,)), ("qd", qd, (n,))), C, D)

    def residual(self, r, q, qd, C, D) -> None:
        """``r -= Q`` of the elements (``r`` (n_q,) float, written in place)."""
        q, qd, C, D = self._inputs(q, qd, C, D)
        self.check_residual(r)
        backend(spring_kernel, spring_reference).spring_residual(
            r, q, qd, C, D, self.sp_int, self.sp_par, self.sp_tab)

    def newton(self, out, q, qd, C, D, c_K: float, c_C: float) -> None:
        """The elements' terms ``-(c_K dQ/dq + c_C dQ/dqd)`` of a dense Newton matrix
        ``out`` (square, of size >= n_q)."""
        q, qd, C, D = self._inputs(q, qd, C, D)
        if out.ndim != 2 or out.shape[0] != out.shape[1] or out.shape[0] < self.n_q:
            raise ValueError(f"{self.who}: out must be square of size >= "
                             f"n_q = {self.n_q}, got {out.shape}")
        backend(spring_kernel, spring_reference).spring_newton(
            out, q, qd, C, D, self.sp_int, self.sp_par, self.sp_tab, float(c_K), float(c_C))


def covered(fb) -> bool:
    """Whether the compiled force kernels cover force block ``fb`` (its element has a
    :func:`~flexmbs.forces.spring_columns.kind_code` and reads no sensor)."""
    return col.kind_code(fb.element) is not None and fb.n_own == len(fb.markers)


class LocalSprings:
    """The force elements of a system of any size that the compiled kernels cover, on
    marker frames kept sparse (:mod:`flexmbs.forces.spring_local_kernel`): the elements'
    markers (``markers`` ``[(marker, body slice or None)]``, frames by
    :func:`~flexmbs.system.local_rows_kernel.local_frames`), the tables of a
    :class:`SpringPack` with each element's markers 0 and 1, the element's markers in the
    frames ``pm`` (k, 2) and the global columns ``cols`` (k, 2 L) of its 2 L local slots
    (-1: none).  :attr:`others`: the force blocks left to the Python elements."""

    marker_data = LabelRowSet.marker_data

    def __init__(self, layout):
        self.layout, self.N = layout, layout.n_q
        markers, index, force_markers = [], {}, {}
        for fi, fb in enumerate(layout.force_blocks):
            if not covered(fb):
                continue
            ms = []
            for mk, off in zip(fb.markers, fb.offsets):
                if id(mk) not in index:
                    index[id(mk)] = len(markers)
                    ground = off is None or getattr(mk.body, "is_ground", False)
                    markers.append((mk, None if ground else layout.body_slices[mk.body.name]))
                ms.append(index[id(mk)])
            force_markers[fi] = tuple(ms)
        self.markers = markers
        self.pack = SpringPack.tables(layout, force_markers)
        self.others = [fb for fb in layout.force_blocks if not self.pack.covers(fb)]
        M = len(markers)
        width = np.zeros(M, dtype=np.int64)            # local columns of each marker
        col0 = np.full(M, -1, dtype=np.int64)          # their first column in q
        for m, (mk, sl) in enumerate(markers):
            if sl is not None:
                col0[m] = sl.start
                width[m] = 3 if getattr(mk.body, "n_coords", 0) == 3 else sl.stop - sl.start
        L = max(4, int(width.max()) if M else 4)
        C0, D0 = np.zeros((M, 4, 3)), np.zeros((M, 4, 3, L))
        for m, (mk, sl) in enumerate(markers):
            if sl is None or width[m] == 3:            # axes constant (origin: + r)
                C0[m] = F.rigid_U(mk).T
            if sl is not None:
                D0[m, 0, :, 0:3] = np.eye(3)
        sp_int = self.pack.sp_int
        self.pm = np.ascontiguousarray(sp_int[:, col.I_MP:col.I_MQ + 1])
        self.sp_int = sp_int.copy()
        self.sp_int[:, col.I_MP], self.sp_int[:, col.I_MQ] = 0, 1
        cols = np.full((len(sp_int), 2 * L), -1, dtype=np.int64)
        for e, (mP, mQ) in enumerate(self.pm):
            for side, m in enumerate((mP, mQ)):
                if col0[m] >= 0:
                    cols[e, side * L:side * L + width[m]] = col0[m] + np.arange(width[m])
        self.cols = cols
        # position of each slot's column in its force block's idx (-1: none)
        pos = np.full_like(cols, -1)
        nb = np.zeros(len(cols), dtype=np.int64)
        for e, fb in enumerate(self.pack.blocks):
            at = {int(c): i for i, c in enumerate(fb.idx)}
            pos[e] = [at.get(int(c), -1) if c >= 0 else -1 for c in cols[e]]
            nb[e] = len(fb.idx)
        self.pos = pos
        self.ptr = np.zeros(len(nb) + 1, dtype=np.int64)
        np.cumsum(nb * nb, out=self.ptr[1:])
        self.frame_data = (arg(C0), arg(D0), *self.marker_data())

    def __len__(self) -> int:
        return len(self.pack)

    def frames(self, q) -> tuple[np.ndarray, np.ndarray]:
        """``(C, D_loc)`` of the elements' markers at ``q``."""
        return local_frames(arg(q), *self.frame_data)

    def dense_frames(self, q) -> tuple[np.ndarray, np.ndarray]:
        """``(C, D)`` with ``D`` (M, 4, 3, n_q) dense over ``q``, the frames of the
        stacked rows (for the numpy reference kernels)."""
        C, Dl = self.frames(q)
        L = Dl.shape[3]
        D = np.zeros((*C.shape, self.N))
        for m in range(len(C)):
            e, side = np.argwhere(self.pm == m)[0]
            c = self.cols[e, side * L:(side + 1) * L]
            D[m][:, :, c[c >= 0]] = Dl[m][:, :, c >= 0]
        return C, D

    @property
    def who(self) -> str:
        """The springs in an error message: the class and the elements' names."""
        return f"LocalSprings {self.pack.names}"

    def _inputs(self, q, qd, t: float) -> tuple:
        """``(q, qd)`` checked (:func:`~flexmbs.system.element_pack.check_vectors`), the
        point forces set at ``t``."""
        n = self.N
        q, qd = check_vectors(self.who, (("q", q, (n,)), ("qd", qd, (n,))))
        if not self.pack.time_free:
            self.pack.at_time(t)
        return q, qd

    def residual(self, r, q, qd, t: float) -> None:
        """``r -= Q`` of the elements at ``(q, qd, t)`` (``r`` (n_q,) float, in place)."""
        check_residual(self.who, r, self.N)
        q, qd = self._inputs(q, qd, t)
        C, D = self.frames(q)
        spring_local_residual(r, qd, C, D, self.pm, self.cols, self.sp_int, self.pack.sp_par,
                              self.pack.sp_tab)

    def newton_values(self, q, qd, t: float, c_K: float, c_C: float) -> dict:
        """``{id(force block): its (n_b, n_b) block -(c_K dQ/dq + c_C dQ/dqd) on its idx,
        row-major}`` (:func:`~flexmbs.forces.spring_local_kernel.spring_local_newton`,
        without the curvature of the measures)."""
        q, qd = self._inputs(q, qd, t)
        C, D = self.frames(q)
        vals = np.empty(int(self.ptr[-1]))
        spring_local_newton(vals, qd, C, D, self.pm, self.cols, self.pos, self.ptr,
                            self.sp_int, self.pack.sp_par, self.pack.sp_tab, float(c_K),
                            float(c_C))
        p = self.ptr
        return {id(fb): vals[p[e]:p[e + 1]] for e, fb in enumerate(self.pack.blocks)}
