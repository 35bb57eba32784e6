"""Contact elements in case files: the inline law tables are checked with one line per
mistake, and a bouncing ball built from a case file hits the floor at the closed-form
time sqrt(2 h / g)."""
from __future__ import annotations

import numpy as np
import pytest
from arm_case import arm_case

import flexmbs as fm
from flexmbs.case import build, load_case
from flexmbs.case.report import summary
from flexmbs.errors import CaseError
from flexmbs.io.results import read_results

BALL = """
[model]
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "ball"
type = "point_mass"
m = 1.0
position = [0.0, 0.0, 0.55]

[[forces]]
name = "floor"
type = "sphere_plane_contact"
first = "ground"
second = "ball"
R = 0.05
law = {LAW}

[solver]
t_end = 0.4
dt = 1e-3
"""


def case(tmp_path, law: str):
    path = tmp_path / "case.toml"
    path.write_text(BALL.replace("{LAW}", law))
    return path


def test_ball_case_hits_the_floor_at_the_free_fall_time(tmp_path):
    """... and the impact reaches the result file and the run summary."""
    system = build(load_case(case(tmp_path, "{ K = 1e8, n = 1.5, e = 0.8 }"))).system
    res = fm.simulate(system, t_end=0.4, dt=1e-3, output=str(tmp_path / "ball.h5"))
    t_hit = np.sqrt(2 * 0.5 / 9.81)
    assert res.impact_table("floor")["t"][0] == pytest.approx(t_hit, abs=1e-6)
    table = read_results(res.path)["events"]["impacts"]
    assert table["t"][0] == res.impacts[0].t and table["contact"][0] == b"floor"
    assert table["peak_force"][0] == res.impacts[0].peak_force > 0
    line = summary(res, 1.0).splitlines()[-1]
    assert line.startswith("contact floor") and "1 impact (ground - ball)" in line


@pytest.mark.parametrize("law, message", [
    ("{ n = 1.5 }", "forces[0].law: expected a contact law table {K = N/m^n, n = -, "
                    "e = -, v_min = m/s} with at least K"),
    ("{ K = 1e8, e = 1.5 }", "SpherePlaneContact 'floor': restitution e must lie in "
                             "(0, 1], got 1.5"),
    ('{ K = 1e8 }\nfriction = { mu_s = 0.3, mu_k = 0.2 }\nfriction_model = "stick"',
     'forces[0].friction_model: expected one of bristle, regularised, got "stick"'),
    ('{ K = 1e8 }\nfriction = { mu_s = 0.3, mu_k = 0.2 }\nstiction_deformation = 0.0',
     "forces[0].stiction_deformation: expected a positive value [m], got 0.0"),
])
def test_bad_law_tables_give_one_line(tmp_path, law, message):
    with pytest.raises(CaseError) as err:
        build(load_case(case(tmp_path, law)))
    assert message in str(err.value) and "\n" not in str(err.value)


def pendulum(tmp_path, kind: str, extra: str):
    """The arm case (a 1 m bar on a pin at the origin, axis z) with the pin of ``kind``."""
    path = tmp_path / "case.toml"
    path.write_text(arm_case().replace('type = "revolute"', f'type = "{kind}"\n{extra}'))
    return path


def test_clearance_revolute_joint_from_a_case_file(tmp_path):
    """The joint type makes the axial rows and the radial contact; a clearance of 1 mm
    lets the bar fall freely for sqrt(2 c / g) before the pin hits."""
    built = build(load_case(pendulum(tmp_path, "clearance_revolute",
                                     "c = 1e-3\nlaw = { K = 1e9, e = 0.5 }")))
    assert [j.name for j in built.system.joints] == ["pin.axial"]
    assert [f.name for f in built.system.forces] == ["pin"]
    res = fm.simulate(built.system, t_end=0.05, dt=1e-3)
    assert res.impacts[0].t == pytest.approx(np.sqrt(2e-3 / 9.81), abs=1e-6)


@pytest.mark.parametrize("extra, model, states", [
    ("", "regularised", ("v_impact",)),
    ('friction_model = "bristle"', "bristle", ("v_impact", "z_x", "z_y", "z_z", "W"))])
def test_clearance_revolute_friction_model_key(tmp_path, extra, model, states):
    """``friction_model`` reaches the joint's contact: regularised by default, bristles
    (with their states) on request."""
    built = build(load_case(pendulum(
        tmp_path, "clearance_revolute", "c = 1e-3\nlaw = { K = 1e9, e = 0.5 }\n"
        f"friction = {{ mu_s = 0.3, mu_k = 0.2 }}\n{extra}")))
    contact = built.system.forces[0]
    assert (contact.friction_model, contact.state_names) == (model, states)


@pytest.mark.parametrize("kind, extra, message", [
    ("clearance_revolute", "c = 1e-3", "ClearanceRevolute 'pin': law must be a ContactLaw, "
                                       "got NoneType"),
    ("revolute", "c = 1e-3", "joints[0].c: only valid for type = \"clearance_revolute\""),
    ("revolute", 'friction_model = "bristle"', "joints[0].friction_model: only valid for "
                                               "type = \"clearance_revolute\""),
    ("clearance_revolute", 'c = 1e-3\nlaw = { K = 1e9 }\nfriction_model = "dry"',
     'joints[0].friction_model: expected one of bristle, regularised, got "dry"'),
    # found by the fuzz (seed 29, scale 3): without `c` it ended in a TypeError traceback
    ("clearance_revolute", "law = { K = 1e9, e = 0.5 }",
     "ClearanceRevolute 'pin': c [m] is missing: expected a length >= 0"),
    ("clearance_revolute", "c = -1e-3\nlaw = { K = 1e9, e = 0.5 }",
     "joints[0].c: expected"),
])
def test_clearance_revolute_mistakes_give_one_line(tmp_path, kind, extra, message):
    with pytest.raises(CaseError) as err:
        build(load_case(pendulum(tmp_path, kind, extra)))
    assert message in str(err.value) and "\n" not in str(err.value)
