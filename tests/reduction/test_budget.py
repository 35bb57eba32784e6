"""The size of a reduction, checked before the eigen solve: modes beyond the mesh's free
dofs, modal derivatives beyond the basis, memory beyond what is available; the estimate
printed for large reductions; the mesh-unit warning of ``flexmbs preprocess``."""
from __future__ import annotations

import pytest

from flexmbs.cli.main import main
from flexmbs.errors import MeshError
from flexmbs.reduction import InterfaceSpec, ReductionSettings

from .conftest import MESHES, beam_fe

BEAM = MESHES / "beam_hex8_10x1x1.msh"     # 44 nodes, 132 dofs; clamp, tip: 4 nodes each


def _settings(n, *itfs, **kw):
    return ReductionSettings(n_modes=n, interfaces=tuple(InterfaceSpec.parse(s) for s in itfs),
                             **kw)


def test_free_dofs_and_max_modes():
    from flexmbs.reduction.budget import budget, free_dofs
    fe = beam_fe("hex8", (10, 1, 1))
    assert fe.n_dof == 132
    assert free_dofs(fe, ()) == 126                                     # 6 rigid modes
    assert free_dofs(fe, _settings(1, "clamp").interfaces) == 132 - 12  # 4 RBE2 nodes
    assert free_dofs(fe, _settings(1, "clamp", "tip:rbe3").interfaces) == 132 - 12 - 6
    b = budget(fe, _settings(4, "clamp", "tip", static_modes=True))
    assert b.n_q == 4 + 6 + 12 and b.max_modes == 132 - 24 - 2


def test_modes_beyond_the_mesh():
    from flexmbs.reduction.budget import check_budget
    fe = beam_fe("hex8", (10, 1, 1))
    with pytest.raises(ValueError, match=r"modes = 200: expected at most 124 for this mesh "
                                         r"\(132 dofs minus the 6 rigid-body modes\)"):
        check_budget(fe, _settings(200))
    check_budget(fe, _settings(124, stiffening=False))


def test_derivatives_beyond_the_basis():
    from flexmbs.reduction.budget import check_budget
    fe = beam_fe("hex8", (10, 1, 1))
    with pytest.raises(ValueError, match=r"modal_derivatives = 9: expected at most 8"):
        check_budget(fe, _settings(2, "clamp", "tip", modal_derivatives=9))


def test_memory_beyond_available():
    from flexmbs.reduction.budget import budget, check_budget
    fe = beam_fe("hex8", (10, 1, 1))
    s = _settings(20, stiffening=True)
    b = budget(fe, s)
    assert b.parts["K2, K3"] == pytest.approx(8.0 * (20 ** 3 + 2 * 20 ** 4))
    with pytest.raises(ValueError, match=r"modes = 20: the reduction needs about .* more "
                                         r"than the 1(\.0+)? MB of memory available"):
        check_budget(fe, s, memory=1e6)
    assert check_budget(fe, s, memory=1e12).bytes == b.bytes


def test_preprocess_too_many_modes_is_one_line(tmp_path, capsys):
    rc = main(["preprocess", str(BEAM), "--material", "steel", "--modes", "100000",
               "--interface", "clamp", "-o", str(tmp_path / "b.h5")])
    err = capsys.readouterr().err
    assert rc == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith("flexmbs preprocess: error: --modes = 100000: expected at most "
                           "118 for this mesh (132 dofs minus those fixed by the interfaces)")
    assert "eigenpairs" not in err and not (tmp_path / "b.h5").exists()


def test_preprocess_prints_estimate_for_large_reductions(tmp_path, capsys):
    """100 modes of the 132-dof beam: the estimate line comes before the eigen solve."""
    rc = main(["preprocess", str(BEAM), "--material", "steel", "--modes", "100",
               "--no-stiffening", "-o", str(tmp_path / "b.h5")])
    err = capsys.readouterr().err
    assert rc == 0, err
    lines = err.splitlines()
    est = [i for i, ln in enumerate(lines) if "reducing: 100 coordinates from 132 dofs: "
           "estimated memory" in ln]
    modes = [i for i, ln in enumerate(lines) if "modes (free_free" in ln]
    assert est and modes and est[0] < modes[0]


def test_preprocess_warns_about_the_unit(tmp_path, capsys):
    rc = main(["preprocess", str(BEAM), "--material", "steel", "--modes", "2", "--unit", "mm",
               "-o", str(tmp_path / "b.h5")])
    err = capsys.readouterr().err
    assert rc == 0
    warn = [ln for ln in err.splitlines() if ln.startswith("flexmbs preprocess: warning:")]
    assert len(warn) == 1
    assert "declared in mm and spans 1 x 0.1 x 0.1 mm, mass 7.85e-08 kg" in warn[0]
    assert "--unit m" in warn[0]


def test_unknown_interface_is_a_mesh_error():
    from flexmbs.reduction import reduce_model
    fe = beam_fe("hex8", (10, 1, 1))
    with pytest.raises(MeshError, match="no node set named 'nope'"):
        reduce_model(fe, _settings(2, "nope"))


def test_free_free_interfaces_are_not_boundaries():
    """method='free_free': the free-free eigenproblem (6 rigid modes out), n_q = n_modes."""
    from flexmbs.reduction.budget import budget
    fe = beam_fe("hex8", (10, 1, 1))
    s = ReductionSettings(n_modes=4, method="free_free", residual_flexibility=True,
                          interfaces=(InterfaceSpec("clamp", "rbe3"), InterfaceSpec("tip", "rbe3")))
    b = budget(fe, s)
    assert b.n_q == 4 and b.max_modes == 132 - 6 - 2
    assert "residual flexibility" in b.parts
