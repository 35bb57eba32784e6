"""Compiled (numba) residual and Newton matrix of one generalized-α step on an affine
kinematic manifold (the integrator's own step, :mod:`flexmbs.integrate.affine_step`).

Implicit Newmark-type integrators (generalized-α) solve for ``x = [q; lam~]`` with
velocities and accelerations affine in ``q``: ``qd = v0 + gamma' (q - q0)``,
``qdd = w0 + beta' (q - q0)``, multipliers ``lam = beta' lam~``, and the equilibrium rows
divided by ``beta'``.  For a system whose bodies are all floating frames (rigid or
flexible, :mod:`flexmbs.bodies.pack`) and whose constraint rows are all label rows and
normalisations (:class:`flexmbs.system.stacked.StackedRows`), one call gives

    F(x) = [ (r_bodies(q, qd, qdd) + G_A^T lam) / beta';  g_A(q) ],

``A`` the active rows, together with all rows ``g``, ``G`` (dense) and the marker frames
``C``, ``D`` that the Newton matrix reuses.  Internal states ``z = q[z_idx]`` of force
elements (:mod:`flexmbs.forces.states`) have the rows ``r_z = zd - f``: ``zd`` here, and
in the Newton matrix ``c_C I``; linear forces, joint friction (``fr_*``,
:mod:`flexmbs.forces.friction_kernel`) and spring-dampers, bushings, point forces,
one-sided springs and joint stops (``sp_*``, :mod:`flexmbs.forces.spring_kernel`, its
torsion angle by the joint friction kernel's ``angle_gradient``) are added here, other
force elements by the caller.  The C callbacks call joint friction and the springs by
the addresses of their own C functions in their tables
(:mod:`flexmbs.integrate.step_forces_kernel`, 0 when the system has none; compiled at
their first use, so the core's compile links neither chain, round 14); the Python call
(:func:`affine_residual`) calls them directly.

The numpy references: :func:`affine_residual` is ``[r / beta'; g_A]`` of the system's
``residual`` and ``constraint`` (the genalpha's Python step function ``F``), and
:func:`newton_dense` is the system's ``newton_matrix`` with ``c_K = 1/beta'``,
``c_C = gamma'/beta'``, ``c_M = 1`` (``tests/system/test_dense_rows.py`` compares them);
``FLEXMBS_KERNELS=reference`` (:func:`flexmbs.compiled.use_compiled`) runs those instead.
The body arrays pass through as :func:`flexmbs.bodies.ffrf_kernel.bodies_residual` takes
them (``H_p``: the pair Gram matrix of the geometric stiffening; a rigid body's
residual and Newton block by :mod:`flexmbs.bodies.rigid_kernel`, which allocates nothing
itself (the bodies' Newton values make two arrays per call for all bodies together); a
flexible body's by :mod:`flexmbs.bodies.ffrf_kernel`, a few grouped work arrays per
call).  Numba's cache of this module does not notice edits of ``ffrf_kernel`` (or of
the stacked rows of ``frame_kernel``, inlined helpers included) that it compiles in: a change of those kernels (arguments or code)
must edit this file too, or warm installations keep the old code (the springs and joint
friction are no longer compiled into the callbacks since round 14; since round 15
``frame_kernel.stacked_rows_into`` is a kernel of its own that this module links, with
the stacked rows' other helpers inlined; edited for the round-10 loops of ``stacked_rows_into``
and ``bodies_residual_into``, and ``ffrf_kernel._transposed``; for round 12's row copy of
``stacked_rows_into``; for round 13's ``rigid_kernel.mm_to``; and for round 15's kernels).  The other way
round, :mod:`flexmbs.integrate.step_forces_kernel` reads this module's table rows by
number and compiles in :data:`N_TABLE` and :func:`all_multipliers`: a change of the
table's layout or of ``all_multipliers`` must edit that file too.
"""
from __future__ import annotations

import numpy as np
from numba import carray, njit, types

