"""``flexmbs preprocess`` / ``flexmbs info`` end to end through the dispatcher."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.cli.main import main
from flexmbs.io.bodyfile import load_body

from .conftest import MESHES


def _mesh(tmp_path):
    path = MESHES / "beam_hex27_10x1x1.msh"
    if path.is_file():
        return path, "clamp", "tip"
    pytest.skip("shipped mesh meshes/beam_hex27_10x1x1.msh missing")


def test_preprocess_and_info_on_shipped_mesh(tmp_path, capsys):
    """Shipped 1.0x0.1x0.1 m hex27 beam: mass rho V = 78.5 kg, COM (0.5, 0.05, 0.05),
    first clamped bending within 2% of Euler-Bernoulli 83.55 Hz (coarse 10x1x1 mesh)."""
    mesh, clamp, tip = _mesh(tmp_path)
    out = tmp_path / "beam.h5"
    rc = main(["preprocess", str(mesh), "--material", "steel", "--modes", "6",
               "--interface", clamp, "--interface", f"{tip}:rbe3", "--frame",
               f"interface:{clamp}", "--static-modes", "inertial", "--damping", "0.01",
               "-o", str(out)])
    assert rc == 0
    captured = capsys.readouterr()
    assert "modes (craig_bampton" in captured.err and "total" in captured.err
    assert "mass [kg]         78.5" in captured.out
    b = load_body(out)
    assert b.m == pytest.approx(78.5, rel=1e-10)
    np.testing.assert_allclose(b.s0 / b.m, [0.5, 0.05, 0.05], rtol=1e-10)
    assert b.frequencies[0] == pytest.approx(83.55, rel=0.02)
    assert len(b.provenance["mesh_sha256"]) == 64
    assert main(["info", str(out)]) == 0
    info = capsys.readouterr().out
    assert "frequencies [Hz]" in info and f"{b.frequencies[0]:10.4f}" in info


def test_preprocess_errors_are_one_line(tmp_path, capsys):
    mesh, clamp, _ = _mesh(tmp_path)
    rc = main(["preprocess", str(mesh), "--material", "unobtainium", "--modes", "4",
               "-o", str(tmp_path / "x.h5")])
    assert rc == 2 and "unknown material" in capsys.readouterr().err
    rc = main(["preprocess", str(mesh), "--material", "210e9,0.3,7850", "--modes", "4",
               "--interface", "nope", "-o", str(tmp_path / "x.h5")])
    assert rc == 2 and "nope" in capsys.readouterr().err
    assert main(["info", str(tmp_path / "missing.h5")]) == 2


def test_preprocess_passes_petsc_options_and_rejects_long_typos(tmp_path, capsys):
    """Unknown single-dash arguments go to PETSc (here SLEPc's monitor, which then prints
    its convergence lines); an unknown ``--long`` option is one error line, status 2."""
    from petsc4py import PETSc
    mesh = MESHES / "beam_hex27_10x1x1.msh"
    out = tmp_path / "b.h5"
    rc = main(["preprocess", str(mesh), "--material", "steel", "--mdoes", "4", "--modes", "3",
               "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "unknown option(s) ['--mdoes']" in err and not out.exists()
    try:
        rc = main(["preprocess", str(mesh), "--material", "steel", "--modes", "3",
                   "--eigensolver", "slepc", "-o", str(out), "-flexmbs_eps_eps_monitor"])
        assert rc == 0
        assert PETSc.Options().hasName("flexmbs_eps_eps_monitor")
    finally:
        PETSc.Options().delValue("flexmbs_eps_eps_monitor")
