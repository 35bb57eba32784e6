"""Malformed case files: each gives one clear line naming file, key path, expectation and
what was found, and a non-zero exit status (``flexmbs check``)."""
from pathlib import Path

import pytest
from check_error import assert_check_error

from flexmbs.case import build, load_case
from flexmbs.cli.main import main
from flexmbs.errors import CaseError

MESHES = Path(__file__).resolve().parents[2] / "meshes"

BASE = """
[model]
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "arm"
type = "rigid"
shape = "box"
size = [1.0, 0.05, 0.05]
density = 7850.0
com = [0.5, 0.0, 0.0]
markers = { end = { at = [1.0, 0.0, 0.0] } }

[[joints]]
name = "pin"
type = "revolute"
first = "ground"
second = "arm"
at = [0.0, 0.0, 0.0]
axis = "z"

[[sensors]]
name = "tip"
type = "position"
first = "arm.end"

[solver]
t_end = 0.1
dt = 1e-3
"""

FLEX = f"""
[[bodies]]
name = "rod"
type = "flexible"
mesh = "{MESHES / 'conrod_tet10.msh'}"
material = "steel"
modes = 2
interfaces = ["hole_A", "hole_B"]
"""

# (name, transformation of BASE, substrings the message must contain)
CASES = [
    ("unknown key with suggestion", lambda s: s.replace("density =", "densty ="),
     ["bodies[0].densty", "did you mean 'density'"]),
    ("unknown section", lambda s: s.replace("[solver]", "[solvers]"),
     ["solvers", "did you mean 'solver'"]),
    ("wrong type", lambda s: s.replace("dt = 1e-3", 'dt = "fast"'),
     ["solver.dt", "expected a number", 'string "fast"']),
    ("wrong vector length", lambda s: s.replace("gravity = [0.0, -9.81, 0.0]", "gravity = [0.0, -9.81]"),
     ["model.gravity", "array of 3 numbers", "2 entries"]),
    ("joint on an unknown body", lambda s: s.replace('second = "arm"', 'second = "armm"'),
     ["joints[0].second", 'unknown body "armm"', "did you mean 'arm'"]),
    ("missing body: no bodies", lambda s: s.split("[[bodies]]")[0] + "[[joints]]"
     + s.split("[[joints]]")[1].split("[[sensors]]")[0] + "[solver]" + s.split("[solver]")[1],
     ["joints[0].second", 'unknown body "arm"', "bodies: none"]),
    ("joint on an unknown marker", lambda s: s.replace('first = "arm.end"', 'first = "arm.ned"'),
     ["sensors[0].first", 'no marker "ned"', "did you mean 'end'"]),
    ("negative step", lambda s: s.replace("dt = 1e-3", "dt = -1e-3"),
     ["solver.dt", "positive", "-0.001"]),
    ("t_end before t0", lambda s: s.replace("t_end = 0.1", "t_end = 0.1\nt0 = 0.2"),
     ["solver.t_end", "t_end > t0"]),
    ("missing required key", lambda s: s.replace('type = "revolute"\n', ""),
     ["joints[0].type", "missing required key"]),
    ("unknown joint type", lambda s: s.replace('type = "revolute"', 'type = "revolut"'),
     ["joints[0].type", "did you mean 'revolute'"]),
    ("bad axis", lambda s: s.replace('axis = "z"', 'axis = "w"'),
     ["joints[0].axis", "'x', 'y', 'z'", '"w"']),
    ("zero axis", lambda s: s.replace('axis = "z"', "axis = [0, 0, 0]"),
     ["joints[0].axis", "non-zero"]),
    ("shape without its size", lambda s: s.replace("size = [1.0, 0.05, 0.05]\n", ""),
     ["bodies[0].size", "missing required key"]),
    ("negative density", lambda s: s.replace("density = 7850.0", "density = -1.0"),
     ["bodies[0].density", "positive"]),
    ("duplicate name", lambda s: s.replace('name = "tip"', 'name = "pin"'),
     ["sensors[0].name", 'already used by a joint']),
    ("drive on an unknown joint", lambda s: s + '\n[[drives]]\nname = "m"\ntype = "angular_velocity"\njoint = "pn"\nomega = 1.0\n',
     ["drives[0].joint", 'unknown joint "pn"', "did you mean 'pin'"]),
    ("rho_inf out of range", lambda s: s.replace("dt = 1e-3", "dt = 1e-3\nrho_inf = 1.5"),
     ["solver.rho_inf", "[0, 1]", "1.5"]),
    ("orientation not a rotation", lambda s: s.replace("com = [0.5, 0.0, 0.0]",
     "com = [0.5, 0.0, 0.0]\norientation = [[2.0, 0, 0], [0, 1, 0], [0, 0, 1]]"),
     ["bodies[0].orientation", "expected a rotation matrix", "columns of lengths [2, 1, 1]",
      "det = 2"]),
    ("orientation a reflection", lambda s: s.replace("com = [0.5, 0.0, 0.0]",
     "com = [0.5, 0.0, 0.0]\norientation = [[1.0, 0, 0], [0, 1, 0], [0, 0, -1]]"),
     ["bodies[0].orientation", "det +1", "det = -1"]),
    ("output interval longer than the run", lambda s: s + "\n[output]\ndt = 1.0\n",
     ["output.dt", "expected an output interval <= t_end - t0 = 0.1 s", "got 1 s"]),
    ("missing solver", lambda s: s.split("[solver]")[0], ["solver", "missing section"]),
    ("not TOML", lambda s: s.replace("[model]", "[model"), ["not valid TOML"]),
    ("bad boolean", lambda s: s.replace("dt = 1e-3", "dt = 1e-3\nadaptive = 1"),
     ["solver.adaptive", "true or false", "integer 1"]),
    ("bad time function", lambda s: s + '\n[[drives]]\nname = "m"\ntype = "angle"\njoint = "pin"\nangle = { type = "sin", omega = 1.0 }\n',
     ["drives[0].angle.type", "did you mean 'sine'"]),
    ("missing mesh file", lambda s: s + FLEX.replace("conrod_tet10.msh", "nonexistent.msh"),
     ["bodies[1].mesh", "file not found", "nonexistent.msh"]),
    ("unknown material", lambda s: s + FLEX.replace('"steel"', '"steal"'),
     ["bodies[1].material", "'steal'", "did you mean 'steel'"]),
    ("flexible without modes", lambda s: s + FLEX.replace("modes = 2\n", ""),
     ["bodies[1].modes", "missing required key"]),
    ("unknown interface marker", lambda s: s + FLEX + '\n[[sensors]]\nname = "s2"\ntype = "position"\nfirst = "rod.hole_C"\n',
     ["sensors[1].first", 'no marker "hole_C"', "did you mean 'hole_"]),
    ("bad interface kind", lambda s: s + FLEX.replace('"hole_B"', '"hole_B:rbe5"'),
     ["bodies[1].interfaces", "rbe2 or rbe3"]),
    ("key of another type", lambda s: s.replace('first = "arm.end"', 'first = "arm.end"\noutput = "xyz"'),
     ["sensors[0].output", "only valid for type = \"orientation\""]),
]


