"""``flexmbs export`` / ``flexmbs import`` end to end through the dispatcher."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.cli.main import main
from flexmbs.io.bodyfile import load_body

from .conftest import MESHES


@pytest.fixture(scope="module")
def body_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("body") / "beam.h5"
    rc = main(["preprocess", str(MESHES / "beam_hex8_10x1x1.msh"), "--material", "steel",
               "--modes", "6", "--interface", "clamp", "--interface", "tip:rbe3",
               "--frame", "interface:clamp", "--no-stiffening", "-o", str(out)])
    assert rc == 0
    return out


def test_export_then_import_gives_the_same_frequencies(body_file, tmp_path, capsys):
    """Second formulation: the imported body's invariants come from the exported mass
    matrix, the native body's from element quadrature; frequencies equal to 1e-10."""
    folder = tmp_path / "beam_mtx"
    assert main(["export", str(body_file), "-o", str(folder)]) == 0
    assert (folder / "model.toml").is_file() and (folder / "M.mtx").is_file()
    out = tmp_path / "imported.h5"
    assert main(["import", "mtx", str(folder), "-o", str(out)]) == 0
    ref, got = load_body(body_file), load_body(out)
    np.testing.assert_allclose(got.omega, ref.omega, rtol=1e-10, atol=0)
    np.testing.assert_allclose(got.J1, ref.J1, rtol=0, atol=1e-10 * np.abs(ref.J1).max())
    assert got.provenance["imported_from"].endswith("model.toml")
    assert main(["export", str(out), "-o", str(tmp_path / "again")]) == 0  # cells kept


def test_export_mistakes_exit_2_with_one_line(body_file, tmp_path, capsys):
    for argv, message in (
            (["export", str(tmp_path / "none.h5"), "-o", str(tmp_path / "x")], "none.h5"),
            (["export", str(body_file), "-o", str(tmp_path / "no" / "x")], "does not exist"),
            (["export", str(body_file), "-o", str(body_file)], "expected a folder")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("edit, message", [
    (lambda f: (f / "M.mtx").unlink(), "M.mtx' not found"),
    (lambda f: (f / "model.toml").write_text(
        (f / "model.toml").read_text().replace('M = "M.mtx"\n', "")),
     "missing M (the mass matrix"),
    (lambda f: (f / "model.toml").write_text(
        (f / "model.toml").read_text().replace('Phi = "Phi.mtx"\n', "")
        .replace('stress_modes = "stress_modes.mtx"\n', "")),
     "number of modes to compute must be given (--modes N)"),
])
def test_missing_piece_exits_2_with_one_line(body_file, tmp_path, capsys, edit, message):
    folder = tmp_path / "m"
    assert main(["export", str(body_file), "-o", str(folder)]) == 0
    capsys.readouterr()
    edit(folder)
    assert main(["import", "mtx", str(folder), "-o", str(tmp_path / "x.h5")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_abaqus_import_from_the_command_line(tmp_path, capsys):
    """The Abaqus files of the native beam (test_external) through 'flexmbs import
    abaqus': the native frequencies to 1e-10; three paths expected, else exit 2."""
    from .test_external import _write_abaqus, native_beam
    fe, ref = native_beam()
    _write_abaqus(tmp_path, fe, 1 + np.arange(len(fe.mesh.points)))
    out = tmp_path / "abq.h5"
    files = [str(tmp_path / f) for f in ("beam.inp", "beam_MASS1.mtx", "beam_STIF1.mtx")]
    assert main(["import", "abaqus", *files, "--interface", "clamp", "--interface",
                 "tip:rbe3", "--frame", "interface:clamp", "--modes", "8", "--material",
                 "steel", "-o", str(out)]) == 0
    got = load_body(out)
    np.testing.assert_allclose(got.omega, ref.omega, rtol=1e-10, atol=0)
    assert got.material["name"] == "steel" and got.provenance["stress_modes"] == "computed"
    capsys.readouterr()
    assert main(["import", "abaqus", *files[:2], "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "expected MODEL.inp MASS.mtx STIFFNESS.mtx, got 2 path(s)" in err
    assert err.count("\n") == 1
    assert main(["import", "abaqus", *files, "--interface", "nowhere", "-o", str(out)]) == 2
    assert "interface 'nowhere' is not a node set" in capsys.readouterr().err
    assert main(["import", "abaqus", *files, "--material", "1,2", "-o", str(out)]) == 2
    assert "--material: expected NAME or E,nu,rho" in capsys.readouterr().err


def _error_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if "error" in line]


def test_nothing_of_the_user_is_replaced(body_file, tmp_path, capsys):
    """An export replaces only what an earlier export wrote (a folder holding the user's
    own model.toml is refused, byte for byte unchanged); an import never writes over the
    files it reads (the manifest's folder)."""
    folder = tmp_path / "exported"
    assert main(["export", str(body_file), "-o", str(folder)]) == 0
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert main(["export", str(body_file), "-o", str(folder)]) == 0      # a re-export
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "model.toml").write_text("my own manifest\n")
    capsys.readouterr()
    assert main(["export", str(body_file), "-o", str(mine)]) == 2
    (line,) = _error_lines(capsys)
    assert "'model.toml' not written by flexmbs export" in line
    assert sorted(p.name for p in mine.iterdir()) == ["model.toml"]
    assert (mine / "model.toml").read_text() == "my own manifest\n"
    for target in (folder / "K.mtx", folder / "model.toml"):
        assert main(["import", "mtx", str(folder), "-o", str(target)]) == 2
        (line,) = _error_lines(capsys)
        assert "found the input file" in line
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
