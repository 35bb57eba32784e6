"""A Newton matrix the system factors itself (:class:`~.protocol.FactoredNewton`): PETSc
sees a shell matrix and a Python preconditioner with KSP ``preonly``, so that each Newton
iteration's linear solve ``W dx = F`` is the factor's ``solve(F)``.

Private to ``flexmbs.integrate`` (:mod:`._newton`).  The shell matrix has no product:
``preonly`` applies the preconditioner alone.
"""
from __future__ import annotations

import atexit
import weakref

import numpy as np
from petsc4py import PETSc


def is_factor(A) -> bool:
    """Whether a Jacobian callback returned a factored matrix (an object with ``solve``)."""
    return not isinstance(A, np.ndarray) and callable(getattr(A, "solve", None))


class _Apply:
    """PETSc's Python preconditioner: ``y = factor.solve(x)``."""

    def __init__(self, fill: ShellFill):
        self._fill = fill

    def apply(self, pc, x, y) -> None:
        try:
            y.setArray(self._fill.factor.solve(x.getArray(readonly=True)))
        except (ArithmeticError, ValueError):   # LinAlgError: a singular factor
            y.set(np.nan)                       # Newton reports a non-finite increment


def _drop_preconditioner(pc: PETSc.PC) -> None:
    """The preconditioner back to none (its Python context released)."""
    if pc is not None and pc.handle:
        pc.setType(PETSc.PC.Type.NONE)


#: the shell fills whose preconditioner PETSc holds (released at exit if not before)
_LIVE: weakref.WeakSet = weakref.WeakSet()


def _release_all() -> None:
    for fill in list(_LIVE):
        owner = fill.owner() if fill.owner is not None else None
        if owner is not None:
            owner.destroy()
        else:
            _drop_preconditioner(fill.pc)
            fill.pc = fill.factor = None
    _LIVE.clear()


class _NoProduct:
    """The shell matrix's context (no operations)."""


class ShellFill:
    """Holds the last factor given (the fill interface of :mod:`._petsc`'s ``DenseFill``
    and ``FixedPatternFill``: ``create``, ``__call__(M, A)``, ``general_used``)."""

    general_used = False
    factored = True

    def __init__(self, n: int):
        self._n = n
        self.factor = None

    def create(self, comm=None) -> PETSc.Mat:
        """A shell matrix of this size (no product)."""
        M = PETSc.Mat().createPython((self._n, self._n), context=_NoProduct(),
                                     comm=PETSc.COMM_SELF if comm is None else comm)
        M.setUp()
        return M

    def configure(self, ksp: PETSc.KSP, owner=None) -> None:
        """KSP ``preonly`` with the factor's solve as the preconditioner.  PETSc must not
        hold Python objects (this preconditioner, the shell matrix) when it is finalised
        at exit: ``owner.destroy()`` (the Newton solver, held weakly) runs at exit if it
        was not called before (an integrator never destroyed), which :meth:`release`s."""
        ksp.setType(PETSc.KSP.Type.PREONLY)
        pc = ksp.getPC()
        pc.setType(PETSc.PC.Type.PYTHON)
        pc.setPythonContext(_Apply(self))
        self.pc = pc
        self.owner = None if owner is None else weakref.ref(owner)
        if not _LIVE:
            atexit.register(_release_all)       # after petsc4py's import: runs before it
        _LIVE.add(self)

    def release(self, ksp: PETSc.KSP) -> None:
        """Drop the Python preconditioner and the factor."""
        _drop_preconditioner(ksp.getPC())
        _LIVE.discard(self)
        self.pc = self.factor = None

    def __call__(self, M: PETSc.Mat, A) -> None:
        self.factor = A
        M.assemble()