from flexmbs.bodies.ffrf_kernel import N_PACK_TABLE, bodies_residual_into
from flexmbs.compiled import (call_c2, call_c3, f1, f2, f3, f4, f8_pointer, i1, i2,
                              i8_pointer, native)
from flexmbs.forces.friction_kernel import friction_residual
from flexmbs.forces.spring_kernel import spring_residual
from flexmbs.kinematics.frame_kernel import (stacked_hessian_sum_into, stacked_rows,
                                             stacked_rows_into)
from flexmbs.system.stacked_kernel import drive_rows, stacked_mu_into


@njit(cache=True, inline="always")
def _affine_state(x, q0, v0, w0, gp, bp, W_x):  # pragma: no cover - compiled
    """``q = x[:n]``, ``qd = v0 + gp (q - q0)``, ``qdd = w0 + bp (q - q0)`` written into
    the rows 0, 1, 2 of the work array ``W_x`` (4, n) and returned (views)."""
    n = q0.shape[0]
    q, qd, qdd = W_x[0], W_x[1], W_x[2]
    for i in range(n):
        q[i] = x[i]
    for i in range(n):
        dq = q[i] - q0[i]
        qd[i] = v0[i] + gp * dq
        qdd[i] = w0[i] + bp * dq
    return q, qd, qdd


@njit(cache=True, inline="always")
def all_multipliers(x, n, active, n_rows, bp):  # pragma: no cover - compiled
    """The multipliers ``lam = bp lam~`` of all rows (dropped rows 0)."""
    lam_all = np.zeros(n_rows)
    for k in range(active.shape[0]):
        lam_all[active[k]] = bp * x[n + k]
    return lam_all


@njit(cache=True)
def affine_residual(F, x, q0, v0, w0, gp, bp, gravity, active, n_rows,
                    b_off, b_nq, b_m, b_stiff, b_ptr, lin0, lin_q, I2, lin_qd, lin_qdd, C_t,
                    K_e, K2, H_p,
                    C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb, kc, src, dst, norm_rows,
                    norm_idx, wd_row, wd_lo, wd_n, wd_w, wd_f, lf_ptr, lf_idx, lf_kptr, lf_K,
                    g_out, G_out, C_out, D_out, z_idx, fr_int, fr_par, sp_int, sp_par,
                    sp_tab, W_x, W_p, W_dp, W_f):  # pragma: no cover
    """``F`` of the module docstring written into ``F``, and ``g, G, C, D`` into
    ``*_out``; returns whether all of ``F`` is finite (a finite sum has finite terms).
    Drive rows included (``wd_*``: the time weights of
    :meth:`flexmbs.system.stacked.StackedRows.drive_weights`), and linear generalized
    forces ``Q_k = K_k q[idx_k]`` (``lf_*``: force ``k`` on the coordinates
    ``lf_idx[lf_ptr[k]:lf_ptr[k + 1]]``, ``K_k`` row-major from ``lf_K[lf_kptr[k]]``, e.g. a
    constant torque on a rigid body) subtracted as ``Q_k / beta'``; after ``n_rows`` come the
    arguments of ``bodies_residual`` (after the state and gravity) and of
    ``stacked_rows`` (after ``q``), flat (numba types a tuple argument in Python at every
    call, which is slow).  Outputs are written in place because every array a compiled
    function returns costs a Python object (about a microsecond each).  Last the work
    arrays (no allocation on systems of rigid bodies and point masses without joint
    friction and springs: joint friction's multipliers and laws, each spring element's
    measures and law and each flexible body's residual allocate their own small arrays
    at every call): ``W_x`` (4, n) for
    ``q, qd, qdd, r``, the label rows ``W_p`` (R,), ``W_dp`` (R, n) and the frames' ``W_f``
    (:data:`~flexmbs.kinematics.frame_kernel.FRAME_WORK`,), ``R = Sa.shape[0]``; the
    rows and frames are written straight into ``g_out, G_out, C_out, D_out``."""
    n = q0.shape[0]
    q, qd, qdd = _affine_state(x, q0, v0, w0, gp, bp, W_x)
    r = W_x[3]
    bodies_residual_into(r, q, qd, qdd, gravity, b_off, b_nq, b_m, b_stiff, b_ptr, lin0, lin_q,
                         I2, lin_qd, lin_qdd, C_t, K_e, K2, H_p)
    g, G, C, D, p, dp = g_out, G_out, C_out, D_out, W_p, W_dp
    stacked_rows_into(q, C0, D0, start, nq, U0T, W12, W_r, wptr, Sa, Sb, kc, src, dst,
                      norm_rows, norm_idx, g, G, C, D, p, dp, W_f)
    drive_rows(g, G, p, dp, wd_row, wd_lo, wd_n, wd_w, wd_f)
    _residual_rows(F, x, r, qd, g, G, active, bp, z_idx)
    if fr_int.shape[0]:
        friction_residual(r, q, qd, all_multipliers(x, n, active, n_rows, bp), C, D, G,
                          fr_int, fr_par)
    if sp_int.shape[0]:                          # springs, bushings, point forces, stops
        spring_residual(r, q, qd, C, D, sp_int, sp_par, sp_tab)
    return _residual_end(F, r, q, active, bp, lf_ptr, lf_idx, lf_kptr, lf_K)


