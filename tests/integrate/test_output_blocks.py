"""Outputs in blocks: one call of the compiled loop passes many output times and hands
their states back together (``compiled_steps.Block``, ``GeneralizedAlpha._emit_block``).

Reference: the same runs with one call per output time (``BLOCK_OUTPUTS = 0``, the
loop returning at every output as before), which must record the same values to the
last bit: the states, the projected velocities, reactions, joint coordinates, energies
and the cumulative solver counters of every output, the result file and its
continuation from an interruption, a step redone on the SNES path right after an output,
and a run stopped at an output inside a block."""
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.compiled import use_compiled
from flexmbs.integrate import compiled_steps, genalpha
from flexmbs.io import results
from flexmbs.io.results import ResultWriter, read_restart

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "bodies"))
from flexcases import pendulum_cb  # noqa: E402

pytestmark = pytest.mark.skipif(not use_compiled(), reason="the compiled loop's blocks "
                                "(FLEXMBS_KERNELS=reference has no compiled loop)")


def rigid_pendulum():
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    return fm.System(gravity=(0, -9.81, 0), name="pend").add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))


def flexible_pendulum():
    beam = fm.FlexibleBody("beam", pendulum_cb(3))
    return fm.System(gravity=(0, -9.81, 0), name="flex").add(
        fm.Revolute("pin", fm.ground, beam["pin"], axis="z"))


@pytest.fixture
def calls(monkeypatch):
    """The calls of the compiled loop and the output times they passed in blocks."""
    count = {"calls": 0, "passed": 0}
    advance = compiled_steps.CompiledSteps.advance

    def counted(self, *args, **kw):
        r = advance(self, *args, **kw)
        count["calls"] += 1
        count["passed"] += 0 if r.block is None else len(r.block)
        return r
    monkeypatch.setattr(compiled_steps.CompiledSteps, "advance", counted)
    return count


def one_by_one(monkeypatch):
    monkeypatch.setattr(genalpha, "BLOCK_OUTPUTS", 0)


