"""Compiled (numba) Newton increment test of :mod:`._newton`: its block maxima, and the
whole test as PETSc's C convergence test (no Python frame per Newton iteration)."""
from __future__ import annotations

import numpy as np
from numba import carray, njit, types

from flexmbs.compiled import call_c2, f1, f8_pointer, i1, i4_pointer, i8_pointer, native


#: the absolute floor of a block's first increment, as a fraction of the block's scale
#: ``s_b``: ``d1_b`` is replaced by ``max(d1_b, FLOOR s_b)``, so a block whose first
#: increment is 0 or at round-off (the multipliers of an unloaded joint, the coordinates
#: of a body in uniform motion that the predictor hits exactly) can still pass
FLOOR = 1e-8
#: the increment criterion accepts an iterate only while its residual norm is at most
#: ``GROWTH max(|F_0|, F_grow)``, ``|F_0|`` the residual at the start of the solve (the
#: predictor) and ``F_grow`` the round-off level of the residual's terms: a Newton iteration that
#: raised the residual by orders of magnitude and then contracted slowly measures its
#: increments against a huge first increment and would otherwise accept a wrong state
#: (a joint angle 2 pi off, residual 2e8 |F_0|); such a solve keeps iterating, and fails
#: at ``snes_max_it`` (the step is halved).  The same bound holds for the acceptance of
#: increments at round-off in every block (a stall at a grown residual is no solution).
#: A healthy step ends far below ``|F_0|``
GROWTH = 1e3


@njit(cache=True)
def block_maxima(dx, x, f, bounds, alg0, d1, scales, eps):  # pragma: no cover - compiled
    """The quantities of the increment test, per block ``b`` (rows
    ``bounds[b]:bounds[b + 1]``):

        d_b = max |dx|,    at_roundoff_b = d_b <= eps max(max |x_b|, s_b),
        ratio = max over the blocks not at round-off of  d_b / max(d1_b, FLOOR s_b)

    with ``s_b = scales[b]`` the block's magnitude set by the model (lengths, masses), so
    a block whose values are all 0 (unloaded joints) is at round-off once its increment
    is round-off of the model's own scale.  A NaN is kept (``np.max`` semantics), so a
    non-finite increment never passes.  Also returns ``max |x|`` of the first block and
    ``max |f[alg0:]|`` (0 if ``alg0 < 0``).  ``roundoff``: every block at round-off.
    """
    nb = bounds.shape[0] - 1
    d = np.zeros(nb)
    x0max, fm, roundoff, ratio = block_maxima_into(dx, x, f, bounds, alg0, d1, scales, eps,
                                                   d, np.zeros(nb))
    return d, x0max, fm, roundoff, ratio


@njit(cache=True)
def block_maxima_into(dx, x, f, bounds, alg0, d1, scales, eps, d,
                      xm):  # pragma: no cover - compiled
    """:func:`block_maxima` with ``d_b`` and ``max |x_b|`` written into the work arrays
    ``d``, ``xm`` (nb,); returns the rest, ``(x0max, fmax, roundoff, ratio)``: no
    allocation (the compiled step loop, :mod:`.steps_kernel`)."""
    nb = bounds.shape[0] - 1
    for b in range(nb):
        d[b] = 0.0
        xm[b] = 0.0
    for b in range(nb):
        for i in range(bounds[b], bounds[b + 1]):
            a = abs(dx[i])
            if a > d[b] or a != a:
                d[b] = a
            a = abs(x[i])
            if a > xm[b] or a != a:
                xm[b] = a
    fm = 0.0
    if alg0 >= 0:
        for i in range(alg0, f.shape[0]):
            a = abs(f[i])
            if a > fm or a != a:
                fm = a
    roundoff = True
    ratio = 0.0
    for b in range(nb):
        if d[b] <= eps * max(xm[b], scales[b]):
            continue
        roundoff = False
        ref = max(d1[b], FLOOR * scales[b])
        q = d[b] / ref if ref > 0.0 else np.inf
        if not q <= ratio:
            ratio = q
    return xm[0], fm, roundoff, ratio


#: rows of the context table of :func:`increment_test_c` (made by
#: :class:`flexmbs.integrate._newton.NewtonSolver`): PETSc's ``SNESGetSolutionUpdate``,
#: ``SNESGetSolution``, ``VecGetArrayRead``, ``VecRestoreArrayRead``; a slot of six
#: pointers; the residual vector's handle; ``ints``; ``reals``; the residual norms; the
#: block bounds; the first increments ``d1``; the block scales ``s_b``
N_TEST_TABLE = 12
#: ``ints``: snes_max_it, first algebraic row (-1: none), watch, watch tripped, number of
#: norms recorded, then the reasons ITERATING, CONVERGED_FNORM_ABS,
#: CONVERGED_SNORM_RELATIVE, DIVERGED_FNORM_NAN, DIVERGED_MAX_IT
N_INTS = 10
#: ``reals``: kappa, algebraic tolerance, round-off factor (64 eps), residual floor
#: ``F_floor``, the growth bound's floor ``F_grow``
N_REALS = 5