@njit(cache=True, inline="always")
def _residual_rows(F, x, r, qd, g, G, active, bp, z_idx):  # pragma: no cover - compiled
    """The rows of :func:`affine_residual` once the bodies' ``r`` and the rows ``g, G``
    are written, before the force elements: the states' ``r_z = zd`` and ``G_A^T lam``
    into ``r``, ``g_A`` into ``F[n:]``.  Inlined (few arguments: numba inlines no call
    that Python makes with ``*args``) into both callers, :func:`affine_residual` and
    :func:`table_residual_c`, so that the compiled residual makes no call with the 66
    array arguments of :func:`affine_residual` (about a third of its time on the rigid
    pendulum); between it and :func:`_residual_end` the callers add joint friction and
    the springs (:func:`table_residual_c` by their C functions' addresses)."""
    n = r.shape[0]
    for i in z_idx:
        r[i] = qd[i]
    m = active.shape[0]
    for k in range(m):
        lk = bp * x[n + k]
        row = active[k]
        if lk != 0.0:
            for j in range(n):
                r[j] += lk * G[row, j]
        F[n + k] = g[row]


@njit(cache=True, inline="always")
def _residual_end(F, r, q, active, bp, lf_ptr, lf_idx, lf_kptr,
                  lf_K):  # pragma: no cover - compiled
    """The end of :func:`affine_residual` once every force element is in ``r``:
    ``F[:n] = r / beta'``, the linear forces; whether ``F`` is finite (inlined like
    :func:`_residual_rows`)."""
    n = r.shape[0]
    m = active.shape[0]
    total = 0.0
    for j in range(n):
        F[j] = r[j] / bp
    for k in range(lf_ptr.shape[0] - 1):
        a, p, kp = lf_ptr[k], lf_ptr[k + 1] - lf_ptr[k], lf_kptr[k]
        for i in range(p):
            s = 0.0
            for j in range(p):
                s += lf_K[kp + i * p + j] * q[lf_idx[a + j]]
            F[lf_idx[a + i]] -= s / bp
    for j in range(n + m):
        total += F[j]
    return np.isfinite(total)


#: rows of the table of :func:`affine_residual_c` (made by :class:`flexmbs.integrate.
#: affine_step.AffineStep`): PETSc's ``VecGetArrayRead``, ``VecRestoreArrayRead``,
#: ``VecGetArray``, ``VecRestoreArray``; a slot for two pointers; ``status``; ``q_last``;
#: ``scal = [gp, bp]``; then every argument of :func:`affine_residual` after ``F, x`` in
#: order (``gp, bp`` in ``scal``, ``n_rows`` as a value; the work arrays ``W_x, W_p,
#: W_dp, W_f`` in rows 62 to 65, :func:`newton_dense` uses ``W_x`` too); the addresses of
#: the joint friction's and the springs' residual C functions (rows 66, 67: :func:`flexmbs.
#: integrate.step_forces_kernel.friction_residual_c` and ``spring_residual_c``, 0 for a
#: system without them); last the address of :func:`table_residual_c`
N_TABLE = 69


