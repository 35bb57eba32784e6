"""A Newton solver on PETSc SNES for ``F(x) = 0`` with a sparse (saddle-point) Jacobian.

Private to ``flexmbs.integrate``: :mod:`genalpha` and :mod:`static` both use it.  The
Jacobian is an AIJ matrix filled from scipy CSR; the linear solver comes from the options
database (default: direct LU, see :mod:`options`).  Jacobian reuse is decided here, not by
``-snes_lag_jacobian``: the Jacobian callback leaves the matrix (and hence PETSc's
factorisation) untouched unless it is stale, and rebuilds it when the residual
contraction ``|F_k| / |F_{k-1}|`` is worse than ``theta``.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping

import numpy as np
import scipy.sparse as sp
from petsc4py import PETSc

from ._petsc import aij_from_csr, fill_aij, reason_name
from .options import OptionsManager, default_direct_lu

log = logging.getLogger(__name__)

#: Newton defaults (without prefix); ``-<prefix>snes_*`` on the command line wins.
NEWTON_DEFAULTS = {
    "snes_type": "newtonls",
    "snes_linesearch_type": "basic",
    "snes_max_it": 20,
    "snes_rtol": 1e-10,
    "snes_stol": 1e-12,
    "snes_atol": 1e-50,
    "snes_divergence_tolerance": -1,
}


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


class _Abort(Exception):
    pass


class NewtonSolver:
    """SNES on vectors of size ``n`` under options ``prefix``.

    ``solve(x0, F, J)`` with ``F(x) -> ndarray`` and ``J(x) -> csr`` numpy callbacks.
    """

    def __init__(self, n: int, *, prefix: str = "fmbs_", petsc_options: Mapping | None = None,
                 comm=None, theta: float = 0.25):
        comm = PETSc.COMM_SELF if comm is None else comm
        if comm.getSize() != 1:
            raise NotImplementedError(
                f"flexmbs.integrate: the Newton solver runs on one rank, got a communicator "
                f"of size {comm.getSize()}")
        self._comm, self._n, self._theta = comm, n, theta
        self._options = OptionsManager(prefix, {**default_direct_lu(), **NEWTON_DEFAULTS},
                                       petsc_options)
        self._snes = PETSc.SNES().create(comm)
        self._x = PETSc.Vec().createSeq(n, comm=comm)
        self._f = self._x.duplicate()
        self._J: PETSc.Mat | None = None
        self._F_cb: Callable | None = None
        self._J_cb: Callable | None = None
        self._reuse = False
        self._stale = True
        self._fnorms: list[float] = []
        self._info = NewtonInfo()
        self._abort: str | None = None
        self._snes.setFunction(self._function, self._f)
        self._snes.setMonitor(self._monitor)
        self._configured = False

    # read-only handles, as in dolfinx
    @property
    def snes(self) -> PETSc.SNES:
        return self._snes

    @property
    def J(self) -> PETSc.Mat | None:
        return self._J

    @property
    def x(self) -> PETSc.Vec:
        return self._x

    @property
    def options(self) -> OptionsManager:
        return self._options

    def invalidate_jacobian(self) -> None:
        self._stale = True

    # --- PETSc callbacks -------------------------------------------------------------
    def _function(self, snes, x, f):
        xa = x.getArray(readonly=True).copy()
        try:
            with np.errstate(all="ignore"):
                fa = np.asarray(self._F_cb(xa), dtype=float)
        except ArithmeticError as exc:  # overflow, division by zero in a force law
            log.debug("residual evaluation failed: %s", exc)
            self._residual_error = str(exc)
            fa = np.full(self._n, np.nan)
        f.setArray(fa)

    def _monitor(self, snes, its, fnorm):
        self._fnorms.append(float(fnorm))

    def _jacobian(self, snes, x, J, P):
        fn = self._fnorms
        poor = len(fn) >= 2 and fn[-2] > 0 and fn[-1] > self._theta * fn[-2]
        if self._reuse and not self._stale and not poor:
            return  # matrix state unchanged: PETSc keeps the factorisation
        xa = x.getArray(readonly=True).copy()
        try:
            with np.errstate(all="ignore"):
                A = sp.csr_matrix(self._J_cb(xa))
        except ArithmeticError as exc:
            self._abort = f"Jacobian evaluation failed ({exc})"
            raise _Abort from exc
        if not np.all(np.isfinite(A.data)):
            self._abort = "non-finite entries in the Jacobian"
            raise _Abort
        fill_aij(P, A)
        if J != P:  # pragma: no cover - we always pass J == P
            J.assemble()
        self._stale = False
        self._info.jacobian_evaluations += 1

    def _setup(self, A0: sp.csr_matrix) -> None:
        self._J = aij_from_csr(A0, self._comm)
        self._snes.setJacobian(self._jacobian, self._J, self._J)
        self._options.set_from_options(self._snes)
        self._configured = True

    # --- solve -----------------------------------------------------------------------
    def solve(self, x0: np.ndarray, F: Callable[[np.ndarray], np.ndarray],
              J: Callable[[np.ndarray], sp.spmatrix], *, reuse: bool = False) -> tuple[
                  np.ndarray, NewtonInfo]:
        """Solve ``F(x) = 0`` from ``x0``; raises :class:`NewtonFailure` with the reason."""
        self._F_cb, self._J_cb = F, J
        self._reuse = reuse
        self._fnorms = []
        self._abort = None
        self._residual_error = None
        self._info = NewtonInfo()
        if not self._configured:
            with np.errstate(all="ignore"):
                A0 = sp.csr_matrix(J(np.asarray(x0, dtype=float)))
            if not np.all(np.isfinite(A0.data)):
                A0 = sp.csr_matrix((np.zeros_like(A0.data), A0.indices, A0.indptr), A0.shape)
            self._setup(A0)
            self._stale = True
        self._x.setArray(np.asarray(x0, dtype=float))
        err: Exception | None = None
        try:
            with self._options.inserted():
                self._snes.solve(None, self._x)
        except (_Abort, PETSc.Error) as exc:
            err = exc
        its = self._snes.getIterationNumber()
        fnorm = self._fnorms[-1] if self._fnorms else float("nan")
        self._info.iterations, self._info.residual = its, fnorm
        if err is not None:
            self._stale = True
            reason = self._abort or f"PETSc error in the Newton solve ({err})"
            raise NewtonFailure(reason, its, fnorm) from None
        code = self._snes.getConvergedReason()
        ksp = self._snes.getKSP()
        kcode = ksp.getConvergedReason()
        self._info.reason = reason_name(PETSc.SNES.ConvergedReason, code)
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
        return self._x.getArray(readonly=True).copy(), dataclasses.replace(self._info)

    def destroy(self) -> None:
        for obj in (self._snes, self._J, self._x, self._f):
            if obj is not None:
                obj.destroy()
