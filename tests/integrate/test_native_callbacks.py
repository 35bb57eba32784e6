"""The compiled C callbacks PETSc calls directly, against their Python forms.

Two formulations of each: the step residual as PETSc's C ``SNESFunction``
(``affine_residual_c``) against the same kernel called from Python (``AffineStep.__call__``),
and the Newton increment test as PETSc's C convergence test (``increment_test_c``) against
``NewtonSolver._converged``; plus the error path of the C residual (a non-finite value is
named after the solve, as the Python path names it during the call).
"""
import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest
from petsc4py import PETSc

import flexmbs as fm
from flexmbs.compiled import use_compiled
from flexmbs.integrate import _newton
from flexmbs.integrate._newton import NewtonFailure, NewtonSolver
from flexmbs.integrate.affine_step import AffineStep
from flexmbs.system.assembly import AssembledSystem

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bodies"))
from flexcases import pendulum_cb  # noqa: E402

#: the time loop of SNES solves, whose callbacks these tests compare (the compiled loop,
#: ``test_compiled_loop.py``, calls none of them)
SNES_LOOP = {"compiled_loop": False}

pytestmark = pytest.mark.skipif(not use_compiled(), reason="the compiled callbacks against "
                                "their Python forms (FLEXMBS_KERNELS=reference)")


def flexible_pendulum():
    beam = fm.FlexibleBody("beam", pendulum_cb(3))
    return fm.System(gravity=(0, -9.81, 0)).add(
        fm.Revolute("pin", fm.ground, beam["pin"], axis="z"))


def step_at(asm, rng, t=0.1):
    n = asm.n_q
    q = asm.initial_q() + 1e-2 * rng.normal(size=n)
    gp, bp = 37.0, 2.3e4
    q0 = q - 1e-3 * rng.normal(size=n)
    v0, w0 = rng.normal(size=n), rng.normal(size=n)
    x = np.concatenate([q, rng.normal(size=asm.n_lam) / bp])
    return AffineStep(asm, asm.affine_plan()).set(q0, v0, w0, gp, bp, t), x


def test_c_residual_equals_the_python_call():
    asm = AssembledSystem(flexible_pendulum())
    step, x = step_at(asm, np.random.default_rng(5))
    assert step.native
    out = np.empty_like(x)
    step(x.copy(), out)
    X = PETSc.Vec().createWithArray(x.copy())
    Fv = X.duplicate()
    fn = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * 4)(step.c_function)
    calls = int(step.status[1])
    assert fn(None, X.handle, Fv.handle, step.c_context()) == 0
    assert np.array_equal(Fv.getArray(), out)          # the same kernel: bit for bit
    assert step.status[1] == calls + 1 and step.status[0] == 0
    assert np.array_equal(step.q_last, x[:asm.n_q])


@pytest.mark.parametrize("which", ["friction", "springs", "stops"])
def test_c_residual_with_force_elements_equals_the_python_call(which):
    """The compiled residual reads its arguments from the table and runs the steps of
    ``affine_residual`` itself (``table_residual``): on systems with joint friction, with
    springs, bushings and point forces, and with joint stops its values equal the
    Python call's (``affine_residual`` with the arrays passed in) bit for bit."""
    from tests.forces.test_friction_kernel import slider_crank
    from tests.forces.test_spring_kernel import rigid_model, stops_model
    model = {"friction": slider_crank, "springs": rigid_model, "stops": stops_model}[which]()
    asm = AssembledSystem(model[0] if isinstance(model, tuple) else model)
    step, x = step_at(asm, np.random.default_rng(7))
    out = np.empty_like(x)
    step(x.copy(), out)
    X = PETSc.Vec().createWithArray(x.copy())
    Fv = X.duplicate()
    fn = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * 4)(step.c_function)
    assert fn(None, X.handle, Fv.handle, step.c_context()) == 0
    assert np.all(np.isfinite(out)) and np.any(out != 0.0)
    assert np.array_equal(Fv.getArray(), out)


def test_c_convergence_test_equals_the_python_test(monkeypatch):
    """Same Newton iterations, Jacobians and trajectory with either form of the test."""
    def run(native):
        orig = _newton.NewtonSolver.__init__

        def init(self, *a, **k):
            orig(self, *a, native_test=native, **k)
        monkeypatch.setattr(_newton.NewtonSolver, "__init__", init)
        res = fm.simulate(flexible_pendulum(), 0.3, 1e-3, rho_inf=0.9, output_dt=0.1,
                          integrator_options=SNES_LOOP)
        monkeypatch.undo()
        return res
    a, b = run(True), run(False)
    assert a.stats.newton_iterations == b.stats.newton_iterations > a.stats.steps
    assert a.stats.jacobian_evaluations == b.stats.jacobian_evaluations
    assert np.array_equal(a.q, b.q)


def test_c_residual_names_a_non_finite_value_after_the_solve():
    asm = AssembledSystem(flexible_pendulum())
    step, x = step_at(asm, np.random.default_rng(6))
    step.v0[asm.n_q - 1] = np.nan                      # a modal velocity
    n, m = asm.n_q, asm.n_lam
    ns = NewtonSolver(n + m, prefix="fmbs_native_nan_", increment_rtol=1e-5,
                      block_sizes=(n, m), n_algebraic=m)

    def J(x):
        q = x[:n]
        return asm.newton_matrix(q, np.zeros(n), np.zeros(n), np.zeros(m), 0.1, 1.0, 1.0, 1.0)
    with pytest.raises(NewtonFailure, match=r"DIVERGED_FNORM_NAN, non-finite residual "
                                            r"\(non-finite residual at t = 0.1 s from "
                                            r"body 'beam'\)"):
        ns.solve(x, step, J, inplace=True)
    ns.destroy()


