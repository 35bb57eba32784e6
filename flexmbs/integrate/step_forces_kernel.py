"""Joint friction and spring-dampers of the compiled step as C functions of their own,
compiled at their first use (:data:`flexmbs.kernel_cache.FEATURES`).

The compiled step's residual and Newton matrix (:func:`~flexmbs.integrate.step_kernel.
table_residual_c`, :func:`~flexmbs.integrate.step_kernel.newton_dense_c`) call these by
the addresses in their tables (0 for a system without joint friction or without
springs), joint friction first, then the springs, at the same point of the sums as
before, so the same values to the last bit:

    r += -Q_fr(q, qd, lam) - Q_sp(q, qd)  (r before F = r / beta'),
    N += -(c_K dQ/dq + c_C dQ/dqd) (+ -dQ_fr/dN dN/dlam),

``Q_fr`` by :func:`~flexmbs.forces.friction_kernel.friction_residual` and
:func:`~flexmbs.forces.friction_kernel.friction_newton`, ``Q_sp`` (spring-dampers,
bushings, point forces, one-sided springs and joint stops) by
:func:`~flexmbs.forces.spring_kernel.spring_residual` and
:func:`~flexmbs.forces.spring_kernel.spring_newton`.  In their own callbacks, the core's
two (which every rigid or flexible model compiles at the first import) no longer link in
these chains (about 5 s of CPU each, docs/performance.md, "Cold start", round 14); a
model with springs compiles ``spring_*_c`` at its first run, one line each
(:class:`flexmbs.compiled.FirstCompile`).  The numpy references are those of the force
kernels (``friction_reference``, ``spring_reference``); ``tests/integrate/
test_native_callbacks.py`` compares the step's callbacks with the Python step.  Numba's
cache of this module does not notice edits of ``friction_kernel`` or ``spring_kernel``,
nor of the residual table's layout (the row numbers below, :data:`~flexmbs.integrate.
step_kernel.N_TABLE`) and :func:`~flexmbs.integrate.step_kernel.all_multipliers` that it
compiles in: a change of any of those must edit this file too.
"""
from __future__ import annotations

import numpy as np
from numba import carray, types

from flexmbs.compiled import f1, f2, f3, f4, f8_pointer, i1, i2, i8_pointer, native
from flexmbs.forces.friction_kernel import friction_newton, friction_residual
from flexmbs.forces.spring_kernel import spring_newton, spring_residual

from .step_kernel import N_TABLE, all_multipliers


@native(types.int32(types.intp, types.intp))
def friction_residual_c(x_p, ctx):  # pragma: no cover - compiled
    """Joint friction's ``r -= Q_fr`` as a C function ``int (const double *x, void *t)``:
    ``t`` the residual's table (:data:`~flexmbs.integrate.step_kernel.N_TABLE`), ``r, q,
    qd`` its work rows ``W_x`` (row 62), the rows and frames ``G, C, D`` (53-55) written
    at ``q`` by the residual, ``lam = bp lam~`` from ``x``; 1 (0 if it stopped on an
    exception)."""
    t = carray(i8_pointer(ctx), (N_TABLE, 5))
    n = f1(t, 8).shape[0]
    act = i1(t, 12)
    x = carray(f8_pointer(x_p), n + act.shape[0])
    W_x = f2(t, 62)
    friction_residual(W_x[3], W_x[0], W_x[1],
                      all_multipliers(x, n, act, t[13, 0], f1(t, 7)[1]), f3(t, 54),
                      f4(t, 55), f2(t, 53), i2(t, 57), f2(t, 58))
    return 1


@native(types.int32(types.intp, types.intp))
def spring_residual_c(x_p, ctx):  # pragma: no cover - compiled
    """The springs' ``r -= Q_sp`` as a C function ``int (const double *x, void *t)``
    (the arguments as :func:`friction_residual_c`'s; ``x`` unused)."""
    t = carray(i8_pointer(ctx), (N_TABLE, 5))
    W_x = f2(t, 62)
    spring_residual(W_x[3], W_x[0], W_x[1], f3(t, 54), f4(t, 55), i2(t, 59), f2(t, 60),
                    f2(t, 61))
    return 1


@native(types.int32(types.intp, types.intp, types.intp))
def friction_newton_c(out_p, x_p, ctx):  # pragma: no cover - compiled
    """Joint friction's Newton terms added to ``out`` (N, N) as a C function ``int
    (double *out, const double *x, void *a)``: ``a`` (4, 5) the residual's table (row 0)
    and the rows and frames ``G, C, D`` at ``q`` (rows 1-3, :class:`flexmbs.compiled.
    Table` rows); ``q, qd`` the table's work rows ``W_x`` (the Newton matrix wrote them),
    ``c_K = 1/bp``, ``c_C = gp/bp``; 1 (0 if it stopped on an exception).  Allocates
    the multipliers ``lam`` and their positions, as before in the Newton matrix."""
    a = carray(i8_pointer(ctx), (4, 5))
    t = carray(i8_pointer(a[0, 0]), (N_TABLE, 5))
    n = f1(t, 8).shape[0]
    act = i1(t, 12)
    m = act.shape[0]
    N = n + m
    out = carray(f8_pointer(out_p), (N, N))
    x = carray(f8_pointer(x_p), N)
    scal = f1(t, 7)
    gp, bp = scal[0], scal[1]
    cK, cC = 1.0 / bp, gp / bp
    W_x = f2(t, 62)
    n_rows = t[13, 0]
    lam_pos = np.empty(n_rows, dtype=np.int64)
    for i in range(n_rows):
        lam_pos[i] = -1
    for k in range(m):
        lam_pos[act[k]] = k
    friction_newton(out, W_x[0], W_x[1], all_multipliers(x, n, act, n_rows, bp), lam_pos,
                    f3(a, 2), f4(a, 3), f2(a, 1), i2(t, 57), f2(t, 58), cK, cC)
    return 1


@native(types.int32(types.intp, types.intp, types.intp))
def spring_newton_c(out_p, x_p, ctx):  # pragma: no cover - compiled
    """The springs' Newton terms added to ``out`` (N, N) as a C function (the arguments
    as :func:`friction_newton_c`'s; ``x`` unused)."""
    a = carray(i8_pointer(ctx), (4, 5))
    t = carray(i8_pointer(a[0, 0]), (N_TABLE, 5))
    n = f1(t, 8).shape[0]
    N = n + i1(t, 12).shape[0]
    out = carray(f8_pointer(out_p), (N, N))
    scal = f1(t, 7)
    gp, bp = scal[0], scal[1]
    W_x = f2(t, 62)
    spring_newton(out, W_x[0], W_x[1], f3(a, 2), f4(a, 3), i2(t, 59), f2(t, 60), f2(t, 61),
                  1.0 / bp, gp / bp)
    return 1
