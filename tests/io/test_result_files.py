"""Result files lose nothing: a run writes ``<name>.running.h5`` and only a complete run
replaces ``<name>.h5``; the final state is always an output; a killed run's flushed rows
stay readable; an interrupted or killed run continues (``restart=``) to the same numbers.

References: the uninterrupted run of the same model and settings (every output row, to
the last bit: the result file saves the integrator's whole state with its checkpoint),
and the requested times ``t0``, ``t_end``.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.io.results import (
    OutputLock, ResultWriter, read_restart, read_results, status_path, steps_in,
)

DT, OUT_DT = 2.0**-10, 2.0**-7          # binary fractions: t0 + k dt is exact
EXACT = {"jacobian_reuse": False}       # every Newton solve starts from a fresh matrix
ROOT = Path(__file__).resolve().parents[2]


def pendulum(name="pend"):
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    return fm.System(gravity=(0, -9.81, 0), name=name).add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))


def failing(name="pend"):
    """The pendulum pushed by a force that becomes NaN after t = 0.0205 s: Newton fails."""
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    bad = fm.FromCallables(lambda t: np.array([0, np.nan if t > 0.0205 else 0.0, 0]),
                           lambda t: np.zeros(3), lambda t: np.zeros(3))
    return fm.System(gravity=(0, -9.81, 0), name=name).add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"),
        fm.ExternalForce("f", at=rod, force=bad))


def test_status_names():
    assert status_path("out/arm.h5", "complete") == "out/arm.h5"
    assert status_path("out/arm.h5", "failed") == "out/arm.failed.h5"
    assert status_path("out/a__x=0.5.h5", "running") == "out/a__x=0.5.running.h5"
    assert status_path("out/arm", "diverged") == "out/arm.diverged.h5"


def test_only_a_complete_run_replaces_the_result(tmp_path):
    path = tmp_path / "pend.h5"
    first = fm.simulate(pendulum(), 0.05, 1e-3, output=str(path))
    assert first.path == str(path)
    with pytest.raises(fm.ConvergenceError) as info:
        fm.simulate(failing(), 0.05, 1e-3, output=str(path))
    assert info.value.result_path == str(tmp_path / "pend.failed.h5")
    kept = read_results(path)
    assert kept["attrs"]["status"] == "complete"
    np.testing.assert_array_equal(kept["time"], first.t)
    failed = read_results(tmp_path / "pend.failed.h5")
    assert failed["attrs"]["status"] == "failed" and 21 <= len(failed["time"])
    assert sorted(os.listdir(tmp_path)) == [".pend.lock", "pend.failed.h5", "pend.h5"]
    # a later complete run supersedes the failed one
    fm.simulate(pendulum(), 0.05, 1e-3, output=str(path))
    assert sorted(os.listdir(tmp_path)) == [".pend.lock", "pend.h5"]


def test_writer_is_running_until_closed(tmp_path):
    w = ResultWriter(tmp_path / "r.h5", flush_seconds=0.0)
    for k in range(3):
        w.append({"time": (0.1 * k, "s"), "x": (np.full(2, k), "m")})
    assert sorted(os.listdir(tmp_path)) == [".r.lock", "r.running.h5"]
    assert steps_in(tmp_path / "r.running.h5") == (3, pytest.approx(0.2))
    assert w.close("interrupted") == str(tmp_path / "r.interrupted.h5")
    data = read_results(tmp_path / "r.interrupted.h5")
    assert data["attrs"]["status"] == "interrupted" and data["x"].shape == (3, 2)


@pytest.mark.parametrize(("output_dt", "times"), [
    (0.03, [0.0, 0.03, 0.06, 0.09, 0.12, 0.15, 0.18, 0.2]),   # does not divide t_end
    (0.5, [0.0, 0.2]),                                        # longer than the run
    (0.05, [0.0, 0.05, 0.1, 0.15, 0.2]),
])
def test_final_state_is_always_an_output(tmp_path, output_dt, times):
    res = fm.simulate(pendulum(), 0.2, 1e-2, output_dt=output_dt,
                      output=str(tmp_path / "p.h5"))
    np.testing.assert_allclose(res.t, times, rtol=0, atol=1e-12)
    assert res.t[-1] == 0.2
    data = read_results(res.path)
    assert data["attrs"]["status"] == "complete"
    np.testing.assert_allclose(data["time"], times, rtol=0, atol=1e-12)


@pytest.fixture
def per_step_progress(monkeypatch):
    """``simulate``'s progress callback after every step (its wall-time cadence 0 s), so
    that a test stops a run at a chosen time."""
    from flexmbs.integrate import genalpha
    monkeypatch.setattr(genalpha, "PROGRESS_SECONDS", 0.0)


def _stop_at(t_stop):
    def progress(t, t_end, stats):
        if t >= t_stop:
            raise KeyboardInterrupt("test")
        return False
    return progress


@pytest.mark.parametrize(("options", "dt", "out_dt", "flush"), [
    (EXACT, DT, OUT_DT, 0.0),
    # the defaults: the Newton matrix is reused across steps (saved with the checkpoint),
    # a step 1e-3 s that is not a binary fraction (the grid's origin and index saved),
    # and rows written after the last checkpoint (the continuation starts from that one)
    (None, 1e-3, 0.01, 0.0),
    (None, 1e-3, 0.01, 3600.0),
])
def test_interrupted_run_continues_to_the_same_state(tmp_path, options, dt, out_dt, flush,
                                                     monkeypatch, per_step_progress):
    t_end = 0.5
    full = fm.simulate(pendulum(), t_end, dt, output_dt=out_dt, integrator_options=options,
                       output=str(tmp_path / "full" / "pend.h5"))
    out = tmp_path / "cut" / "pend.h5"
    from flexmbs.io import results
    monkeypatch.setattr(results, "FLUSH_SECONDS", flush)   # 1 h: only row 0 checkpointed
    with pytest.raises(KeyboardInterrupt) as info:
        fm.simulate(pendulum(), t_end, dt, output_dt=out_dt, integrator_options=options,
                    output=str(out), progress=_stop_at(0.18))
    monkeypatch.undo()
    cut = info.value.result_path
    assert cut == str(tmp_path / "cut" / "pend.interrupted.h5")
    point = read_restart(cut)
    assert 0.17 < point.t < 0.19 and not out.exists()
    assert point.checkpoint_row == (0 if flush else point.n - 1)
    res = fm.simulate(pendulum(), t_end, dt, output_dt=out_dt, integrator_options=options,
                      output=str(out), restart=cut)
    assert res.path == str(out)
    np.testing.assert_array_equal(res.t, full.t)          # every output step, once
    np.testing.assert_array_equal(res.q, full.q)
    np.testing.assert_array_equal(res.qd, full.qd)
    np.testing.assert_array_equal(res.lam, full.lam)
    a, b = read_results(full.path), read_results(out)
    assert b["attrs"]["status"] == "complete"
    assert b["attrs"]["restart_time"] == (0.0 if flush else point.t)
    np.testing.assert_array_equal(a["time"], b["time"])
    np.testing.assert_array_equal(a["bodies"]["rod"]["q"], b["bodies"]["rod"]["q"])
    # the cumulative solver counters go on from where the first run stopped
    assert np.all(np.diff(b["solver"]["newton_iterations"]) >= 0)


def test_continuation_with_another_step_starts_afresh(tmp_path, per_step_progress):
    """A failed run is continued with a smaller dt: the checkpoint (made for the old
    step) is not used; the run goes on from the last saved row with the new step and
    reaches the state of a run with that step to the integrator's accuracy."""
    out = tmp_path / "pend.h5"
    with pytest.raises(KeyboardInterrupt) as info:
        fm.simulate(pendulum(), 0.3, 1e-3, output_dt=0.01, output=str(out),
                    progress=_stop_at(0.1))
    point = read_restart(info.value.result_path)
    res = fm.simulate(pendulum(), 0.3, 5e-4, output_dt=0.01, output=str(out),
                      restart=info.value.result_path)
    assert read_results(out)["attrs"]["restart_time"] == point.t
    ref = fm.simulate(pendulum(), 0.3, 5e-4, output_dt=0.01)
    # second-order error of the first 0.1 s with dt = 1e-3 instead of 5e-4 (the angle
    # error of a 1 m pendulum ~ (dt^2) omega^2 ~ 1e-6 rad)
    assert np.abs(res.q[-1] - ref.q[-1]).max() < 1e-4


