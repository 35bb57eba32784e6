"""The dense constraint rows of a whole system (``StackedRows.dense``, used by the residual
and ``constraint``) against the block-by-block rows (``ConstraintRows.rows``, which build
``G``).

Two formulations of the same rows: all marker frames and label rows of the system in one
compiled pass, normalisations and drive rows added in place, versus joint by joint through
``PairFrames``/``LabelRows`` and the drive's own ``WeightedRow.evaluate``.  Checked on the
rigid slider-crank (a drive, redundant rows removed) and a flexible pendulum.
"""
import numpy as np
import pytest
from test_slider_crank import model as slider_crank

import flexmbs as fm
from flexmbs.compiled import use_compiled
from flexmbs.integrate.affine_step import AffineStep
from flexmbs.system.assembly import AssembledSystem

pytestmark = pytest.mark.skipif(not use_compiled(), reason="compares the compiled kernels "
                                "with their references (FLEXMBS_KERNELS=reference)")


def _flexible_pendulum():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bodies"))
    from flexcases import pendulum_cb
    beam = fm.FlexibleBody("beam", pendulum_cb(3))
    return fm.System(gravity=(0, -9.81, 0)).add(
        fm.Revolute("pin", fm.ground, beam["pin"], axis="z"))


def blockwise_rows(asm, q, t):
    """``(g, G dense)`` of the active rows block by block (``ConstraintRows.rows`` at
    order 2: the blockwise path, no stacking)."""
    parts = asm.constraint_rows.rows(q, t, 2)
    g = np.concatenate([V for _, V, _, _ in parts])
    G = np.zeros((len(g), asm.n_q))
    r0 = 0
    for bi, V, D, _ in parts:
        G[r0:r0 + len(V), asm.blocks[bi].idx] = D[:, :-1]
        r0 += len(V)
    return g, G


@pytest.mark.parametrize("which", ["slider_crank", "flexible_pendulum", "point_mass"])
def test_dense_rows_equal_blockwise_rows(which):
    model = {"slider_crank": lambda: slider_crank()[0], "flexible_pendulum": _flexible_pendulum,
             "point_mass": _point_mass_slider_crank}[which]()
    asm = AssembledSystem(model)
    if which == "slider_crank":
        asm.active = np.arange(asm.n_rows_all) % 5 != 3       # some rows inactive
    rows = asm.constraint_rows
    assert rows.stacked().complete
    rng = np.random.default_rng(1)
    q = asm.initial_q() + 1e-2 * rng.normal(size=asm.n_q)
    t = 0.37
    g_dense, G_dense = rows.dense_rows(q, t)
    g_blocks, G_blocks = blockwise_rows(asm, q, t)
    assert g_dense.shape == (asm.n_lam,)
    assert np.abs(g_dense - g_blocks).max() <= 1e-14
    assert np.abs(G_dense - G_blocks).max() <= 1e-14 * np.abs(G_blocks).max()
    # the residual's G^T lam
    lam = rng.normal(size=asm.n_lam)
    qd, qdd = rng.normal(size=asm.n_q), rng.normal(size=asm.n_q)
    r_lam = asm.residual(q, qd, qdd, lam, t) - asm.residual(q, qd, qdd, 0 * lam, t)
    assert np.abs(r_lam - G_blocks.T @ lam).max() <= 1e-12 * np.abs(G_blocks.T @ lam).max()


def _point_mass_slider_crank():
    """The rigid slider-crank with a point-mass slider (spherical pin, cylindrical guide,
    as in the main demo case) and the crank drive."""
    from test_slider_crank import A_, B_, OMEGA
    m, crank, rod, _ = slider_crank()
    Cp = np.array([A_ + B_, 0.0, 0.0])
    slider = fm.PointMass("slider", 0.5, r0=Cp)
    model = fm.System(gravity=m.gravity, name="point_mass_slider_crank")
    model.add(fm.Revolute("A", fm.ground, crank, at=(0, 0, 0), axis="z"),
              fm.Revolute("B", crank, rod, at=(A_, 0, 0), axis="z"),
              fm.Spherical("C", rod, slider, at=Cp),
              fm.Cylindrical("D", fm.ground, slider, at=Cp, axis="x"),
              fm.AngularVelocityDrive("drive", joint="A", omega=OMEGA))
    return model


def _slider_crank_torque():
    """The rigid slider-crank driven by a torque (no drive rows), some rows inactive."""
    m, crank, rod, slider = slider_crank()
    model = fm.System(gravity=m.gravity, name="slider_crank_torque")
    model.add(*[j for j in m.joints], fm.ExternalTorque("drive", at=crank, torque=(0, 0, 0.3)))
    return model


