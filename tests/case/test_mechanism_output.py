"""The main case (flexible slider-crank) in ParaView's files: the XDMF of the whole
mechanism read with VTK's own XDMF reader, the hot-spot history, the max-von-Mises
field and the CSV table.

References (second formulations of the same physics):
* the position sensors of the result file, computed by the system's marker kinematics
  during the run: the crank box centre (sensor ``crank_centre``), the slider
  (``slider_position``) and the centre of hole A of the rod (``pin_A_position``; an
  RBE2 interface moves rigidly with its marker, whose reference point is the weighted
  centroid of the hole's nodes, so ``sum w_i x_i = r_A`` exactly) must equal the
  drawn geometry to 1e-9 m at every step;
* the maximum over time of the stored von Mises fields equals the ``von_mises_max`` field;
* the hot spot's history equals the stored field at the node nearest to its point.
"""
from pathlib import Path

import h5py
import numpy as np
import pytest

from flexmbs.cli.main import main

CASES = Path(__file__).resolve().parents[2] / "cases"
NAME = "flexible_slider_crank"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("main")
    assert main(["run", str(CASES / "main" / "case.toml"), "--out", str(out), "--quiet",
                 "--t-end", "0.003", "--no-plots"]) == 0
    return out


@pytest.fixture
def mechanism(run, read_xdmf):
    return read_xdmf(run / f"{NAME}_mechanism.xdmf")


@pytest.fixture(scope="module")
def result(run):
    with h5py.File(run / f"{NAME}.h5") as f:
        return {"t": f["time"][()],
                "sensors": {k: f["sensors"][k][()] for k in f["sensors"]},
                "hotspot": {k: f["hotspots/mid_span"][k][()] for k in f["hotspots/mid_span"]},
                "attrs": dict(f["hotspots/mid_span"].attrs),
                "outputs": list(f.attrs["outputs"])}


def test_every_body_at_every_step(mechanism, result):
    steps, frames = mechanism
    assert steps == pytest.approx(result["t"], abs=1e-15) and len(steps) == 7
    for frame in frames:
        assert {"crank", "rod", "slider", "joints"} <= set(frame)
        assert len(frame["crank"][0]) == 8 and len(frame["rod"][0]) == 2864
        assert len(frame["slider"][0]) == 1 and len(frame["joints"][0]) == 4
        assert {f"sensor_{s}" for s in result["sensors"]} <= set(frame)


def test_rigid_and_flexible_positions_match_the_sensors(mechanism, result):
    from flexmbs.case import load_case
    from flexmbs.case.builder import build
    marker = build(load_case(CASES / "main" / "case.toml")).flexible["rod"].body.marker("hole_A")
    w = marker.weights / marker.weights.sum()
    S = result["sensors"]
    _, frames = mechanism
    for k, frame in enumerate(frames):
        assert frame["crank"][0].mean(axis=0) == pytest.approx(S["crank_centre"][k], abs=1e-9)
        assert frame["slider"][0][0] == pytest.approx(S["slider_position"][k], abs=1e-9)
        hole = w @ frame["rod"][0][marker.nodes]
        assert hole == pytest.approx(S["pin_A_position"][k], abs=1e-9)
        assert frame["sensor_slider_position"][0][0] == pytest.approx(S["slider_position"][k],
                                                                      abs=1e-12)
    moved = frames[-1]["slider"][0][0] - frames[0]["slider"][0][0]
    assert abs(moved[0]) > 1e-4                      # the mechanism does move


def test_max_von_mises_field_is_the_maximum_of_the_stored_fields(mechanism):
    steps, frames = mechanism
    vm = np.array([f["rod"][2]["von_mises"] for f in frames])
    last = frames[-1]["rod"][2]
    assert last["von_mises_max"] == pytest.approx(vm.max(axis=0), rel=1e-12, abs=1e-6)
    assert last["time_of_max"] == pytest.approx(np.array(steps)[vm.argmax(axis=0)], abs=1e-15)
    assert vm.max() > 1e5                             # stresses [Pa] are not trivial


def test_mid_span_hot_spot_history(mechanism, result):
    _, frames = mechanism
    X = frames[0]["rod"][0] - frames[0]["rod"][2]["displacement"]    # reference mesh
    node = int(np.argmin(np.linalg.norm(X - [0.2, 0.01, 0.005], axis=1)))
    assert list(result["attrs"]["nodes"]) == [node]
    assert abs(X[node, 0] - 0.2) < 5e-3 and abs(X[node, 1] - 0.01) < 1e-9   # top edge
    vm = np.array([f["rod"][2]["von_mises"][node] for f in frames])
    h = result["hotspot"]
    assert h["von_mises"][:, 0] == pytest.approx(vm, rel=1e-9)
    assert h["stress"].shape == (7, 1, 6) and h["principal"].shape == (7, 1, 3)
    assert np.all(h["principal"][..., 0] >= h["principal"][..., 2])
    assert result["attrs"]["damage"].shape == (1,) and result["attrs"]["damage"][0] >= 0


def test_csv_table_of_sensors_and_hot_spots(run, result):
    csv = run / f"{NAME}.csv"
    header = csv.read_text().splitlines()[0].split(",")
    data = np.loadtxt(csv, delimiter=",", skiprows=1)
    assert header[0] == "time [s]" and "slider_position.x [m]" in header
    assert "mid_span.von_mises_max [Pa]" in header
    assert data[:, 0] == pytest.approx(result["t"], abs=0)
    j = header.index("slider_position.x [m]")
    assert data[:, j] == pytest.approx(result["sensors"]["slider_position"][:, 0], abs=0)
    j = header.index("mid_span.von_mises_max [Pa]")
    assert data[:, j] == pytest.approx(result["hotspot"]["von_mises"].max(axis=1), abs=0)
    assert {f"{NAME}.csv", f"{NAME}_mechanism.xdmf", f"{NAME}_mechanism.h5"} <= \
        set(result["outputs"])
