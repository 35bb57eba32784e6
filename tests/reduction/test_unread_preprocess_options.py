"""PETSc options of ``flexmbs preprocess`` that no solver read: one warning line each
(:mod:`flexmbs.reduction.petsc_options`).  The reference is PETSc's own bookkeeping
(``PetscOptionsUsed``) and throw-away solvers' ``setFromOptions``: a misspelt name is read
by none, a real one by the solver of its prefix."""
from __future__ import annotations

from pathlib import Path

import pytest

from flexmbs.cli.main import main
from flexmbs.reduction.petsc_options import reads

MESH = Path(__file__).resolve().parents[2] / "meshes" / "beam_hex8_10x1x1.msh"


@pytest.fixture
def database():
    """The options the test inserts are removed afterwards (preprocess leaves them)."""
    from petsc4py import PETSc
    names: list[str] = []
    yield names
    for n in names:
        PETSc.Options().delValue(n)


def preprocess(tmp_path, capsys, database, *options, eigensolver="auto"):
    database.extend(o.lstrip("-") for o in options if o.startswith("-"))
    rc = main(["preprocess", str(MESH), "--material", "steel", "--modes", "3",
               "--eigensolver", eigensolver, "-o", str(tmp_path / "b.h5"), *options])
    warnings = [ln for ln in capsys.readouterr().err.splitlines() if "warning" in ln]
    return rc, warnings


@pytest.mark.parametrize("kind, key, value, read", [
    ("eps", "eps_tol", "1e-9", True),
    ("eps", "st_pc_type", "cholesky", True),
    ("eps", "eps_tol_typo", "1e-9", False),
    ("eps", "st_mat_mumps_icntl_14", "50", True),      # read when MUMPS factors
    ("eps", "st_mat_mumpz_icntl_14", "50", False),
    ("ksp", "ksp_rtol", "1e-3", True),
    ("ksp", "pc_factor_mat_solver_type", "mumps", True),
    ("ksp", "ksp_rtoll", "1e-3", False),
    ("partitioning", "mat_partitioning_type", "ptscotch", True),
    ("partitioning", "mat_partitioning_typo", "ptscotch", False),
])
def test_the_probe_reads_real_names_only(kind, key, value, read):
    assert reads(kind, key, value) is read


def test_a_misspelt_name_and_a_solver_that_did_not_run(tmp_path, capsys, database):
    """Under the scipy eigen solve (the default for this small mesh) a real SLEPc option
    is not read either: told so, with the eigensolvers that would read it."""
    rc, lines = preprocess(tmp_path, capsys, database, "-flexmbs_eps_eps_tol_typo", "1e-9",
                           "-flexmbs_eps_eps_tol", "1e-9")
    assert rc == 0 and len(lines) == 2, lines
    assert lines[0].startswith("flexmbs preprocess: warning: command line "
                               "-flexmbs_eps_eps_tol_typo 1e-9: ") and "check the name" in lines[0]
    assert "-flexmbs_eps_eps_tol 1e-9: not read in this run (no PETSc solver with prefix " \
           "-flexmbs_eps_ was set up: the eigen solve used scipy; PETSc solvers run with " \
           "--eigensolver slepc" in lines[1]


def test_options_the_run_read_give_no_line(tmp_path, capsys, database):
    """With SLEPc the eigen solver reads its options (no line); a factor option of a
    solver this free-free run never set up (no interfaces: no static solve) gets one."""
    rc, lines = preprocess(tmp_path, capsys, database, "-flexmbs_eps_eps_tol", "1e-9",
                           "-flexmbs_eps_st_mat_mumps_icntl_14", "50",
                           "-flexmbs_factor_ksp_rtol", "1e-3", eigensolver="slepc")
    assert rc == 0 and len(lines) == 1, lines
    assert "-flexmbs_factor_ksp_rtol 1e-3: not read in this run (no PETSc solver with " \
           "prefix -flexmbs_factor_ was set up: the eigen solve used slepc)" in lines[0]


def test_no_options_no_lines(tmp_path, capsys, database):
    assert preprocess(tmp_path, capsys, database) == (0, [])
