"""The compiled time loop (``flexmbs.integrate.steps_kernel``) against its reference, the
Python loop of ``GeneralizedAlpha.run`` with a PETSc SNES solve per step
(``compiled_loop=False``): the same trajectories to the Newton tolerance and the same
work counters on a rigid pendulum, a rigid four-bar and a flexible pendulum, and a step
the compiled loop cannot take (``snes_max_it`` too small) redone on the SNES path, with
the same step halving and the same failure report."""
import sys
from pathlib import Path

import numpy as np
import pytest

from petsc4py import PETSc

import flexmbs as fm
from flexmbs.compiled import use_compiled
from flexmbs.errors import ConvergenceError
from flexmbs.integrate import (GeneralizedAlpha, _newton, compiled_steps,
                               consistent_initial_conditions, petsc_options_from_args)
from flexmbs.integrate.settings import DEFAULTS
from flexmbs.system.assembly import AssembledSystem

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "system"))
sys.path.insert(0, str(HERE / "bodies"))
from fourbar import build as fourbar  # noqa: E402
from flexcases import pendulum_cb  # noqa: E402

pytestmark = pytest.mark.skipif(not use_compiled(), reason="the compiled loop against the "
                                "Python loop (FLEXMBS_KERNELS=reference has no compiled loop)")


def rigid_pendulum():
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    return fm.System(gravity=(0, -9.81, 0)).add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))


def rigid_fourbar():
    return fourbar(np.deg2rad(30.0), 6.0, "RRRR")[0]


def flexible_pendulum():
    beam = fm.FlexibleBody("beam", pendulum_cb(3))
    return fm.System(gravity=(0, -9.81, 0)).add(
        fm.Revolute("pin", fm.ground, beam["pin"], axis="z"))


def flexible_chain_6():
    """Six flexible rods pinned end to end: 90 unknowns, between ``DENSE_MAX`` and
    ``LOOP_DENSE_MAX`` (dense only when the compiled loop takes the steps)."""
    sys.path.insert(0, str(HERE / "system"))
    from test_local_rows import flexible_chain
    return flexible_chain(6)


@pytest.fixture
def loop_steps(monkeypatch):
    """The number of steps the compiled loop took (a counter around its entry point)."""
    count = [0]
    advance = compiled_steps.CompiledSteps.advance

    def counted(self, *args, **kw):
        r = advance(self, *args, **kw)
        count[0] += r.steps
        return r
    monkeypatch.setattr(compiled_steps.CompiledSteps, "advance", counted)
    return count


def run(build, loop: bool, t_end: float, dt: float, **kw):
    return fm.simulate(build(), t_end, dt, rho_inf=0.9, output_dt=t_end / 4,
                       integrator_options={"compiled_loop": loop}, **kw)


@pytest.mark.parametrize("build, t_end, dt", [(rigid_pendulum, 0.5, 1e-3),
                                              (rigid_fourbar, 0.3, 1e-3),
                                              (flexible_pendulum, 0.02, 1e-4),
                                              (flexible_chain_6, 0.05, 1e-3)])
def test_the_compiled_loop_repeats_the_snes_loop(build, t_end, dt, loop_steps):
    if build is flexible_chain_6:   # the SNES loop's matrix sparse, the compiled loop's dense
        asm = AssembledSystem(build())
        assert _newton.DENSE_MAX < asm.n_q + asm.n_lam <= _newton.LOOP_DENSE_MAX
    ref = run(build, False, t_end, dt)
    assert loop_steps[0] == 0
    new = run(build, True, t_end, dt)
    # every step in the loop, the first included (the solver is set up without a solve)
    assert loop_steps[0] == new.stats.steps == ref.stats.steps
    # the same algorithm: the same Newton iterations and Jacobians (to one iteration in
    # a hundred, a round-off flip of the increment test)
    for key in ("newton_iterations", "jacobian_evaluations"):
        a, b = getattr(new.stats, key), getattr(ref.stats, key)
        assert abs(a - b) <= 0.01 * b, key
    # states within the Newton tolerance (a fraction newton_rtol of the model's scale)
    np.testing.assert_array_equal(new.t, ref.t)
    s_q = max(1.0, float(np.max(np.abs(ref.q))))
    for name in ("q", "qd", "lam"):
        a, b = getattr(new, name), getattr(ref, name)
        scale = max(1.0, float(np.max(np.abs(b))))
        assert np.max(np.abs(a - b)) <= DEFAULTS.newton_rtol * s_q * scale, name


