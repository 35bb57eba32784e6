"""``flexmbs run`` outcomes: one line and a distinct exit status for each unhealthy model
(flexmbs.errors.EXIT_CODES, docs/solver.md), the steps computed kept with their status."""
from pathlib import Path

import h5py
import numpy as np
import pytest

from arm_case import arm_case

from flexmbs.cli.main import main
from flexmbs.errors import EXIT_CODES

CASES = Path(__file__).resolve().parents[2] / "cases"

ARM = arm_case()

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
    with h5py.File(tmp_path / "o" / "spin_up_beam.diverged.h5") as f:   # docs/errors.md
        assert f.attrs["status"] == "diverged" and f["time"][-1] > 7.3


def test_modal_analysis_about_an_unstable_state_says_why(tmp_path, capsys):
    """An arm standing upright on its pin: linearised, only real eigenvalues (+-sqrt(m g
    d / I_O), no oscillation), which used to print an empty table."""
    case = tmp_path / "case.toml"
    upright = ARM.replace("com = [0.5, 0.0, 0.0]", "com = [0.0, 0.5, 0.0]").replace(
        "size = [1.0, 0.05, 0.05]", "size = [0.05, 1.0, 0.05]")
    case.write_text(upright + '\n[analysis]\ntype = "modal"\n')
    rc = main(["run", str(case), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and "no oscillatory mode" in err[-1] and "not a stable equilibrium" in err[-1]


def test_modal_analysis_about_a_stable_state_labels_the_modes(tmp_path, capsys):
    """The hanging arm: one pendulum mode, f = sqrt(m g d / I_O) / 2 pi (d = 0.5 m)."""
    case = tmp_path / "case.toml"
    hanging = ARM.replace("com = [0.5, 0.0, 0.0]", "com = [0.0, -0.5, 0.0]").replace(
        "size = [1.0, 0.05, 0.05]", "size = [0.05, 1.0, 0.05]")
    case.write_text(hanging + '\n[analysis]\ntype = "modal"\n')
    assert main(["run", str(case), "--out", str(tmp_path / "o")]) == 0
    lines = (tmp_path / "o" / "arm_modes.csv").read_text().splitlines()
    assert lines[0].endswith("body,kind,axis,axis_share")
    m, d, L, b = 7850.0 * 0.05 * 1.0 * 0.05, 0.5, 1.0, 0.05
    I_O = m * (L**2 + b**2) / 12 + m * d**2
    f = float(lines[1].split(",")[1])
    assert f == pytest.approx((m * 9.81 * d / I_O) ** 0.5 / (2 * 3.141592653589793), rel=1e-6)
    assert lines[1].split(",")[4:6] == ["arm", "rigid"]


def test_static_analysis_from_the_case_file(tmp_path, capsys):
    """A cantilever arm held by a fixed joint: the clamp carries the weight, F_y = m g,
    and the moment M_z = m g d (d = 0.5 m, the centre of mass), statics by hand."""
    case = tmp_path / "case.toml"
    text = ARM.replace('type = "revolute"', 'type = "fixed"').replace('axis = "z"\n', "")
    case.write_text(text + '\n[analysis]\ntype = "static"\n')
    assert main(["run", str(case), "--out", str(tmp_path / "o")]) == 0
    rows = (tmp_path / "o" / "arm_static.csv").read_text().splitlines()
    assert rows[0].startswith("joint,Fx_N,Fy_N,Fz_N,Mx_Nm,My_Nm,Mz_Nm")
    F = [float(v) for v in rows[1].split(",")[1:7]]
    m = 7850.0 * 1.0 * 0.05 * 0.05
    assert abs(F[1]) == pytest.approx(m * 9.81, rel=1e-9)
    assert abs(F[5]) == pytest.approx(m * 9.81 * 0.5, rel=1e-9)
    assert abs(F[0]) < 1e-9 and abs(F[2]) < 1e-9


FACE_CASE = f"""
[model]
name = "sag"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "beam"
type = "flexible"
mesh = "{CASES.parent / 'meshes' / 'beam_hex27_5x1x1.msh'}"
material = "steel"
modes = 4
interfaces = ["clamp", "tip:rbe3"]
frame = "interface:clamp"
static_modes = true

[[joints]]
name = "clamp"
type = "fixed"
first = "ground"
second = "beam.clamp"

[[sensors]]
name = "tip_mean"
type = "face_displacement"
first = "beam"
face = "tip"

[[sensors]]
name = "tip_rbe3"
type = "position"
first = "beam.clamp"
second = "beam.tip"
frame = "first"

[solver]
t_end = 0.02
dt = 1e-3
"""


def test_face_displacement_sensor_from_a_case_file(tmp_path, capsys):
    """The mean elastic displacement of the tip face, recorded like any sensor: equal to
    the RBE3 tip marker's motion relative to the clamp frame (second formulation)."""
    case = tmp_path / "case.toml"
    case.write_text(FACE_CASE)
    assert main(["run", str(case), "--out", str(tmp_path / "o"), "--quiet", "--no-plots",
                 "--no-xdmf", "--body-dir", str(tmp_path / "b")]) == 0
    with h5py.File(tmp_path / "o" / "sag.h5") as f:
        u = f["sensors/tip_mean"][()]
        p = f["sensors/tip_rbe3"][()]
    assert np.abs(u[-1, 1]) > 1e-7
    assert u[:, 1] == pytest.approx(p[:, 1] - p[0, 1], rel=2e-3, abs=1e-10)
    bad = FACE_CASE.replace('face = "tip"', 'face = "tipp"')
    case.write_text(bad)
    assert main(["check", str(case), "--body-dir", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "no face 'tipp'" in err and "tip" in err


def test_static_analysis_without_equilibrium_is_one_line(tmp_path, capsys):
    """A free arm under gravity (the joint removed) has no static equilibrium: one line,
    exit 2, naming the case file and saying why."""
    case = tmp_path / "case.toml"
    free = ARM[:ARM.index("[[joints]]")] + ARM[ARM.index("[solver]"):]
    case.write_text(free + '\n[analysis]\ntype = "static"\n')
    rc = main(["run", str(case), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err[-1].startswith("flexmbs run: error: ")
    assert "no static equilibrium" in err[-1] and str(case) in err[-1]
    assert "Traceback" not in "\n".join(err)
