"""``flexmbs run`` and its output folder: one run of a case at a time, a failed rerun
keeps the complete result, the final state is always written, each model's plots in
``plots/<model>/``, stale files of the previous run removed, an interrupted XDMF never
left looking complete (docs/errors.md).

References: the requested output times; the files the previous run listed in its
result file; the frames of a complete XDMF series (one per output step).
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from arm_case import arm_case as arm_text

from flexmbs.cli.main import main
from flexmbs.errors import EXIT_CODES
from flexmbs.io.results import read_results

CASES = Path(__file__).resolve().parents[2] / "cases"


SENSOR = """
[[sensors]]
name = "tip"
type = "position"
first = "arm.tip"
"""


def arm_case(tmp_path, name="arm", t_end=0.05, sensor=False) -> Path:
    case = tmp_path / f"{name}.toml"
    case.write_text(arm_text(name, t_end) + (SENSOR if sensor else ""))
    return case


def run(case, out, *extra) -> int:
    return main(["run", str(case), "--out", str(out), "--quiet", *extra])


def test_second_run_into_the_same_folder_is_refused(tmp_path, capsys):
    """Two runs of one case into one folder: the second stops at once with one line
    (exit 2); the first is undisturbed and its result readable and complete."""
    case, out = arm_case(tmp_path, t_end=3.0), tmp_path / "o"
    first = subprocess.Popen([sys.executable, "-m", "flexmbs.cli.main", "run", str(case),
                              "--out", str(out), "--quiet", "--no-plots"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / "arm.running.h5").exists():
            assert first.poll() is None, first.stderr.read()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert run(case, out, "--no-plots") == EXIT_CODES["user error"] == 2
    finally:
        _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1] == (f"flexmbs run: error: output folder {out} is in use by another "
                         f"flexmbs run (pid {first.pid}) writing 'arm'; wait for it to end "
                         f"or choose another --out")
    assert not any("Traceback" in line for line in lines)
    data = read_results(out / "arm.h5")
    assert data["attrs"]["status"] == "complete" and data["time"][-1] == pytest.approx(3.0)
    assert len(data["time"]) == 3001


def test_failed_rerun_keeps_the_complete_result(tmp_path, capsys):
    case, out = arm_case(tmp_path), tmp_path / "o"
    assert run(case, out, "--no-plots") == 0
    before = read_results(out / "arm.h5")
    # no Newton iteration allowed: every step fails
    try:
        assert run(case, out, "--no-plots", "-fmbs_snes_max_it", "0") == EXIT_CODES["failed"]
    finally:                         # the CLI puts its PETSc options in the global database
        from petsc4py import PETSc
        PETSc.Options().delValue("fmbs_snes_max_it")
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"saved in {out / 'arm.failed.h5'} (status 'failed')" in err
    assert f"the previous complete result {out / 'arm.h5'} is unchanged" in err
    after = read_results(out / "arm.h5")
    assert after["attrs"]["status"] == "complete"
    np.testing.assert_array_equal(after["time"], before["time"])
    np.testing.assert_array_equal(after["bodies"]["arm"]["q"], before["bodies"]["arm"]["q"])
    assert read_results(out / "arm.failed.h5")["attrs"]["status"] == "failed"


@pytest.mark.parametrize(("output_dt", "n", "last_dt"), [("0.03", 8, 0.02), ("0.5", 2, 0.2)])
def test_final_state_is_written(tmp_path, capsys, output_dt, n, last_dt):
    """t_end = 0.2 s: output_dt = 0.03 s gives 0, 0.03 ... 0.18 and 0.2; 0.5 s gives 0, 0.2."""
    case, out = arm_case(tmp_path), tmp_path / "o"
    assert run(case, out, "--no-plots", "--t-end", "0.2", "--output-dt", output_dt) == 0
    assert "final time 0.2 s" in capsys.readouterr().out
    t = read_results(out / "arm.h5")["time"]
    assert len(t) == n and t[0] == 0.0 and t[-1] == 0.2
    assert t[-1] - t[-2] == pytest.approx(last_dt)


def test_plots_per_model_and_stale_outputs_removed(tmp_path):
    out = tmp_path / "o"
    assert run(arm_case(tmp_path, sensor=True), out) == 0
    plots = out / "plots" / "arm"
    first = sorted(p.name for p in plots.iterdir())
    assert first == ["energy.png", "joint_pin.png", "reaction_pin.png", "sensor_tip.png"]
    with h5py.File(out / "arm.h5") as f:       # the mechanism XDMF, the CSV, the plots
        assert sorted(f.attrs["outputs"]) == ["arm.csv", "arm_mechanism.h5",
                                              "arm_mechanism.xdmf",
                                              *(f"plots/arm/{p}" for p in first)]
    # a second model into the same folder: its own plots, the first model's untouched
    assert run(arm_case(tmp_path, name="crane"), out) == 0
    assert sorted(p.name for p in (out / "plots" / "crane").iterdir()) == \
        ["energy.png", "joint_pin.png", "reaction_pin.png"]
    assert sorted(p.name for p in plots.iterdir()) == first
    # the first model again, without its sensor: the sensor's plot is gone
    assert run(arm_case(tmp_path, sensor=False), out) == 0
    assert sorted(p.name for p in plots.iterdir()) == first[:3]
    # and without plots: none left that belong to an older result
    assert run(arm_case(tmp_path), out, "--no-plots") == 0
    assert list(plots.iterdir()) == []
    with h5py.File(out / "arm.h5") as f:
        assert sorted(f.attrs["outputs"]) == ["arm.csv", "arm_mechanism.h5",
                                              "arm_mechanism.xdmf"]


@pytest.fixture(scope="module")
def pendulum_case(tmp_path_factory):
    """The shipped flexible pendulum, shortened, with its own body cache."""
    tmp = tmp_path_factory.mktemp("flex")
    text = (CASES / "flexible_pendulum" / "case.toml").read_text()
    case = tmp / "case.toml"
    case.write_text(text.replace("../../meshes", str(CASES.parent / "meshes")))
    return case, tmp / "bodies"


def flex_run(pendulum_case, out, *extra):
    case, bodies = pendulum_case
    return run(case, out, "--t-end", "0.05", "--body-dir", str(bodies), "--no-plots", *extra)


def test_no_xdmf_removes_the_models_old_series(pendulum_case, tmp_path):
    out = tmp_path / "o"
    assert flex_run(pendulum_case, out) == 0
    xdmf = out / "flexible_pendulum_pendulum.xdmf"
    heavy = out / "flexible_pendulum_pendulum.h5"
    assert xdmf.is_file() and heavy.is_file()
    mech = [out / "flexible_pendulum_mechanism.xdmf", out / "flexible_pendulum_mechanism.h5"]
    with h5py.File(out / "flexible_pendulum.h5") as f:
        assert list(f.attrs["outputs"]) == [xdmf.name, heavy.name, mech[0].name, mech[1].name,
                                            "flexible_pendulum.csv"]
    with h5py.File(heavy) as f:                    # one frame per output step (5 ms)
        assert len([k for k in f if k.startswith("data")]) > 11
    assert flex_run(pendulum_case, out, "--no-xdmf") == 0
    assert not xdmf.exists() and not heavy.exists() and not any(p.exists() for p in mech)
    assert sorted(os.listdir(out)) == [".flexible_pendulum.lock", "flexible_pendulum.csv",
                                       "flexible_pendulum.h5"]


def test_signal_while_writing_xdmf_leaves_no_series(pendulum_case, tmp_path, capsys,
                                                     monkeypatch):
    """SIGINT at the 5th frame: the series is dropped (no .xdmf that looks complete),
    the complete result is kept and lists no XDMF, exit status 130."""
    from flexmbs.post import recovery
    calls, original = [0], recovery.von_mises_stress

    def von_mises(*args):
        calls[0] += 1
        if calls[0] == 5:
            os.kill(os.getpid(), signal.SIGINT)
        return original(*args)
    out = tmp_path / "o"
    assert flex_run(pendulum_case, out) == 0          # an older complete series
    monkeypatch.setattr(recovery, "von_mises_stress", von_mises)
    assert flex_run(pendulum_case, out) == 130
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("flexmbs run: interrupted by SIGINT while writing the XDMF")
    assert sorted(os.listdir(out)) == [".flexible_pendulum.lock", "flexible_pendulum.h5"]
    with h5py.File(out / "flexible_pendulum.h5") as f:
        assert f.attrs["status"] == "complete" and list(f.attrs["outputs"]) == []


@pytest.mark.slow
def test_main_case_killed_and_restarted(tmp_path):
    """cases/main (flexible slider-crank), 1 s (a run of some seconds: its rows reach the
    file at the flushes, 1 s apart): SIGKILL after 40 output steps, then
    ``--restart`` the killed run's file: the same output times, and every output row of
    the uninterrupted run to the last bit (default settings: the Newton matrix reused
    across steps and the time grid 0 + k dt are saved with the last checkpoint, from
    which the continuation starts)."""
    case = CASES / "main" / "case.toml"
    args = ["--t-end", "1.0", "--no-plots", "--no-xdmf", "--quiet"]
    out = tmp_path / "cut"
    running = out / "flexible_slider_crank.running.h5"
    proc = subprocess.Popen([sys.executable, "-m", "flexmbs.cli.main", "run", str(case),
                             "--out", str(out), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    from flexmbs.io.results import steps_in
    try:
        deadline = time.monotonic() + 300
        while steps_in(running)[0] < 40:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    killed = read_results(running)
    n_killed = len(killed["time"])
    from flexmbs.io.results import read_restart
    r = read_restart(running).checkpoint_row
    assert killed["attrs"]["status"] == "running" and 40 <= n_killed < 2001
    assert main(["run", str(case), "--out", str(out), *args, "--restart", str(running)]) == 0
    assert main(["run", str(case), "--out", str(tmp_path / "full"), *args]) == 0
    a = read_results(tmp_path / "full" / "flexible_slider_crank.h5")
    b = read_results(out / "flexible_slider_crank.h5")
    assert b["attrs"]["status"] == "complete" and len(b["time"]) == len(a["time"]) == 2001
    np.testing.assert_array_equal(b["time"], a["time"])
    # the killed run's steps up to its checkpoint, copied as they were
    assert 0 < r < n_killed
    np.testing.assert_array_equal(b["bodies"]["rod"]["q"][:r + 1],
                                  killed["bodies"]["rod"]["q"][:r + 1])
    for body in a["bodies"]:
        np.testing.assert_array_equal(b["bodies"][body]["q"], a["bodies"][body]["q"])
        np.testing.assert_array_equal(b["bodies"][body]["qd"], a["bodies"][body]["qd"])
    for joint in a["joints"]:
        np.testing.assert_array_equal(b["joints"][joint]["reaction"],
                                      a["joints"][joint]["reaction"])


def test_a_shipped_case_writes_nothing_next_to_it(tmp_path):
    """``flexmbs check`` and ``run`` of cases/main without --out or --body-dir, started in
    another folder: the case folder is left as it was (compared file by file), the
    results go to results/ in the working directory and the reduced rod to the user's
    body cache ($XDG_CACHE_HOME/flexmbs/bodies)."""
    folder = CASES / "main"
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("FLEXMBS_BODY_CACHE", None)
    for args in (["check"], ["run", "--t-end", "0.002", "--no-plots", "--no-xdmf",
                             "--quiet"]):
        r = subprocess.run([sys.executable, "-m", "flexmbs.cli.main", args[0],
                            str(folder / "case.toml"), *args[1:]], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    assert read_results(tmp_path / "results" / "flexible_slider_crank.h5")[
        "attrs"]["status"] == "complete"
    cached = list((tmp_path / "cache" / "flexmbs" / "bodies").glob("rod-*.h5"))
    assert len(cached) == 1


def test_petsc_options_of_a_run_end_with_it(tmp_path, capsys):
    """Command-line PETSc options hold for their run only: a second run in the same
    process (a sweep, a notebook) starts from the options database as it was.  One
    Newton iteration per solve is too few for this model: the first run cuts steps, the
    second does not."""
    from petsc4py import PETSc
    opts = PETSc.Options()
    assert not opts.hasName("fmbs_snes_max_it")
    case = arm_case(tmp_path)
    args = ["run", str(case), "--out", str(tmp_path / "o"), "--no-plots", "--no-xdmf"]
    assert main([*args, "-fmbs_snes_max_it", "1"]) == 0
    first = capsys.readouterr().out
    assert "cuts after failed Newton solves" in first and " 0 cuts" not in first
    assert not opts.hasName("fmbs_snes_max_it")
    assert main(args) == 0
    assert "step size: 0 cuts after failed Newton solves" in capsys.readouterr().out


def test_summary_names_every_file_from_the_output_folder_as_given(tmp_path, monkeypatch,
                                                                  capsys):
    """Results, XDMF series and plots are all printed as <--out>/<name> (a new user saw
    one relative and one absolute path)."""
    monkeypatch.chdir(tmp_path)
    case = CASES / "flexible_pendulum" / "case.toml"
    assert main(["run", str(case), "--out", "relout", "--t-end", "0.01"]) == 0
    out = capsys.readouterr().out.splitlines()
    shown = [ln.split(": ", 1)[1] for ln in out
             if ln.startswith(("results:", "XDMF time series:"))]
    shown += [ln.rsplit(" in ", 1)[1] for ln in out if ln.startswith("plots:")]
    assert len(shown) == 3 and all(s.startswith("relout/") for s in shown), shown


@pytest.mark.parametrize("which, needles", [
    ("other", ["expected a result of model 'two' (the case's)", "found one of model 'arm'"]),
    ("missing", ["no such file"]),
    ("not_hdf5", ["not a readable HDF5 file"]),
])
def test_wrong_restart_file_is_refused_before_any_work(tmp_path, capsys, which, needles):
    """``--restart`` a result of another model, a missing file or a text file: one line
    naming the file, exit 2, before the model is built (a flexible body's preprocessing
    may take minutes) and before the output folder is made."""
    first = tmp_path / "first"
    assert run(arm_case(tmp_path), first, "--no-plots", "--no-xdmf") == 0
    capsys.readouterr()
    given = {"other": first / "arm.h5", "missing": tmp_path / "nope.h5",
             "not_hdf5": tmp_path / "notes.h5"}[which]
    if which == "not_hdf5":
        given.write_text("not a result\n")
    out = tmp_path / "second"
    assert run(arm_case(tmp_path, name="two"), out, "--restart", str(given)) == 2
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"flexmbs run: error: --restart {given}: ")
    for n in needles:
        assert n in lines[0], lines[0]
    assert cap.out == "" and not out.exists()