def test_a_failed_step_is_redone_on_the_snes_path(loop_steps):
    """snes_max_it = 2: steps needing a third iteration fail, are halved and recovered,
    the same in both loops (the failures are SNES's own, counted as before)."""
    kw = {"petsc_options": {"snes_max_it": 2}}
    ref = run(rigid_pendulum, False, 0.3, 2e-3, **kw)
    new = run(rigid_pendulum, True, 0.3, 2e-3, **kw)
    assert ref.stats.step_cuts > 0 and loop_steps[0] > 0
    for key in ("steps", "rejected_steps", "step_cuts", "newton_iterations",
                "jacobian_evaluations"):
        assert getattr(new.stats, key) == getattr(ref.stats, key), key
    np.testing.assert_allclose(new.q, ref.q, rtol=0, atol=DEFAULTS.newton_rtol)


def test_a_failing_run_reports_as_before():
    """snes_max_it = 1 on the four-bar: no step converges, the halving ends in the same
    ConvergenceError (time, step, reason and the named residual rows)."""
    msgs = []
    for loop in (False, True):
        with pytest.raises(ConvergenceError) as err:
            run(rigid_fourbar, loop, 0.3, 2e-3, petsc_options={"snes_max_it": 1})
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]
    assert "Newton did not converge" in msgs[1] and "largest residual rows" in msgs[1]


def test_command_line_snes_max_it_reaches_the_compiled_loop(loop_steps):
    """``-<prefix>snes_max_it 2`` from the command line (the global options database): the
    compiled loop, which runs without a SNES, reads it as SNES does, so the run repeats
    the SNES loop given the same option as ``petsc_options``; the SNES of such a run is
    set up from the options when it is asked for."""
    ref = run(rigid_pendulum, False, 0.3, 2e-3, petsc_options={"snes_max_it": 2})
    inserted = petsc_options_from_args([f"-{DEFAULTS.options_prefix}snes_max_it", "2"])
    try:
        new = run(rigid_pendulum, True, 0.3, 2e-3)
    finally:
        for k in inserted:
            PETSc.Options().delValue(k)
    assert ref.stats.step_cuts > 0 and loop_steps[0] > 0
    for key in ("steps", "rejected_steps", "step_cuts", "newton_iterations",
                "jacobian_evaluations"):
        assert getattr(new.stats, key) == getattr(ref.stats, key), key
    # every step in the loop: the SNES is made, and set up from the options, on demand
    asm = AssembledSystem(rigid_pendulum())
    cs = consistent_initial_conditions(asm, asm.initial_q(), asm.initial_qd())
    ga = GeneralizedAlpha(asm, rho_inf=0.9, options_prefix="fmbs_loop_t1_")
    n0 = loop_steps[0]
    ga.run(cs.q, cs.qd, cs.qdd, cs.lam, 0.0, 0.01, h=1e-3)
    assert loop_steps[0] - n0 == 10
    W = ga.newton.state().A[0]          # the loop's last Newton matrix (no PETSc yet)
    assert W.shape == (13, 13) and np.any(W != 0.0)
    assert ga.snes.getKSP().getType() == "preonly" and ga.snes.getType() == "newtonls"
    assert ga.snes.getTolerances()[3] == 20          # NEWTON_DEFAULTS' snes_max_it
    assert ga.newton.J.getType() == "seqdense"    # ... and PETSc's, once set up
    np.testing.assert_array_equal(ga.newton.J.getDenseArray(), W)


def test_the_loop_copy_refuses_arrays_of_different_shapes():
    """``steps_kernel.copy2`` copies by loops that numba does not bound-check: a shape
    mismatch raises instead of writing past the smaller array; equal shapes copy."""
    from flexmbs.integrate import steps_kernel
    A = np.arange(12.0).reshape(3, 4)
    B = np.zeros((3, 4))
    steps_kernel.copy2(A, B)
    assert np.array_equal(A, B)
    with pytest.raises(ValueError, match="shapes differ"):
        steps_kernel.copy2(np.zeros((4, 6)), np.zeros((3, 6)))
