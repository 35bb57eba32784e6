"""Command-line arguments: an unknown ``--long`` option (a typo such as ``--t_end``) and a
PETSc type name PETSc does not know are one error line, exit status 2, before any work;
real PETSc options (one dash) still pass."""
from __future__ import annotations

from pathlib import Path

import pytest

from flexmbs.cli.main import main

CASE = Path(__file__).resolve().parents[2] / "cases" / "slider_crank" / "case.toml"


def _one_line(err: str, cmd: str, *needles: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith(f"flexmbs {cmd}: error: ")
    for n in needles:
        assert n in lines[0], f"{n!r} not in {lines[0]!r}"
    return lines[0]


@pytest.mark.parametrize("argv, needles", [
    (["--t_end", "0.01"], ["'--t_end'", "did you mean '--t-end'"]),
    (["--t_end=0.01"], ["'--t_end=0.01'", "did you mean '--t-end'"]),
    (["--dtt", "1e-3"], ["'--dtt'", "did you mean '--dt'"]),
    (["--fmbs_pc_type", "lu"], ["'--fmbs_pc_type'", "one dash"]),
])
def test_unknown_long_option_of_run(tmp_path, capsys, argv, needles):
    out = tmp_path / "out"
    rc = main(["run", str(CASE), "--out", str(out), *argv])
    cap = capsys.readouterr()
    assert rc == 2
    _one_line(cap.err, "run", "unknown option(s)", *needles)
    assert not out.exists() and "flexmbs run" not in cap.out


@pytest.mark.parametrize("argv, needles", [
    (["-fmbs_pc_type", "nonexistent"], ["-fmbs_pc_type", "'nonexistent'", "PC type"]),
    (["-fmbs_ksp_type", "gmress"], ["-fmbs_ksp_type", "did you mean 'gmres'"]),
    (["-fmbs_snes_type", "newton"], ["-fmbs_snes_type", "SNES type"]),
    (["-fmbs_ts_type", "alpha3"], ["-fmbs_ts_type", "TS type"]),
    (["-fmbs_pc_factor_mat_solver_type", "mumpss"], ["did you mean 'mumps'"]),
    (["-fmbs_newton_mat_type", "sparse"], ["-fmbs_newton_mat_type", "aij, auto, dense"]),
    (["-fmbs_pc_type"], ["-fmbs_pc_type", "no value"]),
])
def test_unknown_petsc_type_of_run(tmp_path, capsys, argv, needles):
    out = tmp_path / "out"
    rc = main(["run", str(CASE), "--out", str(out), *argv])
    cap = capsys.readouterr()
    assert rc == 2
    _one_line(cap.err, "run", "PETSc options", *needles)
    assert not out.exists()


@pytest.mark.parametrize("command, argv, needles", [
    ("run", ["-snes_typo", "1"], ["-snes_typo", "got none", "did you mean -fmbs_snes_typo?"]),
    ("run", ["-ksp_type", "gmres"], ["-ksp_type", "did you mean -fmbs_ksp_type?"]),
    ("sweep", ["-pc_type", "lu"], ["-pc_type", "did you mean -fmbs_pc_type?"]),
    ("preprocess", ["-eps_monitor"], ["-eps_monitor", "did you mean -flexmbs_eps_eps_monitor?"]),
    ("preprocess", ["-ksp_type", "gmres"], ["-ksp_type",
                                           "did you mean -flexmbs_factor_ksp_type?"]),
    ("run", ["-eps_nev", "5"], ["-eps_nev", "'flexmbs run' has no EPS solver of its own"]),
])
def test_solver_option_without_prefix(tmp_path, capsys, command, argv, needles):
    """``-snes_monitor`` instead of ``-fmbs_snes_monitor``: no flexmbs solver reads it and
    PETSc would leave it unused without a word; one line, exit 2, before any work."""
    out = tmp_path / "out"
    args = ([str(CASE), "--out", str(out)] if command != "preprocess" else
            [str(CASE.parents[2] / "meshes" / "beam_hex8_10x1x1.msh"), "--material", "steel",
             "--modes", "2", "-o", str(tmp_path / "b.h5")])
    assert main([command, *args, *argv]) == 2
    _one_line(capsys.readouterr().err, command, "PETSc option", "prefix", *needles)
    assert not out.exists() and not (tmp_path / "b.h5").exists()


def test_global_petsc_options_pass():
    """Options of no solver object (``-log_view``, ``-malloc_debug``) keep passing."""
    from flexmbs.cli.main import unprefixed_solver_option
    assert unprefixed_solver_option("run", {
        "log_view": None, "malloc_debug": None, "options_left": "0", "mat_view": None,
        "fmbs_snes_monitor": None, "flexmbs_eps_st_pc_type": "lu"}) == ""


def test_unknown_petsc_type_of_preprocess(tmp_path, capsys):
    mesh = Path(__file__).resolve().parents[2] / "meshes" / "beam_hex8_10x1x1.msh"
    rc = main(["preprocess", str(mesh), "--material", "steel", "--modes", "2",
               "-o", str(tmp_path / "b.h5"), "-flexmbs_eps_st_pc_type", "choleski"])
    assert rc == 2
    _one_line(capsys.readouterr().err, "preprocess", "-flexmbs_eps_st_pc_type",
              "did you mean 'cholesky'")


def test_extra_arguments_of_check(capsys):
    assert main(["check", str(CASE), "-fmbs_pc_type", "lu"]) == 2
    _one_line(capsys.readouterr().err, "check", "takes no PETSc options")


def test_real_petsc_options_pass():
    from flexmbs.integrate.options import check_option_values, parse_petsc_args
    opts = parse_petsc_args(["-fmbs_ksp_type", "preonly", "-fmbs_pc_type", "lu",
                             "-fmbs_pc_factor_mat_solver_type", "superlu", "-fmbs_snes_monitor",
                             "-fmbs_newton_mat_type", "dense", "-fmbs_snes_rtol", "-1e-3",
                             "-flexmbs_eps_st_pc_type", "cholesky", "-flexmbs_eps_eps_type",
                             "krylovschur", "--", "-fmbs_ts_type", "alpha2"])
    assert opts["fmbs_snes_monitor"] is None and opts["fmbs_snes_rtol"] == "-1e-3"
    check_option_values({"pc_type": "lu", "ksp_type": "gmres", "snes_type": "newtonls"})


def test_run_with_valid_petsc_options(tmp_path, capsys):
    from petsc4py import PETSc
    out = tmp_path / "out"
    try:
        rc = main(["run", str(CASE), "--out", str(out), "--t-end", "0.002", "--no-plots",
                   "--quiet", "-fmbs_ksp_type", "preonly", "-fmbs_pc_type", "lu"])
    finally:
        for k in ("fmbs_ksp_type", "fmbs_pc_type"):
            PETSc.Options().delValue(k)
    assert rc == 0, capsys.readouterr().err
    assert (out / "slider_crank.h5").is_file()


@pytest.mark.parametrize(("env", "needle"), [
    ({"FLEXMBS_KERNELS": "bogus"},
     "environment variable FLEXMBS_KERNELS: expected 'compiled' or 'reference', got 'bogus'"),
    ({"FLEXMBS_BODY_CACHE": "FILE"},
     "FLEXMBS_BODY_CACHE 'FILE': expected a folder, found an existing file"),
])
def test_environment_mistakes_are_one_line(tmp_path, env, needle):
    """A mistyped backend switch or a body cache that is a file: one line naming the
    variable, what was expected and found, exit 2 (it was a traceback at import)."""
    import os
    import subprocess
    import sys
    f = tmp_path / "afile"
    f.write_text("")
    env = {k: v.replace("FILE", str(f)) for k, v in env.items()}
    r = subprocess.run([sys.executable, "-m", "flexmbs.cli.main", "check",
                        str(Path(__file__).resolve().parents[2] / "cases" / "main" /
                            "case.toml")], env={**os.environ, **env}, cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    errors = [ln for ln in r.stderr.splitlines() if "error" in ln.lower()]
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(errors) == 1 and needle.replace("FILE", str(f)) in errors[0], r.stderr


def test_run_reports_an_option_no_solver_read(tmp_path):
    """``-fmbs_mat_typo 1``: no PETSc solve reads it (PetscOptionsUsed); the run still
    succeeds and ends with exactly one warning line naming it, its value and source."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "flexmbs.cli.main", "run", str(CASE), "--out",
                        str(tmp_path / "out"), "--t-end", "0.002", "--no-plots", "--quiet",
                        "-fmbs_mat_typo", "1"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "mat_typo" in ln]
    assert lines == ["warning: command line -fmbs_mat_typo 1: PETSc never read it in this "
                     "run and no solver configuration reads it: check the name"], r.stderr
    assert "Traceback" not in r.stderr


def test_unread_report_with_stdout_closed_and_a_ts_option_under_genalpha(tmp_path):
    """The end-of-run report never ends a finished run: with standard output closed
    (``1>&-``: its probes cannot silence fd 1) the run still exits 0 with the line; and a
    ``ts_type`` given to a generalized-alpha run (no PETSc TS set up) is named as having
    no effect without a TS, not as having no effect "with ts_type bdf"."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "flexmbs.cli.main", "run", str(CASE), "--out",
                        str(tmp_path / "out"), "--t-end", "0.002", "--no-plots", "--quiet",
                        "-fmbs_snes_typo", "1", "-fmbs_ts_type", "bdf"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=600, pass_fds=(), close_fds=True,
                       preexec_fn=lambda: __import__("os").close(1))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    typo = [ln for ln in r.stderr.splitlines() if "snes_typo" in ln]
    assert len(typo) == 1 and "check the name" in typo[0], r.stderr
    ts = [ln for ln in r.stderr.splitlines() if "ts_type" in ln]
    assert len(ts) == 1 and "without a PETSc TS" in ts[0], r.stderr