@pytest.mark.parametrize("which", ["slider_crank_torque", "slider_crank_drive",
                                   "flexible_pendulum", "point_mass"])
def test_stacked_newton_matrix_and_step_residual_equal_blockwise(which, monkeypatch):
    """The Newton matrix with the constraint Hessian of all rows in one compiled call
    (``stacked_hessian_sum``), the fused step residual (``affine_residual``, drive rows
    included) and the step's whole Newton matrix (``newton_dense``) against the
    block-by-block Hessian sums, ``residual``/``constraint`` and ``newton_matrix``."""
    model = {"slider_crank_torque": _slider_crank_torque,
             "slider_crank_drive": lambda: slider_crank()[0],        # a velocity drive row
             "flexible_pendulum": _flexible_pendulum,
             "point_mass": _point_mass_slider_crank}[which]()
    asm = AssembledSystem(model)
    if which.startswith("slider_crank"):
        asm.active = np.arange(asm.n_rows_all) % 5 != 3
    plan = asm.affine_plan()
    assert plan is not None
    rng = np.random.default_rng(3)
    n = asm.n_q
    q = asm.initial_q() + 1e-2 * rng.normal(size=n)
    qd, qdd, lam = rng.normal(size=n), rng.normal(size=n), rng.normal(size=asm.n_lam)
    t, cK, cC = 0.21, 1e-6, 1e-3
    A = asm.newton_matrix(q, qd, qdd, lam, t, cK, cC, 1.0).toarray()
    # the step residual on the affine manifold: q0, v0, w0 such that (q, qd, qdd) result
    gp, bp = 37.0, 2.3e4
    q0 = q - 1e-3 * rng.normal(size=n)
    v0, w0 = qd - gp * (q - q0), qdd - bp * (q - q0)
    x = np.concatenate([q, lam / bp])
    step = AffineStep(asm, plan).set(q0, v0, w0, gp, bp, t)
    F = np.empty(n + asm.n_lam)
    step(x.copy(), F)
    # the step's Newton matrix in one compiled call (dense; a torque as a linear force)
    assert step.native
    S = step.newton_dense(x)
    step.q_last[:] = np.nan                  # rows and frames not cached: evaluated anew
    S2 = step.newton_dense(x)
    monkeypatch.setattr(AssembledSystem, "affine_plan", lambda self: None)
    asm2 = AssembledSystem(model)
    asm2.active = asm.active
    B = asm2.newton_matrix(q, qd, qdd, lam, t, cK, cC, 1.0).toarray()
    assert np.abs(A - B).max() <= 1e-13 * np.abs(B).max()
    r = asm2.residual(q, qd, qdd, lam, t)
    F_ref = np.concatenate([r / bp, asm2.constraint(q, t)])
    assert np.abs(F - F_ref).max() <= 1e-13 * np.abs(F_ref).max()
    S_ref = asm2.newton_matrix(q, qd, qdd, bp * x[n:], t, 1.0 / bp, gp / bp, 1.0).toarray()
    assert np.abs(S - S_ref).max() <= 1e-13 * np.abs(S_ref).max()
    assert np.abs(S2 - S_ref).max() <= 1e-13 * np.abs(S_ref).max()


@pytest.mark.parametrize("which", ["slider_crank_torque", "slider_crank_drive"])
def test_compiled_step_residual_allocates_nothing_on_a_rigid_system(which):
    """The compiled step residual of a rigid system (the C function the compiled step
    loop calls, :func:`~flexmbs.integrate.step_kernel.table_residual_c`) works in its
    table's work arrays: numba's runtime counts no allocation over 20 calls (the counter
    itself checked on a kernel that allocates one array), and the values equal the
    Python call's (:meth:`AffineStep.__call__`, same kernel, arrays passed in)."""
    from numba.core.runtime import _nrt_python, rtsys

    from flexmbs.integrate.genalpha_kernel import update
    from flexmbs.integrate.step_kernel import table_residual_c
    model = {"slider_crank_torque": _slider_crank_torque,
             "slider_crank_drive": lambda: slider_crank()[0]}[which]()
    asm = AssembledSystem(model)
    plan = asm.affine_plan()
    n = asm.n_q
    rng = np.random.default_rng(5)
    q = asm.initial_q() + 1e-2 * rng.normal(size=n)
    step = AffineStep(asm, plan).set(q - 1e-3, rng.normal(size=n), rng.normal(size=n), 37.0,
                                     2.3e4, 0.21)
    x = np.concatenate([q, rng.normal(size=asm.n_lam)])
    F_py = np.empty_like(x)
    step(x.copy(), F_py)
    call = table_residual_c.compile().ctypes
    F = np.empty_like(x)
    ctx = step.c_context()
    assert call(F.ctypes.data, x.ctypes.data, ctx) == 1          # compiled, warm
    z = np.zeros(2)
    update(z, z[:1], z[:1], z[:1], z[:1], 0.1, 0.5, 0.5, 0.25, 0.5, 1.0)
    enabled = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        s0 = rtsys.get_allocation_stats().alloc
        update(z, z[:1], z[:1], z[:1], z[:1], 0.1, 0.5, 0.5, 0.25, 0.5, 1.0)
        s1 = rtsys.get_allocation_stats().alloc
        for _ in range(20):
            call(F.ctypes.data, x.ctypes.data, ctx)
        s2 = rtsys.get_allocation_stats().alloc
    finally:
        if not enabled:
            _nrt_python.memsys_disable_stats()
    assert s1 - s0 >= 5                  # update makes its five arrays: counted
    assert s2 - s1 == 0
    assert np.array_equal(F, F_py)


