"""The residual of one implicit step, bound to a system (generalized-α's Newton function).

Implicit Newmark-type integrators solve for ``x = [q; lam~]`` with ``qd = v0 + gp (q - q0)``,
``qdd = w0 + bp (q - q0)`` and ``lam = bp lam~`` (:mod:`flexmbs.integrate.step_kernel`):

    F(x) = [ (r(q, qd, qdd, lam, t) + G_A^T lam) / bp;  g_A(q, t) ].

:class:`AffineStep` holds every argument of the compiled
:func:`~flexmbs.integrate.step_kernel.affine_residual` except ``x`` in arrays of its own,
made once per system from the system's :class:`~flexmbs.system.affine_plan.AffinePlan`
(its public ``affine_plan()``); :meth:`AffineStep.set` writes the step's ``q0, v0, w0,
gp, bp, t`` into them.  It is then called two ways:

* from Python, ``step(x, out)`` (force elements other than linear ones added in
  Python), or
* from PETSc directly, through the C function :func:`~flexmbs.integrate.step_kernel.
  affine_residual_c` and the context :meth:`AffineStep.c_context` (systems whose force
  elements are all linear, ``Q = K q``, e.g. constant torques, joint friction with
  its internal states, :mod:`flexmbs.forces.friction_kernel`, or spring-dampers,
  bushings, point forces, stops, ropes and compression springs,
  :mod:`flexmbs.forces.spring_kernel`): no Python frame per
  Newton iteration.

Its Newton matrix comes the same two ways: :meth:`AffineStep.newton_dense` and the C
function :meth:`AffineStep.c_newton` (:func:`~flexmbs.integrate.step_kernel.newton_dense`).
After a call the kernel's by-products (all rows ``g``, ``G`` dense, marker frames ``C``,
``D``) are in the buffers at ``q_last``; :meth:`sync` hands them to the system
(:meth:`AffinePlan.remember <flexmbs.system.affine_plan.AffinePlan.remember>`: the
system's Newton matrix at that ``q`` reuses them).
"""
from __future__ import annotations

import math

import numpy as np

from flexmbs.bodies.ffrf_kernel import bodies_newton_values_c
from flexmbs.compiled import Table, arg
from flexmbs.kinematics.frame_kernel import FRAME_WORK
from flexmbs.kinematics.frames import T_A_KERNEL
from flexmbs.integrate.step_forces_kernel import (
    friction_newton_c,
    friction_residual_c,
    spring_newton_c,
    spring_residual_c,
)
from flexmbs.integrate.step_kernel import (
    N_NEWTON_TABLE,
    N_TABLE,
    affine_residual,
    affine_residual_c,
    newton_dense_c,
    table_residual_c,
)

__all__ = ["AffineStep"]


