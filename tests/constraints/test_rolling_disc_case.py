"""The shipped case cases/rolling_disc runs from the CLI and stays in its steady circle:
the tilt, the height of the centre and its speed ``R omega_u`` stay those of the
closed-form steady motion (docs/nonholonomic.md), and the contact point does not slip."""
from pathlib import Path

import h5py
import numpy as np

from flexmbs.cli.main import main
from flexmbs.constraints.velocity import rotation

CASE = Path(__file__).resolve().parents[2] / "cases" / "rolling_disc" / "case.toml"


def steady_axial_rate(R=0.3, L=0.02, rho=7850.0, g=9.81, theta=-0.3, Omega=1.5):
    m = rho * np.pi * R * R * L
    A, C = m * (3 * R * R + L * L) / 12.0, m * R * R / 2.0
    s, c = np.sin(theta), np.cos(theta)
    return (A * Omega**2 * s * c - m * g * R * s) / ((C + m * R * R) * Omega * c)


def test_rolling_disc_case_stays_steady(tmp_path):
    rc = main(["run", str(CASE), "--out", str(tmp_path), "--quiet", "--t-end", "0.6",
               "--no-plots"])
    assert rc == 0
    with h5py.File(tmp_path / "rolling_disc.h5") as f:
        assert f.attrs["status"] == "complete"
        q, qd = f["bodies/disc/q"][()], f["bodies/disc/qd"][()]
    R, theta = 0.3, -0.3
    u_z = np.array([rotation(e)[2, 2] for e in q[:, 3:7]])
    np.testing.assert_allclose(u_z, np.sin(theta), atol=1e-5)   # full run: 1.9e-6
    np.testing.assert_allclose(q[:, 2], R * np.cos(theta), atol=1e-5)
    speed = np.linalg.norm(qd[:, :3], axis=1)
    np.testing.assert_allclose(speed, R * steady_axial_rate(), rtol=1e-5)


def test_rolling_case_mistakes_are_one_line(tmp_path, capsys):
    """A missing radius and an unknown disc body: exit 2, one line each naming the key."""
    text = CASE.read_text().replace("radius = 0.3\n\n[[sensors]]", "\n[[sensors]]")
    text = text.replace('disc = "disc"                     #', 'disc = "wheel"  #')
    bad = tmp_path / "case.toml"
    bad.write_text(text)
    rc = main(["check", str(bad)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "constraints[0].radius" in err and "constraints[0].disc" in err
    assert "unknown body \"wheel\"" in err
    assert "Traceback" not in err


def test_sweep_key_paths_reach_the_constraints():
    """``constraints[NAME].KEY`` in a sweep: set, and checked against the type's keys."""
    import pytest

    from flexmbs.case.loader import read_raw
    from flexmbs.errors import CaseError
    from flexmbs.parallel.keypath import check_key_paths, with_values

    raw = read_raw(CASE)
    assert with_values(raw, {"constraints[roll].radius": 0.31})["constraints"][0]["radius"] \
        == 0.31
    with pytest.raises(CaseError, match="unknown key 'radiu' \\(did you mean 'radius'\\?\\)"):
        check_key_paths(raw, ["constraints[roll].radiu"])