@native(types.int32(types.intp, types.intp, types.intp, types.intp))
def affine_residual_c(snes, x, f, ctx):  # pragma: no cover - compiled
    """:func:`affine_residual` as PETSc's ``SNESFunction(SNES, Vec x, Vec f, void *ctx)``
    (arrays by ``VecGetArrayRead``/``VecGetArray``); records ``q = x[:n]`` in ``q_last``,
    whether ``F`` is finite in ``status[0]`` (the caller names the source afterwards) and
    counts the calls in ``status[1]`` (:func:`table_residual_c`), by the address of
    :func:`table_residual_c` (the table's last row), so that this callback's compile does
    not link in (and optimise again) the residual's code."""
    t = carray(i8_pointer(ctx), (N_TABLE, 5))
    slot = t[4, 0]
    err = call_c2(t[0, 0], x, slot)
    if err:
        return err
    err = call_c2(t[2, 0], f, slot + 8)
    if err:
        return err
    sl = carray(i8_pointer(slot), 2)
    call_c3(t[N_TABLE - 1, 0], sl[1], sl[0], ctx)
    err = call_c2(t[1, 0], x, slot)
    if err:
        return err
    return call_c2(t[3, 0], f, slot + 8)


@native(types.int32(types.intp, types.intp, types.intp))
def table_residual_c(F_p, x_p, ctx):  # pragma: no cover - compiled
    """:func:`affine_residual` as a C function ``int (double *F, const double *x, void
    *t)`` at ``X`` (``x``) into ``F`` with every other argument read from the table ``t``
    of :func:`affine_residual_c`: 1 if ``F`` is finite, else 0; records ``q = X[:n]`` in
    ``q_last``, whether ``F`` is finite in ``status[0]`` and counts the calls in
    ``status[1]``.  The compiled step loop calls it by its address, so that the loop's
    compile does not link in (and optimise again) the residual's code.  ``F`` is NaN and
    ``status[0]`` "not finite" until the end: a kernel that stops on an exception (a C
    callback then returns 0 and prints it) leaves a non-finite residual that the caller
    reports, never the previous evaluation's values.  The steps of
    :func:`affine_residual` in its order (the same sums, so the same values to the last
    bit), not a call of it: a call with its 66 array arguments cost ~0.6 of ~2 us on the
    rigid pendulum.  Written here, not in a kernel inlined into this one (round 12): numba
    copies an inlined kernel's IR, with the kernels inlined into it, once more per level
    (``docs/performance.md``, "Cold start")."""
    t = carray(i8_pointer(ctx), (N_TABLE, 5))
    q0 = f1(t, 8)
    n = q0.shape[0]
    N = n + i1(t, 12).shape[0]
    F = carray(f8_pointer(F_p), N)
    for i in range(N):
        F[i] = np.nan
    status = i1(t, 5)
    status[0] = 1
    X = carray(f8_pointer(x_p), N)
    scal = f1(t, 7)
    q_last = f1(t, 6)
    if n:                       # the rows are written in place: not valid until the end
        q_last[0] = np.nan      # (a kernel that raises part-way leaves no stale key)
    # the steps of affine_residual, its arguments read here (module docstring of
    # _residual_rows: no call with all of them)
    gp, bp = scal[0], scal[1]
    W_x = f2(t, 62)
    q, qd, qdd = _affine_state(X, q0, f1(t, 9), f1(t, 10), gp, bp, W_x)
    r = W_x[3]
    bodies_residual_into(r, q, qd, qdd, f1(t, 11), i1(t, 14), i1(t, 15), f1(t, 16),
                         i1(t, 17), i2(t, 18), f1(t, 19), f1(t, 20), f1(t, 21), f1(t, 22),
                         f1(t, 23), f1(t, 24), f1(t, 25), f1(t, 26), f1(t, 27))
    g, G, C, D, p, dp = f1(t, 52), f2(t, 53), f3(t, 54), f4(t, 55), f1(t, 63), f2(t, 64)
    stacked_rows_into(q, f3(t, 28), f4(t, 29), i1(t, 30), i1(t, 31), f2(t, 32), f1(t, 33),
                      f1(t, 34), i1(t, 35), f2(t, 36), f2(t, 37), f2(t, 38), i1(t, 39),
                      i1(t, 40), i1(t, 41), i2(t, 42), g, G, C, D, p, dp, f1(t, 65))
    drive_rows(g, G, p, dp, i1(t, 43), i1(t, 44), i1(t, 45), f1(t, 46), f1(t, 47))
    _residual_rows(F, X, r, qd, g, G, i1(t, 12), bp, i1(t, 56))
    for k in range(N_TABLE - 3, N_TABLE - 1):   # joint friction, then the springs, by the
        if t[k, 0] and call_c2(t[k, 0], x_p, ctx) == 0:  # addresses of their C functions
            return 0                            # (stopped on an exception: F stays NaN)
    finite = _residual_end(F, r, q, i1(t, 12), bp, i1(t, 48), i1(t, 49), i1(t, 50),
                           f1(t, 51))
    for i in range(n):
        q_last[i] = X[i]
    status[0] = 0 if finite else 1
    status[1] += 1
    return 1 if finite else 0


