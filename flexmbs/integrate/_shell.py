"""A Newton matrix the system factors itself (:class:`~.protocol.FactoredNewton`): PETSc
sees a shell matrix and a Python preconditioner with KSP ``preonly``, so that each Newton
iteration's linear solve ``W dx = F`` is the factor's ``solve(F)``.

Private to ``flexmbs.integrate`` (:mod:`._newton`).  The shell matrix has no product:
``preonly`` applies the preconditioner alone.
"""
from __future__ import annotations

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
        y.setArray(self._fill.factor.solve(x.getArray(readonly=True)))


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

    def configure(self, ksp: PETSc.KSP) -> None:
        """KSP ``preonly`` with the factor's solve as the preconditioner."""
        ksp.setType(PETSc.KSP.Type.PREONLY)
        pc = ksp.getPC()
        pc.setType(PETSc.PC.Type.PYTHON)
        pc.setPythonContext(_Apply(self))

    def release(self, ksp: PETSc.KSP) -> None:
        """Drop the Python preconditioner (PETSc must not hold Python objects when it
        is finalised at exit) and the factor."""
        ksp.getPC().setType(PETSc.PC.Type.NONE)
        self.factor = None

    def __call__(self, M: PETSc.Mat, A) -> None:
        self.factor = A
        M.assemble()