@pytest.mark.parametrize("name, edit, needles", CASES, ids=[c[0] for c in CASES])
def test_malformed_case(tmp_path, capsys, name, edit, needles):
    path = tmp_path / "case.toml"
    path.write_text(edit(BASE))
    assert_check_error(path, capsys, needles)


def test_an_output_interval_equal_to_the_run_is_valid(tmp_path, capsys):
    """t0 = 0.1, t_end = 0.3, [output] dt = 0.2: 0.3 - 0.1 = 0.19999999999999998 in
    floating point, still not shorter than the interval (was refused, 'expected <= 0.2 s,
    got 0.2 s')."""
    path = tmp_path / "case.toml"
    path.write_text(BASE.replace("t_end = 0.1", "t_end = 0.3\nt0 = 0.1") + "\n[output]\ndt = 0.2\n")
    assert main(["check", str(path)]) == 0, capsys.readouterr()


def test_base_case_is_valid(tmp_path, capsys):
    path = tmp_path / "case.toml"
    path.write_text(BASE)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "degrees of freedom: 1" in out


def test_all_problems_reported_at_once(tmp_path):
    path = tmp_path / "case.toml"
    path.write_text(BASE.replace("density =", "densty =").replace("dt = 1e-3", "dt = -1.0"))
    with pytest.raises(CaseError, match="2 problems") as exc:
        load_case(path)
    assert "densty" in str(exc.value) and "solver.dt" in str(exc.value)


def test_model_level_problem_names_the_file(tmp_path):
    """A problem only the System finds (a body joined to itself via two markers)."""
    path = tmp_path / "case.toml"
    path.write_text(BASE.replace('first = "ground"', 'first = "arm.end"'))
    with pytest.raises(CaseError, match=r"case\.toml.*itself"):
        build(load_case(path))


def test_paths_relative_to_case_file(tmp_path):
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    text = BASE + FLEX.replace(str(MESHES / "conrod_tet10.msh"),
                               str(Path("../" * len(sub.parts)) / MESHES.relative_to("/") / "conrod_tet10.msh"))
    (sub / "case.toml").write_text(text)
    spec = load_case(sub / "case.toml")
    assert spec.bodies[1]["mesh"] == (MESHES / "conrod_tet10.msh").resolve()


