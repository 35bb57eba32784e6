"""A second scheme through PETSc TS, for cross-checking generalized-α (THEORY §8.2).

The stabilised index-2 (Gear–Gupta–Leimkuhler) form with ``y = [q, v, lam, mu]``:

    F(t, y, yd) = [ qd - v + G^T mu             ]
                  [ M(q) vd - f(q, v, t) + G^T lam ]   = r(q, v, vd, lam, t)
                  [ g(q, t)                     ]
                  [ G(q) v + g_t(q, t)          ]  = 0,

integrated by an implicit TS (default BDF of order 2 with TS's adaptive steps), with
``IJacobian = shift dF/dyd + dF/dy``:

    [[shift I + d(G^T mu)/dq, -I,                 0,   G^T],
     [K,                       shift M + C,        G^T, 0  ],
     [G,                       0,                  0,   0  ],
     [d(G v)/dq,               G,                  0,   0  ]]

(``d g_t / dq`` is not part of the DAE contract and is left out; for rheonomic
constraints whose ``g_t`` depends on ``q`` Newton then converges linearly.)  The error
test of TS covers ``q`` and ``v`` only (the index-2 variables ``lam, mu`` get an infinite
absolute tolerance, as usual for BDF on index-2 DAEs).  Options under ``options_prefix``:
``-fmbs_ts_type bdf -fmbs_ts_bdf_order 2``, ``-fmbs_snes_*``, ``-fmbs_pc_*`` ...

Velocity (nonholonomic) rows ``c = A(q, t) v + a(q, t) = 0`` of a
:class:`~.protocol.VelocityConstraints` system are index-2 already: they are appended as
rows ``c(q, v, t)`` with their multipliers ``mu_v`` after ``lam`` (``y = [q, v, lam, mu_v,
mu]``, the residual adding ``A^T mu_v``), IJacobian rows ``[B, A, 0, 0]`` (``B = dc/dq``).

The reported ``qdd`` comes from the index-1 saddle system at the state (``q, v``).
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from petsc4py import PETSc

from flexmbs.errors import ConvergenceError

from .settings import DEFAULTS
from ._petsc import aij_from_csr, block_csr, fill_aij, reason_name
from .consistent import accelerations
from .options import TS_DEFAULTS, OptionsManager, default_direct_lu
from .protocol import velocity_rows
from .trajectory import Callback, Recorder, Stats, Trajectory

__all__ = ["TS_DEFAULTS", "GGLIntegrator"]



class GGLIntegrator:
    """Implicit PETSc TS on the GGL index-2 form of a :class:`flexmbs.integrate.protocol.DAE`."""

    def __init__(self, dae, *, options_prefix: str = DEFAULTS.options_prefix,
                 petsc_options: Mapping | None = None, comm=None):
        comm = PETSc.COMM_SELF if comm is None else comm
        if comm.getSize() != 1:
            raise NotImplementedError("flexmbs.integrate.ts: one rank only, got a communicator "
                                      f"of size {comm.getSize()}")
        self.dae, self._comm = dae, comm
        self._n_mu = velocity_rows(dae)
        self._nl = dae.n_lam                              # holonomic rows (GGL mu)
        self._n, self._m = dae.n_q, dae.n_lam + self._n_mu  # m: the multipliers [lam; mu_v]
        self._N = 2 * self._n + self._m + self._nl
        self._options = OptionsManager(options_prefix, {**default_direct_lu(), **TS_DEFAULTS},
                                       petsc_options)
        self._ts = PETSc.TS().create(comm)
        self._ts.setProblemType(PETSc.TS.ProblemType.NONLINEAR)
        self._ts.setEquationType(PETSc.TS.EquationType.DAE_IMPLICIT_INDEX2)
        self._f = PETSc.Vec().createSeq(self._N, comm=comm)
        self._ts.setIFunction(self._ifunction, self._f)
        self._J: PETSc.Mat | None = None
        self.jacobian_evaluations = 0

    @property
    def ts(self) -> PETSc.TS:
        return self._ts

    def _split(self, y):
        n, m = self._n, self._m
        return y[:n], y[n:2 * n], y[2 * n:2 * n + m], y[2 * n + m:]   # q, v, [lam; mu_v], mu

    def _ifunction(self, ts, t, y, yd, f):
        dae = self.dae
        q, v, lam, mu = self._split(y.getArray(readonly=True))
        qd, vd, _, _ = self._split(yd.getArray(readonly=True))
        with np.errstate(all="ignore"):
            try:
                G = sp.csr_matrix(dae.constraint_jacobian(q, t), shape=(self._nl, self._n))
                g_t, _ = dae.constraint_rates(q, v, t)
                out = np.concatenate([
                    qd - v + G.T @ mu,
                    np.asarray(dae.residual(q, v, vd, lam, t), dtype=float),
                    np.asarray(dae.constraint(q, t), dtype=float),
                    G @ v + np.asarray(g_t, dtype=float)]
                    + ([dae.velocity_constraint(q, v, t)] if self._n_mu else []))
            except ArithmeticError:
                out = np.full(self._N, np.nan)
        f.setArray(out)

    def _jacobian_csr(self, t, y, yd, shift):
        dae, n, m = self.dae, self._n, self._m
        q, v, lam, mu = self._split(y)
        _, vd, _, _ = self._split(yd)
        K, C, M = dae.tangent(q, v, vd, lam, t)
        G = dae.constraint_jacobian(q, t)
        GT = G.T
        I = np.eye(n) if n <= 400 else sp.identity(n, format="csr")
        Fmu = dae.constraint_force_jacobian(q, mu, t)
        Gv = dae.constraint_velocity_jacobian(q, v, t)
        if self._n_mu:
            nl, k = self._nl, self._n_mu
            G = sp.csr_matrix(G, shape=(nl, n))
            A, B, _ = dae.velocity_jacobians(q, v, t)
            GA_T = sp.vstack([G, A], format="csr").T
            return block_csr([[shift * I + Fmu, -I, None, G.T],
                              [K, shift * M + C, GA_T, None],
                              [G, None, None, None],
                              [Gv, G, None, None],
                              [B, A, None, None]], [n, n, nl, nl, k], [n, n, m, nl],
                             zero_diagonal_from=2 * n)
        return block_csr([[shift * I + Fmu, -I, None, GT],
                          [K, shift * M + C, GT, None],
                          [G, None, None, None],
                          [Gv, G, None, None]], [n, n, m, m], [n, n, m, m],
                         zero_diagonal_from=2 * n)

    def _ijacobian(self, ts, t, y, yd, shift, J, P):
        A = self._jacobian_csr(t, y.getArray(readonly=True), yd.getArray(readonly=True), shift)
        fill_aij(P, A)
        if J != P:  # pragma: no cover
            J.assemble()
        self.jacobian_evaluations += 1

    def run(self, q0, qd0, lam0, t0: float, t_end: float, *, h: float,
            rtol: float = DEFAULTS.rtol, atol: float = DEFAULTS.atol, output_times: Sequence[float] | None = None,
            callback: Callback | None = None, store: bool = True,
            output_t0: bool = False) -> Trajectory:
        """Integrate from consistent ``(q0, qd0, lam0)`` at ``t0``; ``h`` is the first step.

        Output at every accepted step (or, with ``output_times``, interpolated by TS at
        those times, and at ``t0`` too with ``output_t0``, as generalized-α's
        ``callback_at_outputs``); ``callback(t, q, qd, qdd, lam, stats)`` as in
        generalized-α.
        """
        n, m, ts = self._n, self._m, self._ts
        y = PETSc.Vec().createSeq(self._N, comm=self._comm)
        y.setArray(np.concatenate([q0, qd0, lam0, np.zeros(self._nl)]).astype(float))
        A0 = self._jacobian_csr(t0, y.getArray(readonly=True), np.zeros(self._N), 1.0 / h)
        if self._J is None:
            self._J = aij_from_csr(A0, self._comm)
            ts.setIJacobian(self._ijacobian, self._J, self._J)
        ts.setTime(t0)
        ts.setTimeStep(h)
        ts.setMaxTime(t_end)
        ts.setMaxSteps(10 ** 8)
        ts.setExactFinalTime(PETSc.TS.ExactFinalTime.MATCHSTEP)
        ts.setErrorIfStepFails(False)
        vatol = y.duplicate()
        vatol.setArray(np.concatenate([np.full(2 * n, atol), np.full(self._N - 2 * n, 1e30)]))
        ts.setTolerances(rtol=rtol, atol=vatol)
        self._options.set_from_options(ts)
        ts.setStepNumber(0)

        rec = Recorder(n, m) if store else None
        outs = None if output_times is None else sorted(float(x) for x in output_times)
        t_start = time.perf_counter()
        state = {"t_prev": t0, "i_out": 0, "stop": False}
        work = y.duplicate()

        def stats():
            return Stats(steps=ts.getStepNumber(), rejected_steps=ts.getStepRejections(),
                         newton_iterations=ts.getSNESIterations(),
                         jacobian_evaluations=self.jacobian_evaluations,
                         linear_solves=ts.getSNESIterations(),
                         wall_time=time.perf_counter() - t_start)

        def emit(t, yarr):
            q, v, lam, _ = (a.copy() for a in self._split(yarr))
            qdd, _ = accelerations(self.dae, q, v, t)
            if rec is not None:
                rec(t, q, v, qdd, lam)
            if callback is not None and callback(t, q, v, qdd, lam, stats()):
                state["stop"] = True

        def monitor(ts_, step, t, u):
            if state["stop"]:
                return
            if outs is None:
                emit(t, u.getArray(readonly=True))
            else:
                if step == 0 and output_t0 and not (
                        outs and abs(outs[0] - t) <= 1e-12 * abs(t_end - t0)):
                    emit(t, u.getArray(readonly=True))
                while state["i_out"] < len(outs) and outs[state["i_out"]] <= t + 1e-12 * abs(
                        t_end - t0):
                    t_o = outs[state["i_out"]]
                    if abs(t_o - t) <= 1e-12 * abs(t_end - t0) or step == 0:
                        emit(t, u.getArray(readonly=True))
                    elif t_o > state["t_prev"]:
                        ts_.interpolate(t_o, work)
                        emit(t_o, work.getArray(readonly=True))
                    state["i_out"] += 1
            state["t_prev"] = t
            if state["stop"]:
                ts_.setConvergedReason(PETSc.TS.ConvergedReason.CONVERGED_USER)

        ts.setMonitor(monitor)
        try:
            with self._options.inserted():
                ts.solve(y)
        except PETSc.Error as exc:
            raise ConvergenceError(f"PETSc TS: error in the solve ({exc})", t=ts.getTime(),
                                   step=ts.getStepNumber()) from None
        finally:
            ts.cancelMonitor()
        code = ts.getConvergedReason()
        if code < 0:
            snes = ts.getSNES()
            raise ConvergenceError(
                f"PETSc TS ({ts.getType()}): {reason_name(PETSc.TS.ConvergedReason, code)}, "
                f"last SNES {reason_name(PETSc.SNES.ConvergedReason, snes.getConvergedReason())}"
                f" after {snes.getIterationNumber()} iterations, step size "
                f"{ts.getTimeStep():.3e}", t=ts.getTime(), step=ts.getStepNumber())
        st = stats()
        if rec is None:
            rec = Recorder(n, m)
            ya = y.getArray(readonly=True)
            q, v, lam, _ = self._split(ya)
            rec(ts.getTime(), q, v, accelerations(self.dae, q, v, ts.getTime())[0], lam)
        y.destroy()
        vatol.destroy()
        work.destroy()
        return rec.trajectory(st)

    def destroy(self) -> None:
        for obj in (self._ts, self._J, self._f):
            if obj is not None:
                obj.destroy()
