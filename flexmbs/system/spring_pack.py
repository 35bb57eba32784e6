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
from flexmbs.kinematics.time_functions import Constant, as_time_function
from flexmbs.system.stacked import check_frames


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


class SpringPack:
    """Tables ``sp_int`` (k, 5), ``sp_par`` (k, 18), ``sp_tab`` (T, 3) of the force
    elements of ``blocks``; ``loads``: ``[(row, F(t))]`` of the point forces."""

    def __init__(self, sp_int, sp_par, sp_tab, blocks, loads, n_q: int):
        self.sp_int = np.ascontiguousarray(sp_int, dtype=np.int64).reshape(-1, col.N_INT)
        self.sp_par = arg(np.asarray(sp_par, dtype=float).reshape(-1, col.N_PAR))
        self.sp_tab = arg(np.asarray(sp_tab, dtype=float).reshape(-1, 3))
        self.blocks = tuple(blocks)
        self.names = tuple(fb.element.name for fb in blocks)
        self.loads = list(loads)
        self.time_free = all(isinstance(fn, Constant) for _, fn in self.loads)
        self.n_q = n_q
        self.at_time(0.0)

    @classmethod
    def of(cls, layout, stacked) -> SpringPack:
        """The elements of ``layout`` whose markers ``stacked`` holds."""
        rows_int, rows_par, tabs, blocks, loads = [], [], [], [], []
        t0 = 0
        for fi, ms in stacked.force_markers.items():
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

    def __len__(self) -> int:
        return len(self.names)

    def covers(self, fb) -> bool:
        """Whether force block ``fb`` is one of the pack's."""
        return any(fb is b for b in self.blocks)

    def at_time(self, t: float) -> None:
        """Write the point forces ``F(t)`` [N] into ``sp_par`` (in place)."""
        for e, fn in self.loads:
            self.sp_par[e, 0:3] = np.asarray(fn(t)[0], float)

    def _inputs(self, q, qd, C, D) -> tuple:
        n = self.n_q
        M = int(self.sp_int[:, 1:3].max()) + 1 if len(self) else 0
        out = tuple(arg(a) for a in (q, qd, C, D))
        for name, a in (("q", out[0]), ("qd", out[1])):
            if a.shape != (n,):
                raise ValueError(f"SpringPack {self.names}: {name} must have shape ({n},), "
                                 f"got {a.shape}")
        check_frames(f"SpringPack {self.names}", out[2], out[3], M, n)
        return out

    def residual(self, r, q, qd, C, D) -> None:
        """``r -= Q`` of the elements (``r`` (n_q,) float, written in place)."""
        q, qd, C, D = self._inputs(q, qd, C, D)
        if r.shape != (self.n_q,) or r.dtype != float or not r.flags.c_contiguous:
            raise ValueError(f"SpringPack {self.names}: r must be a C-contiguous float "
                             f"array of shape ({self.n_q},), got {r.dtype} {r.shape}")
        backend(spring_kernel, spring_reference).spring_residual(
            r, q, qd, C, D, self.sp_int, self.sp_par, self.sp_tab)

    def newton(self, out, q, qd, C, D, c_K: float, c_C: float) -> None:
        """The elements' terms ``-(c_K dQ/dq + c_C dQ/dqd)`` of a dense Newton matrix
        ``out`` (square, of size >= n_q)."""
        q, qd, C, D = self._inputs(q, qd, C, D)
        if out.ndim != 2 or out.shape[0] != out.shape[1] or out.shape[0] < self.n_q:
            raise ValueError(f"SpringPack {self.names}: out must be square of size >= "
                             f"n_q = {self.n_q}, got {out.shape}")
        backend(spring_kernel, spring_reference).spring_newton(
            out, q, qd, C, D, self.sp_int, self.sp_par, self.sp_tab, float(c_K), float(c_C))