def test_flexible_body_from_body_file_and_cache(tmp_path, capsys):
    """A body file made by `flexmbs preprocess` is used as given; a mesh body is cached
    under the content-hash key and reused on the second build."""
    from flexmbs.case.cache import cache_key
    body = tmp_path / "rod.h5"
    assert main(["preprocess", str(MESHES / "conrod_tet10.msh"), "--material", "steel",
                 "--modes", "2", "--interface", "hole_A", "--interface", "hole_B",
                 "-o", str(body)]) == 0
    path = tmp_path / "case.toml"
    path.write_text(BASE + '\n[[bodies]]\nname = "rod"\ntype = "flexible"\n'
                    'body_file = "rod.h5"\n\n[[joints]]\nname = "j2"\ntype = "spherical"\n'
                    'first = "arm.end"\nsecond = "rod.hole_A"\n')
    built = build(load_case(path))
    assert built.body_files["rod"] == (body.resolve(), "given") or \
        built.body_files["rod"][1] == "given"
    bad = tmp_path / "bad.toml"
    bad.write_text(path.read_text().replace("rod.hole_A", "rod.hole_Q"))
    with pytest.raises(CaseError, match=r"bad\.toml: joints\[1\]\.second: body \"rod\" has no marker"):
        build(load_case(bad))
    flex = tmp_path / "flex.toml"
    flex.write_text(BASE + FLEX)
    spec = load_case(flex)
    b1 = build(spec, body_dir=tmp_path / "cache")
    b2 = build(spec, body_dir=tmp_path / "cache")
    assert b1.body_files["rod"][1] == "new" and b2.body_files["rod"][1] == "cached"
    key = cache_key(spec.bodies[1])
    assert b2.body_files["rod"][0].name == f"rod-{key[:16]}.h5"
    spec2 = load_case(flex.write_text(BASE + FLEX.replace("modes = 2", "modes = 3")) and flex)
    assert cache_key(spec2.bodies[1]) != key                 # a changed setting is stale


def test_every_key_documented():
    from flexmbs.case import schema as S
    doc = (Path(__file__).resolve().parents[2] / "docs" / "case_format.md").read_text()
    assert S.markdown_tables() in doc


def test_rounded_rotation_matrix_is_the_nearest_rotation(tmp_path):
    """A 45-degree rotation about z written with 7 digits (0.7071068, 1.5e-7 from
    orthonormal) is s R45 with s = 1 + 1e-8: its nearest rotation is R45 itself."""
    import numpy as np

    from flexmbs.kinematics.rotation import matrix_from_axis_angle
    c = "0.7071068"
    case = tmp_path / "case.toml"
    case.write_text(BASE.replace("com = [0.5, 0.0, 0.0]", "com = [0.5, 0.0, 0.0]\norientation = "
                                 f"[[{c}, -{c}, 0.0], [{c}, {c}, 0.0], [0.0, 0.0, 1.0]]"))
    R = np.array(load_case(case).bodies[0]["orientation"])
    np.testing.assert_allclose(R, matrix_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 4),
                               rtol=0, atol=1e-15)


def test_the_nearest_rotation_is_logged_once(tmp_path, caplog):
    """The replacement of a rounded matrix is one warning naming the key, the body and the
    deviation: ``R = s R45`` with ``s = sqrt(2) 0.7071068`` gives ``R^T R - I = (s^2 - 1)``
    on the xy diagonal (closed form); an exact rotation is taken silently."""
    import logging
    import math
    import re
    c = "0.7071068"
    s = math.sqrt(2.0) * float(c)
    case = tmp_path / "case.toml"
    case.write_text(BASE.replace("com = [0.5, 0.0, 0.0]", "com = [0.5, 0.0, 0.0]\norientation = "
                                 f"[[{c}, -{c}, 0.0], [{c}, {c}, 0.0], [0.0, 0.0, 1.0]]"))
    with caplog.at_level(logging.WARNING, logger="flexmbs.case.loader"):
        load_case(case)
    lines = [r.getMessage() for r in caplog.records if "nearest rotation" in r.getMessage()]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "case.toml: bodies[0].orientation ('arm')" in lines[0]
    off, moved = (float(x) for x in re.findall(r"is (\S+) from orthonormal.*up to (\S+)$",
                                              lines[0])[0])
    assert off == pytest.approx(abs(s * s - 1.0), rel=0.05)             # (2 digits shown)
    assert moved == pytest.approx(abs(float(c) - 1.0 / math.sqrt(2.0)), rel=0.05)
    caplog.clear()
    case.write_text(BASE.replace("com = [0.5, 0.0, 0.0]", "com = [0.5, 0.0, 0.0]\norientation = "
                                 "[[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]"))
    with caplog.at_level(logging.WARNING, logger="flexmbs.case.loader"):
        load_case(case)
    assert not [r for r in caplog.records if "nearest rotation" in r.getMessage()]


@pytest.mark.parametrize("kind, joint, coord", [
    ("angular_velocity", "spherical", "angle"), ("displacement", "revolute", "displacement")])
def test_drive_on_a_joint_without_its_coordinate(tmp_path, capsys, kind, joint, coord):
    """The message names the drive's key, the coordinate the drive needs (with its article)
    and the joint's kind and coordinates."""
    path = tmp_path / "case.toml"
    value = "omega = 1.0" if kind == "angular_velocity" else "s = 0.0"
    path.write_text(BASE.replace('type = "revolute"', f'type = "{joint}"') + "\n[[drives]]\n"
                    f'name = "m"\ntype = "{kind}"\njoint = "pin"\n{value}\n')
    have = "none" if joint == "spherical" else "angle"
    assert_check_error(path, capsys, [
        "drives[0].joint", f"{'an' if kind[0] == 'a' else 'a'} {kind} drive needs a joint with "
        f"{'an' if coord[0] == 'a' else 'a'} {coord} coordinate", f'"pin" is {joint}',
        f"(coordinates: {have})"], file_name_only=True)
