"""cases/robot_arm_relative from the CLI (shortened to 0.2 s), checked against
independent references: conservation of T + V (no dissipation, rho_inf = 1) and the
same case in the absolute formulation (the descriptor form, a second formulation of
the same physics; the two generalized-alpha runs differ by their O(h^2) errors only).
A model the joint-coordinate formulations do not take is refused in one line (exit 2).
"""
from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from flexmbs.cli.main import main

CASE = Path(__file__).resolve().parents[2] / "cases" / "robot_arm_relative" / "case.toml"
BODIES = ("base", "upper_arm", "forearm", "slide", "wrist", "gripper")


def run(case: Path, out: Path) -> dict:
    assert main(["run", str(case), "--out", str(out), "--quiet", "--t-end", "0.2",
                 "--no-plots", "--no-xdmf"]) == 0
    with h5py.File(out / "robot_arm_relative.h5") as f:
        assert f.attrs["status"] == "complete"
        return {"E": f["energy/total"][()], "T": f["energy/kinetic"][()],
                **{b: f[f"bodies/{b}/q"][()][:, :3] for b in BODIES}}


def test_robot_arm_conserves_energy_and_matches_the_absolute_form(tmp_path):
    rel = run(CASE, tmp_path / "relative")
    assert rel["T"].max() > 1.0
    assert np.abs(rel["E"] - rel["E"][0]).max() < 1e-4 * rel["T"].max()
    absolute = tmp_path / "absolute.toml"
    absolute.write_text(CASE.read_text().replace('formulation = "recursive"',
                                                 'formulation = "absolute"'))
    ref = run(absolute, tmp_path / "absolute")
    moved = max(np.abs(rel[b][-1] - rel[b][0]).max() for b in BODIES)
    assert moved > 0.05
    assert max(np.abs(rel[b] - ref[b]).max() for b in BODIES) < 1e-5


def test_a_point_mass_is_refused_in_one_line(tmp_path, capsys):
    case = tmp_path / "case.toml"
    case.write_text(CASE.read_text() + '\n[[bodies]]\nname = "ballast"\n'
                    'type = "point_mass"\nm = 1.0\n')
    assert main(["run", str(case), "--out", str(tmp_path), "--quiet"]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if "error" in ln]
    assert len(err) == 1, err                    # one line, no traceback
    assert "body 'ballast'" in err[0] and "formulation 'recursive'" in err[0]
    assert "Traceback" not in err[0]


def test_a_velocity_constraint_is_refused_in_one_line(tmp_path, capsys):
    """The joint-coordinate formulations have no velocity rows: a rolling constraint is
    refused by name rather than dropped (the disc would slide freely)."""
    rolling = CASE.parents[1] / "rolling_disc" / "case.toml"
    case = tmp_path / "case.toml"
    case.write_text(rolling.read_text().replace(
        'gravity = [0.0, 0.0, -9.81]', 'gravity = [0.0, 0.0, -9.81]\nformulation = "relative"', 1))
    assert 'formulation = "relative"' in case.read_text()
    assert main(["run", str(case), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if "error" in ln]
    assert len(err) == 1, err                    # one line, no traceback
    assert "velocity constraint 'roll'" in err[0] and "formulation 'relative'" in err[0]
