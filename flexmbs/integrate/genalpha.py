"""Generalized-α for the index-3 DAE ``M qdd - f + G^T lam = 0, g(q, t) = 0`` (THEORY §8.2).

Arnold & Brüls, *Multibody Syst. Dyn.* 18 (2007) 185–202, with the parameters of
Chung & Hulbert (1993) from the spectral radius at infinity ``rho_inf``:

    alpha_m = (2 rho_inf - 1) / (rho_inf + 1),   alpha_f = rho_inf / (rho_inf + 1),
    gamma   = 1/2 + alpha_f - alpha_m,           beta    = (gamma + 1/2)^2 / 4.

One step ``t_n -> t_{n+1} = t_n + h`` with the auxiliary acceleration ``a``:

    q_{n+1}  = q_n + h qd_n + h^2 (1/2 - beta) a_n + h^2 beta a_{n+1}
    qd_{n+1} = qd_n + h (1 - gamma) a_n + h gamma a_{n+1}
    (1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) qdd_{n+1} + alpha_f qdd_n
    r(q_{n+1}, qd_{n+1}, qdd_{n+1}, lam_{n+1}, t_{n+1}) = 0,   g(q_{n+1}, t_{n+1}) = 0.

The unknowns are ``(q_{n+1}, lam_{n+1})``; ``d qd / d q = gamma' = gamma / (beta h)`` and
``d qdd / d q = beta' = (1 - alpha_m) / (beta h^2 (1 - alpha_f))``.  Following Bottasso,
Bauchau & Cardona (*SIAM J. Sci. Comput.* 29, 2007) the equilibrium rows are divided by
``beta'`` and the multipliers scaled as ``lam = beta' lam~``, so the Newton matrix

    S_t / beta' = [[M + (gamma'/beta') C + K / beta', G^T], [G, 0]]

has a condition number ~h^0 instead of h^-4.  It is solved through PETSc SNES (newtonls,
basic line search) with KSP/PC from the options database (direct LU by default).

Local error estimate (for adaptive steps): with exact ``q_n, qd_n`` and
``a_n ~ qdd(t_n + (alpha_m - alpha_f) h)``, the position update has the local error
``(beta - gamma/2 + 1/12) h^3 q'''``; since ``a_{n+1} - a_n ~ h q'''`` the estimate is

    e_{n+1} = |beta - gamma/2 + 1/12| h^2 (a_{n+1} - a_n)

(the predictor–corrector form of Géradin & Cardona 2001, §13; for Newmark's trapezoidal
rule it reduces to Zienkiewicz & Xie's ``(beta - 1/6) h^2 (qdd_{n+1} - qdd_n)``).

Velocity (nonholonomic) rows ``c = A(q, t) qd + a(q, t) = 0`` of a
:class:`~.protocol.VelocityConstraints` system are held at the end of the step,
``c(q_{n+1}, qd_{n+1}, t_{n+1}) = 0``, with their multipliers ``mu = beta' mu~`` after
``lam``; the rows are divided by ``gamma'`` so that their Newton rows
``A + B / gamma'`` (``B = dc/dq``) are O(1) like ``G``:

    [[M + (gamma'/beta') C + (K + d(A^T mu)/dq) / beta', G^T, A^T],
     [G,                                                0,   0  ],
     [A + B / gamma',                                   0,   0  ]].

Such systems take the numpy path (no compiled step).

Velocities: in the index-3 form ``qd_{n+1}`` satisfies ``G qd + g_t = 0`` only to O(h^2).
With ``project_velocity=True`` the *reported* velocity is projected (minimum-norm change)
onto ``G qd = -g_t``; the integration itself continues from the unprojected velocity so
that the scheme keeps its second order.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from petsc4py import PETSc

from flexmbs.compiled import use_compiled
from flexmbs.errors import ConvergenceError

from . import genalpha_kernel, genalpha_reference, steps_kernel
from .increments_kernel import FLOOR, GROWTH
from ._newton import LOOP_DENSE_MAX, NewtonFailure, NewtonSolver, NewtonState
from ._petsc import block_csr, saddle
from .affine_step import AffineStep
from .compiled_steps import BLOCK_OUTPUTS, BLOCK_SECONDS, CompiledSteps
from .consistent import accelerations, project_velocities, tangent_mass
from .events import EVENT_TOL, ContactEvents
from .protocol import (
    CompiledStepSystem,
    Events,
    FactoredNewton,
    FirstOrderStates,
    FixedPatternNewton,
    IterationMatrix,
    Labelled,
    Sampled,
    velocity_rows,
)
from .settings import DEFAULTS
from .trajectory import Callback, Recorder, Stats, Trajectory

__all__ = ["Checkpoint", "GenAlphaParameters", "GeneralizedAlpha", "State"]

log = logging.getLogger(__name__)



#: spectral radii at or above this are "undamped" (see ``GeneralizedAlpha.notes``)
UNDAMPED = 1.0 - 1e-9


@dataclasses.dataclass(frozen=True)
class GenAlphaParameters:
    """``alpha_m, alpha_f, gamma, beta`` of Chung & Hulbert (1993)."""

    alpha_m: float
    alpha_f: float
    gamma: float
    beta: float

    @classmethod
    def from_rho_inf(cls, rho_inf: float) -> GenAlphaParameters:
        if not 0.0 <= rho_inf <= 1.0:
            raise ValueError(f"generalized-alpha: rho_inf must lie in [0, 1], got {rho_inf}")
        alpha_m = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0)
        alpha_f = rho_inf / (rho_inf + 1.0)
        gamma = 0.5 + alpha_f - alpha_m
        return cls(alpha_m, alpha_f, gamma, 0.25 * (gamma + 0.5) ** 2)

    def beta_prime(self, h: float) -> float:
        return (1.0 - self.alpha_m) / (self.beta * h * h * (1.0 - self.alpha_f))

    def gamma_prime(self, h: float) -> float:
        return self.gamma / (self.beta * h)

    @property
    def error_constant(self) -> float:
        return abs(self.beta - 0.5 * self.gamma + 1.0 / 12.0)


class State(NamedTuple):
    """Integrator state at ``t``: ``q, qd, qdd, lam`` and the auxiliary acceleration ``a``
    (immutable; a named tuple, made twice per step, is cheaper than a frozen dataclass)."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    a: np.ndarray
    lam: np.ndarray