KILLED = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    import flexmbs as fm
    from flexmbs.integrate import genalpha
    from flexmbs.io import results
    from test_result_files import pendulum, DT, OUT_DT, EXACT
    results.FLUSH_SECONDS = 0.02
    genalpha.PROGRESS_SECONDS = 0.0     # progress (slowing the run) after every step
    fm.simulate(pendulum(), 1.0, DT, output_dt=OUT_DT, integrator_options=EXACT,
                output={out!r}, progress=lambda t, t_end, st: time.sleep(0.002))
""")


def test_killed_run_keeps_its_flushed_steps_and_continues_bit_for_bit(tmp_path):
    """SIGKILL: no handler runs; the steps flushed before it stay readable under the
    running name, and the run continues from the last one to the uninterrupted state."""
    out = tmp_path / "pend.h5"
    running = status_path(out, "running")
    script = KILLED.format(tests=str(Path(__file__).parent), out=str(out))
    proc = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while steps_in(running)[0] < 20:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    data = read_results(running)
    n = len(data["time"])
    assert data["attrs"]["status"] == "running" and 20 <= n < 129
    np.testing.assert_array_equal(data["time"], OUT_DT * np.arange(n))
    assert data["bodies"]["rod"]["q"].shape == (n, 7)
    # continue from the killed run's file; it is kept (copied) as pend.interrupted.h5
    res = fm.simulate(pendulum(), 1.0, DT, output_dt=OUT_DT, integrator_options=EXACT,
                      output=str(out), restart=running)
    full = fm.simulate(pendulum(), 1.0, DT, output_dt=OUT_DT, integrator_options=EXACT)
    np.testing.assert_array_equal(res.t, full.t)
    np.testing.assert_array_equal(res.q[-1], full.q[-1])
    np.testing.assert_array_equal(res.q, full.q)
    assert not os.path.exists(running)
    with h5py.File(out) as f:                     # a plain file, readable by any reader
        assert f.attrs["status"] == "complete" and len(f["time"]) == 129


def test_restart_of_another_model_is_refused(tmp_path):
    res = fm.simulate(pendulum("one"), 0.05, 1e-3, output=str(tmp_path / "one.h5"))
    with pytest.raises(fm.FlexmbsError, match="model 'one'.*'two'"):
        fm.simulate(pendulum("two"), 0.1, 1e-3, restart=res.path)
    with pytest.raises(fm.FlexmbsError, match="nothing to continue"):
        fm.simulate(pendulum("one"), 0.05, 1e-3, restart=res.path)
    # a complete run continues to a later t_end
    longer = fm.simulate(pendulum("one"), 0.1, 1e-3, restart=res.path)
    assert longer.t[0] == 0.0 and longer.t[-1] == pytest.approx(0.1)


@pytest.mark.parametrize("output", ["afile/p.h5", "afile/sub/p.h5"])
def test_output_under_a_file_is_a_case_error(tmp_path, output):
    """``output=`` in a folder that is a file (or below one): the mistake names the folder,
    what was expected and found (it was 'cannot write ...: File exists [EEXIST]', an
    I/O fault), and nothing is written."""
    (tmp_path / "afile").write_text("notes")
    with pytest.raises(fm.CaseError) as info:
        fm.simulate(pendulum(), 0.01, 1e-3, output=str(tmp_path / output))
    folder = str(tmp_path / os.path.dirname(output))
    assert str(info.value).startswith(f"output folder '{folder}': expected a folder")
    assert "an existing file" in str(info.value), str(info.value)
    assert (tmp_path / "afile").read_text() == "notes"


def test_lock_is_reentrant_in_a_process_and_held_against_others(tmp_path):
    code = ("import sys; from flexmbs.io.results import OutputLock\n"
            "from flexmbs.errors import OutputInUseError\n"
            f"try:\n    OutputLock({str(tmp_path)!r}, 'pend').__enter__()\n"
            "except OutputInUseError as e:\n    print(e); sys.exit(7)\n")
    with OutputLock(tmp_path, "pend"), OutputLock(tmp_path, "pend"):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert r.returncode == 7, r.stderr
        assert (f"output folder {tmp_path} is in use by another flexmbs run "
                f"(pid {os.getpid()})") in r.stdout
        # another model may write into the same folder
        with OutputLock(tmp_path, "other"):
            pass
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_lock_file_of_a_dead_process_does_not_block(tmp_path):
    code = ("import os; from flexmbs.io.results import OutputLock\n"
            f"OutputLock({str(tmp_path)!r}, 'pend').__enter__(); os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert (tmp_path / ".pend.lock").is_file()
    res = fm.simulate(pendulum(), 0.01, 1e-3, output=str(tmp_path / "pend.h5"))
    assert res.path == str(tmp_path / "pend.h5")
