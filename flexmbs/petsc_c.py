"""PETSc's C entry points by address, for compiled (numba ``cfunc``) callbacks.

petsc4py registers Python callables as a solver's residual or convergence test; each call
then goes through a Python frame (several microseconds).  For the small systems of
multibody dynamics that is more than the residual itself, so the generalized-α residual
and the Newton increment test are also available as compiled C callbacks
(:mod:`flexmbs.compiled`), installed here with PETSc's own ``SNESSetFunction`` and
``SNESSetConvergenceTest`` on the petsc4py objects' handles.  The library is the one
petsc4py itself is linked against.
"""
from __future__ import annotations

import ctypes
import functools

from petsc4py import PETSc

__all__ = ["address", "options_used", "snes_set_convergence_test", "snes_set_function",
           "snes_set_jacobian"]


@functools.lru_cache(maxsize=None)
def _lib() -> ctypes.CDLL:
    return ctypes.CDLL(PETSc.__file__)          # its dependencies include libpetsc


@functools.lru_cache(maxsize=None)
def address(name: str) -> int:
    """The address of PETSc's C function ``name`` (e.g. ``"VecGetArrayRead"``)."""
    return ctypes.cast(getattr(_lib(), name), ctypes.c_void_p).value


def _call(name: str, *args) -> None:
    fn = getattr(_lib(), name)
    fn.argtypes = [ctypes.c_void_p] * len(args)
    fn.restype = ctypes.c_int
    err = fn(*args)
    if err:
        raise PETSc.Error(err)


def snes_set_function(snes: PETSc.SNES, f: PETSc.Vec, fn: int, ctx: int) -> None:
    """``SNESSetFunction(snes, f, fn, ctx)`` with a C function's address ``fn``."""
    _call("SNESSetFunction", snes.handle, f.handle, fn, ctx)


def snes_set_convergence_test(snes: PETSc.SNES, fn: int, ctx: int) -> None:
    """``SNESSetConvergenceTest(snes, fn, ctx, NULL)`` with a C function's address."""
    _call("SNESSetConvergenceTest", snes.handle, fn, ctx, None)


def snes_set_jacobian(snes: PETSc.SNES, J: PETSc.Mat, fn: int, ctx: int) -> None:
    """``SNESSetJacobian(snes, J, J, fn, ctx)`` with a C function's address ``fn``."""
    _call("SNESSetJacobian", snes.handle, J.handle, J.handle, fn, ctx)


def options_used(name: str) -> bool:
    """``PetscOptionsUsed(NULL, name, &used)``: whether an option of the global database
    (``name`` without the leading dash) was read since it was set."""
    fn = _lib().PetscOptionsUsed
    fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    fn.restype = ctypes.c_int
    used = ctypes.c_int(0)
    err = fn(None, name.encode(), ctypes.byref(used))
    if err:
        raise PETSc.Error(err)
    return bool(used.value)