def test_c_jacobian_equals_the_python_jacobian(monkeypatch):
    """The C Jacobian callback (reuse policy in C, matrix by ``newton_dense_c``) against
    ``NewtonSolver._jacobian`` filling the same dense matrix: the same iterations,
    Jacobians and trajectory, bit for bit."""
    def run(native):
        if not native:
            orig = _newton.NewtonSolver._install_jacobian
            monkeypatch.setattr(_newton.NewtonSolver, "_install_jacobian",
                                lambda self, F: orig(self, None))
        res = fm.simulate(flexible_pendulum(), 0.3, 1e-3, rho_inf=0.9, output_dt=0.1,
                          integrator_options=SNES_LOOP)
        monkeypatch.undo()
        return res
    a, b = run(True), run(False)
    assert 0 < a.stats.jacobian_evaluations < a.stats.newton_iterations
    assert a.stats.newton_iterations == b.stats.newton_iterations
    assert a.stats.jacobian_evaluations == b.stats.jacobian_evaluations
    assert np.array_equal(a.q, b.q) and np.array_equal(a.lam, b.lam)


def test_c_jacobian_reports_a_non_finite_matrix():
    asm = AssembledSystem(flexible_pendulum())
    step, x = step_at(asm, np.random.default_rng(7))
    n, m = asm.n_q, asm.n_lam
    ns = NewtonSolver(n + m, prefix="fmbs_native_jnan_", increment_rtol=1e-5,
                      block_sizes=(n, m), n_algebraic=m)

    def J(x):
        return step.newton_dense(x)
    ns.solve(x, step, J, inplace=True)          # set up (dense), C Jacobian installed
    assert ns.dense and ns._native_J is not None
    tptr, *flats = step.plan.pack.tangent_pack()
    flats[2][:] = np.nan                       # D_e of the tangent only: F stays finite
    ns.invalidate_jacobian()
    with pytest.raises(NewtonFailure, match="non-finite entries in the Jacobian"):
        ns.solve(x, step, J, inplace=True)
    ns.destroy()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_c_newton_matrix_stopped_on_an_exception_is_reported_failed():
    """``newton_dense_c`` at ``beta' = 0`` stops on the division ``c_K = 1/beta'`` (a C
    callback prints the exception and returns 0): that must read as a failed matrix, as
    a non-finite one does, while the same call at the step's ``beta'`` reads as finite;
    the Python call gives no finite matrix either."""
    asm = AssembledSystem(flexible_pendulum())
    step, x = step_at(asm, np.random.default_rng(11))
    fill, ctx = step.c_newton()
    fn = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * 3)(fill)
    W = np.zeros((len(x), len(x)))
    assert fn(W.ctypes.data, x.ctypes.data, ctx) == 1 and np.isfinite(W).all()
    assert np.isfinite(step.newton_dense(x)).all()
    step.scal[1] = 0.0                                  # beta' = 0: 1/beta' raises
    assert fn(W.ctypes.data, x.ctypes.data, ctx) == 0
    assert not np.isfinite(step.newton_dense(x)).all()


@pytest.mark.skipif(not use_compiled(), reason="compiled kernels only")
def test_a_residual_that_raises_leaves_no_stale_rows():
    """The compiled residual writes the constraint rows and frames into the table in
    place.  If a force element raises part-way (here the friction law divides by a zero
    coefficient at the second point), a later Newton matrix at the first point must not
    reuse the half-written rows as if they were the first point's: it equals the matrix
    of a fresh step (before: up to 2.7 off, reported finite), and the system's cache no
    longer claims rows at the first point."""
    from flexmbs.forces import friction_kernel as fk
    from flexmbs.integrate.step_kernel import newton_dense_c, table_residual_c
    from tests.forces.test_friction_kernel import slider_crank

    asm = slider_crank().assemble()
    plan = asm.affine_plan()
    rng = np.random.default_rng(1)
    n, m = asm.n_q, asm.n_lam
    q = asm.initial_q() + 1e-2 * rng.normal(size=n)
    state = (q - 1e-3 * rng.normal(size=n), rng.normal(size=n), rng.normal(size=n),
             37.0, 2.3e4, 0.1)
    x1 = np.concatenate([q, rng.normal(size=m) / 2.3e4])
    x2 = x1.copy()
    x2[:n] += 0.05

    def residual(step, x):
        F, x = np.empty_like(x), x.copy()
        return table_residual_c.compile().ctypes(F.ctypes.data, x.ctypes.data,
                                                  step.c_context())

    def newton(step, x):
        step._newton_table()
        out, x = np.full((x.size, x.size), np.nan), x.copy()
        ok = newton_dense_c.compile().ctypes(out.ctypes.data, x.ctypes.data,
                                             step._nctx_address)
        return ok, out

    fresh = AffineStep(asm, plan).set(*state)
    residual(fresh, x1)
    _, W_ref = newton(fresh, x1)
    step = AffineStep(asm, plan).set(*state)
    residual(step, x1)
    par = plan.friction.fr_par
    keep = par.copy()
    par[:, [fk.P_MU_S, fk.P_MU_K, fk.P_V_S]] = 0.0
    try:
        assert residual(step, x2) == 0                  # not finite (it raised)
    finally:
        par[:] = keep
    ok, W = newton(step, x1)
    assert ok == 1 and np.array_equal(W, W_ref)
