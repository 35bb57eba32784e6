"""The ``friction`` table of ``[[joints]]`` (docs/friction.md): it makes the joint's
friction element, ``flexmbs run`` writes the friction work with the energies, and every
mistake is one line naming the key (``flexmbs check`` exits 2).

Reference for the run: the block slides down the incline with kinetic friction, so the
friction work is mu_k m g cos(theta) times the distance slid (Coulomb), and
T + V + W_f stays at its initial value (energy balance).
"""
import math

import numpy as np
import pytest
from check_error import assert_check_error

from flexmbs.case import build, load_case
from flexmbs.cli.main import main
from flexmbs.io.results import read_results

THETA = 0.4
CASE = f"""
[model]
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "block"
type = "rigid"
shape = "box"
size = [0.1, 0.1, 0.1]
density = 1000.0

[[joints]]
name = "slide"
type = "{{kind}}"
first = "ground"
second = "block"
at = [0.0, 0.0, 0.0]
axis = [{math.cos(THETA)}, {-math.sin(THETA)}, 0.0]
friction = {{friction}}

[solver]
t_end = 0.5
dt = 1e-3

[output]
plots = false
"""


def case_file(tmp_path, friction="{ mu_s = 0.3, mu_k = 0.2 }", kind="prismatic"):
    path = tmp_path / "incline.toml"
    path.write_text(CASE.format(friction=friction, kind=kind))
    return path


def test_friction_table_makes_the_joint_friction_element(tmp_path):
    path = case_file(tmp_path, "{ mu_s = 0.3, mu_k = 0.2, v_s = 0.01, c_v = 0.5, "
                               "preload = 2.0, stiction_deformation = 2e-5 }")
    system = build(load_case(path)).system
    (fr,) = [f for f in system.forces if f.name == "slide-friction"]
    assert fr.joint.name == "slide"
    assert (fr.law.mu_s, fr.law.mu_k, fr.law.v_s, fr.law.c_v) == (0.3, 0.2, 0.01, 0.5)
    assert (fr.preload, fr.stiction_deformation, fr.from_reaction) == (2.0, 2e-5, True)


def test_run_reports_the_friction_work(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(case_file(tmp_path)), "--out", str(out), "--quiet",
                 "--no-plots"]) == 0
    data = read_results(out / "incline.h5")
    e = data["energy"]
    W = e["friction_work"]
    s = data["joints"]["slide"]["coordinates"][:, 0]
    m = 1.0
    assert W[-1] == pytest.approx(0.2 * m * 9.81 * math.cos(THETA) * s[-1], rel=1e-3)
    total = e["total"] + W
    assert np.abs(total - total[0]).max() < 1e-5 * W[-1]
    assert W[-1] > 0.1


@pytest.mark.parametrize("friction, kind, needles, built", [
    ("{ mu_s = 0.3 }", "prismatic", ["joints[0].friction", "missing mu_k"], False),
    ("{ mu_s = 0.3, mu_k = 0.2, mu_x = 1 }", "prismatic",
     ["joints[0].friction", "unknown key 'friction.mu_x'"], False),
    ("{ mu_s = 0.3, mu_k = 'a' }", "prismatic", ["joints[0].friction", "friction.mu_k"], False),
    ("0.3", "prismatic", ["joints[0].friction", "expected a table {mu_s"], False),
    ("{ mu_s = 0.3, mu_k = 0.2 }", "fixed", ["joints[0].friction", "only valid for type"], False),
    ("{ mu_s = 0.3, mu_k = 0.2 }", "revolute",
     ["joints[0].friction", "needs pin_radius > 0 [m]"], True),
    ("{ mu_s = 0.2, mu_k = 0.3 }", "prismatic",
     ["joints[0].friction", "mu_k must not exceed mu_s"], True),
])
def test_friction_mistakes_are_one_line(tmp_path, capsys, friction, kind, needles, built):
    """``built``: found when the model is built (the message names the file only)."""
    assert_check_error(case_file(tmp_path, friction, kind), capsys, needles,
                       file_name_only=built)
