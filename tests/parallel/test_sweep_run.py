"""Serial sweeps of the rigid slider-crank, shortened to t_end = 0.02 s.

Reference values: with the crank driven at constant speed, the crank joint angle is
exactly ``omega * t`` (the drive constraint), and a fixed-step run of ``t_end / dt``
steps; a negative time step is rejected by the case loader.
"""
import csv
from pathlib import Path

import h5py
import pytest

from flexmbs.cli.main import main
from flexmbs.errors import CaseError
from flexmbs.parallel.sweep import sweep

ROOT = Path(__file__).resolve().parents[2]
RIGID = ROOT / "cases" / "slider_crank" / "case.toml"
T_END = 0.02
SHORT = {"solver.t_end": T_END}
OUTS = ("t_final", "steps", "wall_time", "final(joints/A/coordinates[angle])",
        "max_abs(sensors/slider_position[x])")


def _csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_failing_variant_is_recorded_and_rerun_skips_complete_ones(tmp_path):
    axes = [("solver.dt", (5e-4, -1e-4, 1e-3))]
    res = sweep(RIGID, axes, out=tmp_path, overrides=SHORT, output_exprs=OUTS)
    assert [r["status"] for r in res.rows] == ["complete", "failed", "complete"]
    assert res.n_failed == 1
    assert "solver.dt" in res.rows[1]["error"] and "positive" in res.rows[1]["error"]
    # the CSV: one row per variant, in order, with the varied value and the outputs
    rows = _csv(tmp_path / "slider_crank_sweep.csv")
    assert [r["solver.dt"] for r in rows] == ["0.0005", "-0.0001", "0.001"]
    assert [r["status"] for r in rows] == ["complete", "failed", "complete"]
    assert rows[1]["t_final"] == "" and "positive" in rows[1]["error"]
    assert [int(r["steps"]) for r in (rows[0], rows[2])] == [40, 20]      # t_end / dt
    for r in (rows[0], rows[2]):
        assert float(r["t_final"]) == pytest.approx(T_END, abs=1e-12)
        assert float(r["final(joints/A/coordinates[angle])"]) == pytest.approx(
            30.0 * T_END, abs=1e-9)                                   # angle = omega t
        assert float(r["wall_time"]) > 0.0
        assert (tmp_path / r["result"]).is_file()
        assert (tmp_path / r["result"].replace(".h5", ".log")).read_text()
    ok = tmp_path / rows[0]["result"]
    stamp = ok.stat().st_mtime_ns
    # re-run: complete variants are skipped (same numbers), the failed one runs again
    again = sweep(RIGID, axes, out=tmp_path, overrides=SHORT, output_exprs=OUTS)
    assert [r["status"] for r in again.rows] == ["cached", "failed", "cached"]
    assert ok.stat().st_mtime_ns == stamp
    assert again.rows[0]["final(joints/A/coordinates[angle])"] == \
        res.rows[0]["final(joints/A/coordinates[angle])"]
    # an interrupted result file is run again
    with h5py.File(ok, "a") as f:
        f.attrs["status"] = "interrupted"
    third = sweep(RIGID, axes, out=tmp_path, overrides=SHORT, output_exprs=OUTS)
    assert [r["status"] for r in third.rows] == ["complete", "failed", "cached"]


def test_changed_case_data_is_not_taken_from_the_cache(tmp_path):
    axes = [("drives[0].omega", (40,))]
    first = sweep(RIGID, axes, out=tmp_path, overrides=SHORT, output_exprs=OUTS)
    second = sweep(RIGID, axes, out=tmp_path, overrides={"solver.t_end": 0.01},
                   output_exprs=OUTS)
    assert first.rows[0]["status"] == second.rows[0]["status"] == "complete"
    assert second.rows[0]["t_final"] == pytest.approx(0.01, abs=1e-12)
    assert second.rows[0]["final(joints/A/coordinates[angle])"] == pytest.approx(0.4, abs=1e-9)
    # the rerun with another t_end says that it replaced the earlier result
    assert first.n_replaced == 0 and second.n_replaced == 1


def test_failed_rerun_keeps_the_earlier_result(tmp_path):
    """A variant rerun with settings that make it fail leaves its earlier complete result
    in place (it used to be deleted before the rerun)."""
    axes = [("drives[0].omega", (40,))]
    first = sweep(RIGID, axes, out=tmp_path, overrides=SHORT, output_exprs=OUTS)
    h5 = tmp_path / first.rows[0]["result"]
    before = h5.read_bytes()
    second = sweep(RIGID, axes, out=tmp_path, overrides={**SHORT, "solver.rho_inf": 2.0},
                   output_exprs=OUTS)
    assert second.rows[0]["status"] == "failed"
    assert h5.read_bytes() == before


def test_unknown_key_path_stops_the_sweep_before_running(tmp_path):
    with pytest.raises(CaseError, match="did you mean 'omega'"):
        sweep(RIGID, [("drives[0].omga", (1, 2))], out=tmp_path / "o", overrides=SHORT)
    assert not (tmp_path / "o").exists()


def test_command_line_and_sweep_table(tmp_path, capsys):
    case = tmp_path / "crank.toml"
    case.write_text(RIGID.read_text() + '\n[sweep]\nvary = {"drives[0].omega" = [20, 40]}\n'
                    'outputs = ["t_final", "final(joints/A/coordinates)"]\n')
    code = main(["sweep", str(case), "--t-end", "0.01", "--out", str(tmp_path / "r")])
    assert code == 0
    rows = _csv(tmp_path / "r" / "slider_crank_sweep.csv")
    assert [r["drives[0].omega"] for r in rows] == ["20", "40"]
    assert [float(r["final(joints/A/coordinates[angle])"]) for r in rows] == \
        pytest.approx([0.2, 0.4], abs=1e-9)
    out = capsys.readouterr().out
    assert "2/2 variants complete" in out and "final(joints/A/coordinates[angle])" in out
    # --vary replaces the table; a failing variant gives exit status 1
    code = main(["sweep", str(case), "--t-end", "0.01", "--out", str(tmp_path / "r"),
                 "--vary", "solver.rho_inf=2.0"])
    assert code == 1
    assert "rho_inf" in _csv(tmp_path / "r" / "slider_crank_sweep.csv")[0]["error"]