class Checkpoint(NamedTuple):
    """What a run continues from besides its :class:`State` (``GeneralizedAlpha.run(...,
    resume=)``): the time grid ``t_g + k h`` (origin ``t_g``, next point ``k``), the step
    size ``h`` and whether steps are ``adaptive``, the step to try next ``h_cur``, the step
    the Newton matrix was made for ``h_jac`` and the Newton solver's state.  With it a
    continued run repeats the uninterrupted one to the last bit.

    :meth:`pack` makes one flat float vector of it (for a result file), :meth:`unpack`
    reads one back (``None`` for a vector of another layout)."""

    h: float
    adaptive: bool
    t_grid: float
    k_grid: int
    h_cur: float
    h_jac: float | None
    newton: NewtonState | None

    LAYOUT = 1        # version of the packed layout

    def pack(self) -> np.ndarray:
        nw = self.newton
        A = () if nw is None else nw.A
        head = [self.LAYOUT, self.h, float(self.adaptive), self.t_grid, self.k_grid,
                self.h_cur, np.nan if self.h_jac is None else self.h_jac,
                -1.0 if nw is None else float(len(A))]
        if nw is not None:
            head += [float(nw.stale), np.nan if nw.last_old is None else nw.last_old,
                     np.nan if nw.n_new is None else nw.n_new, nw.n_solves, float(nw.policy)]
            head += [a.size for a in A] + [a.shape[0] for a in A]
        return np.concatenate([np.array(head, dtype=float)] +
                              [np.ravel(a).astype(float) for a in A])

    @classmethod
    def unpack(cls, v) -> Checkpoint | None:
        v = np.asarray(v, dtype=float)
        if v.size < 8 or v[0] != cls.LAYOUT:
            return None
        h, adaptive, t_grid, k_grid, h_cur, h_jac, n_a = v[1:8]
        newton = None
        if n_a > 0:
            k = int(n_a)
            stale, last_old, n_new, n_solves, policy = v[8:13]
            sizes, rows = v[13:13 + k].astype(int), v[13 + k:13 + 2 * k].astype(int)
            parts, at = [], 13 + 2 * k
            for size, r in zip(sizes, rows):
                a = v[at:at + size]
                parts.append(a.reshape(r, -1) if k == 1 else a)
                at += size
            if k == 3:
                parts[0], parts[1] = (parts[0].astype(PETSc.IntType),
                                      parts[1].astype(PETSc.IntType))
            newton = NewtonState(tuple(parts), bool(stale),
                                 None if np.isnan(last_old) else int(last_old),
                                 None if np.isnan(n_new) else float(n_new), int(n_solves),
                                 bool(policy))
        return cls(float(h), bool(adaptive), float(t_grid), int(k_grid), float(h_cur),
                   None if np.isnan(h_jac) else float(h_jac), newton)

    def fits(self, h: float, adaptive: bool) -> bool:
        """Whether a run with step ``h`` (``adaptive`` or not) continues this one exactly."""
        return self.h == h and self.adaptive == adaptive


class _Counters:
    def __init__(self):
        self.steps = self.rejected = self.newton = self.jac = self.solves = self.cuts = 0
        self.h_min = float("inf")
        self.t_start = time.perf_counter()

    def stats(self) -> Stats:
        return Stats(steps=self.steps, rejected_steps=self.rejected,
                     newton_iterations=self.newton, jacobian_evaluations=self.jac,
                     linear_solves=self.solves, wall_time=time.perf_counter() - self.t_start,
                     step_cuts=self.cuts,
                     min_step=self.h_min if self.steps else float("nan"))


#: the wall time [s] between two calls of a run's ``progress_callback`` (:class:`Cadence`)
PROGRESS_SECONDS = BLOCK_SECONDS


class Cadence:
    """``progress(t, stats) -> stop?`` called at a wall-time cadence: after a step that
    ends ``seconds`` or more after the previous call (the run's start), after a call of
    the compiled loop of :meth:`steps` steps (sized to end then), and after the last step.

    The compiled loop takes ``block_steps`` steps per :data:`BLOCK_SECONDS` (its last
    call's speed), so a call of ``steps = max(1, block_steps (t_due - now) /
    BLOCK_SECONDS)`` ends about when the next call is due: the callback runs at least
    every ``seconds`` of wall time, give or take the speed's change and one step of the
    Python path (a step there may take longer by itself)."""

    def __init__(self, progress: Callable[[float, Stats], bool], seconds: float):
        self.progress, self.seconds = progress, seconds
        self.due = time.perf_counter() + seconds

    def steps(self, block_steps: float) -> int:
        """The steps of a compiled call that ends when the next call is due."""
        left = self.due - time.perf_counter()
        return max(1, int(block_steps * left / BLOCK_SECONDS))

    def __call__(self, t: float, stats: Stats, *, last: bool = False,
                 due: bool = False) -> bool:
        """After a step at ``t``: the callback's value if it is called (``last``: the
        run's last step; ``due``: a call of :meth:`steps` ended), else ``False``."""
        now = time.perf_counter()
        if not (last or due or now >= self.due):
            return False
        self.due = now + self.seconds
        return bool(self.progress(t, stats))