@njit(cache=True)
def residual_grown(fnorm, f0, f_grow):  # pragma: no cover - compiled
    """Whether ``|F_k| = fnorm`` exceeds :data:`GROWTH` ``max(|F_0|, F_grow)``: the
    increment criterion may not accept such an iterate (a NaN has grown).  ``F_grow``
    (``reals[4]``) is the round-off level of the residual's terms, at least ``F_floor``:
    a start at ``|F_0| = 1e-30`` with ``F_floor = 0`` (``rho_inf = 1``) may still end at
    round-off."""
    return not fnorm <= GROWTH * max(f0, f_grow)


@njit(cache=True)
def decide(its, fnorm, fn, k, d, d1, x0max, fmax, roundoff, ratio, ints,
            reals):  # pragma: no cover - compiled
    """The reason after the block maxima (``NewtonSolver._converged`` from there on);
    ``fn[0]`` is ``|F_0|``, the residual norm at the start of the solve."""
    if its == 1:                        # the first increments: d_b / d1_b = 1
        for b in range(d.shape[0]):
            d1[b] = d[b]
        if ratio == ratio:              # (a NaN stays)
            ratio = 0.0 if roundoff else 1.0
    rho = fnorm / fn[k - 1] if k >= 1 and fn[k - 1] > 0.0 else 1.0
    if roundoff and not residual_grown(fnorm, fn[0], reals[4]):
        return ints[7]                  # the increments at round-off in every block
    if ints[1] >= 0 and fmax > reals[1] * max(1.0, x0max):
        return ints[9] if its >= ints[0] else ints[5]
    if fnorm <= reals[3]:               # the residual at round-off of the model's terms
        return ints[7]
    if rho < 1.0 and not residual_grown(fnorm, fn[0], reals[4]):
        eta = rho / (1.0 - rho)
        if eta * ratio <= reals[0] or (eta == 0.0 and ratio == ratio):
            return ints[7]
    if its >= ints[0]:
        return ints[9]
    return ints[5]


@native(types.int32(types.intp, types.int32, types.float64, types.float64, types.float64,
                    types.intp, types.intp))
def increment_test_c(snes, its, xnorm, snorm, fnorm, reason, ctx):  # pragma: no cover
    """The increment test of :mod:`._newton` (``NewtonSolver._converged`` is its Python
    form, the reference) as PETSc's ``SNESConvergenceTest``: records ``fnorm``, checks
    the watch of a fresh Jacobian (first iteration worse than the start: ``tripped``,
    stop), then the tests; writes the reason."""
    t = carray(i8_pointer(ctx), (N_TEST_TABLE, 5))
    ints = i1(t, 6)
    out = carray(i4_pointer(reason), 1)
    fn = f1(t, 8)
    k = ints[4]
    if k < fn.shape[0]:
        fn[k] = fnorm
        ints[4] = k + 1
    if ints[2] != 0 and its == 1 and k >= 1 and fn[1] > fn[0]:
        ints[3] = 1
        out[0] = ints[9]
        return 0
    if not np.isfinite(fnorm):
        out[0] = ints[8]
        return 0
    if fnorm == 0.0:
        out[0] = ints[6]
        return 0
    if its == 0:
        out[0] = ints[5]
        return 0
    slot = t[4, 0]
    sl = carray(i8_pointer(slot), 6)
    for j in range(2):                  # the update and solution vectors
        err = call_c2(t[j, 0], snes, slot + 8 * j)
        if err:
            return err
    for j, vec in ((0, sl[0]), (1, sl[1]), (2, t[5, 0])):
        err = call_c2(t[2, 0], vec, slot + 16 + 8 * j)
        if err:
            return err
    bounds = i1(t, 9)
    d1 = f1(t, 10)
    scales = f1(t, 11)
    reals = f1(t, 7)
    n = bounds[bounds.shape[0] - 1]
    d, x0max, fmax, roundoff, ratio = block_maxima(
        carray(f8_pointer(sl[2]), n), carray(f8_pointer(sl[3]), n),
        carray(f8_pointer(sl[4]), n), bounds, ints[1], d1, scales, reals[2])
    for j, vec in ((0, sl[0]), (1, sl[1]), (2, t[5, 0])):
        err = call_c2(t[3, 0], vec, slot + 16 + 8 * j)
        if err:
            return err
    out[0] = decide(np.int64(its), fnorm, fn, k, d, d1, x0max, fmax, roundoff, ratio, ints, reals)
    return 0
