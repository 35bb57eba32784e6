"""``flexmbs run`` outcomes: one line and a distinct exit status for each unhealthy model
(flexmbs.errors.EXIT_CODES, docs/solver.md), the steps computed kept with their status."""
from pathlib import Path

import h5py

from flexmbs.cli.main import main
from flexmbs.errors import EXIT_CODES

CASES = Path(__file__).resolve().parents[2] / "cases"

ARM = """
[model]
name = "arm"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "arm"
type = "rigid"
shape = "box"
size = [1.0, 0.05, 0.05]
density = 7850.0
com = [0.5, 0.0, 0.0]

[[joints]]
name = "pin"
type = "revolute"
first = "ground"
second = "arm"
at = [0.0, 0.0, 0.0]
axis = "z"

[solver]
t_end = 0.05
dt = 1e-3
"""

DRIVES = """
[[drives]]
name = "slow"
type = "angular_velocity"
joint = "pin"
omega = 1.0

[[drives]]
name = "fast"
type = "angular_velocity"
joint = "pin"
omega = 2.0
"""


def test_healthy_run_complete(tmp_path, capsys):
    case = tmp_path / "case.toml"
    case.write_text(ARM)
    assert main(["run", str(case), "--out", str(tmp_path / "o"), "--quiet", "--no-plots"]) \
        == EXIT_CODES["complete"] == 0
    out = capsys.readouterr().out
    assert "step size: 0 cuts" in out and "smallest step 0.001 s" in out
    with h5py.File(tmp_path / "o" / "arm.h5") as f:
        assert f.attrs["status"] == "complete"


def test_conflicting_drives_exit_2_naming_both(tmp_path, capsys):
    case = tmp_path / "case.toml"
    case.write_text(ARM + DRIVES)
    rc = main(["run", str(case), "--out", str(tmp_path / "o"), "--quiet", "--no-plots"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == EXIT_CODES["user error"] == 2
    assert err[-1].startswith("flexmbs run: error: ")
    assert "drive 'fast'" in err[-1] and "drive 'slow'" in err[-1]


def test_diverging_run_exit_5_status_diverged(tmp_path, capsys):
    """Kane's spin-up beam without geometric stiffening grows without bound once the hub
    is faster than the first lag frequency (2.91 rad/s, t = 7.3 s)."""
    case = tmp_path / "case.toml"
    text = (CASES / "spin_up_beam" / "case.toml").read_text()
    text = text.replace("../../meshes", str(CASES.parent / "meshes"))
    case.write_text(text.replace("stiffening = true", "stiffening = false"))
    rc = main(["run", str(case), "--out", str(tmp_path / "o"), "--quiet", "--no-plots",
               "--no-xdmf", "--t-end", "12", "--dt", "0.05", "--output-dt", "0.1",
               "--body-dir", str(tmp_path / "bodies")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == EXIT_CODES["diverged"] == 5
    assert err[-1].startswith("flexmbs run: diverged: ") and "status 'diverged'" in err[-1]
    with h5py.File(tmp_path / "o" / "spin_up_beam.h5") as f:
        assert f.attrs["status"] == "diverged" and f["time"][-1] > 7.3
