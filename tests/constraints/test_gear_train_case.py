"""The shipped case cases/gear_train (pinion 20 teeth -> wheel 50 teeth -> rack) runs
from the CLI; references: the gear law theta_wheel = -(20/50) omega t and the rack law
x = r_wheel (20/50) omega t (definitions of the joints, closed form for the driven
pinion)."""
from pathlib import Path

import h5py
import numpy as np

from flexmbs.cli.main import main

CASE = Path(__file__).resolve().parents[2] / "cases" / "gear_train" / "case.toml"


def test_gear_train_case_follows_the_gear_and_rack_laws(tmp_path):
    rc = main(["run", str(CASE), "--out", str(tmp_path), "--quiet", "--t-end", "0.5",
               "--no-plots"])
    assert rc == 0
    with h5py.File(tmp_path / "gear_train.h5") as f:
        assert f.attrs["status"] == "complete"
        t = f["time"][()]
        wheel = f["joints/wheel_bearing/coordinates"][()][:, 0]
        x = f["sensors/rack_position"][()][:, 0]
    omega = 2 * np.pi
    theta_wheel = -(20 / 50) * omega * t
    np.testing.assert_allclose(np.angle(np.exp(1j * (wheel - theta_wheel))), 0.0, atol=1e-9)
    np.testing.assert_allclose(x, 0.1 * (20 / 50) * omega * t, atol=1e-9)


def test_a_rack_direction_left_out_is_one_line(tmp_path, capsys):
    """``second_axis`` deleted from the rack and pinion (found by the fuzz, seed 13): the
    rack's direction defaults to the pinion's axis, parallel to it, and the turn angle's
    atan2(0, 0) ended ``flexmbs check`` in a ZeroDivisionError traceback."""
    text = CASE.read_text()
    i = text.index('type = "rack_pinion"')
    j = text.index("second_axis", i)
    text = text[:j] + text[text.index("\n", j) + 1:]
    case = tmp_path / "case.toml"
    case.write_text(text)
    assert main(["check", str(case)]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert "Traceback" not in "\n".join(err)
    assert err[-1].endswith("joints[4]: RackPinion 'rack_mesh': the rack's direction "
                            "'second_axis' must be normal to the pinion's axis, got the "
                            "directions [0.0, 0.0, 1.0] and [0.0, 0.0, 1.0] (second_axis "
                            "left out: the pinion's axis)"), err
