"""A Newton solver on PETSc SNES for ``F(x) = 0`` with a sparse (saddle-point) Jacobian.

Private to ``flexmbs.integrate``: :mod:`genalpha` and :mod:`static` both use it.  The
Jacobian is an AIJ matrix filled from scipy CSR, or for at most :data:`DENSE_MAX`
unknowns (and the default linear solver) a dense matrix factored by LAPACK; the linear
solver comes from the options database (default: direct LU, see :mod:`options`).  A
Jacobian callback may instead return a factored matrix (an object with ``solve``, from a
:class:`~.protocol.FactoredNewton` system): PETSc then sees a shell matrix and applies
the factor as its preconditioner with KSP ``preonly`` (:mod:`._shell`).
Jacobian reuse is decided here, not by ``-snes_lag_jacobian``: the Jacobian callback
leaves the matrix (and hence PETSc's factorisation) untouched unless it is stale, and
rebuilds it when the residual contraction ``|F_k| / |F_{k-1}|`` is worse than ``theta``.

Callbacks.  The residual, the Jacobian and the convergence test are Python methods
(:meth:`NewtonSolver._function`, ``_jacobian``, ``_converged``: the reference forms), or
compiled C functions that PETSc calls directly: the residual when ``F`` offers one
(a :class:`~.protocol.NativeResidual` with ``F.native``, e.g.
:class:`flexmbs.integrate.affine_step.AffineStep`), the increment test
(:func:`.increments_kernel.increment_test_c`, with ``native_test``) and, for dense matrices
with both of those, the Jacobian (:func:`.jacobian_kernel.dense_jacobian_c`, for a
:class:`~.protocol.NativeNewton`).  Then no Python runs inside a Newton iteration.  The
compiled forms are used only when :func:`flexmbs.compiled.use_compiled` is true
(``FLEXMBS_KERNELS=reference`` runs the Python forms).

Convergence test.  By default SNES's own (``snes_rtol``, ``snes_stol``, ...).  With
``increment_rtol = kappa`` (used by :mod:`genalpha`) a scale-aware increment test replaces
it: the unknowns are split into blocks (e.g. ``q`` and the scaled multipliers), and the
iteration stops when in every block ``b`` the estimated remaining error

    err_k,b = rho_k / (1 - rho_k) * max|dx_k,b|,    rho_k = |F_k| / |F_{k-1}| < 1

(the contraction of the simplified Newton iteration, Hairer & Wanner IV.8) is at most
``kappa * max(max|dx_1,b|, 1e-8 s_b)`` -- a fraction ``kappa`` of the first correction,
which in a time step is the predictor error, itself of the order of the local
discretisation error -- or the block is at round-off, ``max|dx_k,b| <= 64 eps
max(max|x_b|, s_b)``.  ``s_b`` is the block's scale set by the model
(:meth:`NewtonSolver.set_scales`; e.g. a length for ``q``, mass x length for the scaled
multipliers): without it a block whose values and first increment are 0 or round-off
(the multipliers of an unloaded joint, a body in uniform rotation that the predictor
hits exactly) could never pass.  The last ``n_algebraic`` rows of ``F`` (the position
constraints ``g(q) = 0``, which no discretisation error excuses) must in addition
satisfy ``|F_i| <= algebraic_tol * max(1, max|x_1|)`` with ``x_1`` the first block.
The increment criterion may not accept an iterate whose residual grew:
``|F_k| <= 1e3 max(|F_0|, F_grow)`` (:data:`.increments_kernel.GROWTH`, ``|F_0|`` the
residual at the start of the solve, ``F_grow = max(F_floor, 64 eps max_b s_b sqrt(n))``
the round-off level of the residual's terms, which holds also where ``F_floor`` is 0 at
``rho_inf = 1``: a start at ``|F_0| = 1e-30`` may end at round-off ``1e-15``) is
required too, else the solve goes on (and fails at ``snes_max_it``): an iteration that first raised the residual by orders of magnitude
and then contracted slowly measures its increments against that huge first increment.
The round-off route obeys the same bound: increments at round-off with a grown residual
are a stall far from the solution (a Newton matrix that is orders too stiff), not
convergence.
``|F_k| = 0``, or ``|F_k| <= F_floor`` (the residual at round-off of the model's own
terms, :meth:`NewtonSolver.set_scales`) with the algebraic rows satisfied, also count as
converged; ``snes_max_it`` and non-finite residuals end the iteration as before.  After a
failure :meth:`NewtonSolver.last_blocks` tells which block missed its threshold.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from petsc4py import PETSc

from flexmbs import petsc_c
from flexmbs.compiled import Table, use_compiled

from .settings import DEFAULTS
from .increments_kernel import GROWTH, N_TEST_TABLE, block_maxima, increment_test_c
from .jacobian_kernel import N_JAC_TABLE, dense_jacobian_c
from ._petsc import (CSR, DenseFill, FixedPatternFill, aij_from_csr, csr_of_dense, csr_parts,
                     reason_name)
from .options import NEWTON_DEFAULTS, OptionsManager, default_direct_lu
from .protocol import NativeNewton, NativeResidual
from ._shell import ShellFill, is_factor

log = logging.getLogger(__name__)



#: Newton matrices up to this size are stored dense and factored by LAPACK (partial
#: pivoting) when the linear solver is left at its default: at these sizes that is
#: faster than a sparse LU (``benchmarks/step_cost.py``, docs/performance.md round 4).
#: ``-<prefix>newton_mat_type aij|dense`` chooses explicitly.
DENSE_MAX = 64
#: ... and up to this size when the compiled loop of steps (:mod:`.steps_kernel`) takes
#: them (:attr:`NewtonSolver.dense_max`, set by :mod:`genalpha`): it fills and factors the
#: dense matrix itself (no Python per iteration), where PETSc's dense LU goes to the
#: multi-threaded BLAS, several times slower than a sparse LU above ~100 unknowns on a busy
#: machine.  Chain of 4-6 flexible links (84-126 unknowns): 0.07-0.10 against 0.13 ms per
#: body and step sparse; 8 links (168): dense 15 % slower than sparse.
LOOP_DENSE_MAX = 128

_EPS64 = 64.0 * np.finfo(float).eps
_IGNORE_ALL = {"divide": "ignore", "over": "ignore", "under": "ignore", "invalid": "ignore"}
_errobj = getattr(np.core.umath, "geterrobj", None) if hasattr(np, "core") else None


def _ignoring_fp_errors() -> bool:
    """Whether numpy ignores every floating-point error now (``np.geterr()`` builds a
    dict, several µs; numpy 1.x's error object holds the mask, 0 = all ignored)."""
    if _errobj is not None:
        return _errobj()[1] == 0
    return np.geterr() == _IGNORE_ALL


def petsc_error_text(err: Exception) -> str:
    """PETSc's multi-line error (a stack of ``[0] Function() at file:line`` frames and
    messages) as one line: the messages only, a zero pivot named as a singular matrix."""
    lines = [ln.strip() for ln in str(err).splitlines()]
    msgs = [ln.removeprefix("[0]").strip() for ln in lines
            if ln and "() at " not in ln and not ln.endswith("()")]
    text = "; ".join(m for m in msgs if m)
    if "Zero pivot" in text:
        return f"the Newton matrix is singular (zero pivot in its LU factorisation); {text}"
    return text or type(err).__name__


class NewtonFailure(Exception):
    """A Newton solve that did not converge (converted to ``ConvergenceError`` by callers)."""

    def __init__(self, reason: str, iterations: int, residual: float):
        self.reason, self.iterations, self.residual = reason, iterations, residual
        super().__init__(f"{reason}: residual {residual:.3e} after {iterations} iterations")


@dataclasses.dataclass
class NewtonInfo:
    iterations: int = 0
    jacobian_evaluations: int = 0
    residual: float = 0.0
    reason: str = ""


class NewtonState(NamedTuple):
    """:meth:`NewtonSolver.state`: the Newton matrix, ``(W,)`` dense row-major or
    ``(indptr, indices, values)`` CSR, whether it is stale, and the start-of-solve
    policy's counters (``policy``: the policy still on)."""

    A: tuple
    stale: bool
    last_old: int | None
    n_new: float | None
    n_solves: int
    policy: bool


class _Reason:
    """The SNES reasons the convergence test returns, as plain ints (looked up once)."""
    _R = PETSc.SNES.ConvergedReason
    ITERATING = int(_R.ITERATING)
    CONVERGED_FNORM_ABS = int(_R.CONVERGED_FNORM_ABS)
    CONVERGED_SNORM_RELATIVE = int(_R.CONVERGED_SNORM_RELATIVE)
    DIVERGED_FNORM_NAN = int(_R.DIVERGED_FNORM_NAN)
    DIVERGED_MAX_IT = int(_R.DIVERGED_MAX_IT)


_SNES_REASONS = PETSc.SNES.ConvergedReason


class _Abort(Exception):
    pass


class NewtonSolver:
    """SNES on vectors of size ``n`` under options ``prefix``.

    ``solve(x0, F, J)`` with ``F(x) -> ndarray`` and ``J(x) -> csr`` numpy callbacks.
    """

    def __init__(self, n: int, *, prefix: str = DEFAULTS.options_prefix, petsc_options: Mapping | None = None,
                 comm=None, theta: float = 0.25, increment_rtol: float | None = None,
                 block_sizes: tuple[int, ...] | None = None, n_algebraic: int = 0,
                 algebraic_tol: float = 1e-12, jacobian_cost: float | None = None,
                 native_test: bool | None = None):
        comm = PETSc.COMM_SELF if comm is None else comm
        if comm.getSize() != 1:
            raise NotImplementedError(
                f"flexmbs.integrate: the Newton solver runs on one rank, got a communicator "
                f"of size {comm.getSize()}")
        self._comm, self._n, self._theta = comm, n, theta
        self._options = OptionsManager(prefix, {**default_direct_lu(), **NEWTON_DEFAULTS},
                                       petsc_options)
        # the SNES and its vectors are made when first needed (:meth:`_petsc_objects`): a
        # compiled loop of solves (:meth:`prepare`) uses none of them
        self._snes: PETSc.SNES | None = None
        self._x: PETSc.Vec | None = None
        self._f: PETSc.Vec | None = None
        self._J: PETSc.Mat | None = None
        self._F_cb: Callable | None = None
        self._inplace = False
        self._J_cb: Callable | None = None
        self._reuse = False
        self._stale = True
        self._fnorms: list[float] = []
        self._info = NewtonInfo()
        self._abort: str | None = None
        self._configured = False        # storage and test arrays decided (first solve)
        self._petsc_on = False          # ... and the SNES set up for them
        self._x0_first: np.ndarray | None = None     # the start point of prepare
        self._J_pending = False         # PETSc's matrix to be filled from _last_A
        #: the largest Newton matrix stored dense (:data:`DENSE_MAX`; read at the first
        #: solve or :meth:`prepare`)
        self.dense_max = DENSE_MAX
        # start-of-solve Jacobian policy (see ``solve``): iterations of the last solve that
        # started with the previous Jacobian, running mean of those started with a fresh one
        self._jac_cost = jacobian_cost
        self._last_old: int | None = None
        self._n_new: float | None = None
        self._n_solves = 0
        self._last_A = None         # the matrix last filled in (restored by the safeguard)
        self._restored: NewtonState | None = None   # to be put in place by the next solve
        self._n_runs = 0
        self._watch = self._watch_tripped = False
        self._native_test = False
        self._native_F = None           # the C residual installed in the SNES, if any
        self._native_J = None           # the C Jacobian installed, if any
        self._native_obj = None         # the residual object both were installed for
        self._F_seen = (None, False, None)  # (F, inplace, F if it is a native residual)
        self._j_tables: dict = {}
        self._kappa = increment_rtol
        if increment_rtol is not None:
            sizes = (n,) if not block_sizes else tuple(int(b) for b in block_sizes)
            if sum(sizes) != n:
                raise ValueError(f"NewtonSolver: block sizes {sizes} do not add up to {n}")
            bounds = np.cumsum((0,) + sizes)
            self._blocks = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
            self._kept = [i for i, k in enumerate(sizes) if k > 0]   # the non-empty blocks
            self._n_declared = len(sizes)
            self._d1 = np.ones(len(self._blocks))
            self._scales = np.ones(len(self._blocks))   # see set_scales
            self._f_floor = self._f_grow = 0.0
            self._alg0 = n - int(n_algebraic) if n_algebraic else -1
            self._bounds = np.array([0] + [b.stop for b in self._blocks], dtype=np.int64)
            self._alg_tol = float(algebraic_tol)
            self._max_it = 20
            # the test as PETSc's C convergence test (installed in _setup, when snes_max_it
            # is known), or its Python form (the reference; it also records the history)
            self._native_test = use_compiled() if native_test is None else bool(native_test)

    def _petsc_objects(self) -> None:
        """The SNES, its solution and residual vectors and Python callbacks (once)."""
        if self._snes is not None:
            return
        comm, n = self._comm, self._n
        self._snes = PETSc.SNES().create(comm)
        self._x = PETSc.Vec().createSeq(n, comm=comm)
        self._x_view = self._x.getArray(readonly=True)   # its memory, read-only view
        self._f = self._x.duplicate()
        self._snes.setFunction(self._function, self._f)
        if self._kappa is None:
            self._snes.setMonitor(self._monitor)
        elif not self._native_test:
            self._snes.setConvergenceTest(self._converged)

    def _petsc_ready(self) -> None:
        """The SNES set up as the first solve sets it up (after a :meth:`prepare` that
        left it out, for the handles below)."""
        if self._configured and not self._petsc_on:
            self._configure(self._x0_first, self._F_cb, self._J_cb, self._inplace)
        self._petsc_objects()

    # read-only handles, as in dolfinx
    @property
    def snes(self) -> PETSc.SNES:
        self._petsc_ready()
        return self._snes

    @property
    def J(self) -> PETSc.Mat | None:
        """PETSc's Newton matrix (None before the first solve or :meth:`prepare`)."""
        self._petsc_ready()
        return self._J

    @property
    def dense(self) -> bool:
        """Whether the Newton matrix is stored dense (known after the first solve); the
        Jacobian callback may then return a dense (N, N) array instead of CSR."""
        return isinstance(getattr(self, "_fill", None), DenseFill) or (
            self._configured and not self._petsc_on)      # prepared for a compiled loop

    def dense_for(self, N: int) -> bool:
        """Whether the Newton matrix of ``N`` unknowns is (or, before the first solve,
        will be) stored dense: the Jacobian callback may return a dense array then."""
        return self.dense if self._configured else self._dense(N)

    @property
    def x(self) -> PETSc.Vec:
        self._petsc_ready()
        return self._x

    @property
    def options(self) -> OptionsManager:
        return self._options

    def invalidate_jacobian(self) -> None:
        self._stale = True

    @property
    def increment_test(self) -> bool:
        """Whether the increment test of the module docstring decides convergence."""
        return self._kappa is not None

    def set_scales(self, block_scales, residual_floor: float) -> None:
        """The model's magnitudes for the increment test (module docstring): ``s_b`` of
        each block (a block is at round-off when ``max|dx_b| <= 64 eps max(max|x_b|,
        s_b)``, and its first increment counts as at least ``1e-8 s_b``), and the
        residual norm at or below which ``F`` is round-off of its own terms; the growth
        bound's floor ``F_grow = max(F_floor, 64 eps max_b s_b sqrt(n))``."""
        s = np.asarray(block_scales, dtype=float)
        if self._kappa is not None and s.size == self._n_declared:
            s = s[self._kept]              # (an empty block has no scale)
        if self._kappa is None or s.shape != self._scales.shape or not np.all(s > 0):
            raise ValueError(f"NewtonSolver.set_scales: expected one positive scale per "
                             f"block, got {s}")
        self._scales[:] = s            # in place: the C test's table holds this array
        self._f_floor = float(residual_floor)
        # the growth bound's own floor: round-off of the residual's terms (of the size of
        # the largest block scale), not F_floor, which may be 0 (rho_inf = 1)
        self._f_grow = max(self._f_floor, _EPS64 * float(np.max(s)) * math.sqrt(self._n))
        if hasattr(self, "_t_reals"):
            self._t_reals[3] = self._f_floor
            self._t_reals[4] = self._f_grow

    def last_blocks(self) -> list[tuple[float, float, float]]:
        """After a failed solve: per block ``(max|dx_b|, max|x_b|, threshold)`` of the last
        iteration, the threshold being what ``max|dx_b|`` had to reach (the round-off level
        or ``kappa max(d1_b, 1e-8 s_b) / eta``)."""
        if self._kappa is None:
            return []
        from .increments_kernel import FLOOR
        dx = self._snes.getSolutionUpdate().getArray(readonly=True)
        x = self._x.getArray(readonly=True)
        fn = self._t_fn[:int(self._t_ints[4])] if self._native_test else self._fnorms
        rho = fn[-1] / fn[-2] if len(fn) >= 2 and fn[-2] > 0 else 1.0
        eta = rho / (1.0 - rho) if rho < 1.0 else np.inf
        out = []
        for b, blk in enumerate(self._blocks):
            d = float(np.max(np.abs(dx[blk]), initial=0.0))
            xm = float(np.max(np.abs(x[blk]), initial=0.0))
            ro = _EPS64 * max(xm, self._scales[b])
            d1 = self._t_d1 if self._native_test else self._d1
            tol = self._kappa * max(d1[b], FLOOR * self._scales[b])
            out.append((d, xm, max(ro, tol / eta if eta > 0 else np.inf)))
        return out

    def last_growth(self) -> float:
        """``|F_k| / max(|F_0|, F_grow)`` of the last solve's last iterate (the quantity
        the increment criterion bounds by :data:`.increments_kernel.GROWTH`); NaN before
        a solve or without the increment test."""
        if self._kappa is None or (self._native_test and getattr(self, "_t_ints", None) is None):
            return math.nan
        fn = self._t_fn[:int(self._t_ints[4])] if self._native_test else self._fnorms
        if len(fn) < 1:
            return math.nan
        ref = max(float(fn[0]), self._f_grow)
        return float(fn[-1]) / ref if ref > 0.0 else math.inf

    @property
    def residual(self) -> np.ndarray:
        """The residual vector ``F`` of the last evaluation (a copy)."""
        self._petsc_objects()
        return self._f.getArray(readonly=True).copy()

    # --- PETSc callbacks -------------------------------------------------------------
    def _function(self, snes, x, f):
        try:  # floating-point errors are ignored (np.errstate) around the whole solve
            if self._inplace:     # F(x, out) writes into the vector's own array
                self._F_cb(x.getArray(), f.getArray())
                return
            fa = self._F_cb(x.getArray(readonly=True).copy())
        except ArithmeticError as exc:  # overflow, division by zero in a force law
            log.debug("residual evaluation failed: %s", exc)
            self._residual_error = str(exc)
            fa = np.full(self._n, np.nan)
        f.setArray(fa)

    def _converged(self, snes, its, norms):
        """The increment test of the module docstring (a SNES convergence test)."""
        R = _Reason
        fnorm = norms[2]
        self._monitor(snes, its, fnorm)      # the history (the test runs once per iteration)
        fn = self._fnorms
        if not math.isfinite(fnorm):
            return R.DIVERGED_FNORM_NAN
        if fnorm == 0.0:
            return R.CONVERGED_FNORM_ABS
        if its == 0:
            return R.ITERATING
        d, x0max, fmax, roundoff, ratio = block_maxima(
            snes.getSolutionUpdate().getArray(readonly=True),
            snes.getSolution().getArray(readonly=True), self._f.getArray(readonly=True),
            self._bounds, self._alg0, self._d1, self._scales, _EPS64)
        if its == 1:                          # the first increments: d_b / d1_b = 1
            self._d1 = d
            if ratio == ratio:
                ratio = 0.0 if roundoff else 1.0
        rho = fnorm / fn[-2] if len(fn) >= 2 and fn[-2] > 0.0 else 1.0
        if roundoff and fnorm <= GROWTH * max(fn[0], self._f_grow):
            # round-off level in every block, |F_k| <= GROWTH max(|F_0|, F_grow)
            return R.CONVERGED_SNORM_RELATIVE
        if self._alg0 >= 0 and fmax > self._alg_tol * max(1.0, x0max):
            return R.DIVERGED_MAX_IT if its >= self._max_it else R.ITERATING
        if fnorm <= self._f_floor:            # residual at round-off of the model's terms
            return R.CONVERGED_SNORM_RELATIVE
        if rho < 1.0 and fnorm <= GROWTH * max(fn[0], self._f_grow):
            eta = rho / (1.0 - rho)
            if eta * ratio <= self._kappa or (eta == 0.0 and ratio == ratio):
                # eta d_b <= kappa d1_b in every block b, |F_k| <= GROWTH max(|F_0|, F_grow)
                return R.CONVERGED_SNORM_RELATIVE
        if its >= self._max_it:
            return R.DIVERGED_MAX_IT
        return R.ITERATING

    def _monitor(self, snes, its, fnorm):
        """Residual-norm history; a fresh Jacobian that made the first iteration worse
        aborts the solve (the safeguard of :meth:`solve`)."""
        self._fnorms.append(float(fnorm))
        if self._watch and its == 1 and self._fnorms[1] > self._fnorms[0]:
            self._watch_tripped = True
            raise _Abort

    def _jacobian(self, snes, x, J, P):
        if self._native_test:
            fn, k = self._t_fn, int(self._t_ints[4])
        else:
            fn = self._fnorms
            k = len(fn)
        poor = k >= 2 and fn[k - 2] > 0 and fn[k - 1] > self._theta * fn[k - 2]
        if self._reuse and not self._stale and not poor:
            return  # matrix state unchanged: PETSc keeps the factorisation
        xa = x.getArray(readonly=True).copy()
        try:
            A = self._J_cb(xa)
        except ArithmeticError as exc:
            self._abort = f"Jacobian evaluation failed ({exc})"
            raise _Abort from exc
        if not is_factor(A):                    # (a factor checks its own entries)
            data = A if isinstance(A, np.ndarray) else csr_parts(A)[2]
            if not math.isfinite(float(data.sum())) and not np.all(np.isfinite(data)):
                self._abort = "non-finite entries in the Jacobian"
                raise _Abort
        self._fill(P, A)
        self._last_A = A
        if J != P:  # pragma: no cover - we always pass J == P
            J.assemble()
        self._stale = False
        self._info.jacobian_evaluations += 1

    def _dense(self, N: int) -> bool:
        """Whether the Newton matrix is stored dense (see :data:`DENSE_MAX`,
        :data:`LOOP_DENSE_MAX`)."""
        o = self._options
        kind = (o.value("newton_mat_type") or "auto").lower()
        if kind not in ("auto", "dense", "aij"):
            raise ValueError(f"PETSc option -{o.prefix}newton_mat_type: expected auto, dense "
                             f"or aij, got {kind!r}")
        if kind != "auto":
            return kind == "dense"
        return N <= self.dense_max and all(o.is_default(k) for k in (
            "ksp_type", "pc_type", "pc_factor_mat_solver_type"))

    def _setup(self, A0) -> None:
        if isinstance(A0, ShellFill):           # factored by the system (:mod:`._shell`)
            self._fill, self._J = A0, A0.create(self._comm)
            unused = [k for k in ("ksp_type", "pc_type", "pc_factor_mat_solver_type",
                                  "newton_mat_type") if not self._options.is_default(k)]
            if unused:
                log.warning("PETSc options %s not used: this system factors its Newton "
                            "matrix itself (articulated bodies, KSP preonly)",
                            ", ".join(f"-{self._options.prefix}{k}" for k in unused))
        elif self._dense(csr_parts(A0)[3][0]):
            self._fill = DenseFill(A0)
            self._J = self._fill.create(self._comm)
            self._options.set_default("pc_factor_mat_solver_type", "petsc")
            self._options.remove_default("pc_factor_nonzeros_along_diagonal")
        else:
            self._J = aij_from_csr(A0, self._comm)
            self._fill = FixedPatternFill(A0)
        self._snes.setJacobian(self._jacobian, self._J, self._J)
        self._options.set_from_options(self._snes)
        self._max_it = self._snes.getTolerances()[3]
        self._ksp = self._snes.getKSP()
        if isinstance(self._fill, ShellFill):
            self._fill.configure(self._ksp, owner=self)
        if self._native_test:
            self._install_test()
        self._configured = self._petsc_on = True

    def _setup_loop(self) -> None:
        """What :meth:`_setup` decides, without PETSc, for a compiled loop of solves
        (dense matrix, compiled residual, test and Jacobian): ``snes_max_it`` from the
        options, the test's arrays and the dense matrix buffer; the SNES is set up when a
        solve first needs it."""
        self._options.set_default("pc_factor_mat_solver_type", "petsc")
        self._options.remove_default("pc_factor_nonzeros_along_diagonal")
        self._max_it = self._options_max_it()
        self._test_arrays()
        self._j_W = np.zeros((self._n, self._n))
        self._configured = True

    def _options_max_it(self) -> int:
        """``snes_max_it`` as ``setFromOptions`` reads it: the global database's under
        the prefix, else this solver's (parsed by PETSc), else PETSc's default 50."""
        glob, name = PETSc.Options(), self._options.prefix + "snes_max_it"
        if glob.hasName(name):
            return glob.getInt(name)
        v = self._options.value("snes_max_it")
        if v is None:
            return 50
        glob.setValue(name, v)
        try:
            return glob.getInt(name)
        finally:
            glob.delValue(name)

    def _test_arrays(self) -> None:
        """The compiled increment test's arrays (made once; a compiled loop holds
        ``_t_reals``, whose residual floor :meth:`set_scales` updates in place)."""
        R = _Reason
        if getattr(self, "_t_ints", None) is None or self._t_ints[0] != self._max_it:
            self._t_ints = np.array([self._max_it, self._alg0, 0, 0, 0, R.ITERATING,
                                     R.CONVERGED_FNORM_ABS, R.CONVERGED_SNORM_RELATIVE,
                                     R.DIVERGED_FNORM_NAN, R.DIVERGED_MAX_IT], dtype=np.int64)
            self._t_fn = np.zeros(self._max_it + 2)
        if getattr(self, "_t_reals", None) is None:
            self._t_reals = np.array([self._kappa, self._alg_tol, _EPS64, self._f_floor,
                                      self._f_grow])
            self._t_d1 = np.ones(len(self._blocks))        # the first increments d1_b

    def _install_test(self) -> None:
        """The increment test as PETSc's C convergence test: its context table of
        :data:`~.increments_kernel.N_TEST_TABLE` rows (arrays kept here)."""
        tab = Table()
        for name in ("SNESGetSolutionUpdate", "SNESGetSolution", "VecGetArrayRead",
                     "VecRestoreArrayRead"):
            tab.add_value(petsc_c.address(name))
        tab.add(np.zeros(6, dtype=np.int64))
        tab.add_value(self._f.handle)
        self._test_arrays()
        for a in (self._t_ints, self._t_reals, self._t_fn, self._bounds.astype(np.int64),
                  self._t_d1, self._scales):
            tab.add(a)
        assert len(tab) == N_TEST_TABLE
        self._t_table = tab
        petsc_c.snes_set_convergence_test(self._snes, increment_test_c.address, tab.address)

    def _install_jacobian(self, native) -> None:
        """PETSc's Jacobian callback for this solve: the C one
        (:func:`~.jacobian_kernel.dense_jacobian_c`, filled by ``native.c_newton``) when
        the residual and the test are compiled and the matrix is dense, else
        :meth:`_jacobian`."""
        cj = None
        if (native is not None and self._native_test and self.dense
                and isinstance(native, NativeNewton)):
            fill = native.c_newton()
            c = self._j_tables.get(fill)
            if c is None:
                N = self._n
                tab = Table()
                for name in ("VecGetArrayRead", "VecRestoreArrayRead", "MatDenseGetArray",
                             "MatDenseRestoreArray"):
                    tab.add_value(petsc_c.address(name))
                tab.add(np.zeros(2, dtype=np.int64))
                tab.add_value(fill[0])
                tab.add_value(fill[1])
                ints, W = np.zeros(4, dtype=np.int64), np.zeros((N, N))
                for a in (ints, np.array([self._theta]), self._t_ints, self._t_fn, W):
                    tab.add(a)
                assert len(tab) == N_JAC_TABLE
                c = self._j_tables[fill] = (tab, ints, W)
            cj = (dense_jacobian_c.address, c[0].address)
            self._j_ints, self._j_W = c[1], c[2]
        if cj == self._native_J:
            return
        if cj is not None:
            petsc_c.snes_set_jacobian(self._snes, self._J, *cj)
        else:
            self._snes.setJacobian(self._jacobian, self._J, self._J)
        self._native_J = cj

    # --- solve -----------------------------------------------------------------------
    def prepare(self, x0: np.ndarray, F, J) -> None:
        """Set up for the in-place residual ``F`` and Jacobian ``J`` of :meth:`solve`
        without solving: the matrix storage (from ``J(x0)``'s pattern), PETSc's
        callbacks and a :meth:`restore`-d state, as the first solve would.  A compiled
        loop of solves (:mod:`.steps_kernel`) can then take the very first step, so that
        a run and its continuation from a checkpoint take every step the same way.
        When that loop can take the steps (compiled residual, test and dense Jacobian,
        :attr:`native_dense`) only what it reads is set up (``snes_max_it``, the test's
        arrays, the dense matrix buffer): PETSc's objects are made by the first solve
        that needs them (a step the loop hands back), or by :attr:`snes`."""
        self._configure(x0, F, J, True, loop=True)

    def _configure(self, x0, F, J, inplace: bool, loop: bool = False):
        """The set-up part of :meth:`solve` (with ``loop``, of :meth:`prepare`); returns
        the native residual (or None)."""
        self._F_cb, self._J_cb, self._inplace = F, J, inplace
        seen = self._F_seen
        if seen[0] is not F or seen[1] != inplace:   # (the same F every step: checked once)
            nat = inplace and isinstance(F, NativeResidual) and F.native
            seen = self._F_seen = (F, inplace, F if nat else None)
        native = seen[2]
        first = not self._configured
        if not self._petsc_on:
            if (loop and native is not None and self._native_test
                    and isinstance(native, NativeNewton)
                    and (self._configured or self._dense(self._n))):
                if first:                   # for the compiled loop only
                    self._x0_first = np.array(x0, dtype=float)
                    self._setup_loop()
                    self._stale = self._stale or self._restored is None
                    if self._restored is not None:
                        self._put_restored()
                return native
            self._petsc_objects()
        same = native is not None and native is self._native_obj   # callbacks in place
        if same:
            pass
        elif native is not None:
            fc = (native.c_function, native.c_context())
            if self._native_F != fc:
                petsc_c.snes_set_function(self._snes, self._f, *fc)
                self._native_F = fc
        elif self._native_F is not None:
            self._snes.setFunction(self._function, self._f)
            self._native_F = None
        if not self._petsc_on:
            with np.errstate(all="ignore"):
                A0 = J(np.asarray(x0, dtype=float))
            if is_factor(A0):
                A0 = ShellFill(self._n)
            elif isinstance(A0, np.ndarray):    # a dense Jacobian: its nonzeros as pattern
                A0 = csr_of_dense(A0)
            if not isinstance(A0, ShellFill):
                ip, ix, data, shape = csr_parts(A0)
                if not np.all(np.isfinite(data)):   # the pattern only; values come later
                    A0 = CSR(ip, ix, np.zeros_like(data), shape)
            self._setup(A0)
            if first:
                self._stale = self._stale or self._restored is None
        if not same:
            self._install_jacobian(native)
            self._native_obj = native
        if self._restored is not None:
            self._put_restored()
        elif not first and self._J_pending:     # the compiled loop's matrix, into PETSc's
            self._J_pending = False
            self._fill_last()
        return native

    def solve(self, x0: np.ndarray, F: Callable[[np.ndarray], np.ndarray],
              J: Callable[[np.ndarray], sp.spmatrix], *, reuse: bool = False,
              inplace: bool = False) -> tuple[np.ndarray, NewtonInfo]:
        """Solve ``F(x) = 0`` from ``x0``; raises :class:`NewtonFailure` with the reason.

        With ``inplace`` the residual is called as ``F(x, out)`` and writes into ``out``
        (the PETSc vector's array; ``x`` is the solution vector's, not to be kept).  If
        such an ``F`` has ``native`` true, PETSc calls its C function ``F.c_function``
        with context ``F.c_context()`` instead (no Python frame per evaluation); ``F``
        then records non-finite values in ``F.status[0]`` (named afterwards by
        ``F.raise_nonfinite()``) and ``F.invalidate()`` is called after the solve.

        With ``reuse`` the Jacobian (and its factorisation) of the previous solve is kept
        while Newton contracts by ``theta`` or better.  With ``jacobian_cost = c`` (the
        cost of a Jacobian in residual evaluations) a solve starts with a fresh Jacobian
        when that is expected to save more than ``c`` iterations: when the iterations of
        the last solve that started with the previous Jacobian exceed the running mean of
        those that started with a fresh one by more than ``c``.  Every 32nd solve takes
        the other choice, to keep both counts current.  The policy depends on iteration
        counts only, so runs are reproducible.

        Safeguard: if such a fresh Jacobian (taken at ``x0``, which may be far from the
        solution) *increases* the residual in the first iteration, the solve restarts
        from ``x0`` with the previous Jacobian and the policy is switched off for the
        rest of the run (strongly nonlinear problems, e.g. geometric stiffening, where
        only Jacobians near a solution are safe).
        """
        native = self._configure(x0, F, J, inplace)
        self._reuse = reuse
        self._abort = None
        self._residual_error = None
        self._info = NewtonInfo()
        policy = (reuse and not self._stale and self._jac_cost is not None
                  and self._last_A is not None and self._refresh_first())
        fresh_start = policy or self._stale or not reuse
        backup = self._last_A
        if policy:
            self._stale = self._watch = True
            if self._native_J is not None:      # the C Jacobian overwrites its buffer
                backup = backup.copy()
        err = self._run(x0)
        if self._watch_tripped:
            log.debug("Newton: a fresh Jacobian at the start point increased the residual; "
                      "restarting with the previous one, start-of-solve refreshes off")
            wasted = self._info.iterations
            self._jac_cost = None
            self._fill(self._J, backup)
            self._last_A, self._stale = backup, False
            err = self._run(x0)
            self._info.iterations += wasted
            fresh_start = False
        if native is not None:
            native.invalidate()
            if native.status[0]:
                try:
                    native.raise_nonfinite()
                except FloatingPointError as exc:
                    self._residual_error = str(exc)
        its, fnorm = self._info.iterations, self._info.residual
        if self._native_J is not None and self._j_ints[3]:
            self._stale = True
            raise NewtonFailure("non-finite entries in the Jacobian", its, fnorm)
        if err is not None:
            self._stale = True
            reason = self._abort or f"PETSc error in the Newton solve ({petsc_error_text(err)})"
            raise NewtonFailure(reason, its, fnorm) from None
        code = self._snes.getConvergedReason()
        kcode = self._ksp.getConvergedReason()
        self._info.reason = reason_name(_SNES_REASONS, code)
        if code <= 0 or kcode < 0:
            self._stale = True
            reason = f"SNES {self._info.reason}"
            if kcode < 0:
                reason += f" (KSP {reason_name(PETSc.KSP.ConvergedReason, kcode)})"
            if not np.isfinite(fnorm):
                reason += ", non-finite residual"
            if self._residual_error:
                reason += f" ({self._residual_error})"
            raise NewtonFailure(reason, its, fnorm)
        self._count(fresh_start, its)
        return self._x_view.copy(), self._info   # a new one per solve

    def _run(self, x0) -> Exception | None:
        """One SNES solve from ``x0``; the exception it ended with, if any."""
        self._fnorms = []
        self._watch_tripped = False
        if self._native_test:
            ints = self._t_ints
            ints[2], ints[3], ints[4] = int(self._watch), 0, 0
        if self._native_J is not None:
            j = self._j_ints
            j[0], j[1], j[2], j[3] = int(self._reuse), int(self._stale), 0, 0
        self._x.setArray(np.asarray(x0, dtype=float))
        err: Exception | None = None
        # the solver's options go into the database while PETSc may read them: in the
        # first solves (factorisation set-up) and whenever the pattern changed or some
        # are read at solve time (viewers, factor options); otherwise the insert/remove
        # of every option per solve is pure overhead
        self._n_runs += 1
        insert = (self._n_runs <= 2 or self._fill.general_used
                  or self._options.read_at_solve)
        # floating-point errors are ignored during the solve (np.errstate costs several
        # µs, so a caller that already ignores them, e.g. the time loop, skips it)
        fp = contextlib.nullcontext() if _ignoring_fp_errors() else np.errstate(all="ignore")
        try:
            if insert:
                with self._options.inserted(), fp:
                    self._snes.solve(None, self._x)
            else:
                with fp:
                    self._snes.solve(None, self._x)
        except (_Abort, PETSc.Error) as exc:
            err = exc
        self._watch = False
        self._info.iterations = self._snes.getIterationNumber()
        if self._native_test:            # the history stays in the test's array
            k = int(self._t_ints[4])
            self._watch_tripped = bool(self._t_ints[3])
            self._info.residual = float(self._t_fn[k - 1]) if k else float("nan")
        else:
            self._info.residual = self._fnorms[-1] if self._fnorms else float("nan")
        if self._native_J is not None:
            j = self._j_ints
            self._stale = bool(j[1])
            if j[2]:
                self._info.jacobian_evaluations += int(j[2])
                self._last_A = self._j_W
        return err

    # --- a compiled loop of solves (:mod:`.steps_kernel`) ------------------------------------
    @property
    def native_dense(self) -> bool:
        """Whether the last solve ran wholly in C: compiled residual, increment test and
        dense Jacobian (what a compiled loop of solves repeats)."""
        return self._configured and self._native_test and (
            self._native_J is not None or not self._petsc_on)     # (prepared for the loop)

    @property
    def solves_run(self) -> int:
        """The number of SNES solves so far (to tell whether the matrix changed)."""
        return self._n_runs

    def compiled_test(self) -> tuple:
        """``(ints, reals, bounds, scales, theta, jacobian_cost)`` of the increment test
        and the Jacobian policy for a compiled loop: a copy of the test's ``ints``, its
        ``reals`` and the block scales as held here (set by :meth:`set_scales`), the
        block bounds, ``theta`` and ``jacobian_cost`` (None: policy off)."""
        return (self._t_ints.copy(), self._t_reals, self._bounds, self._scales,
                self._theta, self._jac_cost)

    def adopt(self, s: NewtonState) -> None:
        """Continue from the state a compiled loop of solves reached (after a solve of
        this solver): the counters, and its matrix ``s.A = (W,)`` (dense row-major) put
        into PETSc's, which the next solve factors again."""
        self._stale, self._last_old, self._n_new = s.stale, s.last_old, s.n_new
        self._n_solves = s.n_solves
        if not s.policy:
            self._jac_cost = None
        if s.A:
            self._j_W[:] = s.A[0]
            self._last_A = self._j_W
            if self._petsc_on:
                self._fill(self._J, self._j_W)
            else:                   # PETSc's matrix is filled when it is set up
                self._J_pending = True

    # --- checkpoint (restart) ------------------------------------------------------------
    def state(self) -> NewtonState | None:
        """What the next solve depends on besides its start point: the Newton matrix as
        PETSc holds it (and has factorised) and the start-of-solve policy's counters;
        ``None`` before the first matrix.  :meth:`restore` on a new solver of the same
        system makes its next solves repeat this one's to the last bit."""
        shell = isinstance(getattr(self, "_fill", None), ShellFill)   # a factor: not saved
        if not self._configured or self._last_A is None or shell:
            return None
        if not self._petsc_on:              # the compiled loop's dense buffer
            A = (np.array(self._last_A, dtype=float, order="C"),)
        elif self._J is None:
            return None
        elif self.dense:
            A = (np.array(self._J.getDenseArray(), order="C"),)
        else:
            A = tuple(np.array(a) for a in self._J.getValuesCSR())
        return NewtonState(A, self._stale, self._last_old, self._n_new, self._n_solves,
                           self._jac_cost is not None)

    def restore(self, s: NewtonState) -> None:
        """Continue from :meth:`state` of another solver (before the first solve): the
        counters now, the matrix when the first solve has set up its storage (dropped,
        and the first solve starts fresh, if the storage differs: other PETSc options)."""
        if self._configured:
            raise ValueError("NewtonSolver.restore: only before the first solve")
        self._stale, self._last_old, self._n_new = s.stale, s.last_old, s.n_new
        self._n_solves = s.n_solves
        if not s.policy:
            self._jac_cost = None
        self._last_A = s.A[0] if len(s.A) == 1 else sp.csr_matrix(
            (s.A[2], s.A[1], s.A[0]), shape=(self._n, self._n))
        self._restored = s

    def _put_restored(self) -> None:
        s, self._restored = self._restored, None
        shell = isinstance(getattr(self, "_fill", None), ShellFill)
        if (len(s.A) == 1) != self.dense or shell:
            log.debug("Newton: the saved matrix is stored otherwise than this run's; the "
                      "first solve starts with a fresh one")
            self._last_A, self._stale = None, True
            return
        self._fill_last()

    def _fill_last(self) -> None:
        """The last matrix ``_last_A`` into PETSc's (through the compiled Jacobian's
        buffer when it is installed); before the SNES is set up (:meth:`_setup_loop`)
        into that buffer only, PETSc's then filled by the set-up."""
        A = self._last_A
        if A is None:
            return
        if not self._petsc_on:
            self._j_W[:] = A
            self._last_A = self._j_W
            self._J_pending = True
            return
        if self._native_J is not None:
            self._j_W[:] = A
            A = self._last_A = self._j_W
        self._fill(self._J, A)

    def _refresh_first(self) -> bool:
        """Whether to start this solve with a fresh Jacobian (docstring of ``solve``)."""
        if self._last_old is None:
            return False
        if self._n_new is None:
            return True
        choice = self._last_old - self._n_new > self._jac_cost
        if self._n_solves % 32 == 31:
            choice = not choice
        return choice

    def _count(self, fresh_start: bool, its: int) -> None:
        self._n_solves += 1
        if not fresh_start:
            self._last_old = its
        else:
            n = self._n_new
            self._n_new = float(its) if n is None else 0.75 * n + 0.25 * its

    def destroy(self) -> None:
        if isinstance(getattr(self, "_fill", None), ShellFill):
            self._fill.release(self._ksp)
            self._fill = None
        for obj in (self._snes, self._J, self._x, self._f):
            if obj is not None:
                obj.destroy()
        self._J = None
        self._snes = self._x = self._f = self._ksp = None
