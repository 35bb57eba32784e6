"""Sweep definitions without running anything: ``--vary`` parsing, the Cartesian product,
key paths into a case (applied to a case that the loader then accepts), the ``[sweep]``
table, the TOML writer (round trip through tomllib) and output expressions."""
import tomllib
from pathlib import Path

import pytest

from flexmbs.case import load_case
from flexmbs.errors import CaseError
from flexmbs.parallel import (case_name, expand, parse_key_path, parse_output, parse_vary,
                              read_raw, sweep_table, variant_case, with_values)
from flexmbs.parallel.toml_writer import dumps

ROOT = Path(__file__).resolve().parents[2]
RIGID = ROOT / "cases" / "slider_crank" / "case.toml"
FLEX = ROOT / "cases" / "main" / "case.toml"


def test_parse_vary_values_are_toml_or_bare_strings():
    assert parse_vary("drives[0].omega=100,150,200") == ("drives[0].omega", (100, 150, 200))
    assert parse_vary("solver.dt = 1e-4, 5e-4") == ("solver.dt", (1e-4, 5e-4))
    assert parse_vary("bodies[1].material=steel,\"aluminium\"") == \
        ("bodies[1].material", ("steel", "aluminium"))
    key, vals = parse_vary("model.gravity=[0, -9.81, 0],[0,0,0]")
    assert vals == ([0, -9.81, 0], [0, 0, 0])
    assert parse_vary("solver.adaptive=true,false")[1] == (True, False)
    for bad in ("drives[0].omega", "=1,2", "drives[0].omega=", "drives[0].omega=1,,2",
                "drives..omega=1"):
        with pytest.raises(CaseError):
            parse_vary(bad)


def test_key_path_grammar():
    assert parse_key_path("drives[0].omega") == ("drives", 0, "omega")
    assert parse_key_path("bodies[crank].density") == ("bodies", "crank", "density")
    assert parse_key_path("model.gravity[1]") == ("model", "gravity", 1)
    assert parse_key_path("solver.petsc_options.ksp_rtol") == \
        ("solver", "petsc_options", "ksp_rtol")


def test_product_order_count_and_names():
    axes = [("drives[0].omega", (30, 60, 90)), ("solver.dt", (5e-4, 1e-3))]
    vs = expand(axes, "slider_crank")
    assert len(vs) == 6
    assert [v.index for v in vs] == list(range(6))
    assert vs[0].values == (("drives[0].omega", 30), ("solver.dt", 5e-4))
    assert vs[1].values == (("drives[0].omega", 30), ("solver.dt", 1e-3))   # last axis fastest
    assert vs[5].values == (("drives[0].omega", 90), ("solver.dt", 1e-3))
    assert vs[0].stem == "slider_crank__drives[0].omega=30__solver.dt=0.0005"
    assert len({v.stem for v in vs}) == 6
    with pytest.raises(CaseError, match="varied twice"):
        expand([("solver.dt", (1,)), ("solver.dt", (2,))], "c")
    with pytest.raises(CaseError, match="nothing to vary"):
        expand([], "c")


def test_key_path_applied_to_a_loaded_case(tmp_path):
    raw = read_raw(RIGID)
    v = expand([("drives[0].omega", (150,)), ("bodies[rod].density", (2700.0,))],
               case_name(raw, RIGID))[0]
    case = tmp_path / f"{v.stem}.toml"
    case.write_text(dumps(variant_case(raw, RIGID, v, overrides={"solver.t_end": 0.05})))
    spec = load_case(case)
    assert spec.drives[0]["omega"] == 150.0
    assert spec.bodies[1]["density"] == 2700.0
    assert spec.solver["t_end"] == 0.05
    assert spec.name == v.stem
    assert raw["drives"][0]["omega"] == 30.0          # the original data is untouched


def test_relative_mesh_paths_survive_the_move_to_the_output_folder(tmp_path):
    raw = read_raw(FLEX)
    v = expand([("bodies[rod].modes", (4,))], case_name(raw, FLEX))[0]
    case = tmp_path / f"{v.stem}.toml"
    case.write_text(dumps(variant_case(raw, FLEX, v)))
    spec = load_case(case)                           # checks that the mesh file exists
    flex = [b for b in spec.bodies if b["type"] == "flexible"]
    assert flex and all(Path(b["mesh"]).is_file() for b in flex)


