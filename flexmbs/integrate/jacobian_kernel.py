"""The Jacobian callback of :mod:`._newton` as PETSc's C ``SNESJacobian`` for dense
Newton matrices (no Python frame per Newton iteration).

Its Jacobian policy is that of ``NewtonSolver._jacobian`` (the Python form): keep the
matrix (and hence PETSc's factorisation) when reuse is allowed, it is not stale and the
last contraction ``|F_k| / |F_{k-1}|`` is at most ``theta``; otherwise fill it from a C
function ``int fill(double *W, const double *x, void *ctx)`` that writes the Newton
matrix row-major into ``W`` (e.g. :func:`flexmbs.integrate.step_kernel.newton_dense_c`) and copy
``W`` into PETSc's column-major array.  A non-finite matrix (``fill`` returns 0: not
finite, or stopped on an exception) is flagged for the caller.  (The table readers
``f1``, ``i1`` of :mod:`flexmbs.compiled` are inlined by LLVM since round 12: an edit
of them must edit this file too, or numba's cache keeps the old code.)
"""
from __future__ import annotations

from numba import carray, types

from flexmbs.compiled import call_c2, call_c3, f1, f2, f8_pointer, i1, i8_pointer, native

#: rows of the context table: PETSc's ``VecGetArrayRead``, ``VecRestoreArrayRead``,
#: ``MatDenseGetArray``, ``MatDenseRestoreArray``; a slot of two pointers; the fill
#: function and its context; ``ints = [reuse, stale, evaluations, non-finite]``;
#: ``[theta]``; the convergence test's ``ints`` (norm count at 4) and norms; ``W`` (N, N)
N_JAC_TABLE = 12


@native(types.int32(types.intp, types.intp, types.intp, types.intp, types.intp))
def dense_jacobian_c(snes, x, A, P, ctx):  # pragma: no cover - compiled
    """``SNESJacobian(SNES, Vec x, Mat A, Mat P, void *ctx)`` of the module docstring."""
    t = carray(i8_pointer(ctx), (N_JAC_TABLE, 5))
    ints = i1(t, 7)
    tints = i1(t, 9)
    fn = f1(t, 10)
    k = tints[4]
    poor = k >= 2 and fn[k - 2] > 0.0 and fn[k - 1] > f1(t, 8)[0] * fn[k - 2]
    if ints[0] != 0 and ints[1] == 0 and not poor:
        return 0                        # matrix unchanged: PETSc keeps the factorisation
    slot = t[4, 0]
    sl = carray(i8_pointer(slot), 2)
    err = call_c2(t[0, 0], x, slot)
    if err:
        return err
    W = f2(t, 11)
    if call_c3(t[5, 0], t[11, 0], sl[0], t[6, 0]) == 0:
        ints[3] = 1
    err = call_c2(t[1, 0], x, slot)
    if err:
        return err
    err = call_c2(t[2, 0], P, slot + 8)
    if err:
        return err
    N = W.shape[0]
    Ad = carray(f8_pointer(sl[1]), (N, N))       # column-major: Ad[j, i] = W[i, j]
    for i in range(N):
        for j in range(N):
            Ad[j, i] = W[i, j]
    err = call_c2(t[3, 0], P, slot + 8)          # restoring marks the matrix changed
    if err:
        return err
    ints[1] = 0
    ints[2] += 1
    return 0
