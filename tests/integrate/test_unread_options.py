"""PETSc options no solver read during a run: one warning line each at the end
(:mod:`flexmbs.integrate.unread`).  "Read" is PETSc's own ``PetscOptionsUsed``; the
references below are PETSc's documented readers: SuperLU never reads MUMPS's
``mat_mumps_*``, ``ksp_converged_reason`` is read by every KSPSolve."""
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

from int_models import Pendulum
from petsc4py import PETSc

from flexmbs.integrate import GeneralizedAlpha, consistent_initial_conditions
from flexmbs.integrate.unread import OptionsReport

HERE = Path(__file__).resolve().parent


def run(opts, prefix="fmbs_unread_"):
    """A pendulum run with ``opts`` under an :class:`OptionsReport`; its lines."""
    lines = []
    with OptionsReport(reset=True, emit=lines.append) as rep:
        rep.watch(opts, "api", prefix=prefix)
        dae = Pendulum()
        cs = consistent_initial_conditions(dae, [0.6, -0.8], [0.0, 0.0])
        ga = GeneralizedAlpha(dae, options_prefix=prefix, petsc_options=opts)
        ga.run(cs.q, cs.qd, cs.qdd, cs.lam, 0.0, 0.03, h=0.01)
    return lines


def test_misspelt_mat_option_is_check_the_name():
    lines = run({"mat_mumsp_icntl_14": 30})
    assert len(lines) == 1 and lines[0].startswith("api -mat_mumsp_icntl_14 30: ")
    assert "check the name" in lines[0]


def test_valid_mumps_option_under_superlu_is_not_read():
    if not (PETSc.Sys.hasExternalPackage("mumps") and PETSc.Sys.hasExternalPackage("superlu")):
        import pytest
        pytest.skip("needs MUMPS and SuperLU")
    lines = run({"mat_mumps_icntl_14": 30, "newton_mat_type": "aij",
                 "pc_factor_mat_solver_type": "superlu"})
    assert len(lines) == 1, lines
    assert lines[0] == ("api -mat_mumps_icntl_14 30: not read in this run (it has no "
                        "effect with pc_factor_mat_solver_type superlu)")
    # the same option with MUMPS as the factor package is read: no line
    assert run({"mat_mumps_icntl_14": 30, "newton_mat_type": "aij",
                "pc_factor_mat_solver_type": "mumps"}) == []


def test_option_read_at_solve_time_is_not_warned(capfd):
    assert run({"ksp_converged_reason": None, "newton_mat_type": "aij"}) == []
    assert "Linear fmbs_unread_ solve converged" in capfd.readouterr().out   # it was read


def test_not_repeated_in_one_process_until_reset():
    """Two runs (a sweep): the second gives no line; a case-file run (reset) again."""
    seen = []
    for reset in (False, False, True):
        with OptionsReport(reset=reset, emit=seen.append) as rep:
            rep.watch({"mat_typo_x": 1}, "api", prefix="fmbs_unread_")
    assert len(seen) == 2 and seen[0] == seen[1]


def test_simulate_warns_once_across_calls(caplog):
    import flexmbs as fm
    from flexmbs.integrate.unread import OptionsReport as R
    with R(reset=True):                  # (forget lines of earlier tests)
        pass
    model = fm.System(gravity=(0.0, -9.81, 0.0))
    ball = fm.RigidBody.point_mass("ball", m=1.0)
    model.add(ball)
    with caplog.at_level(logging.WARNING, logger="flexmbs.integrate.unread"):
        for _ in range(2):
            fm.simulate(model, t_end=0.002, dt=1e-3, petsc_options={"mat_mumsp_icntl_14": 3})
    lines = [r.getMessage() for r in caplog.records if "mat_mumsp" in r.getMessage()]
    assert lines == ["simulate: petsc_options -mat_mumsp_icntl_14 3: PETSc never read it "
                     "in this run and no solver configuration reads it: check the name"]


SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    from int_models import Pendulum
    from flexmbs.integrate import GeneralizedAlpha, consistent_initial_conditions
    from flexmbs.integrate.unread import OptionsReport

    def runs():
        with OptionsReport() as rep:
            opts = {{"mat_typo_exit": 1, "newton_mat_type": "aij"}}
            rep.watch(opts, "api", prefix="fmbs_exit_")
            dae = Pendulum()
            cs = consistent_initial_conditions(dae, [0.6, -0.8], [0.0, 0.0])
            ga = GeneralizedAlpha(dae, options_prefix="fmbs_exit_", petsc_options=opts)
            ga.run(cs.q, cs.qd, cs.qdd, cs.lam, 0.0, 0.02, h=0.01)
            yield ga                      # the solver is never destroyed
    held = runs()
    next(held)
    if {finish}:
        next(held, None)                  # the run ends: the report path
""")


def _exit_script(finish: bool) -> str:
    r = subprocess.run([sys.executable, "-c", SCRIPT.format(here=str(HERE), finish=finish)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return "\n".join(ln for ln in r.stderr.splitlines() if "compiling" not in ln)


def test_no_report_at_interpreter_exit():
    """A run left open (its solver never destroyed) is closed by the interpreter's exit:
    no line then; the same script that ends the run prints its line (so the guard, not
    chance, keeps the exit quiet)."""
    assert _exit_script(False) == ""           # clean: no line, no traceback
    assert "-mat_typo_exit 1: PETSc never read it" in _exit_script(True)


def test_preprocessing_options_given_to_a_run():
    """A command-line ``-flexmbs_eps_*`` option in a run that preprocessed no body: a
    real SLEPc option is "an option of preprocessing" not read, a misspelt one is "check
    the name" (judged by a throw-away EPS, :func:`flexmbs.reduction.petsc_options.reads`)."""
    opts = PETSc.Options()
    given = {"flexmbs_eps_eps_tol": "1e-9", "flexmbs_eps_eps_tool": "1e-9"}
    for k, v in given.items():
        opts.setValue(k, v)
    try:
        lines = []
        with OptionsReport(reset=True, emit=lines.append) as rep:
            rep.watch(given, "command line", prefix="", in_db=True)
            dae = Pendulum()
            cs = consistent_initial_conditions(dae, [0.6, -0.8], [0.0, 0.0])
            ga = GeneralizedAlpha(dae, options_prefix="fmbs_unread_")
            ga.run(cs.q, cs.qd, cs.qdd, cs.lam, 0.0, 0.03, h=0.01)
    finally:
        for k in given:
            opts.delValue(k)
    assert len(lines) == 2, lines
    assert lines[0].startswith("command line -flexmbs_eps_eps_tol 1e-9: not read in this "
                               "run (an option of preprocessing: no PETSc solver with "
                               "prefix -flexmbs_eps_ was set up")
    assert lines[1] == ("command line -flexmbs_eps_eps_tool 1e-9: PETSc never read it and "
                        "no solver with prefix -flexmbs_eps_ reads it: check the name")
