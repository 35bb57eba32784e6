"""The case service (:func:`flexmbs.case.run`): one assembly and one rank test per run,
the report it returns, a case spec from data validated like one from a file, and the one
place of the solver defaults."""
import inspect
from pathlib import Path

import pytest
from arm_case import arm_case

import flexmbs.system.dof
import flexmbs.system.model
from flexmbs.case import Overrides, load_case, run, spec_from_raw
from flexmbs.case.loader import read_raw
from flexmbs.errors import CaseError
from flexmbs.integrate.settings import DEFAULTS

CASES = Path(__file__).resolve().parents[2] / "cases"


@pytest.fixture
def counted(monkeypatch):
    """Counts of ``System.assemble`` and ``dof.analyse`` calls."""
    calls = {"assemble": 0, "analyse": 0}
    assemble, analyse = flexmbs.system.model.System.assemble, flexmbs.system.dof.analyse

    def counted_assemble(self, **kw):
        calls["assemble"] += 1
        return assemble(self, **kw)

    def counted_analyse(*args, **kw):
        calls["analyse"] += 1
        return analyse(*args, **kw)
    monkeypatch.setattr(flexmbs.system.model.System, "assemble", counted_assemble)
    monkeypatch.setattr(flexmbs.system.dof, "analyse", counted_analyse)
    return calls


@pytest.mark.parametrize("analysis", ["", '\n[analysis]\ntype = "static"\n',
                                      '\n[analysis]\ntype = "modal"\n'])
def test_a_run_assembles_the_system_once(tmp_path, counted, analysis):
    """The inventory, the DOF report and the simulation (or analysis) share one assembly
    and one rank test."""
    case = tmp_path / "case.toml"
    text = arm_case("arm", 0.01)
    if "static" in analysis:
        text = text.replace('type = "revolute"', 'type = "fixed"').replace('axis = "z"\n', "")
    if "modal" in analysis:                     # hanging: a stable equilibrium
        text = text.replace("com = [0.5, 0.0, 0.0]", "com = [0.0, -0.5, 0.0]").replace(
            "size = [1.0, 0.05, 0.05]", "size = [0.05, 1.0, 0.05]")
    case.write_text(text + analysis)
    done = run(load_case(case), out=tmp_path / "o", plots=False)
    assert counted == {"assemble": 1, "analyse": 1}
    assert done.report.exit_status == 0 and done.report.dof is not None


def test_report_holds_what_the_command_prints(tmp_path):
    """Messages in order (inventory, DOF, results, summary), progress made once with the
    overridden times, and the result of the simulation."""
    case = tmp_path / "case.toml"
    case.write_text(arm_case("arm", 0.05))
    seen, made = [], []

    def progress(t0, t_end):
        made.append((t0, t_end))
        return lambda t, t_end, stats: False
    done = run(load_case(case), Overrides(t_end=0.02), tmp_path / "o", plots=False,
               progress=progress, on_message=seen.append, label="the arm")
    rep = done.report
    assert made == [(0.0, 0.02)]
    assert list(rep.messages) == seen
    assert seen[0].text == f"flexmbs run the arm -> {tmp_path / 'o'}" and seen[0].stderr
    kinds = [m.kind for m in seen]
    assert kinds.index("inventory") < kinds.index("dof") < kinds.index("results") \
        < kinds.index("summary")
    assert rep.inventory.startswith("model 'arm': 1 bodies, 1 joints")
    assert rep.dof.mobility == 1 and rep.summary.startswith("final time 0.02 s, 20 steps")
    assert rep.outputs[0] == tmp_path / "o" / "arm.h5"
    assert done.result.t[-1] == pytest.approx(0.02) and done.result.dof == rep.dof


@pytest.mark.parametrize("path", sorted(CASES.glob("*/case.toml")), ids=lambda p: p.parent.name)
def test_spec_from_raw_is_load_case(path):
    assert spec_from_raw(read_raw(path), path) == load_case(path)


def test_spec_from_raw_reports_like_load_case(tmp_path):
    case = tmp_path / "bad.toml"
    case.write_text(arm_case().replace("dt = 1e-3", "dt = -1e-3"))
    with pytest.raises(CaseError) as from_file:
        load_case(case)
    with pytest.raises(CaseError) as from_data:
        spec_from_raw(read_raw(case), case)
    assert str(from_data.value) == str(from_file.value)
    assert "solver.dt" in str(from_data.value)


def test_solver_defaults_have_one_place():
    """simulate and integrate take their defaults from SolverSettings."""
    import flexmbs
    from flexmbs.integrate import integrate
    for func in (flexmbs.simulate, integrate):
        params = inspect.signature(func).parameters
        for name in ("rho_inf", "rtol", "atol", "options_prefix", "project_velocity",
                     "adaptive", "t0", "method"):
            assert params[name].default == getattr(DEFAULTS, name), (func, name)