#: rows of the Newton table of :func:`newton_dense` (made by :class:`flexmbs.integrate.
#: affine_step.AffineStep`): the address of the body pack's table (:meth:`flexmbs.bodies.
#: pack.BodyPack.table`), the frame-derivative tensor ``T_A`` and the address of
#: :func:`~flexmbs.bodies.ffrf_kernel.bodies_newton_values_c`; then the work arrays of
#: :func:`newton_dense` (allocations: see its docstring): the bodies'
#: values (n_values,) and their input ``s`` (3 n_b + 6,), ``lam`` (m,), ``mu`` (n_rows,),
#: ``mu_st`` (R,), ``mu_norm`` (normalisations,), the Hessian sum ``H`` (n, n) and its
#: ``Wm`` (4 M, 3), ``dal``, ``dbe`` (3, n); last the addresses of the joint friction's
#: and the springs' Newton C functions (rows 13, 14: :func:`flexmbs.integrate.
#: step_forces_kernel.friction_newton_c` and ``spring_newton_c``, 0 for a system without
#: them) and their argument table (4, 5) (int64: the residual's table, ``G, C, D``)
N_NEWTON_TABLE = 16


@njit(cache=True)
def body_values(q, qd, qdd, g, cK, cC, nt, vals, s):  # pragma: no cover - compiled
    """The bodies' values ``c_K K + c_C C + M`` (each body's block ``(7 + nq)^2``, in body
    order) by :func:`~flexmbs.bodies.ffrf_kernel.bodies_newton_values_c`, called by its
    address (row 2 of the Newton table ``nt``) with the pack's table (row 0), so that the
    compile of the Newton matrix does not link in (and optimise again) the bodies'
    tangents, the longest compile of the package.  Into ``vals`` (the blocks' values)
    with ``s`` (3 n_b + 6,) its input's work array."""
    nb = carray(i8_pointer(nt[0, 0]), (N_PACK_TABLE, 5))[0, 0]
    for i in range(nb):         # by loops: no broadcast shape check (its error path's
        s[i] = q[i]             # formatting is most of a slice assignment's compile)
        s[nb + i] = qd[i]
        s[2 * nb + i] = qdd[i]
    for k in range(3):
        s[3 * nb + k] = g[k]
    s[3 * nb + 3], s[3 * nb + 4], s[3 * nb + 5] = cK, cC, 1.0
    for i in range(vals.shape[0]):  # a tangent that stops on an exception leaves NaN,
        vals[i] = np.nan            # not the last call's values
    call_c3(nt[2, 0], vals.ctypes.data, s.ctypes.data, nt[0, 0])