def same_results(a, b):
    for name in ("t", "q", "qd", "lam"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for group in ("reactions", "joint_coordinates", "energy", "sensors"):
        ga, gb = getattr(a, group), getattr(b, group)
        assert ga.keys() == gb.keys(), group
        for k in ga:
            np.testing.assert_array_equal(ga[k], gb[k], err_msg=f"{group}/{k}")
    for key in ("steps", "newton_iterations", "jacobian_evaluations", "linear_solves",
                "rejected_steps", "step_cuts", "min_step"):
        assert getattr(a.stats, key) == getattr(b.stats, key), key


def same_files(pa, pb):
    with h5py.File(pa) as fa, h5py.File(pb) as fb:
        names = []
        fa.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        assert names
        for n in names:
            if n not in ("checkpoint", "checkpoint_row"):
                np.testing.assert_array_equal(fa[n][()], fb[n][()], err_msg=n)


@pytest.mark.parametrize("build, t_end, dt", [(rigid_pendulum, 0.3, 1e-3),
                                              (flexible_pendulum, 0.02, 1e-4)])
def test_a_block_of_outputs_records_what_one_call_per_output_does(build, t_end, dt, calls,
                                                                  monkeypatch, tmp_path):
    new = fm.simulate(build(), t_end, dt, rho_inf=0.9, output_dt=dt,
                      output=str(tmp_path / "new" / "r.h5"))
    n_out = new.t.size - 1
    # every output but the t_end of each call passed inside a block: a call per 65
    assert calls["passed"] == n_out - calls["calls"] and calls["calls"] <= n_out // 64 + 2
    one_by_one(monkeypatch)
    calls["calls"] = calls["passed"] = 0
    ref = fm.simulate(build(), t_end, dt, rho_inf=0.9, output_dt=dt,
                      output=str(tmp_path / "ref" / "r.h5"))
    assert calls["passed"] == 0 and calls["calls"] == n_out
    same_results(new, ref)
    same_files(new.path, ref.path)
    # (output_dt a multiple of dt: blocks of output times between steps)
    a = fm.simulate(build(), t_end, dt, rho_inf=0.9, output_dt=3 * dt)
    monkeypatch.undo()
    same_results(fm.simulate(build(), t_end, dt, rho_inf=0.9, output_dt=3 * dt), a)


def test_a_block_ends_after_its_steps_in_wall_time(calls, monkeypatch):
    """The rows of a block wait for its last step: a call passes output times only
    within ``FIRST_BLOCK_STEPS`` steps, then within ``BLOCK_SECONDS`` of steps at the
    last call's speed (here none: every later call returns at its first output)."""
    monkeypatch.setattr(compiled_steps, "FIRST_BLOCK_STEPS", 10)
    monkeypatch.setattr(compiled_steps, "BLOCK_SECONDS", 1e-12)
    new = fm.simulate(rigid_pendulum(), 0.3, 1e-3, rho_inf=0.9, output_dt=3e-3)
    # the first call: outputs at steps 3, 6, 9 passed, the one at step 12 ends it
    assert calls["passed"] == 3 and calls["calls"] == new.t.size - 1 - 3
    one_by_one(monkeypatch)
    same_results(new, fm.simulate(rigid_pendulum(), 0.3, 1e-3, rho_inf=0.9,
                                  output_dt=3e-3))


def test_a_step_redone_right_after_an_output_of_a_block(calls, monkeypatch):
    """snes_max_it = 2: the compiled loop gives up on steps needing a third iteration,
    some right after an output time it passed; the SNES path redoes them the same way."""
    kw = {"petsc_options": {"snes_max_it": 2}, "rho_inf": 0.9, "output_dt": 2e-3}
    new = fm.simulate(rigid_pendulum(), 0.3, 2e-3, **kw)
    assert new.stats.step_cuts > 0 and calls["passed"] > 0
    one_by_one(monkeypatch)
    same_results(new, fm.simulate(rigid_pendulum(), 0.3, 2e-3, **kw))


def test_an_interrupted_run_with_blocks_continues_bit_for_bit(tmp_path, monkeypatch):
    """Every row flushed (``FLUSH_SECONDS = 0``): a row inside a block has no checkpoint
    (the Newton solver is past it), the block's last row has; the run is interrupted
    inside a block and continued from the file to the uninterrupted run's rows."""
    dt, t_end = 1e-3, 0.3
    full = fm.simulate(rigid_pendulum(), t_end, dt, output_dt=dt)
    monkeypatch.setattr(results, "FLUSH_SECONDS", 0.0)
    append, rows = ResultWriter.append, [0]

    def interrupted(self, r):
        append(self, r)
        rows[0] += 1
        if rows[0] == 100:          # 99 outputs after t0: inside the second block
            raise KeyboardInterrupt("test")
    monkeypatch.setattr(ResultWriter, "append", interrupted)
    out = tmp_path / "pend.h5"
    with pytest.raises(KeyboardInterrupt) as info:
        fm.simulate(rigid_pendulum(), t_end, dt, output_dt=dt, output=str(out))
    monkeypatch.undo()
    point = read_restart(info.value.result_path)
    assert point.n == 100
    # the last checkpoint: the end of the first call's block (t0, then 64 + 1 outputs)
    assert point.checkpoint_row == 65
    res = fm.simulate(rigid_pendulum(), t_end, dt, output_dt=dt, output=str(out),
                      restart=info.value.result_path)
    np.testing.assert_array_equal(res.t, full.t)
    np.testing.assert_array_equal(res.q, full.q)
    np.testing.assert_array_equal(res.qd, full.qd)
    np.testing.assert_array_equal(res.lam, full.lam)


def test_a_run_stopped_inside_a_block(monkeypatch):
    """A callback stopping at an output the loop passed: the run ends with that state,
    and no checkpoint goes with it (the solver is already at the call's end)."""
    asm = rigid_pendulum().assemble()
    init = fm.integrate.consistent_initial_conditions(asm, asm.initial_q(), asm.initial_qd(),
                                                      0.0)

    def run(blocks: bool):
        if not blocks:
            monkeypatch.setattr(genalpha, "BLOCK_OUTPUTS", 0)
        seen = []

        def callback(t, q, qd, qdd, lam, stats):
            seen.append((t, q, stats.steps, stats.newton_iterations))
            return len(seen) == 31
        integ = genalpha.GeneralizedAlpha(asm, rho_inf=0.9)
        traj = integ.run(init.q, init.qd, init.qdd, init.lam, 0.0, 0.2, h=1e-3,
                         output_times=np.arange(1, 201) * 1e-3, callback=callback,
                         callback_at_outputs=True, store=False)
        cp = integ.checkpoint()
        final = integ.final_state
        integ.destroy()
        monkeypatch.undo()
        return seen, final, cp, traj

    seen, final, cp, traj = run(True)
    seen_ref, final_ref, cp_ref, traj_ref = run(False)
    assert len(seen) == len(seen_ref) == 31
    for a, b in zip(seen, seen_ref):
        assert a[0] == b[0] and a[2:] == b[2:]
        np.testing.assert_array_equal(a[1], b[1])
    assert final.t == final_ref.t == seen[-1][0]
    np.testing.assert_array_equal(final.q, final_ref.q)
    assert cp is None and cp_ref is not None
    assert traj.stats.steps == 30


def test_the_writer_waits_for_a_checkpoint_before_writing_rows(tmp_path):
    """Rows due to be written while the integrator has no checkpoint (inside a block of
    outputs) wait for the first row that has one, so that the file's checkpoint is always
    that of its last row (a killed run restarts from its last row and its continuation
    never holds fewer rows); a flush asked for explicitly (closing) writes without."""
    given = {"cp": None}
    w = ResultWriter(str(tmp_path / "w.h5"), flush_seconds=3600.0,
                     checkpoint=lambda: given["cp"])
    for k in range(3):                  # the first row is due (creates the file): waits
        w.append({"time": (float(k), "s")})
    assert w.n_committed == 0
    given["cp"] = np.array([7.0, 8.0])
    w.append({"time": (3.0, "s")})      # written at once, with its checkpoint
    assert w.n_committed == 4
    with h5py.File(w.running_path) as f:
        assert len(f["time"]) == 4 and f["checkpoint_row"][()] == 3
    w.append({"time": (4.0, "s")})      # nothing due: waits for the flush interval
    assert w.n_committed == 4
    given["cp"] = None
    w.append({"time": (5.0, "s")})
    w.flush(checkpoint=True)            # no checkpoint: the one written stays
    with h5py.File(w.running_path) as f:
        assert len(f["time"]) == 6 and f["checkpoint_row"][()] == 3
        np.testing.assert_array_equal(f["checkpoint"][:], [7.0, 8.0])
    w.close("interrupted")


@pytest.mark.parametrize("build", [rigid_pendulum, flexible_pendulum])
@pytest.mark.parametrize("every", [1, 3])
@pytest.mark.parametrize("project", [True, False])
def test_a_block_recorded_at_once_is_its_rows_recorded_one_by_one(build, every, project,
                                                                  calls, monkeypatch):
    """``GeneralizedAlpha.run`` storing the outputs (no callback) records a block's rows
    with one copy (``Recorder.extend``): the same arrays, ``==``, as emitting the rows one
    by one (``emit_rows`` off) and as one call per output (``BLOCK_OUTPUTS = 0``)."""
    from flexmbs.integrate import integrate
    from flexmbs.simulate import prepare
    prep = prepare(build())
    dt, t_end = 1e-3, 0.25
    times = np.arange(1, int(round(t_end / dt)) + 1, every) * dt

    def run():
        return integrate(prep.asm, prep.initial.q, prep.initial.qd, t_end, h=dt,
                         rho_inf=0.9, output_times=times, project_velocity=project)
    blocks = run()
    assert calls["passed"] > 0.9 * times.size       # most rows in blocks
    emit_block = genalpha.GeneralizedAlpha._emit_block
    monkeypatch.setattr(genalpha.GeneralizedAlpha, "_emit_block",
                        lambda self, *a: emit_block(self, *a[:4], a[4] if len(a) > 4 else False))
    rows = run()
    one_by_one(monkeypatch)
    calls["passed"] = 0
    single = run()
    assert calls["passed"] == 0
    assert blocks.t.size == times.size
    for name in ("t", "q", "qd", "qdd", "lam"):
        for other in (rows, single):
            assert np.array_equal(getattr(blocks, name), getattr(other, name)), name
    for key in ("steps", "newton_iterations", "jacobian_evaluations", "min_step"):
        assert getattr(blocks.stats, key) == getattr(single.stats, key) \
            == getattr(rows.stats, key), key