@pytest.mark.parametrize("which", ["slider_crank_torque", "slider_crank_drive"])
def test_compiled_newton_matrix_allocations_on_a_rigid_system(which):
    """The compiled Newton matrix of a rigid system (:func:`~flexmbs.integrate.step_kernel.
    newton_dense_c`, the C function the compiled step loop calls) allocates, per call, the
    two arrays of the bodies' C function (``bodies_newton_values``: its values and the
    rigid bodies' work array) and, when ``q`` is not the residual's last ``q``, the seven
    of ``stacked_rows`` (``g, G, C, D, p, dp`` and the frames' work array): numba's
    runtime counts 2 and 9 per call over 10 calls each (the counter itself checked on a
    kernel that allocates five arrays).  Both paths give the same matrix, the one at the
    residual's ``q`` on the residual's rows, the other on rows evaluated anew."""
    from numba.core.runtime import _nrt_python, rtsys

    from flexmbs.integrate.genalpha_kernel import update
    from flexmbs.integrate.step_kernel import newton_dense_c, table_residual_c
    model = {"slider_crank_torque": _slider_crank_torque,
             "slider_crank_drive": lambda: slider_crank()[0]}[which]()
    asm = AssembledSystem(model)
    n = asm.n_q
    rng = np.random.default_rng(5)
    q = asm.initial_q() + 1e-2 * rng.normal(size=n)
    step = AffineStep(asm, asm.affine_plan()).set(q - 1e-3, rng.normal(size=n),
                                                  rng.normal(size=n), 37.0, 2.3e4, 0.21)
    x = np.concatenate([q, rng.normal(size=asm.n_lam)])
    x2 = x.copy()
    x2[:n] += 1e-4 * rng.normal(size=n)
    N = x.size
    res, jac = table_residual_c.compile().ctypes, newton_dense_c.compile().ctypes
    F, W, W2 = np.empty(N), np.empty((N, N)), np.empty((N, N))
    _, ctx = step.c_newton()
    assert res(F.ctypes.data, x.ctypes.data, step.c_context()) == 1      # q_last = q
    assert jac(W.ctypes.data, x.ctypes.data, ctx) == 1                   # compiled, warm
    assert jac(W2.ctypes.data, x2.ctypes.data, ctx) == 1
    z = np.zeros(2)
    update(z, z[:1], z[:1], z[:1], z[:1], 0.1, 0.5, 0.5, 0.25, 0.5, 1.0)
    enabled = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        s0 = rtsys.get_allocation_stats().alloc
        update(z, z[:1], z[:1], z[:1], z[:1], 0.1, 0.5, 0.5, 0.25, 0.5, 1.0)
        s1 = rtsys.get_allocation_stats().alloc
        for _ in range(10):
            jac(W.ctypes.data, x.ctypes.data, ctx)
        s2 = rtsys.get_allocation_stats().alloc
        for _ in range(10):
            jac(W2.ctypes.data, x2.ctypes.data, ctx)
        s3 = rtsys.get_allocation_stats().alloc
    finally:
        if not enabled:
            _nrt_python.memsys_disable_stats()
    assert s1 - s0 >= 5                  # update makes its five arrays: counted
    assert s2 - s1 == 2 * 10
    assert s3 - s2 == 9 * 10
    assert res(F.ctypes.data, x2.ctypes.data, step.c_context()) == 1     # q_last = q2
    W2_same = np.empty((N, N))
    assert jac(W2_same.ctypes.data, x2.ctypes.data, ctx) == 1
    assert np.array_equal(W2_same, W2)
