"""Fixed generalized-α steps run in compiled code (:func:`.steps_kernel.run_steps`):
the arrays of that loop, and the hand-over of the Newton state between it and the SNES
path of :class:`~flexmbs.integrate.genalpha.GeneralizedAlpha`.

A :class:`CompiledSteps` is bound to the integrator's :class:`~._newton.NewtonSolver`
and to the step residual :class:`~.affine_step.AffineStep` (whose tables hold the
predictor arrays ``q0, v0, w0`` and ``gp, bp``).  Before a run it takes the Newton
matrix and the Jacobian-policy counters from the solver when an SNES solve ran since the
last run; after it hands them back (:meth:`NewtonSolver.adopt`), so that a step redone
on the SNES path, or a checkpoint, continues exactly where the compiled steps stopped.

One call may pass several output times (``targets``): the states at those before the
last are handed back together (:attr:`Advance.block`), so that an output does not cost a
return to Python and the hand-over of the Newton state.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from . import steps_kernel as K
from ._newton import NewtonSolver, NewtonState
from .affine_step import AffineStep
from .step_kernel import newton_dense_c, table_residual_c


class Advance(NamedTuple):
    """What :meth:`CompiledSteps.advance` reached: the end ``code`` (``steps_kernel.
    TARGET``, ``CHUNK`` or ``REDO``), the time ``t`` and ``state = (q, qd, qdd, a, lam)``
    there, the grid
    index ``k_grid``, the next step ``h_cur``, the step of the Newton matrix ``h_jac``,
    and the run's counts ``steps``, ``newton``, ``jacobians`` and smallest step;
    ``block``: the :class:`Block` of the target times passed on the way (``None``: none)."""

    code: int
    t: float
    state: tuple
    k_grid: int
    h_cur: float
    h_jac: float | None
    steps: int
    newton: int
    jacobians: int
    h_min: float
    block: Block | None = None


class Block(NamedTuple):
    """The target times a run of the compiled loop passed before its last (output
    times): row ``k`` of ``states`` holds ``q, qd, qdd, a, lam`` side by side, row ``k``
    of ``info`` the time and grid there and the run's counts so far
    (``steps_kernel.O_T`` ...)."""

    states: np.ndarray
    info: np.ndarray

    def __len__(self) -> int:
        return self.info.shape[0]

    def state(self, k: int, n: int) -> tuple:
        """``(q, qd, qdd, a, lam)`` of row ``k`` (views; ``n`` coordinates)."""
        row = self.states[k]
        return row[:n], row[n:2 * n], row[2 * n:3 * n], row[3 * n:4 * n], row[4 * n:]


#: the most output times one call of the compiled loop passes before it returns (their
#: states wait in its buffers: a few tens of steps, a fraction of the result file's flush
#: interval on every model)
BLOCK_OUTPUTS = 64
#: and the wall time [s] after which it returns at the next output time, as a budget of
#: steps at the previous call's speed (the first call, its speed unknown,
#: :data:`FIRST_BLOCK_STEPS` steps); checked at output times only, so a slower call, a
#: large model's first one or outputs far apart make a block last longer (the rows of
#: its outputs wait meanwhile: docs/performance.md, "cheap output points, round 5")
BLOCK_SECONDS = 0.05
FIRST_BLOCK_STEPS = 256

_NO_ROWS = np.zeros((0, 1))
_NO_INFO = np.zeros((0, K.OUT_COLUMNS))


class CompiledSteps:
    """The compiled time loop of one integrator (``params``: its
    :class:`~.genalpha.GenAlphaParameters`, ``jacobian_reuse`` its setting)."""

    def __init__(self, params, jacobian_reuse: bool, newton: NewtonSolver,
                 step: AffineStep):
        self._newton, self._step = newton, step
        N = step.n + step.m
        self._tab, self._ntab = step.tables()
        # the residual and the Newton matrix, called by address (``steps_kernel.N_FNS``)
        self._fns = np.array([table_residual_c.address, newton_dense_c.address,
                              self._tab.ctypes.data, self._ntab.ctypes.data], dtype=np.int64)
        ints, self._treals, self._bounds, self._scales, theta, cost = newton.compiled_test()
        self._tints = ints
        self._fn = np.zeros(int(ints[0]) + 2)
        self._d1 = np.ones(self._bounds.size - 1)
        self._vec = (np.zeros(N), np.zeros(N), np.zeros(N))            # x, F, y
        self._mat = (np.zeros((N, N)), np.zeros((N, N)), np.zeros((N, N)),
                     np.zeros(N, dtype=np.int64))                       # W, Wb, LU, piv
        self._consts = np.zeros(K.N_CONSTS)
        self._consts[4:] = (params.alpha_m, params.alpha_f, params.beta, params.gamma,
                            theta, 0.0 if cost is None else cost, float(jacobian_reuse))
        self._ri = np.zeros(6)
        self._ii = np.zeros(11, dtype=np.int64)
        self._seen = -1             # the solver's solve count when last in step with it
        self._block_steps = float(FIRST_BLOCK_STEPS)    # steps in BLOCK_SECONDS

    @property
    def block_steps(self) -> float:
        """The steps the last call took per :data:`BLOCK_SECONDS` of wall time
        (:data:`FIRST_BLOCK_STEPS` before the first)."""
        return self._block_steps

    def _take_newton_state(self) -> None:
        """The solver's matrix and counters, when an SNES solve ran since the last run."""
        nw = self._newton
        if nw.solves_run == self._seen:
            return
        s, cost = nw.state(), nw.compiled_test()[5]
        ii, ri = self._ii, self._ri
        ii[K.I_HAVEW], ii[K.I_LU], ii[K.I_POLICY] = s is not None, 0, cost is not None
        self._consts[9] = 0.0 if cost is None else cost
        if s is None:
            ii[K.I_STALE], ii[K.I_NSOLVES], ii[K.I_LASTOLD], ri[K.R_NNEW] = 1, 0, -1, np.nan
        else:
            self._mat[0][:] = s.A[0]
            ii[K.I_STALE], ii[K.I_NSOLVES] = s.stale, s.n_solves
            ii[K.I_LASTOLD] = -1 if s.last_old is None else s.last_old
            ri[K.R_NNEW] = np.nan if s.n_new is None else s.n_new
        self._seen = nw.solves_run

    def advance(self, t: float, q, qd, qdd, a, lam, *, target, t_grid: float,
                k_grid: int, h_cur: float, h: float, h_min: float, eps: float,
                h_jac: float | None, max_steps: int) -> Advance:
        """Steps from the state at ``t`` (arrays not changed) towards ``target`` on the
        grid ``t_grid + k h`` (the arguments of the Python loop of ``run``), at most
        ``max_steps`` of them.  ``target``: a time, or an ascending array of times, the
        states at all but the last of which (at most :data:`BLOCK_OUTPUTS`, within about
        :data:`BLOCK_SECONDS` of steps at the last call's speed) are kept in
        :attr:`Advance.block`."""
        targets = np.atleast_1d(np.asarray(target, dtype=float))
        n_out = min(targets.size - 1, BLOCK_OUTPUTS)
        if n_out > 0:
            out = np.empty((n_out, 4 * len(q) + len(lam)))
            outr = np.empty((n_out, K.OUT_COLUMNS))
        else:
            out, outr = _NO_ROWS, _NO_INFO
        self._take_newton_state()
        ri, ii, c = self._ri, self._ii, self._consts
        ri[:4] = (t, t_grid, h_cur, np.nan if h_jac is None else h_jac)
        ri[K.R_HMIN] = np.inf
        ii[K.I_KGRID] = k_grid
        ii[K.I_STEPS:] = 0
        c[:4] = (h, self._block_steps, eps, h_min)
        st = [np.array(v, dtype=float) for v in (q, qd, qdd, a, lam)]
        wall = time.perf_counter()
        code = K.run_steps(*st, ri, ii, c, max_steps, targets, out, outr, *self._vec,
                           self._mat[0], self._mat[1],
                           self._mat[2], self._mat[3], self._tab, self._fns, self._fn,
                           self._d1, self._bounds, self._scales, self._tints, self._treals)
        wall = time.perf_counter() - wall
        self._step.invalidate()         # the kernel wrote the step's buffers
        if ii[K.I_STEPS] and wall > 0.0:
            self._block_steps = max(1.0, BLOCK_SECONDS * ii[K.I_STEPS] / wall)
        jacs = int(ii[K.I_JAC])
        if ii[K.I_STEPS]:
            self._newton.adopt(NewtonState(
                (self._mat[0],) if jacs else (), bool(ii[K.I_STALE]),
                None if ii[K.I_LASTOLD] < 0 else int(ii[K.I_LASTOLD]),
                None if np.isnan(ri[K.R_NNEW]) else float(ri[K.R_NNEW]),
                int(ii[K.I_NSOLVES]), bool(ii[K.I_POLICY])))
        hj, k_out = float(ri[K.R_HJAC]), int(ii[K.I_OUTS])
        return Advance(int(code), float(ri[K.R_T]), tuple(st), int(ii[K.I_KGRID]),
                       float(ri[K.R_HCUR]), None if np.isnan(hj) else hj, int(ii[K.I_STEPS]),
                       int(ii[K.I_NEWTON]), jacs, float(ri[K.R_HMIN]),
                       Block(out[:k_out], outr[:k_out]) if k_out else None)