@njit(cache=True, inline="always")
def _put_row(tab, k, address, s0, s1, s2, s3):  # pragma: no cover - compiled
    """Row ``k`` of a table (:class:`flexmbs.compiled.Table`): an array's address and shape."""
    tab[k, 0], tab[k, 1], tab[k, 2], tab[k, 3], tab[k, 4] = address, s0, s1, s2, s3


@njit(cache=True, inline="always")
def newton_dense(out, x, t, nt):  # pragma: no cover - compiled
    """The Newton matrix of the step at ``x`` (``AssembledSystem.newton_matrix`` with
    ``c_K = 1/bp``, ``c_C = gp/bp``, ``c_M = 1``), dense row-major into ``out`` (N, N):

        [[c_K (K + d(G^T lam)/dq) + c_C C + c_M M,  G^T],
         [G,                                        0  ]],

    bodies by :func:`body_values`, the constraint
    Hessian by :func:`~flexmbs.kinematics.frame_kernel.stacked_hessian_sum`, ``G`` from the
    rows at ``q`` (the residual's buffers when it was last evaluated at this ``q``), the
    linear forces of :func:`affine_residual` as ``-c_K K_k``, the states' ``c_C I`` and
    the joint friction's terms (:func:`~flexmbs.forces.friction_kernel.friction_newton`)
    and the springs' (:func:`~flexmbs.forces.spring_kernel.spring_newton`), by the
    addresses of their C functions (rows 13, 14 of ``nt``, :mod:`flexmbs.integrate.
    step_forces_kernel`) with ``G, C, D`` in the argument table (row 15).
    ``t``: the table of :func:`affine_residual_c`; ``nt``: the Newton table.  Returns
    whether every entry is finite.  It works in the tables' arrays but for these
    allocations (numba's runtime, per call): the bodies' C function's two (its values
    and the rigid bodies' work array; a flexible body's tangent adds its own work
    arrays, dozens per body), seven more when ``q`` is not the residual's last ``q``
    (:func:`~flexmbs.kinematics.frame_kernel.stacked_rows` makes the rows, frames and
    their work array), and the joint friction's and springs' per element: on a rigid
    system without these, 2 at the residual's ``q`` and 9 elsewhere
    (``tests/system/test_dense_rows.py`` counts them).  Inlined (numba IR) into
    :func:`newton_dense_c`, its one caller (Python calls that callback too): compiled on
    its own, its code would be optimised and emitted twice."""
    q0, v0, w0, scal = f1(t, 8), f1(t, 9), f1(t, 10), f1(t, 7)
    n = q0.shape[0]
    act = i1(t, 12)
    m = act.shape[0]
    gp, bp = scal[0], scal[1]
    q, qd, qdd = _affine_state(x, q0, v0, w0, gp, bp, f2(t, 62))
    cK, cC = 1.0 / bp, gp / bp
    # rows and frames at q: the residual's, else evaluated here
    q_last = f1(t, 6)
    same = True
    for i in range(n):
        if q_last[i] != q[i]:
            same = False
            break
    n_rows = t[13, 0]
    if same:
        G, C, D = f2(t, 53), f3(t, 54), f4(t, 55)
    else:
        g_, G, C, D, p_, dp_ = stacked_rows(
            q, f3(t, 28), f4(t, 29), i1(t, 30), i1(t, 31), f2(t, 32), f1(t, 33), f1(t, 34),
            i1(t, 35), f2(t, 36), f2(t, 37), f2(t, 38), i1(t, 39), i1(t, 40), i1(t, 41),
            i2(t, 42), n_rows)
        drive_rows(g_, G, p_, dp_, i1(t, 43), i1(t, 44), i1(t, 45), f1(t, 46), f1(t, 47))
    off, nq = i1(t, 14), i1(t, 15)
    vals = f1(nt, 3)
    body_values(q, qd, qdd, f1(t, 11), cK, cC, nt, vals, f1(nt, 4))
    N = n + m
    for i in range(N):
        for j in range(N):
            out[i, j] = 0.0
    pos = 0
    for b in range(off.shape[0]):
        o, nc = off[b], 7 + nq[b]
        for i in range(nc):
            for j in range(nc):
                out[o + i, o + j] += vals[pos]
                pos += 1
    lf_ptr, lf_idx, lf_kptr, lf_K = i1(t, 48), i1(t, 49), i1(t, 50), f1(t, 51)
    for k in range(lf_ptr.shape[0] - 1):        # linear forces: -c_K K_k
        a, p, kp = lf_ptr[k], lf_ptr[k + 1] - lf_ptr[k], lf_kptr[k]
        for i in range(p):
            for j in range(p):
                out[lf_idx[a + i], lf_idx[a + j]] += -(cK * lf_K[kp + i * p + j])
    if m:
        lam = f1(nt, 5)
        for k in range(m):
            lam[k] = bp * x[n + k]
        mu_st, mu_norm = f1(nt, 7), f1(nt, 8)
        stacked_mu_into(lam, act, i1(t, 39), i1(t, 40), i1(t, 43), i1(t, 44), i1(t, 45),
                        f1(t, 46), i1(t, 41), f1(nt, 6), mu_st, mu_norm)
        H = f2(nt, 9)
        stacked_hessian_sum_into(q, C, D, i1(t, 30), i1(t, 31), f2(t, 32), f1(t, 33),
                                 i1(t, 35), f2(t, 36), f2(t, 37), f2(t, 38), mu_st, f4(nt, 1),
                                 i2(t, 42), mu_norm, H, f2(nt, 10), f2(nt, 11), f2(nt, 12),
                                 f1(t, 65))
        for i in range(n):
            for j in range(n):
                out[i, j] += cK * H[i, j]
        for k in range(m):
            r = act[k]
            for j in range(n):
                out[n + k, j] = G[r, j]
                out[j, n + k] = G[r, j]
    for i in i1(t, 56):                          # states: r_z = zd - f
        out[i, i] += cC
    if nt[13, 0] or nt[14, 0]:      # joint friction, then the springs, by the addresses
        fa = i2(nt, 15)             # of their C functions, with the rows G, C, D at q
        fa[0, 0] = t.ctypes.data
        _put_row(fa, 1, G.ctypes.data, G.shape[0], G.shape[1], 0, 0)
        _put_row(fa, 2, C.ctypes.data, C.shape[0], C.shape[1], C.shape[2], 0)
        _put_row(fa, 3, D.ctypes.data, D.shape[0], D.shape[1], D.shape[2], D.shape[3])
        for k in range(13, 15):
            if nt[k, 0] and call_c3(nt[k, 0], out.ctypes.data, x.ctypes.data,
                                    fa.ctypes.data) == 0:
                return False        # (stopped on an exception)
    total = 0.0
    for i in range(N):
        for j in range(N):
            total += out[i, j]
    return np.isfinite(total)


@native(types.int32(types.intp, types.intp, types.intp))
def newton_dense_c(out, x, ctx):  # pragma: no cover - compiled
    """:func:`newton_dense` as a C function ``int (double *out, const double *x, void
    *ctx)`` for a solver's compiled Jacobian: ``ctx`` holds the addresses of the two
    tables (:class:`flexmbs.integrate.affine_step.AffineStep`); 1 if finite, else 0.
    "Finite" is returned only once :func:`newton_dense` has finished: a kernel that
    stops on an exception (a zero-length rope, say; a C callback then returns 0 and
    prints it) reports a failed matrix, never a partly written one as good."""
    c = carray(i8_pointer(ctx), 2)
    t = carray(i8_pointer(c[0]), (N_TABLE, 5))
    nt = carray(i8_pointer(c[1]), (N_NEWTON_TABLE, 5))
    N = f1(t, 8).shape[0] + i1(t, 12).shape[0]
    ok = newton_dense(carray(f8_pointer(out), (N, N)), carray(f8_pointer(x), N), t, nt)
    return 1 if ok else 0
