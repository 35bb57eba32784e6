"""Bad input found by hand and by tests/scenarios/fuzz: each ends in exit status 2 and one line
``flexmbs <cmd>: error: ...`` naming the file or option, the key, what was expected and
what was found (no traceback); plus ``--version`` and two plausibility checks."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from test_case_errors import BASE

from flexmbs.case import load_case
from flexmbs.cli.main import main
from flexmbs.errors import CaseError

ROOT = Path(__file__).resolve().parents[2]
MESHES = ROOT / "meshes"

#: the arm of test_case_errors.py (a pin, a sensor), run to 0.01 s
RIGID = BASE.replace("t_end = 0.1", "t_end = 0.01")

#: the flexible beam of cases/spin_up_beam on the shipped 5-element hex27 beam mesh
FLEX = f"""
[[bodies]]
name = "beam"
type = "flexible"
mesh = "{MESHES / 'beam_hex27_5x1x1.msh'}"
material = "steel"
modes = 2
interfaces = ["clamp", "tip:rbe3"]
stiffening = false

[[joints]]
name = "clamp"
type = "fixed"
first = "ground"
second = "beam.clamp"
"""


def one_error_line(err: str, cmd: str, *needles: str) -> str:
    """The error line of ``err``: exactly one line starting ``flexmbs <cmd>: error:``,
    nothing after it, no traceback, every needle in it."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err
    errors = [ln for ln in lines if ln.startswith(f"flexmbs {cmd}: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    for n in needles:
        assert n in errors[0], f"{n!r} not in {errors[0]!r}"
    return errors[0]


def check(tmp_path, capsys, text: str | bytes, *needles: str, name: str = "case.toml"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    rc = main(["check", str(path), "--body-dir", str(tmp_path / "bodies")])
    err = capsys.readouterr().err
    assert rc == 2, err
    return one_error_line(err, "check", *needles)


# -- 1. interfaces ------------------------------------------------------------------------
@pytest.mark.parametrize("value, needles", [
    ('["clamp:rbe5"]', ['"clamp:rbe5"', "rbe2 or rbe3", '"rbe5"']),
    ('["clamp", "tip:rbe3 "]', ['"tip:rbe3 "', "spaces"]),
    ('"clamp"', ["array of strings", 'string "clamp"', '["clamp"]']),
    ('["clamp", "clamp"]', ["distinct", '"clamp" twice']),
    ('["clamp", ""]', ["non-empty"]),
    ('["clamp", "a.b"]', ["without '.'"]),
])
def test_bad_interfaces_are_one_line(tmp_path, capsys, value, needles):
    text = RIGID + FLEX.replace('["clamp", "tip:rbe3"]', value)
    check(tmp_path, capsys, text, "case.toml", "bodies[1].interfaces", *needles)


def test_interface_parse_in_preprocess(tmp_path, capsys):
    rc = main(["preprocess", str(MESHES / "beam_hex8_10x1x1.msh"), "--material", "steel",
               "--modes", "2", "--interface", "tip:rbe3 ", "-o", str(tmp_path / "b.h5")])
    assert rc == 2
    one_error_line(capsys.readouterr().err, "preprocess", '"tip:rbe3 "', "spaces")


# -- 3. PETSc options in the case file -----------------------------------------------------
def test_unknown_petsc_type_in_case_file(tmp_path, capsys):
    text = RIGID.replace("dt = 1e-3", 'dt = 1e-3\npetsc_options = { pc_type = "nonexistent" }')
    check(tmp_path, capsys, text, "solver.petsc_options", "-pc_type", "'nonexistent'",
          "PC type")


def test_unknown_petsc_option_name_in_case_file(tmp_path, capsys):
    """An option no PETSc solver reads (PETSc's ``PetscOptionsUsed`` after
    ``setFromOptions``): one line, exit 2, before the run."""
    text = RIGID.replace("dt = 1e-3", 'dt = 1e-3\npetsc_options = { snes_typo = 1 }')
    check(tmp_path, capsys, text, "solver.petsc_options", "'snes_typo'",
          "PETSc would ignore it")


def test_known_petsc_types_in_case_file(tmp_path):
    path = tmp_path / "case.toml"
    path.write_text(RIGID.replace("dt = 1e-3", 'dt = 1e-3\npetsc_options = { ksp_type = '
                                  '"preonly", pc_type = "lu", snes_type = "newtonls" }'))
    assert load_case(path).solver["petsc_options"]["pc_type"] == "lu"


def test_bad_petsc_option_value_in_case_file(tmp_path, capsys):
    """A value PETSc cannot read as the option's type (PETSc error 63 in setFromOptions):
    one line naming the key, the type PETSc's reader expected and the value, exit 2; the
    loader still reports every problem at once."""
    text = RIGID.replace("dt = 1e-3", 'dt = 1e-3\npetsc_options = { snes_max_it = "abc" }')
    check(tmp_path, capsys, text, "solver.petsc_options", "'snes_max_it' as an integer",
          "abc")
    text = RIGID.replace("dt = 1e-3", 'dt = -1e-3\npetsc_options = { snes_rtol = "1e-8x" }')
    path = tmp_path / "two.toml"
    path.write_text(text)
    with pytest.raises(CaseError, match="2 problems") as exc:
        load_case(path)
    assert "'snes_rtol' as a real number" in str(exc.value) and "1e-8x" in str(exc.value)
    assert "solver.dt" in str(exc.value)


def test_bad_petsc_option_value_on_the_command_line(tmp_path, capsys):
    """``flexmbs run case.toml -fmbs_snes_rtol 1e-8x``: one line naming the prefixed
    option, the expected type and the value, exit 2 (ran to the end before: the compiled
    loop of steps sets up no SNES)."""
    path = tmp_path / "case.toml"
    path.write_text(RIGID)
    rc = main(["run", str(path), "--out", str(tmp_path / "out"), "--no-plots", "--no-xdmf",
               "--quiet", "-fmbs_snes_rtol", "1e-8x"])
    one_error_line(capsys.readouterr().err, "run", "-fmbs_snes_rtol", "expected a real number",
                   "'1e-8x'")
    assert rc == 2


def test_ilu_with_superlu_in_case_file(tmp_path, capsys):
    """pc_type ilu under the default SuperLU would abort the process at the first
    factorisation: one line, exit 2, before the run."""
    text = RIGID.replace("dt = 1e-3", 'dt = 1e-3\npetsc_options = { pc_type = "ilu" }')
    check(tmp_path, capsys, text, "solver.petsc_options", "-pc_type", "got 'ilu' with superlu")


def test_run_configuration_options_in_case_file(tmp_path, capsys):
    """Options the run's solver reads are accepted: ts_bdf_order under method "ts"
    (TS_DEFAULTS: ts_type bdf), sub_pc_type under pc_type bjacobi (read at the PC's
    setup); the case runs to t_end."""
    path = tmp_path / "case.toml"
    path.write_text(RIGID.replace("dt = 1e-3", 'dt = 1e-3\nintegrator = "ts"\n'
                                  'petsc_options = { ts_bdf_order = 3 }'))
    assert load_case(path).solver["petsc_options"]["ts_bdf_order"] == 3
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-plots",
                 "--no-xdmf", "--quiet"]) == 0, capsys.readouterr().err
    path.write_text(RIGID.replace("dt = 1e-3", 'dt = 1e-3\npetsc_options = { pc_type = '
                                  '"bjacobi", sub_pc_type = "lu", ksp_type = "gmres" }'))
    assert load_case(path).solver["petsc_options"]["sub_pc_type"] == "lu"


# -- 6. case-file details --------------------------------------------------------------------
def test_byte_order_mark_is_accepted(tmp_path, capsys):
    path = tmp_path / "case.toml"
    path.write_bytes(b"\xef\xbb\xbf" + RIGID.encode())
    assert main(["check", str(path)]) == 0, capsys.readouterr().err


def test_not_utf8(tmp_path, capsys):
    check(tmp_path, capsys, RIGID.encode().replace(b'"arm"', b'"\xff\xfe"', 1),
          "case.toml", "expected UTF-8", "0xff")


def test_too_many_modes_says_so(tmp_path, capsys):
    """5 hex27 elements, 99 nodes: 297 dofs; RBE2 'clamp' (9 nodes) and RBE3 'tip' leave
    297 - 27 - 6 = 264 for the fixed-interface eigenproblem."""
    err = check(tmp_path, capsys, RIGID + FLEX.replace("modes = 2", "modes = 100000"),
                "case.toml", "bodies[1].modes = 100000", "expected at most", "297 dofs",
                "interfaces")
    assert "eigenpairs" not in err


def test_helical_pitch_zero(tmp_path, capsys):
    text = RIGID.replace('type = "revolute"', 'type = "helical"\npitch = 0.0')
    err = check(tmp_path, capsys, text, "joints[0].pitch", "non-zero", "got 0")
    assert "missing" not in err


def test_helical_pitch_missing(tmp_path, capsys):
    check(tmp_path, capsys, RIGID.replace('type = "revolute"', 'type = "helical"'),
          "joints[0].pitch", "missing required key")


# -- 7. names that would write files elsewhere ---------------------------------------------
@pytest.mark.parametrize("edit, needles", [
    (lambda s: s.replace("[model]", '[model]\nname = "../../x"'), ["model.name", '"../../x"']),
    (lambda s: s.replace("[model]", '[model]\nname = ".hidden"'), ["model.name", "'.'"]),
    (lambda s: s.replace("[model]", '[model]\nname = "a/b"'), ["model.name", '"a/b"']),
    (lambda s: s.replace('name = "arm"', 'name = "a/b"').replace('"arm', '"a/b'),
     ["bodies[0].name", '"a/b"']),
    (lambda s: s.replace('name = "pin"', 'name = "../pin"'), ["joints[0].name", '"../pin"']),
    (lambda s: s.replace('name = "tip"', 'name = "a/b"'), ["sensors[0].name", '"a/b"']),
    (lambda s: s.replace('name = "tip"', 'name = "t p"'), ["sensors[0].name", '"t p"']),
    (lambda s: s.replace("{ end = {", '{ "x/y" = {').replace("arm.end", "arm"),
     ["bodies[0].markers", '"x/y"']),
])
def test_unsafe_names(tmp_path, capsys, edit, needles):
    check(tmp_path, capsys, edit(RIGID), "letters, digits", *needles)


def test_safe_model_name_with_dots(tmp_path):
    path = tmp_path / "case.toml"
    path.write_text(RIGID.replace("[model]", '[model]\nname = "run-1.v2_a"'))
    assert load_case(path).name == "run-1.v2_a"


def test_default_name_of_a_relative_path(tmp_path, monkeypatch):
    """``flexmbs check case.toml`` from the case folder: the folder's name, not ''."""
    folder = tmp_path / "my case"
    folder.mkdir()
    (folder / "case.toml").write_text(RIGID)
    monkeypatch.chdir(folder)
    assert load_case("case.toml").name == "my case"


# -- 8. --version -------------------------------------------------------------------------------
def test_version(capsys):
    import flexmbs
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"flexmbs {flexmbs.__version__}"


# -- 9. force on the ground; a mesh in the wrong unit ----------------------------------------
@pytest.mark.parametrize("kind, value", [("force", "force = [0.0, -10.0, 0.0]"),
                                         ("torque", "torque = [0.0, 0.0, 1.0]")])
def test_load_on_ground(tmp_path, capsys, kind, value):
    text = RIGID + f'\n[[forces]]\nname = "f"\ntype = "{kind}"\nat = "ground"\n{value}\n'
    check(tmp_path, capsys, text, "forces[0].at", "expected a body", '"ground"')


def test_spring_from_ground_to_ground(tmp_path, capsys):
    text = RIGID + ('\n[[forces]]\nname = "s"\ntype = "spring_damper"\nfirst = "ground"\n'
                    'second = "ground"\nk = 10.0\n')
    check(tmp_path, capsys, text, "forces[0].second", "other than first")


@pytest.mark.parametrize("unit, other", [("mm", "m"), ("m", "mm")])
def test_mesh_unit_warning(tmp_path, caplog, unit, other):
    """The 1 m beam declared in mm weighs 78.5e-9 kg; the same beam scaled to 1000 'm'
    (a millimetre mesh read as metres) is 1000 m long: both get one warning line saying
    which unit to set."""
    from flexmbs.case import build
    mesh = MESHES / "beam_hex8_10x1x1.msh"
    if unit == "m":
        import meshio
        m = meshio.read(mesh, file_format="gmsh")
        m.points = m.points * 1000.0
        mesh = tmp_path / "beam_mm.msh"
        meshio.write(mesh, m, file_format="gmsh22", binary=False)
    text = RIGID + FLEX.replace(str(MESHES / "beam_hex27_5x1x1.msh"), str(mesh)).replace(
        "modes = 2", f'modes = 2\nunit = "{unit}"')
    path = tmp_path / "case.toml"
    path.write_text(text)
    with caplog.at_level(logging.WARNING):
        build(load_case(path), body_dir=tmp_path / "bodies")
    msgs = [r.getMessage() for r in caplog.records if "declared in" in r.getMessage()]
    assert len(msgs) == 1 and "\n" not in msgs[0]
    assert "bodies[1].unit" in msgs[0] and f'set unit = "{other}"' in msgs[0]
    assert ("mass 7.85e-08 kg" in msgs[0]) if unit == "mm" else ("1000 x 100 x 100 m" in msgs[0])


@pytest.mark.parametrize("edit, key, extent", [
    ('shape = "box"\nsize = [1000.0, 50.0, 50.0]', "size", "1000 x 50 x 50 m"),
    ('shape = "cylinder"\nradius = 25.0\nlength = 1000.0', "length", "50 x 1000 m"),
    ('shape = "sphere"\nradius = 500.0', "radius", "1000 m")])
def test_rigid_shape_unit_warning(tmp_path, caplog, edit, key, extent):
    """The 1 m arm written in millimetres is a 1 km solid of ~1e7 kg and more: one warning
    naming its key, the extent and the mass (rho V), and the fix."""
    from flexmbs.case import build
    path = tmp_path / "case.toml"
    path.write_text(RIGID.replace('shape = "box"\nsize = [1.0, 0.05, 0.05]', edit))
    with caplog.at_level(logging.WARNING):
        build(load_case(path))
    msgs = [r.getMessage() for r in caplog.records if "millimetres" in r.getMessage()]
    volume = {"size": 1000.0 * 50.0 * 50.0, "length": np.pi * 25.0 ** 2 * 1000.0,
              "radius": 4 / 3 * np.pi * 500.0 ** 3}[key]
    assert len(msgs) == 1 and "\n" not in msgs[0]
    assert msgs[0].startswith(f"case.toml: bodies[0].{key}: ") and f"spans {extent}" in msgs[0]
    assert f"mass {7850.0 * volume:.3g} kg" in msgs[0] and "divide them by 1000" in msgs[0]
    assert "large_shape = true" in msgs[0]
    # the documented way to say the size is meant: large_shape = true, no warning
    caplog.clear()
    path.write_text(RIGID.replace('shape = "box"\nsize = [1.0, 0.05, 0.05]',
                                  edit + "\nlarge_shape = true"))
    with caplog.at_level(logging.WARNING):
        build(load_case(path))
    assert not [r for r in caplog.records if "millimetres" in r.getMessage()]


def test_gravity_in_mm_warning(tmp_path, caplog):
    """g = 9810 (mm/s^2 written into an SI case): one warning naming model.gravity, |g|,
    its ratio to standard gravity 9.80665 m/s^2 and the fix."""
    from flexmbs.case import build
    path = tmp_path / "case.toml"
    path.write_text(RIGID.replace("gravity = [0.0, -9.81, 0.0]", "gravity = [0.0, -9810.0, 0.0]"))
    with caplog.at_level(logging.WARNING):
        build(load_case(path))
    msgs = [r.getMessage() for r in caplog.records if "gravity" in r.getMessage()]
    assert msgs == [f"case.toml: model.gravity: |g| = 9810 m/s^2 ({9810 / 9.80665:.3g} times "
                    "the earth's): the case file is in SI units; if it is in mm/s^2, divide "
                    "by 1000"]


def test_plausible_unit_no_warning(tmp_path, caplog):
    from flexmbs.case import build
    path = tmp_path / "case.toml"
    path.write_text(RIGID + FLEX)
    with caplog.at_level(logging.WARNING):
        build(load_case(path), body_dir=tmp_path / "bodies")
    assert not [r for r in caplog.records if "declared in" in r.getMessage()
                or "millimetres" in r.getMessage() or "mm/s^2" in r.getMessage()]


def test_loader_error_is_case_error(tmp_path):
    path = tmp_path / "case.toml"
    path.write_text(RIGID + FLEX.replace('["clamp", "tip:rbe3"]', '"clamp"'))
    with pytest.raises(CaseError, match=r"bodies\[1\]\.interfaces"):
        load_case(path)


def test_case_copied_elsewhere_says_its_mesh_path_is_relative(tmp_path, capsys):
    """The shipped main case copied to another folder: its '../../meshes/...' path now
    points nowhere; the one line says the path is relative to the case file's folder."""
    case = tmp_path / "case.toml"
    case.write_text((ROOT / "cases" / "main" / "case.toml").read_text())
    assert main(["check", str(case)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "bodies[1].mesh: file not found" in err
    assert f"relative to the case file's folder {tmp_path}" in err
