"""Compiled (numba) run of many fixed generalized-α steps: the time loop of
:meth:`flexmbs.integrate.genalpha.GeneralizedAlpha.run` for a system on the compiled step
path (its numpy reference is that Python loop, with PETSc SNES for each Newton solve).

:func:`run_steps` repeats, until the step lands on the last of its target times,
``max_steps`` steps are taken, or a step does not succeed (a target time passed before
the last one, an output time, has its state written to a row of the output buffers and
the loop goes on: the outputs of many steps in one call, :data:`OUT_COLUMNS`):

* the step ``h_try`` towards ``goal = min(target, t_g + k h)`` (:func:`step_towards`),
  the predictor ``q0, v0, w0, x0`` (:func:`~.genalpha_kernel.predict`);
* the Newton iteration of SNES ``newtonls`` with the basic line search, ``x_{k+1} = x_k -
  W^{-1} F(x_k)``, ``F`` the step residual (:func:`~.step_kernel.table_residual_c`), ``W``
  the dense Newton matrix (:func:`~.step_kernel.newton_dense`) factored by LU with partial
  pivoting (:func:`lu_factor`), stopped by the increment test of :mod:`._newton`
  (:func:`~.increments_kernel.block_maxima`, ``decide``: same norms, tolerances,
  ``snes_max_it`` and the guard that refuses the increment criterion, and the increments
  at round-off, while ``|F_k| > GROWTH max(|F_0|, F_grow)``, ``F_grow`` the round-off
  level of the residual's terms, ``treals[4]``);
* the Jacobian policy of ``NewtonSolver``: keep ``W`` (and its factors) across iterations
  and steps while reuse is allowed (``2/3 <= h / h_jac <= 1.5``), it is not stale and
  ``|F_k| <= theta |F_{k-1}|``; start a step with a fresh ``W`` by the start-of-solve
  policy (``jacobian_cost``, every 32nd solve the other choice);
* the update of ``(q, qd, qdd, a, lam)`` (:func:`~.genalpha_kernel.update`).

A step that does not converge (non-finite residual or matrix, a zero pivot,
``snes_max_it``, or the safeguard of a fresh start-of-solve matrix that increases the
residual) leaves the state and the Newton state as they were before it, and returns
:data:`REDO`: the caller redoes that step on the SNES path, which reports it (step
halving, diagnostics) as always.  (Numba's cache of this module does not notice edits
of the kernels it compiles in, the predictor, update and increment kernels: an edit of
theirs must edit this file too; the residual and the Newton matrix are called by address,
each returning 1 when its values are finite, 0 when not or when it stopped on an exception;
the residual works in its table's work arrays: no heap allocation on a system of rigid
bodies without joint friction and springs (the Newton matrix allocates a few arrays per
call, :func:`~.step_kernel.newton_dense`); its rows are marked invalid, ``q_last`` NaN,
until it returns.)
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from flexmbs.compiled import call_c3, f1

from .genalpha_kernel import predict, update_into
from .increments_kernel import block_maxima_into, decide
from .step_kernel import N_TABLE

#: :func:`run_steps` ends: landed on the target, took ``max_steps``, or a step to redo
TARGET, CHUNK, REDO = 1, 2, 3

#: ``ri`` (float state): t, t_grid, h_cur, h_jac (NaN: none), n_new (NaN: none),
#: smallest accepted step
R_T, R_TGRID, R_HCUR, R_HJAC, R_NNEW, R_HMIN = range(6)
#: ``ii`` (int state): k_grid, stale, last_old (-1: none), n_solves, start-of-solve
#: policy on, a matrix ``W`` exists, ``LU`` holds its factors, then this run's counts of
#: steps, Newton iterations, Jacobians
I_KGRID, I_STALE, I_LASTOLD, I_NSOLVES, I_POLICY, I_HAVEW, I_LU, I_STEPS, I_NEWTON, \
    I_JAC, I_OUTS = range(11)
#: ``outr`` (a row per target passed, the output buffers): t, k_grid, h_cur, h_jac
#: (NaN: none), then this run's counts of steps, Newton iterations, Jacobians and its
#: smallest step so far; ``out`` holds ``q, qd, qdd, a, lam`` of the same row, side by side
O_T, O_KGRID, O_HCUR, O_HJAC, O_STEPS, O_NEWTON, O_JAC, O_HMIN = range(8)
OUT_COLUMNS = 8
#: ``fns`` (int64): the addresses of :func:`~.step_kernel.table_residual_c` and
#: :func:`~.step_kernel.newton_dense_c`, then the context of the latter (the addresses of
#: ``tab`` and ``ntab``).  The loop calls the two by address: linking their code in would
#: make numba optimise and emit all of it again in this module (about 35 s of compile)
N_FNS = 4
#: ``consts``: h, the steps after which a target reached ends the run (no more outputs
#: wait in the buffers: the caller's bound in wall time), eps, h_min, alpha_m, alpha_f,
#: beta, gamma, theta, jacobian_cost, jacobian_reuse (0/1)
N_CONSTS = 11


@njit(cache=True)
def step_towards(rem, h_cur, h_floor):  # pragma: no cover - compiled
    """``genalpha._step_towards`` (its reference): the next step towards a point ``rem``
    ahead, never leaving a remainder below ``h_floor``."""
    if rem <= h_cur:
        return rem
    if rem - h_cur >= h_floor:
        return h_cur
    if rem <= 1.125 * h_cur or rem <= 2.0 * h_floor:
        return rem
    return 0.5 * rem


@njit(cache=True)
def copy2(A, B):  # pragma: no cover - compiled
    """``B = A`` (same shape) by loops: no broadcast shape check, whose error path
    (numba's formatting of the shapes) is most of a slice assignment's compile; not
    inlined (three callers, one compile).  Shapes that differ raise (numba does not
    check the bounds of the loops' writes) with a fixed message."""
    if A.shape[0] != B.shape[0] or A.shape[1] != B.shape[1]:
        raise ValueError("steps_kernel.copy2: the arrays' shapes differ")
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            B[i, j] = A[i, j]


@njit(cache=True)
def lu_factor(W, LU, piv):  # pragma: no cover - compiled
    """``P W = L U`` with partial pivoting (LAPACK ``getrf``'s choice of pivots), ``L``
    (unit diagonal) and ``U`` in ``LU``, the row swaps in ``piv``; False on a zero
    pivot (a singular matrix)."""
    N = W.shape[0]
    copy2(W, LU)
    for k in range(N):
        p, big = k, abs(LU[k, k])
        for i in range(k + 1, N):
            if abs(LU[i, k]) > big:
                p, big = i, abs(LU[i, k])
        piv[k] = p
        if not big > 0.0:
            return False
        if p != k:
            for j in range(N):
                LU[k, j], LU[p, j] = LU[p, j], LU[k, j]
        inv = 1.0 / LU[k, k]
        for i in range(k + 1, N):
            f = LU[i, k] * inv
            LU[i, k] = f
            if f != 0.0:
                for j in range(k + 1, N):
                    LU[i, j] -= f * LU[k, j]
    return True


@njit(cache=True)
def lu_solve(LU, piv, b, y):  # pragma: no cover - compiled
    """``y = W^{-1} b`` from the factors of :func:`lu_factor`."""
    N = b.shape[0]
    for i in range(N):
        y[i] = b[i]
    for k in range(N):
        p = piv[k]
        if p != k:
            y[k], y[p] = y[p], y[k]
    for i in range(N):
        s = y[i]
        for j in range(i):
            s -= LU[i, j] * y[j]
        y[i] = s
    for i in range(N - 1, -1, -1):
        s = y[i]
        for j in range(i + 1, N):
            s -= LU[i, j] * y[j]
        y[i] = s / LU[i, i]


@njit(cache=True)
def _norm2(F):  # pragma: no cover - compiled
    s = 0.0
    for i in range(F.shape[0]):
        s += F[i] * F[i]
    return math.sqrt(s)


@njit(cache=True)
def call_residual(F, x, tab, fns):  # pragma: no cover - compiled
    """:func:`~.step_kernel.table_residual_c` by its C function's address ``fns[0]``:
    ``F`` at ``x``, whether it is finite."""
    return call_c3(fns[0], F.ctypes.data, x.ctypes.data, tab.ctypes.data) != 0


@njit(cache=True)
def call_newton(W, x, fns):  # pragma: no cover - compiled
    """:func:`~.step_kernel.newton_dense` by its C function's address ``fns[1]`` (context
    ``fns[2:4]``): the Newton matrix at ``x`` into ``W``, whether it is finite."""
    return call_c3(fns[1], W.ctypes.data, x.ctypes.data, fns.ctypes.data + 16) != 0


@njit(cache=True)
def newton_solve(x, F, y, W, Wb, LU, piv, tab, fns, fn, d1, bounds, scales, tints, treals,
                 reuse, theta, ii, d, xm):  # pragma: no cover - compiled
    """One Newton solve from ``x`` (overwritten by the solution): ``(converged,
    iterations, Jacobians)``.  ``W`` is copied to ``Wb`` before its first refill (the
    caller restores it if the solve fails); ``tints``, ``treals``: the increment test's
    ``ints`` and ``reals`` (:mod:`.increments_kernel`), ``fn`` its residual norms; ``d``,
    ``xm`` its work arrays (one per block)."""
    tints[3] = 0
    tints[4] = 0
    jacs = 0
    finite = call_residual(F, x, tab, fns)
    fnorm = _norm2(F)
    if not finite or not math.isfinite(fnorm):
        return False, 0, 0
    fn[0] = fnorm
    tints[4] = 1
    if fnorm == 0.0:
        return True, 0, 0
    max_it = tints[0]
    for it in range(1, max_it + 1):
        k = tints[4]
        poor = k >= 2 and fn[k - 2] > 0.0 and fn[k - 1] > theta * fn[k - 2]
        if not (reuse and ii[I_STALE] == 0 and not poor):
            if jacs == 0 and ii[I_HAVEW]:
                copy2(W, Wb)
            jacs += 1
            ii[I_HAVEW], ii[I_LU], ii[I_STALE] = 1, 0, 0
            if not call_newton(W, x, fns):
                return False, it - 1, jacs
        if ii[I_LU] == 0:
            if not lu_factor(W, LU, piv):
                return False, it - 1, jacs
            ii[I_LU] = 1
        lu_solve(LU, piv, F, y)
        for i in range(x.shape[0]):
            x[i] -= y[i]
        finite = call_residual(F, x, tab, fns)
        fnorm = _norm2(F)
        # the increment test (increment_test_c from the recorded norm on)
        k = tints[4]
        if k < fn.shape[0]:
            fn[k] = fnorm
            tints[4] = k + 1
        if tints[2] != 0 and it == 1 and fn[1] > fn[0]:
            tints[3] = 1                # the safeguard: the caller redoes the step
            return False, it, jacs
        if not finite or not math.isfinite(fnorm):
            return False, it, jacs
        if fnorm == 0.0:
            return True, it, jacs
        x0max, fmax, roundoff, ratio = block_maxima_into(y, x, F, bounds, tints[1], d1,
                                                         scales, treals[2], d, xm)
        reason = decide(it, fnorm, fn, k, d, d1, x0max, fmax, roundoff, ratio, tints,
                         treals)
        if reason != tints[5]:
            return reason > 0, it, jacs
    return False, max_it, jacs


@njit(cache=True)
def _refresh_first(ii, ri, jac_cost):  # pragma: no cover - compiled
    """``NewtonSolver._refresh_first``: start this solve with a fresh matrix?"""
    if ii[I_LASTOLD] < 0:
        return False
    if ri[R_NNEW] != ri[R_NNEW]:
        return True
    choice = ii[I_LASTOLD] - ri[R_NNEW] > jac_cost
    if ii[I_NSOLVES] % 32 == 31:
        choice = not choice
    return choice


@njit(cache=True)
def run_steps(q, qd, qdd, a, lam, ri, ii, consts, max_steps, targets, out, outr, x, F, y,
              W, Wb, LU, piv, tab, fns, fn, d1, bounds, scales, tints,
              treals):  # pragma: no cover - compiled
    """Fixed generalized-α steps from the state ``(q, qd, qdd, a, lam)`` at ``ri[R_T]``
    (updated in place) through the ascending ``targets`` (module docstring): a target
    reached before the last one (at most ``out.shape[0]`` of them, ``ii[I_OUTS]`` counts
    them) has its state written to the next row of ``out`` and ``outr``
    (:data:`O_T` ...); returns :data:`TARGET` (on the last target, or on the one that
    filled the buffers or came ``consts[1]`` steps or more into the run), :data:`CHUNK`
    or :data:`REDO`."""
    h, block_steps, eps, h_min = consts[0], consts[1], consts[2], consts[3]
    n, m = q.shape[0], lam.shape[0]
    i_tgt = 0
    target = targets[0]
    alpha_m, alpha_f, beta, gamma = consts[4], consts[5], consts[6], consts[7]
    theta, jac_cost, jac_reuse = consts[8], consts[9], consts[10] != 0.0
    d, xm = np.empty(d1.shape[0]), np.empty(d1.shape[0])  # the increment test's work
    sc, q0, v0, w0 = f1(tab, 7), f1(tab, 8), f1(tab, 9), f1(tab, 10)   # gp, bp; predictor
    for _ in range(max_steps):
        t = ri[R_T]
        goal = min(target, ri[R_TGRID] + ii[I_KGRID] * h)
        h_try = step_towards(goal - t, ri[R_HCUR], h_min)
        t1 = t + h_try
        bp = (1.0 - alpha_m) / (beta * h_try * h_try * (1.0 - alpha_f))
        gp = gamma / (beta * h_try)
        predict(q, qd, qdd, a, lam, h_try, alpha_m, alpha_f, beta, gamma, bp, q0, v0, w0, x)
        sc[0], sc[1] = gp, bp
        h_jac = ri[R_HJAC]
        reuse = jac_reuse and h_jac == h_jac and 2.0 / 3.0 <= h_try / h_jac <= 1.5
        stale0, have0 = ii[I_STALE], ii[I_HAVEW]
        if not reuse:
            ii[I_STALE] = 1
        policy = (reuse and ii[I_STALE] == 0 and ii[I_POLICY] != 0 and ii[I_HAVEW] != 0
                  and _refresh_first(ii, ri, jac_cost))
        fresh_start = policy or ii[I_STALE] != 0 or not reuse
        tints[2] = 0
        if policy:
            ii[I_STALE] = 1
            tints[2] = 1
        ok, its, jacs = newton_solve(x, F, y, W, Wb, LU, piv, tab, fns, fn, d1, bounds,
                                     scales, tints, treals, reuse, theta, ii, d, xm)
        if not ok:                      # as before the step: the caller redoes it
            ii[I_STALE] = stale0
            if jacs:
                if have0:
                    copy2(Wb, W)
                ii[I_HAVEW], ii[I_LU] = have0, 0
            return REDO
        ii[I_NSOLVES] += 1
        if not fresh_start:
            ii[I_LASTOLD] = its
        elif ri[R_NNEW] != ri[R_NNEW]:
            ri[R_NNEW] = its
        else:
            ri[R_NNEW] = 0.75 * ri[R_NNEW] + 0.25 * its
        if jacs:
            ri[R_HJAC] = h_try
        update_into(x, q, qd, qdd, a, lam, h_try, alpha_m, alpha_f, beta, gamma, bp)
        ii[I_STEPS] += 1
        ii[I_NEWTON] += its
        ii[I_JAC] += jacs
        ri[R_HMIN] = min(ri[R_HMIN], h_try)
        ri[R_HCUR] = min(h, 2.0 * h_try) if h_try < h * (1 - 1e-12) else h
        ri[R_T] = t1
        if abs(t1 - goal) <= eps:
            ri[R_T] = goal
            if abs(goal - (ri[R_TGRID] + ii[I_KGRID] * h)) <= eps:
                ii[I_KGRID] += 1
            if abs(goal - target) <= eps:
                k = ii[I_OUTS]
                if (i_tgt + 1 >= targets.shape[0] or k >= out.shape[0]
                        or ii[I_STEPS] >= block_steps):
                    return TARGET
                # an output time passed: its state to the buffers, on to the next target
                row = out[k]
                for i in range(n):
                    row[i] = q[i]
                    row[n + i] = qd[i]
                    row[2 * n + i] = qdd[i]
                    row[3 * n + i] = a[i]
                for i in range(m):
                    row[4 * n + i] = lam[i]
                o = outr[k]
                o[O_T], o[O_KGRID], o[O_HCUR], o[O_HJAC] = (ri[R_T], ii[I_KGRID],
                                                            ri[R_HCUR], ri[R_HJAC])
                o[O_STEPS], o[O_NEWTON], o[O_JAC], o[O_HMIN] = (ii[I_STEPS], ii[I_NEWTON],
                                                                ii[I_JAC], ri[R_HMIN])
                ii[I_OUTS] = k + 1
                i_tgt += 1
                target = targets[i_tgt]
    return CHUNK


def warm() -> None:
    """Compile :func:`run_steps` now with the one signature every call uses (run once by
    the first import of an installation, :mod:`flexmbs.kernel_cache`): zero steps, so
    no array is read."""
    z, zi = np.zeros(1), np.zeros(1, dtype=np.int64)
    tab = np.zeros((N_TABLE, 5), dtype=np.int64)
    run_steps(z, z, z, z, z, np.zeros(6), np.zeros(11, dtype=np.int64),
              np.zeros(N_CONSTS), 0, z, np.zeros((0, 5)), np.zeros((0, OUT_COLUMNS)), z, z,
              z, np.zeros((1, 1)), np.zeros((1, 1)),
              np.zeros((1, 1)), zi, tab, np.zeros(N_FNS, dtype=np.int64), z, z, zi, z, zi, np.zeros(4))