class AffineStep:
    """The step residual of a system whose bodies and rows the compiled kernel covers:
    ``dae`` offers ``force_contributions`` and ``nonfinite_source``
    (:class:`~flexmbs.integrate.protocol.CompiledStepSystem`), ``plan`` is its
    :class:`~flexmbs.system.affine_plan.AffinePlan`."""

    def __init__(self, dae, plan):
        pack, st, act = plan.pack, plan.stacked, plan.active
        n = dae.n_q
        self.n, self.m = n, int(act.size)
        self.plan = plan
        self._dae, self._st, self._act = dae, st, act
        self.q0, self.v0, self.w0 = np.zeros(n), np.zeros(n), np.zeros(n)
        self.scal = np.zeros(2)                      # gp, bp
        self.t = 0.0
        self.q_last = np.zeros(n)
        self.status = np.zeros(2, dtype=np.int64)    # non-finite flag, native calls
        row, lo, nd, w, f = st.drive_weights(0.0)
        self._wd_w, self._wd_f = np.zeros_like(w), np.zeros_like(f)
        self._bufs = (np.zeros(st.n_rows_all), np.zeros((st.n_rows_all, n)),
                      np.zeros(st.C0.shape), np.zeros(st.D0.shape))
        # the kernels' work arrays (no allocation inside a step): q, qd, qdd, r; the
        # label rows p, dp; a frame's U^T, A, Te
        R = st.S_alpha.shape[0]
        self._work = (np.zeros((4, n)), np.zeros(R), np.zeros((R, n)), np.zeros(FRAME_WORK))
        self._const = (plan.gravity, act, st.n_rows_all, *pack.args, *st.kernel_data,
                       row, lo, nd)
        # force elements: linear ones (Q = K q, e.g. a constant torque), joint friction
        # (plan.friction) and springs, bushings, point forces (plan.springs) in the
        # kernel, the others added in Python (then PETSc cannot call the kernel
        # directly); internal states' rows r_z = zd in the kernel
        fr, sp = plan.friction, plan.springs
        self._z = np.ascontiguousarray(plan.state_indices, dtype=np.int64)
        self._fr = (fr.fr_int, fr.fr_par, sp.sp_int, sp.sp_par, sp.sp_tab)
        self._forces, linear = [], []
        for fb in plan.force_blocks:
            if fr.covers(fb) or sp.covers(fb):
                continue
            K = _linear_force(fb)
            if K is None:
                self._forces.append(fb)
            else:
                linear.append((np.asarray(fb.idx, dtype=np.int64), K))
        self._lf = (np.cumsum([0] + [len(i) for i, _ in linear], dtype=np.int64),
                    np.concatenate([i for i, _ in linear] or [np.zeros(0, np.int64)]),
                    np.cumsum([0] + [K.size for _, K in linear], dtype=np.int64),
                    np.concatenate([K.ravel() for _, K in linear] or [np.zeros(0)]))
        self._args: tuple | None = None
        self._table: Table | None = None
        self._ntable: Table | None = None

    # --- per step ----------------------------------------------------------------------
    def set(self, q0, v0, w0, gp: float, bp: float, t: float) -> AffineStep:
        """Bind the step: the affine maps ``qd(q)``, ``qdd(q)`` and the time (``q0, v0,
        w0`` may be this object's own arrays, written by the caller: no copy then)."""
        if q0 is not self.q0:
            self.q0[:], self.v0[:], self.w0[:] = q0, v0, w0
        self.scal[0], self.scal[1] = gp, bp
        self.t = t = float(t)
        if self._wd_f.size:
            _, _, _, w, f = self._st.drive_weights(t)
            self._wd_w[:], self._wd_f[:] = w, f
        if not self.plan.springs.time_free:
            self.plan.springs.at_time(t)
        self._args = None
        return self

    def _call_args(self) -> tuple:
        """The arguments of :func:`affine_residual` after ``F, x`` (for Python calls)."""
        g, n_rows = self._const[0], self._const[2]
        return (self.q0, self.v0, self.w0, float(self.scal[0]), float(self.scal[1]), g,
                self._act, n_rows, *self._const[3:], self._wd_w, self._wd_f, *self._lf,
                *self._bufs, self._z, *self._fr, *self._work)

    # --- the Python call -----------------------------------------------------------------
    def __call__(self, x: np.ndarray, out: np.ndarray) -> None:
        """``out = F(x)`` (``x``, ``out`` writable C-contiguous float arrays of size
        ``n + m``); raises ``FloatingPointError`` naming the source of a non-finite value."""
        if self._args is None:
            self._args = self._call_args()
        self.q_last[:1] = np.nan        # rows written in place: valid only once it returns
        self.plan.forget()              # (the system's caches hold these arrays)
        finite = affine_residual(out, x, *self._args)
        n = self.n
        self.q_last[:] = x[:n]
        if self._forces:
            q = x[:n]
            gp, bp = self.scal
            for fb, c in self._dae.force_contributions(q, self.v0 + gp * (q - self.q0),
                                                       self.t, 1, self._forces, x[n:] * bp):
                out[fb.idx] -= c.Q[:-1] / bp
            finite = math.isfinite(float(out.sum()))
        self.sync()
        if not finite and not np.all(np.isfinite(out)):
            self.status[0] = 1
            self.raise_nonfinite()
        self.status[0] = 0

    # --- the C call ----------------------------------------------------------------------
    @property
    def native(self) -> bool:
        """Whether PETSc may call the compiled residual directly, and
        :meth:`newton_dense` applies (no force elements but linear ones and joint
        friction)."""
        return not self._forces

    @property
    def c_function(self) -> int:
        """Address of the C function ``SNESFunction`` (:func:`affine_residual_c`)."""
        return affine_residual_c.address

    def c_context(self) -> int:
        """Its context: the table of every array (made on first use, then fixed)."""
        if self._table is not None:
            return self._table.address
        if self._table is None:
            from flexmbs.petsc_c import address
            tab = Table()
            for name in ("VecGetArrayRead", "VecRestoreArrayRead", "VecGetArray",
                         "VecRestoreArray"):
                tab.add_value(address(name))
            self._slot = np.zeros(2, dtype=np.int64)
            for a in (self._slot, self.status, self.q_last, self.scal, self.q0, self.v0,
                      self.w0):
                tab.add(a)
            g, act, n_rows, *rest = self._const
            tab.add(g)
            tab.add(act)
            tab.add_value(n_rows)
            for a in rest:
                tab.add(a.astype(np.int64) if a.dtype == bool else a)
            for a in (self._wd_w, self._wd_f, *self._lf, *self._bufs, self._z, *self._fr,
                      *self._work):
                tab.add(a)
            fr_int, sp_int = self._fr[0], self._fr[2]     # compiled at their first use
            tab.add_value(friction_residual_c.address if fr_int.shape[0] else 0)
            tab.add_value(spring_residual_c.address if sp_int.shape[0] else 0)
            tab.add_value(table_residual_c.address)
            if len(tab) != N_TABLE:          # pragma: no cover - a layout change
                raise RuntimeError(f"AffineStep: table of {len(tab)} rows, the C function "
                                   f"expects {N_TABLE}")
            self._table = tab
        return self._table.address

    # --- the Newton matrix ----------------------------------------------------------------
    def newton_dense(self, x: np.ndarray) -> np.ndarray:
        """The Newton matrix of this step at ``x`` (generalized-α's: ``c_K = 1/bp``,
        ``c_C = gp/bp``, ``c_M = 1``), dense (N, N), by one compiled call
        (:func:`~flexmbs.integrate.step_kernel.newton_dense_c` by ctypes; systems whose force
        elements are all linear, joint friction or compiled springs, bushings, point forces,
        stops, ropes and compression springs)."""
        self._newton_table()
        N = self.n + self.m
        out = np.full((N, N), np.nan)
        x = arg(x)
        if x.shape != (N,):
            raise ValueError(f"AffineStep.newton_dense: x must have shape ({N},), got "
                             f"{x.shape}")
        finite = newton_dense_c.compile().ctypes(out.ctypes.data, x.ctypes.data,
                                                 self._nctx_address)
        if not finite and np.isfinite(out).all():  # stopped on an exception: no values
            out[:] = np.nan
        return out

    def _newton_table(self) -> Table:
        """The Newton table of :func:`~flexmbs.integrate.step_kernel.newton_dense` (made once)."""
        self.c_context()                    # the residual's table exists from here on
        if self._ntable is None:
            tab = Table()
            tab.add_value(self.plan.pack.table().address)
            tab.add(T_A_KERNEL)
            tab.add_value(bodies_newton_values_c.address)
            pack, st, n = self.plan.pack, self._st, self.n     # newton_dense's work
            for shape in (pack.n_values, 3 * pack.n_b + 6, self.m, st.n_rows_all,
                          st.S_alpha.shape[0], st.kernel_data[13].shape[0], (n, n),
                          (st.C0.shape[0] * 4, 3), (3, n), (3, n)):
                tab.add(np.zeros(shape))
            fr_int, sp_int = self._fr[0], self._fr[2]
            tab.add_value(friction_newton_c.address if fr_int.shape[0] else 0)
            tab.add_value(spring_newton_c.address if sp_int.shape[0] else 0)
            tab.add(np.zeros((4, 5), dtype=np.int64))      # their argument table
            if len(tab) != N_NEWTON_TABLE:   # pragma: no cover - a layout change
                raise RuntimeError(f"AffineStep: Newton table of {len(tab)} rows, the "
                                   f"kernel expects {N_NEWTON_TABLE}")
            self._ntable = tab
            self._nctx = np.array([self._table.address, tab.address], dtype=np.int64)
            self._nctx_address = self._nctx.ctypes.data
        return self._ntable

    def c_newton(self) -> tuple[int, int]:
        """``(function, context)``: :meth:`newton_dense` as the C function
        ``int (double *out, const double *x, void *ctx)`` (:func:`~flexmbs.integrate.
        step_kernel.newton_dense_c`, 1 when finite) and its context, for a compiled Jacobian."""
        self._newton_table()
        return newton_dense_c.address, self._nctx_address

    @property
    def time_free(self) -> bool:
        """Whether the residual depends on the time only through ``q0, v0, w0`` (no drive
        rows, whose weights :meth:`set` computes at each step, and no time-varying point
        forces)."""
        return not self._wd_f.size and self.plan.springs.time_free

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        """The residual's and the Newton matrix's tables (:func:`~flexmbs.integrate.
        step_kernel.table_residual_c`, :func:`~flexmbs.integrate.step_kernel.newton_dense`)."""
        ntab = self._newton_table()
        return self._table.array, ntab.array

    def raise_nonfinite(self) -> None:
        """Raise ``FloatingPointError`` naming the source of the non-finite residual at
        ``q_last`` (after a call that set ``status[0]``)."""
        q = self.q_last.copy()
        gp, bp = self.scal
        dq = q - self.q0
        bad = self._dae.nonfinite_source(q, self.v0 + gp * dq, self.w0 + bp * dq, self.t)
        raise FloatingPointError(f"non-finite residual at t = {self.t:.6g} s from {bad}")

    # --- by-products -----------------------------------------------------------------------
    def invalidate(self) -> None:
        """Forget the system's cached rows and frames (after C calls, which overwrite the
        buffers without Python knowing; :meth:`sync` restores them)."""
        self.plan.forget()

    def sync(self) -> None:
        """Hand the last call's rows and frames (at ``q_last``, ``t``) to the system's
        caches."""
        g, G, C, D = self._bufs
        self.plan.remember(self.q_last.tobytes(), self.t, g, G, C, D)


def _linear_force(fb) -> np.ndarray | None:
    """``K`` over ``fb.idx`` when the force element of block ``fb`` is linear,
    ``Q = K q[idx]`` (its ``linear_force``), else None."""
    fn = getattr(fb.element, "linear_force", None)
    if fn is None or len(fb.markers) != 1 or fb.offsets[0] != 0:
        return None
    K = fn(fb.markers[0], len(fb.idx))
    return None if K is None else np.ascontiguousarray(K, dtype=float)
