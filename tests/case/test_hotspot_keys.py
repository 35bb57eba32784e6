"""``[[hotspots]]`` of a case file: every mistake is one line naming the key, what was
expected and what was found (the CLI exits 2); a node set resolves to its mesh nodes."""
import tomllib
from pathlib import Path

import numpy as np
import pytest

from flexmbs.case.loader import spec_from_raw
from flexmbs.cli.main import main
from flexmbs.errors import CaseError

CASES = Path(__file__).resolve().parents[2] / "cases"
MAIN = CASES / "main" / "case.toml"


def main_raw(**hotspot) -> dict:
    raw = tomllib.loads(MAIN.read_text())
    raw["hotspots"] = [{"name": "h", "body": "rod", **hotspot}]
    return raw


@pytest.mark.parametrize("hotspot, message", [
    ({"node_set": "hole_A", "point": [0.2, 0.0, 0.0]},
     "hotspots[0]: expected exactly one of `node_set`"),
    ({}, "hotspots[0]: expected exactly one of `node_set`"),
    ({"body": "crank", "point": [0.0, 0.0, 0.0]},
     'hotspots[0].body: expected a flexible body (rod), got "crank" (a rigid body)'),
    ({"body": "rood", "point": [0.0, 0.0, 0.0]},
     'hotspots[0].body: expected a flexible body (rod), got "rood" (no such body)'),
    ({"point": [0.2, 0.0]}, "hotspots[0].point: expected"),
    ({"point": [0.2, 0.0, 0.0], "sn_curve": {"C": 1e12, "m": 3}},
     "hotspots[0].sn_curve: expected a table {S_ref = Pa, N_ref = cycles, m = -}"),
    ({"point": [0.2, 0.0, 0.0], "sn_curve": {"S_ref": 2e8, "N_ref": 2e6, "m": -3}},
     "hotspots[0].sn_curve: expected S_ref > 0 [Pa], N_ref > 0 and m > 0"),
    ({"point": [0.2, 0.0, 0.0], "nodes": [1]},
     "hotspots[0].nodes: unknown key (did you mean 'node_set'?)"),
])
def test_hotspot_mistakes_are_one_line(hotspot, message):
    with pytest.raises(CaseError) as exc:
        spec_from_raw(main_raw(**hotspot), MAIN)
    text = str(exc.value)
    assert "\n" not in text and message in text, text


def test_an_unknown_node_set_stops_check_and_run_with_exit_2(tmp_path, capsys):
    text = MAIN.read_text().replace('point = [0.2, 0.01, 0.005]', 'node_set = "hole_C"')
    text = text.replace("../../meshes", str(CASES.parent / "meshes"))
    case = tmp_path / "case.toml"
    case.write_text(text)
    for cmd in (["check", str(case)], ["run", str(case), "--out", str(tmp_path / "o")]):
        assert main(cmd) == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert 'hotspots[0].node_set: body \'rod\' has no node set "hole_C"; node sets: ' \
            "hole_A, hole_B" in err, err
    assert not (tmp_path / "o" / "flexible_slider_crank.h5").exists()


def test_a_point_off_the_body_stops_check_with_exit_2(tmp_path, capsys):
    """The mid-span point written in millimetres (200, 10, 5): the rod's mesh spans
    [-0.025, 0.425] x [-0.025, 0.025] x [0, 0.01] m (conrod_tet10.msh), its nearest node is
    ~200 m away; it was snapped to it without a word."""
    import meshio
    pts = meshio.read(CASES.parent / "meshes" / "conrod_tet10.msh").points
    text = MAIN.read_text().replace('point = [0.2, 0.01, 0.005]', 'point = [200.0, 10.0, 5.0]')
    text = text.replace("../../meshes", str(CASES.parent / "meshes"))
    case = tmp_path / "case.toml"
    case.write_text(text)
    assert main(["check", str(case)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    lo, hi = pts.min(0), pts.max(0)
    box = " x ".join(f"[{a:.4g}, {b:.4g}]" for a, b in zip(lo, hi))
    dist = np.linalg.norm(pts - [200.0, 10.0, 5.0], axis=1).min()
    assert (f"hotspots[0].point: expected a point on body 'rod' (its mesh spans {box} m), "
            f"got [200.0, 10.0, 5.0]: the nearest node is {dist:.4g} m away") in err, err


def test_a_node_set_is_the_mesh_node_set():
    """Reference: the node set of the mesh file as meshio reads it."""
    import meshio

    from flexmbs.case.builder import build
    from flexmbs.case.post_items import hotspots
    spec = spec_from_raw(main_raw(node_set="hole_B"), MAIN)
    (spot,) = [h for h in hotspots(spec, build(spec)) if h.name == "h"]
    m = meshio.read(CASES.parent / "meshes" / "conrod_tet10.msh")
    tag = m.field_data["hole_B"][0]
    nodes = set()
    for block, phys in zip(m.cells, m.cell_data["gmsh:physical"], strict=True):
        nodes |= set(block.data[phys == tag].ravel().tolist())
    assert set(spot.nodes.tolist()) == nodes
    r = np.linalg.norm(m.points[spot.nodes, :2] - [0.4, 0.0], axis=1)    # around hole B
    assert r.max() - r.min() < 1e-6 * r.max()


def test_an_sn_exponent_beyond_the_float_range_stops_check_with_exit_2(tmp_path, capsys):
    """``m = 300`` (found by the fuzz, seed 20261128): ``C = N_ref S_ref^m`` = 2e6 x
    (2e8)^300 overflows a float (its largest is ~1.8e308); it ended in an OverflowError
    traceback."""
    text = MAIN.read_text().replace("m = 5.0 }", "m = 300.0 }")
    text = text.replace("../../meshes", str(CASES.parent / "meshes"))
    case = tmp_path / "case.toml"
    case.write_text(text)
    assert main(["check", str(case)]) == 2
    err = [ln for ln in capsys.readouterr().err.strip().splitlines() if ln.strip()]
    assert "Traceback" not in "\n".join(err)
    assert "hotspots[0].sn_curve: SNCurve: C = N_ref S_ref^m = 2e+06 x 2e+08^300 is not a " \
           "finite number: expected an exponent m of a few units" in err[-1], err


def test_two_hot_spots_without_a_name_are_one_line_each():
    """Found by the fuzz (seed 21, scale 3): the second of two hot spots without `name`
    counted as a repeated name and ended in a KeyError traceback; each missing name is
    one line (the schema's required key), no repeated-name line."""
    raw = tomllib.loads(MAIN.read_text())
    raw["hotspots"] = [{"body": "rod", "point": [0.2, 0.0, 0.0]},
                       {"body": "rod", "point": [0.3, 0.0, 0.0]}]
    with pytest.raises(CaseError) as exc:
        spec_from_raw(raw, MAIN)
    text = str(exc.value)
    assert "already used" not in text, text
    assert "hotspots[0].name" in text and "hotspots[1].name" in text, text