@pytest.mark.parametrize("values", [(("drives[0].omega", 150),),
                                    (("model.gravity", (0.0, -1.62, 0.0)),
                                     ("solver.petsc_options.ksp_type", "preonly"))])
def test_variant_spec_from_data_equals_its_case_file(tmp_path, values):
    """The sweep validates a variant's data in memory (spec_from_raw); the case file it
    writes next to the result loads to the same spec (tuples are arrays in TOML)."""
    from flexmbs.case import spec_from_raw
    from flexmbs.parallel.toml_writer import as_read
    from flexmbs.parallel.variants import Variant
    raw = read_raw(RIGID)
    v = Variant(0, values, "variant")
    data = variant_case(raw, RIGID, v)
    case = tmp_path / "variant.toml"
    case.write_text(dumps(data))
    assert spec_from_raw(as_read(data), case) == load_case(case)


def test_unknown_key_path_is_a_case_error_with_a_hint():
    raw = read_raw(RIGID)
    cases = {"drives[0].omga": "did you mean 'omega'",
             "solvr.dt": "did you mean 'solver'",
             "drives[3].omega": "index 3 out of range",
             "bodies[crnk].m": "did you mean 'crank'",
             "solver.dtt": "did you mean 'dt'"}
    for key, hint in cases.items():
        with pytest.raises(CaseError, match=hint.replace("[", r"\[")) as info:
            with_values(raw, {key: 1.0}, where=str(RIGID))
        assert key in str(info.value) and "slider_crank" in str(info.value)
    # a key the case file does not set but the format allows is fine
    assert with_values(raw, {"solver.adaptive": True})["solver"]["adaptive"] is True


def test_sweep_table_quoted_and_dotted_keys():
    raw = tomllib.loads('[sweep]\noutputs = ["t_final"]\n[sweep.vary]\n'
                        '"drives[0].omega" = [100, 150]\nsolver.dt = [1e-4]\n')
    axes, outs = sweep_table(raw, "x.toml")
    assert axes == [("drives[0].omega", (100, 150)), ("solver.dt", (1e-4,))]
    assert outs == ["t_final"]
    with pytest.raises(CaseError, match="did you mean 'vary'"):
        sweep_table({"sweep": {"varry": {}}}, "x.toml")
    with pytest.raises(CaseError, match="non-empty array"):
        sweep_table({"sweep": {"vary": {"solver.dt": 1e-4}}}, "x.toml")


def test_toml_writer_round_trips_every_shipped_case():
    for path in sorted((ROOT / "cases").glob("*/case.toml")):
        raw = read_raw(path)
        assert tomllib.loads(dumps(raw)) == raw, path


def test_output_expressions():
    assert parse_output("t_final") == ("t_final", None, None)
    assert parse_output("max_abs(sensors/slider_position[x])") == \
        ("max_abs", "sensors/slider_position", "x")
    assert parse_output("final(joints/*/coordinates)") == ("final", "joints/*/coordinates", None)
    with pytest.raises(CaseError, match="did you mean 'max_abs'"):
        parse_output("maxabs(sensors/x)")


def test_round_robin_covers_every_variant_once():
    from flexmbs.parallel import map_tasks, my_tasks
    n, size = 7, 3
    parts = [my_tasks(n, r, size) for r in range(size)]
    assert parts == [[0, 3, 6], [1, 4], [2, 5]]
    assert sorted(i for p in parts for i in p) == list(range(n))
    assert map_tasks(lambda x: x * x, [1, 2, 3]) == [1, 4, 9]          # serial: comm=None


@pytest.mark.parametrize("text", ["\U0001F4A5 beyond the BMP", "a\x7fb", "q\"\n\t\\", "é"])
def test_toml_writer_round_trips_any_string(text):
    """tomllib reads back what the variant writer wrote (fuzzing found emoji written as
    UTF-16 surrogate escapes, which TOML rejects)."""
    import tomllib

    from flexmbs.parallel.toml_writer import dumps
    data = {"model": {"name": text, text: 1}, "bodies": [{"name": text}]}
    assert tomllib.loads(dumps(data)) == data