class GeneralizedAlpha:
    """Generalized-α integrator of a :class:`flexmbs.integrate.protocol.DAE` on PETSc SNES.

    Parameters
    ----------
    dae : the model
    rho_inf : spectral radius at infinite frequency, 1 = no numerical damping
    options_prefix : PETSc options prefix of the SNES (and its KSP/PC)
    petsc_options : options (without prefix) overriding the defaults
    jacobian_reuse : keep the Newton matrix across iterations and steps while Newton
        contracts well; rebuilt after a failure, a poor rate or a step-size change > 50 %
    jacobian_cost : with ``jacobian_reuse``, start a step with a fresh Newton matrix when
        that is expected to save more than this many Newton iterations (residual
        evaluations); see :meth:`flexmbs.integrate._newton.NewtonSolver.solve`.  ``None``:
        reuse whenever it contracts (the older policy)
    project_velocity : report velocities projected onto ``G qd = -g_t`` (see module doc)
    newton_rtol : Newton stops when its estimated remaining error is below this fraction
        of the first Newton correction (per block ``q``, ``lam``), see
        :mod:`flexmbs.integrate._newton`; ``None``: SNES's own tests (``snes_rtol``,
        ``snes_stol``)
    compiled_loop : run fixed steps of a system on the compiled step path (below) in a
        compiled loop (:mod:`flexmbs.integrate.steps_kernel`) that returns to Python at
        the output times, the end of a chunk of steps, or a step it cannot take (then
        redone here, as before); off with ``FLEXMBS_KERNELS=reference`` too
    comm : communicator of the PETSc objects (one rank)

    The step's residual and Newton matrix come from the DAE's capabilities
    (:mod:`flexmbs.integrate.protocol`): the compiled step of an
    :class:`~flexmbs.integrate.affine_step.AffineStep` for a
    :class:`~.protocol.CompiledStepSystem` that has an ``affine_plan`` (unless
    :func:`flexmbs.compiled.use_compiled` is false), the DAE's ``newton_matrix``
    (:class:`~.protocol.FixedPatternNewton`), its factored Newton matrix
    (:class:`~.protocol.FactoredNewton`) or ``iteration_matrix``
    (:class:`~.protocol.IterationMatrix`), else ``residual``, ``constraint``, ``tangent``
    and ``constraint_jacobian``.
    """

    def __init__(self, dae, *, rho_inf: float = DEFAULTS.rho_inf,
                 options_prefix: str = DEFAULTS.options_prefix,
                 petsc_options: Mapping | None = None,
                 jacobian_reuse: bool = DEFAULTS.jacobian_reuse,
                 project_velocity: bool = DEFAULTS.project_velocity,
                 newton_rtol: float | None = DEFAULTS.newton_rtol,
                 jacobian_cost: float | None = DEFAULTS.jacobian_cost,
                 compiled_loop: bool = DEFAULTS.compiled_loop, comm=None):
        self.dae = dae
        self.params = GenAlphaParameters.from_rho_inf(rho_inf)
        self.rho_inf = rho_inf
        if newton_rtol is not None and not (np.isfinite(newton_rtol) and newton_rtol > 0):
            raise ValueError(f"generalized-alpha: newton_rtol must be a number > 0 (or None: "
                             f"SNES's own tests), got {newton_rtol}")
        #: what the integrator chose by itself and the user should know (run summary)
        self.notes: list[str] = []
        alg_tol, self._f_floor_factor = 1e-12, 64.0 * np.finfo(float).eps
        #: number of velocity rows (their multipliers follow lam)
        self._n_mu = n_mu = velocity_rows(dae)
        if rho_inf >= UNDAMPED and (dae.n_lam or n_mu) and newton_rtol is not None:
            # rho_inf = 1: the spurious root -1 of the index-3 multiplier recursion does
            # not damp the error a Newton solve leaves in lam, so it adds up over the
            # steps (order 2 is lost below h ~ 1e-4 s on a pendulum); solved to round-off
            # it keeps order 2
            # (a tighter tolerance asked for is kept)
            newton_rtol = min(newton_rtol, 1e-10)
            alg_tol, self._f_floor_factor = 4.0 * np.finfo(float).eps, 0.0
            self.notes.append(
                "rho_inf = 1 (no numerical damping) with constraints: the index-3 form does "
                "not damp multiplier errors, so every Newton solve is taken to round-off "
                "(costs some 20 % more iterations; rho_inf = 0.9 avoids it)")
        if newton_rtol is not None:
            # the residual floor leaves an error of some 64 eps s_b in the unknowns; a
            # tolerance whose smallest threshold kappa FLOOR s_b is below that lowers it
            # in proportion (else the floor, not kappa, stops Newton at small steps)
            self._f_floor_factor *= min(1.0, newton_rtol * FLOOR / (64.0 * np.finfo(float).eps))
        self.jacobian_reuse = jacobian_reuse
        self.project_velocity = project_velocity
        self._n, self._m = dae.n_q, dae.n_lam + n_mu
        self._newton = NewtonSolver(self._n + self._m, prefix=options_prefix,
                                    petsc_options=petsc_options,
                                    comm=PETSc.COMM_SELF if comm is None else comm,
                                    increment_rtol=newton_rtol,
                                    block_sizes=(self._n, self._m),
                                    n_algebraic=self._m, algebraic_tol=alg_tol,
                                    jacobian_cost=jacobian_cost if jacobian_reuse else None)
        self._h_jac: float | None = None
        n, m = self._n, self._m           # q0, v0, w0, x0 of the step being solved
        self._predicted = (np.empty(n), np.empty(n), np.empty(n), np.empty(n + m))
        self._affine = use_compiled() and isinstance(dae, CompiledStepSystem) and not n_mu
        self._affine_step: tuple | None = None       # (plan, AffineStep)
        self._fixed_pattern = isinstance(dae, FixedPatternNewton) and not n_mu
        self._factored = isinstance(dae, FactoredNewton) and dae.factored and not n_mu
        self._one_coo = isinstance(dae, IterationMatrix)
        #: the predictor and update of a step: compiled, or their numpy reference
        self._kernels = genalpha_kernel if use_compiled() else genalpha_reference
        self._grid = [0.0, 1, 0.0, 0.0, False]   # t_g, k, h_cur, h, adaptive (checkpoint)
        #: whether the Newton solver's state goes with :attr:`last_state` (not while the
        #: outputs the compiled loop passed in one call are handed to the callback)
        self._in_step = True
        #: fixed steps of the compiled step path run in a compiled loop (compiled_steps)
        self._use_loop = compiled_loop and self._affine
        self._loop: CompiledSteps | None = None
        self._projected: tuple | None = None    # (state, its recorded velocities)
        self._loop_step: AffineStep | None = None

    @property
    def snes(self) -> PETSc.SNES:
        return self._newton.snes

    @property
    def newton(self) -> NewtonSolver:
        return self._newton

    def checkpoint(self) -> Checkpoint | None:
        """The :class:`Checkpoint` of the last state of :meth:`run` (read from its
        callback, it goes with the state the callback got); None for an output the
        compiled loop passed on its way to a later one (the Newton solver is already
        there: the next output with a checkpoint is at most ``BLOCK_OUTPUTS`` later)."""
        if not self._in_step:
            return None
        t_grid, k, h_cur, h, adaptive = self._grid
        return Checkpoint(h, adaptive, t_grid, k, h_cur, self._h_jac, self._newton.state())

    # --- one step --------------------------------------------------------------------
    def step(self, s: State, h: float, *, prepare: bool = False
             ) -> tuple[State, int, int] | None:
        """One step of size ``h`` from ``s``; returns ``(state, newton_its, jac_evals)``.

        Raises :class:`NewtonFailure` if Newton does not converge.  With ``prepare``
        nothing is solved: the Newton solver is set up for this step's residual
        (:meth:`NewtonSolver.prepare`), so that the compiled loop can take it; None.
        """
        p, dae, n = self.params, self.dae, self._n
        t1 = s.t + h
        bp, gp = p.beta_prime(h), p.gamma_prime(h)

        def split(x):
            return x[:n], x[n:] * bp

        # qd_{n+1}, qdd_{n+1} are affine in q_{n+1} (the update formulas of the module
        # docstring): qd = v0 + gp (q - q0), qdd = w0 + bp (q - q0), with q0 the predictor
        # of a zero auxiliary acceleration; x0 the Newton start (qdd_{n+1} = qdd_n), compiled
        q0, v0, w0, x0 = self._predicted
        self._kernels.predict(s.q, s.qd, s.qdd, s.a, s.lam, h, p.alpha_m, p.alpha_f, p.beta,
                              p.gamma, bp, q0, v0, w0, x0)

        # the DAE's residual of the whole step as a function of x, writing in place (the
        # next predictions go straight into its arrays)
        f_step = self._step_residual(q0, v0, w0, gp, bp, t1) if self._affine else None
        if f_step is None:
            self._affine = False
        elif f_step.q0 is not q0:
            self._predicted = (f_step.q0, f_step.v0, f_step.w0, x0)
        if (prepare and f_step is not None and f_step.native and f_step.time_free
                and self._newton.increment_test):
            # the compiled loop will take the steps (it needs the increment test, see
            # _compiled_steps): it factors dense matrices itself
            self._newton.dense_max = LOOP_DENSE_MAX

        n_h = self._m - self._n_mu              # holonomic rows

        def F(x):
            q1 = x[:n]
            dq = q1 - q0
            r = dae.residual(q1, v0 + gp * dq, w0 + bp * dq, x[n:] * bp, t1)
            out = np.empty(n + self._m)
            out[:n] = r / bp
            if self._n_mu:
                out[n:n + n_h] = dae.constraint(q1, t1)
                out[n + n_h:] = dae.velocity_constraint(q1, v0 + gp * dq, t1) / gp
            else:
                out[n:] = dae.constraint(q1, t1)
            return out

        newton = self._newton

        def J(x):
            if f_step is not None and f_step.native and newton.dense_for(n + self._m):
                return f_step.newton_dense(x)      # one compiled call, dense
            q1, lam1 = split(x)
            dq = q1 - q0
            qd1, qdd1 = v0 + gp * dq, w0 + bp * dq
            if self._factored:                     # factored by the system (solve(rhs))
                return dae.newton_factor(q1, qd1, qdd1, lam1, t1, 1.0 / bp, gp / bp, 1.0)
            if self._fixed_pattern:                # fixed CSR pattern (AssembledSystem)
                if f_step is not None:             # the step's rows and frames at its q
                    f_step.sync()
                return dae.newton_matrix(q1, qd1, qdd1, lam1, t1, 1.0 / bp, gp / bp, 1.0)
            if self._one_coo:                      # one COO assembly
                S = dae.iteration_matrix(q1, qd1, qdd1, lam1, t1, 1.0 / bp, gp / bp, 1.0)
            else:
                K, C, M = dae.tangent(q1, qd1, qdd1, lam1, t1)
                S = sp.csr_matrix(M) + (gp / bp) * sp.csr_matrix(C) + sp.csr_matrix(K) / bp
            G = sp.csr_matrix(dae.constraint_jacobian(q1, t1), shape=(n_h, n))
            if self._n_mu:
                A, B, _ = dae.velocity_jacobians(q1, qd1, t1)
                return block_csr([[S, G.T, A.T], [G, None, None], [A + B / gp, None, None]],
                                 [n, n_h, self._n_mu], [n, n_h, self._n_mu],
                                 zero_diagonal_from=0)
            return saddle(S, G)

        if prepare:
            if f_step is not None:
                self._newton.prepare(x0, f_step, J)
            return None
        reuse = (self.jacobian_reuse and self._h_jac is not None
                 and 2.0 / 3.0 <= h / self._h_jac <= 1.5)
        if not reuse:
            self._newton.invalidate_jacobian()
        if f_step is not None:
            x, info = self._newton.solve(x0, f_step, J, reuse=reuse, inplace=True)
        else:
            x, info = self._newton.solve(x0, F, J, reuse=reuse)
        if info.jacobian_evaluations:
            self._h_jac = h
        q1, qd1, qdd1, a1, lam1 = self._kernels.update(
            x, s.q, s.qd, s.qdd, s.a, h, p.alpha_m, p.alpha_f, p.beta, p.gamma, bp)
        return State(t1, q1, qd1, qdd1, a1, lam1), info.iterations, info.jacobian_evaluations

    def _step_residual(self, q0, v0, w0, gp, bp, t) -> AffineStep | None:
        """The compiled residual of the step (:class:`~.affine_step.AffineStep`, one per
        active set of the DAE) bound to ``q0, v0, w0, gp, bp, t``, or None when the DAE's
        kernels do not cover it (no ``affine_plan``)."""
        plan = self.dae.affine_plan()
        if plan is None:
            return None
        c = self._affine_step
        if c is None or c[0] is not plan:
            c = self._affine_step = (plan, AffineStep(self.dae, plan))
        return c[1].set(q0, v0, w0, gp, bp, t)

    def _compiled_steps(self) -> CompiledSteps | None:
        """The compiled loop of steps, when the last step ran wholly in C (compiled
        residual, test and dense Jacobian) on a system without drive rows."""
        c = self._affine_step
        if c is None or not self._affine:
            return None
        plan, f_step = c
        if not (f_step.native and f_step.time_free and self._newton.native_dense
                and self._newton.increment_test) or self.dae.affine_plan() is not plan:
            return None
        if self._loop is None or self._loop_step is not f_step:
            self._loop = CompiledSteps(self.params, self.jacobian_reuse, self._newton,
                                       f_step)
            self._loop_step = f_step
        return self._loop

    def error_norm(self, s0: State, s1: State, h: float, rtol: float, atol: float) -> float:
        """RMS of ``e_i / (atol + rtol max(|q_n,i|, |q_{n+1},i|))`` (see module doc)."""
        e = self.params.error_constant * h * h * (s1.a - s0.a)
        w = atol + rtol * np.maximum(np.abs(s0.q), np.abs(s1.q))
        return float(np.sqrt(np.mean((e / w) ** 2))) if e.size else 0.0

    def _output_qd(self, s: State) -> np.ndarray:
        """The velocities recorded at ``s``: projected onto the velocity constraints
        (once per state: the run's last output is also its final state)."""
        if self.project_velocity and self._m:
            last = self._projected
            if last is not None and last[0] is s:
                return last[1]
            qd = project_velocities(self.dae, s.q, s.qd, s.t)
            self._projected = (s, qd)
            return qd
        return s.qd

    # --- the time loop ---------------------------------------------------------------
    def run(self, q0: np.ndarray, qd0: np.ndarray, qdd0: np.ndarray, lam0: np.ndarray,
            t0: float, t_end: float, *, h: float, adaptive: bool = DEFAULTS.adaptive,
            rtol: float = DEFAULTS.rtol, atol: float = DEFAULTS.atol,
            output_times: Sequence[float] | None = None,
            callback: Callback | None = None, store: bool = True, h_min: float | None = None,
            h_max: float | None = None, max_cuts: int = 8,
            callback_at_outputs: bool = False,
            step_callback: Callable[[float, Stats], bool] | None = None,
            progress_callback: Callable[[float, Stats], bool] | None = None,
            a0: np.ndarray | None = None, scales_from: State | None = None,
            resume: Checkpoint | None = None, event_tol: float = EVENT_TOL) -> Trajectory:
        """Integrate from consistent ``(q0, qd0, qdd0, lam0)`` at ``t0`` to ``t_end``.

        Fixed steps ``h`` (cut in halves on Newton failure, up to ``max_cuts`` times), or
        with ``adaptive`` the initial step ``h`` controlled by the local error estimate
        (``err <= 1`` with weights ``atol + rtol |q|``).  Steps land on ``output_times``
        and on the ticks of a :class:`~.protocol.Sampled` system (``sample_times``), where
        its ``sample`` sets the held coordinates (at ``t0`` too, unless resumed).
        ``callback(t, q, qd, qdd, lam, stats)`` is called at ``t0`` and after every
        accepted step (with ``callback_at_outputs`` only at ``t0`` and the output times);
        a true return value stops the integration.  ``step_callback(t, stats)`` is called
        after every accepted step (no state, so no velocity projection: cheap, e.g. for
        progress); a true return value stops too.  ``progress_callback(t, stats)`` is
        called at a wall-time cadence instead (:class:`Cadence`): after the step that ends
        :data:`PROGRESS_SECONDS` or more after its previous call (the compiled loop's calls
        sized to end then), and once after the last step; a true return value stops the
        run there.  With ``store`` the states at
        ``output_times`` (or at every step if ``None``) are returned.  ``a0``: the
        auxiliary acceleration at ``t0`` (default ``qdd0``), to continue a run from a saved
        :class:`State`; ``scales_from``: the state the Newton test's scales are taken from
        (default the start; a continued run passes its first run's start, so that it
        repeats its steps); ``resume``: the :meth:`checkpoint` taken with that state, which
        makes the run repeat the first one's steps to the last bit (used when it
        :meth:`Checkpoint.fits` ``h`` and ``adaptive``, before the first step).
        :attr:`last_state` is the state of the last accepted step.  For a system with
        contact gaps (:class:`~.protocol.Events`) the steps land on their zeros to
        ``event_tol`` [s] (:mod:`flexmbs.integrate.events`; fixed steps then continue on
        a grid ``h`` from the event); :attr:`impacts` lists the impacts of the run.
        """
        if not h > 0.0 or not t_end > t0:
            raise ValueError(f"generalized-alpha: need h > 0 and t_end > t0, got h = {h}, "
                             f"t0 = {t0}, t_end = {t_end}")
        c = _Counters()
        self._in_step = True
        q0 = np.asarray(q0, dtype=float)
        s = State(float(t0), q0.copy(), np.asarray(qd0, float).copy(),
                  np.asarray(qdd0, float).copy(),
                  np.asarray(qdd0 if a0 is None else a0, float).copy(),
                  np.asarray(lam0, float).copy())
        rec = Recorder(self._n, self._m) if store else None
        outs = np.array(sorted(set(float(x) for x in output_times)), dtype=float) \
            if output_times is not None else None
        eps = 1e-9 * h
        targets = [t_end] if outs is None else _merged(
            [*(x for x in outs if t0 + eps < x < t_end - eps), t_end], eps)
        tick_times = self.dae.sample_times(t0, t_end) if isinstance(self.dae, Sampled) \
            else np.zeros(0)
        if tick_times.size:     # land on the ticks of sampled elements like on outputs
            targets = _merged([*targets, *(x for x in tick_times if t0 + eps < x < t_end - eps)],
                              eps)
        h_min = h * 2.0 ** -max_cuts if h_min is None else h_min
        h_max = (t_end - t0) if h_max is None else h_max
        self._set_newton_scales(s if scales_from is None else scales_from)
        self.last_state = s
        h_cur, t_grid, k_grid, started = h, t0, 1, False
        if resume is not None and resume.fits(h, adaptive):
            h_cur, t_grid, k_grid, started = resume.h_cur, resume.t_grid, resume.k_grid, True
            self._h_jac = resume.h_jac
            if resume.newton is not None:
                self._newton.restore(resume.newton)
        grid = self._grid
        grid[:] = [t_grid, k_grid, h_cur, h, adaptive]

        out_list = [] if outs is None else outs.tolist()
        next_out = [0]      # index of the first output time not yet passed (times increase)

        def at_output_time(t: float) -> bool:
            k = next_out[0]
            while k < len(out_list) and out_list[k] < t - eps:
                k += 1
            next_out[0] = k
            return k < len(out_list) and abs(out_list[k] - t) <= eps

        def emit(st: State) -> bool:
            at_output = outs is None or at_output_time(st.t)
            record = rec is not None and at_output
            call = callback is not None and (not callback_at_outputs or at_output
                                             or st.t == t0)
            if not (record or call):
                return False
            qd = self._output_qd(st)    # the projection costs a solve: only when used
            if record:
                rec(st.t, st.q, qd, st.qdd, st.lam)
            if call:
                return bool(callback(st.t, st.q.copy(), qd.copy(), st.qdd.copy(),
                                     st.lam.copy(), c.stats()))
            return False

        def emit_rows(ts: np.ndarray, states: np.ndarray) -> None:
            # the rows of a block when nothing is called back: recorded at once, as
            # emit would one by one (every row is at an output time: a target before the
            # call's last, and the compiled loop runs without ticks)
            n = self._n
            qd = states[:, n:2 * n]
            if self.project_velocity and self._m:
                qd = np.empty((len(ts), n))
                for k in range(len(ts)):
                    qd[k] = project_velocities(self.dae, states[k, :n], states[k, n:2 * n],
                                               float(ts[k]))
            rec.extend(ts, states[:, :n], qd, states[:, 2 * n:3 * n], states[:, 4 * n:])

        # a callback that records a block of outputs at once and never stops the run at
        # one (it may raise): ``record_block(t, q, qdd, lam, counters, row)``
        record_block = getattr(callback, "record_block", None) \
            if callback_at_outputs and outs is not None and rec is None else None

        def at_tick(t: float) -> bool:
            k = int(np.searchsorted(tick_times, t - eps))
            return k < tick_times.size and abs(tick_times[k] - t) <= eps

        i_target, cuts = 0, 0
        if tick_times.size and not started and at_tick(s.t):
            s = self.last_state = self._sampled(s, t0)
        events = ContactEvents(self.dae, event_tol) if (
            isinstance(self.dae, Events) and len(self.dae.event_labels)) else None
        self.impacts = [] if events is None else events.impacts
        if events is not None:
            events.start(s)

        def trial(st: State, hh: float) -> State:       # a step of the event location
            s_trial, its, jacs = self.step(st, hh)
            c.newton += its
            c.solves += its
            c.jac += jacs
            return s_trial
        stop = emit(s)
        # floating-point errors ignored in the time loop, as in every Newton solve (set
        # once here: np.errstate per solve costs several µs)
        with np.errstate(all="ignore"):
            # the compiled loop: fixed steps, no events or ticks; it returns at the targets
            # (output times), after every step if each is recorded or called back (also
            # step_callback: progress after every step), or before a step it cannot take
            fast = self._use_loop and not adaptive and events is None and not tick_times.size
            every = (outs is None and rec is not None) or step_callback is not None or (
                callback is not None and not callback_at_outputs)
            chunk = 1 if every else 1 << 40
            cadence = None if progress_callback is None else \
                Cadence(progress_callback, PROGRESS_SECONDS)
            targets_arr = np.array(targets, dtype=float)
            prepared = False
            while not stop and i_target < len(targets):
                loop = self._compiled_steps() if fast and not cuts else None
                if loop is None and fast and not cuts and not prepared:
                    # the loop takes the first step too (a run and its continuation from
                    # a checkpoint then take every step the same way, to the last bit)
                    prepared = True
                    self.step(s, _step_towards(targets[i_target] - s.t, h_cur, h_min),
                              prepare=True)
                    loop = self._compiled_steps()
                if loop is not None:
                    # through several output times in one call unless it returns after
                    # every step anyway; their states are handed to emit afterwards
                    r = loop.advance(s.t, s.q, s.qd, s.qdd, s.a, s.lam,
                                     target=targets[i_target] if every else
                                     targets_arr[i_target:i_target + BLOCK_OUTPUTS + 1],
                                     t_grid=t_grid, k_grid=k_grid,
                                     h_cur=h_cur, h=h, h_min=h_min, eps=eps, h_jac=self._h_jac,
                                     max_steps=chunk if cadence is None or every else
                                     cadence.steps(loop.block_steps))
                    base, after = (c.steps, c.newton, c.solves, c.jac, c.h_min), r.steps
                    if r.block is not None:
                        # (a call of the cadence's steps may end on an output: the
                        # solver is at its state, which then has a checkpoint)
                        at_end = r.code == steps_kernel.CHUNK and \
                            r.steps == int(r.block.info[-1, steps_kernel.O_STEPS])
                        stop = self._emit_block(r.block, base, c, emit, at_end,
                                                emit_rows if callback is None and
                                                rec is not None and outs is not None
                                                else None, record_block)
                        i_target += len(r.block)
                        s = self.last_state
                        # (steps after the last output passed: none when the next is redone)
                        after = r.steps - int(r.block.info[-1, steps_kernel.O_STEPS])
                        k_grid, h_cur, self._h_jac = r.k_grid, r.h_cur, r.h_jac
                        grid[1], grid[2] = k_grid, h_cur
                        if stop:
                            continue
                    if after:
                        c.steps = base[0] + r.steps
                        c.newton, c.solves = base[1] + r.newton, base[2] + r.newton
                        c.jac = base[3] + r.jacobians
                        c.h_min = min(base[4], r.h_min)
                        s = self.last_state = State(r.t, *r.state)
                        k_grid, h_cur, self._h_jac = r.k_grid, r.h_cur, r.h_jac
                        i_target += r.code == steps_kernel.TARGET
                        grid[1], grid[2] = k_grid, h_cur
                        stop = emit(s)
                        if step_callback is not None and not stop:
                            stop = bool(step_callback(s.t, c.stats()))
                    if cadence is not None and r.steps and not stop:
                        # (a call sized to the cadence ends with its call: CHUNK)
                        stop = cadence(s.t, c.stats(), last=i_target >= len(targets),
                                       due=r.code == steps_kernel.CHUNK)
                    if r.code != steps_kernel.REDO or stop:
                        continue            # (else the SNES path redoes the step)
                goal = targets[i_target]
                if not adaptive:
                    goal = min(goal, t_grid + k_grid * h)
                h_try = _step_towards(goal - s.t, h_cur, h_min)
                try:
                    s1, its, jacs = self.step(s, h_try)
                    c.newton += its
                    c.solves += its
                    c.jac += jacs
                    h_step = h_try
                    if events is not None:
                        s1, h_step = events.locate(trial, s, s1, h_try)
                except NewtonFailure as f:
                    c.newton += f.iterations
                    c.solves += f.iterations
                    c.rejected += 1
                    cuts += 1
                    log.debug("step %d at t = %g, h = %g failed: %s", c.steps + 1, s.t, h_try, f)
                    if cuts > max_cuts or h_try * 0.5 < h_min * (1.0 - 1e-12):
                        raise ConvergenceError(
                            f"generalized-alpha: Newton did not converge ({f.reason}, "
                            f"residual norm {f.residual:.3e} after {f.iterations} iterations)"
                            f" after halving the step down to h = {h_try:.3e} s; "
                            f"{self._diagnose(f)}",
                            t=s.t + h_try, step=c.steps + 1) from None
                    c.cuts += 1
                    h_cur = 0.5 * h_try
                    continue
                if adaptive:
                    err = self.error_norm(s, s1, h_step, rtol, atol)
                    fac = 0.9 * err ** (-1.0 / 3.0) if err > 0 else 5.0
                    if err > 1.0 and h_try > h_min:
                        c.rejected += 1
                        h_cur = max(h_min, h_try * min(0.9, max(0.2, fac)))
                        continue
                    h_new = h_try * min(2.0 if c.steps or started else 5.0, max(0.2, fac))
                    h_cur = min(h_max, max(h_min, h_new if h_try >= h_cur * (1 - 1e-12)
                                           else max(h_new, h_cur if fac >= 1.0 else h_new)))
                else:
                    h_cur = min(h, 2.0 * h_try) if h_try < h * (1 - 1e-12) else h
                cuts = 0
                c.steps += 1
                c.h_min = min(c.h_min, h_step)
                s = self.last_state = s1
                if events is not None:
                    s = self.last_state = events.accept(s)
                    if h_step < h_try and not adaptive:     # landed on an event
                        t_grid, k_grid, grid[0] = s.t, 1, s.t
                if abs(s.t - goal) <= eps:
                    s = State(goal, s.q, s.qd, s.qdd, s.a, s.lam)
                    if not adaptive and abs(goal - (t_grid + k_grid * h)) <= eps:
                        k_grid += 1
                    if abs(goal - targets[i_target]) <= eps:
                        i_target += 1
                    if tick_times.size and at_tick(goal):
                        s = self.last_state = self._sampled(s, t0)
                grid[1], grid[2] = k_grid, h_cur
                stop = emit(s)
                if step_callback is not None and not stop:
                    stop = bool(step_callback(s.t, c.stats()))
                if cadence is not None and not stop:
                    stop = cadence(s.t, c.stats(), last=i_target >= len(targets))
        stats = c.stats()
        self.final_state = s
        if rec is None:  # only the final state
            rec = Recorder(self._n, self._m)
            rec(s.t, s.q, self._output_qd(s), s.qdd, s.lam)
        return rec.trajectory(stats)

    def _emit_block(self, block, base: tuple, c: _Counters, emit: Callable,
                    at_end: bool = False, emit_rows: Callable | None = None,
                    record_block: Callable | None = None) -> bool:
        """``emit`` the states of the output times a call of the compiled loop passed
        (:class:`~.compiled_steps.Block`), each as if the loop had returned there: the
        state, the grid and the counters of that time (``base``: the counters ``steps,
        newton, solves, jac, h_min`` before the call); whether one of them stopped the run.
        ``at_end``: the call ended at the last one (the Newton solver is there: it has a
        :meth:`checkpoint`).  ``emit_rows(t, states)``: instead, all rows at once (nothing
        can stop the run; the counters, grid and state those of the last row).
        ``record_block(t, q, qdd, lam, counters, row)``: the callback's block entry
        instead of ``emit`` row by row: the block's times ``t`` (k,), ``q``, ``qdd``
        (k, n), ``lam`` (k, m) and ``counters`` ``{newton_iterations,
        jacobian_evaluations: (k,)}`` at once; ``row(i)`` puts the integrator at row
        ``i`` (state, grid, counters, checkpoint as ``emit`` would have them) and returns
        its projected velocities (``row(i, False)``: None, no projection), so the rows
        are recorded in order and one that raises leaves the integrator there.  Its true return value stops the run after the
        block (the state of its last row)."""
        K = steps_kernel
        if record_block is not None and emit_rows is None:
            return self._record_block(block, base, c, at_end, record_block)
        if emit_rows is not None:
            emit_rows(block.info[:, K.O_T], block.states)
            block = type(block)(block.states[-1:], block.info[-1:])
            emit = _no_emit
        self._in_step = False       # (the Newton solver is at the call's end already)
        last = len(block) - 1
        for k in range(len(block)):
            st = self._at_row(block.info[k], block.states[k], base, c, at_end and k == last)
            if emit(st):
                return True         # (stopped there: no checkpoint goes with it)
        self._in_step = True
        return False

    def _at_row(self, b: np.ndarray, x: np.ndarray, base: tuple, c: _Counters,
                end: bool) -> State:
        """The integrator at a row of a compiled call's block (its info ``b`` and state
        ``x``): the counters ``base`` plus the row's, the state, the grid; ``end``: the
        call's last step, where the Newton solver is (its ``h_jac`` and a checkpoint go
        with it), else no checkpoint."""
        K, n, grid = steps_kernel, self._n, self._grid
        self._in_step = False
        c.steps = base[0] + int(b[K.O_STEPS])
        c.newton = base[1] + int(b[K.O_NEWTON])
        c.solves = base[2] + int(b[K.O_NEWTON])
        c.jac = base[3] + int(b[K.O_JAC])
        c.h_min = min(base[4], float(b[K.O_HMIN]))
        st = self.last_state = State(float(b[K.O_T]), x[:n], x[n:2 * n], x[2 * n:3 * n],
                                     x[3 * n:4 * n], x[4 * n:])
        grid[1], grid[2] = int(b[K.O_KGRID]), float(b[K.O_HCUR])
        if end:
            hj = float(b[K.O_HJAC])
            self._h_jac = None if np.isnan(hj) else hj
            self._in_step = True
        return st

    def _record_block(self, block, base: tuple, c: _Counters, at_end: bool,
                      record_block: Callable) -> bool:
        """:meth:`_emit_block` through the callback's ``record_block`` (its docstring)."""
        K, n = steps_kernel, self._n
        states, info = block.states.copy(), block.info    # (the loop's buffers are reused)
        last = len(info) - 1
        self._in_step = False       # (the Newton solver is at the call's end already)

        done = [-1]

        def at(k: int) -> State:
            done[0] = k
            return self._at_row(info[k], states[k], base, c, at_end and k == last)

        def row(k: int, project: bool = True) -> np.ndarray | None:
            st = at(k)
            return self._output_qd(st) if project else None

        counters = {"newton_iterations": base[1] + info[:, K.O_NEWTON].astype(np.int64),
                    "jacobian_evaluations": base[3] + info[:, K.O_JAC].astype(np.int64)}
        stop = bool(record_block(info[:, K.O_T], states[:, :n], states[:, 2 * n:3 * n],
                                 states[:, 4 * n:], counters, row))
        if done[0] != last:
            at(last)        # (the integrator at the block's end, where the run goes on or stops)
        self._in_step = True
        return stop

    def _sampled(self, s: State, t0: float) -> State:
        """The state after the tick ``s.t``: the sampled coordinates set by the system's
        ``sample``, then restarted from consistent accelerations (the held forces jump:
        ``a = qdd`` keeps the steps after the tick second-order)."""
        q = self.dae.sample(s.q, s.qd, s.t, t0)
        if np.array_equal(q, s.q):
            return s
        z = self.dae.state_indices if isinstance(self.dae, FirstOrderStates) else ()
        qdd, lam = accelerations(self.dae, q, s.qd, s.t, first_order=z)
        return State(s.t, q, s.qd.copy(), qdd, qdd.copy(), lam)

    # --- the Newton test's scales and failure report -----------------------------------
    def _set_newton_scales(self, s: State) -> None:
        """The model's magnitudes for the Newton increment test (:mod:`._newton`):

            s_q = max(1, max|q_0|),   s_lam = m_s s_q,
            F_floor = 64 eps m_s s_q sqrt(N) min(1, kappa FLOOR / (64 eps))

        (``q_0`` without the internal states of force elements, which are no lengths)

        with ``m_s = max_i |M_ii(q_0)|``: the scaled multipliers ``lam / beta'`` and the
        equilibrium rows ``r / beta'`` are (mass x length); a block whose values are all 0
        (an unloaded joint) is at round-off once its increment is ``64 eps s_b``, and a
        residual norm below ``F_floor`` is round-off of the model's own terms (lowered
        with a ``kappa = newton_rtol`` whose smallest threshold ``kappa FLOOR s_q`` is
        below that round-off, docs/solver.md; 0 at ``rho_inf = 1``)."""
        if not self._newton.increment_test:
            return
        q = s.q
        if isinstance(self.dae, FirstOrderStates) and len(self.dae.state_indices):
            q = np.delete(q, self.dae.state_indices)    # lengths only (states: Pa, N, ...)
        s_q = max(1.0, float(np.max(np.abs(q), initial=0.0)))
        try:
            M = tangent_mass(self.dae, s.q, s.qd, s.qdd, s.lam, s.t)
            m_s = float(np.max(np.abs(M.diagonal() if sp.issparse(M) else
                                      np.diagonal(np.asarray(M))), initial=0.0))
        except (AttributeError, NotImplementedError):
            m_s = 0.0
        if not (np.isfinite(m_s) and m_s > 0.0):
            m_s = 1.0
        N = self._n + self._m
        self._newton.set_scales((s_q, m_s * s_q), self._f_floor_factor * m_s * s_q
                                * np.sqrt(N))

    def _diagnose(self, f: NewtonFailure) -> str:
        """One sentence on a failed Newton solve: the blocks whose last increment missed
        its threshold, the largest residual rows (named when the DAE labels them), and
        what to try."""
        parts = []
        names = ("coordinates q", "scaled multipliers lam/beta'")
        for name, (d, _, tol) in zip(names, self._newton.last_blocks()):
            if not d <= tol:
                parts.append(f"{name}: last increment {d:.2e} > {tol:.2e} needed")
        growth = self._newton.last_growth()
        if growth > GROWTH:
            parts.append(f"the residual grew to {growth:.1e} times the step's start "
                         f"(above {GROWTH:.0e} the increment test accepts no iterate: "
                         f"Newton went far away and came back too slowly)")
        r = self._newton.residual
        named = isinstance(self.dae, Labelled)
        labels = list((named and self.dae.coordinate_labels) or
                      [f"q[{i}]" for i in range(self._n)])
        labels += list((named and self.dae.active_row_labels) or
                       [f"g[{i}]" for i in range(self._m - self._n_mu)])
        labels += list(getattr(self.dae, "velocity_row_labels", ()))
        if r.size == len(labels):
            worst = np.argsort(-np.nan_to_num(np.abs(r), nan=np.inf))[:3]
            parts.append("largest residual rows: " + ", ".join(
                f"{labels[i]} = {r[i]:.2e}" for i in worst if r[i] != 0.0))
        what = "; ".join(p for p in parts if p) or "no block named"
        damped = ("" if self.rho_inf <= 0.9 or not self._m else
                  f", rho_inf = 0.9 instead of {self.rho_inf:g}")
        return (f"{what}. Try a smaller dt{damped}, check the model for a singular or "
                f"locked configuration ('flexmbs check'), or -fmbs_snes_monitor to watch "
                f"the iterations")

    def destroy(self) -> None:
        self._newton.destroy()


def _merged(times, eps: float) -> list:
    """The times sorted, each within ``eps`` of the one before dropped: two output times
    closer than the time tolerance are one output (a step of 1e-13 s between them would
    put ``1 / (beta h^2)`` near 1e26 into the Newton matrix), and the last time (``t_end``,
    at least ``eps`` after the others) is kept."""
    out: list = []
    for x in sorted(times):
        if out and x - out[-1] <= eps:
            continue
        out.append(x)
    return out


def _no_emit(st: State) -> bool:
    return False


def _step_towards(rem: float, h_cur: float, h_floor: float) -> float:
    """The next step towards a point ``rem`` ahead with the step size ``h_cur``: never a
    remainder below ``h_floor`` -- a step that would leave one is stretched to land
    (when it grows by at most 1/8, or the remainder is below ``2 h_floor``), or the
    distance is split into two equal steps."""
    if rem <= h_cur:
        return rem
    left = rem - h_cur
    if left >= h_floor:
        return h_cur
    if rem <= 1.125 * h_cur or rem <= 2.0 * h_floor:
        return rem
    return 0.5 * rem
