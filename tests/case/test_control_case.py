"""Controllers and stateful force elements in case files: a PID case runs to the same
step response as the closed form (tests/forces/test_controllers.py), the hydraulic
cylinder case to the oil-spring frequency, and mistakes are one line (exit 2)."""
from __future__ import annotations

import numpy as np
import pytest
from forces.test_controllers import J_Z, KD, KP, R_STEP, pd_closed_form
from test_input_errors import check

import flexmbs as fm
from flexmbs.case import build, load_case

PID_CASE = f"""
[model]
gravity = [0.0, 0.0, 0.0]

[[bodies]]
name = "disk"
type = "rigid"
m = 1.0
inertia = [1.0, 1.0, {J_Z}]

[[joints]]
name = "hinge"
type = "revolute"
first = "ground"
second = "disk"
at = [0.0, 0.0, 0.0]
axis = "z"

[[sensors]]
name = "angle"
type = "orientation"
first = "disk"

[[sensors]]
name = "rate"
type = "angular_velocity"
first = "disk"

[[forces]]
name = "pid"
type = "pid"
joint = "hinge"
measure = "angle.z"
rate = "rate.z"
reference = {R_STEP}
Kp = {KP}
Kd = {KD}

[solver]
t_end = 0.5
dt = 1.25e-3
rho_inf = 1.0
"""


def test_pid_case_follows_the_second_order_closed_form(tmp_path):
    path = tmp_path / "case.toml"
    path.write_text(PID_CASE)
    system = build(load_case(path)).system
    r = fm.simulate(system, t_end=0.5, dt=1.25e-3, rho_inf=1.0)
    err = np.abs(r.sensors["angle"][:, 2] - pd_closed_form(r.t)).max()
    assert err < 1e-4 * R_STEP


@pytest.mark.parametrize("edit, needles", [
    (('measure = "angle.z"', 'measure = "angel.z"'),
     ["forces[0].measure", 'no sensor "angel"', "angle, rate"]),
    (('measure = "angle.z"', 'measure = "angle.w"'),
     ["forces[0].measure", 'no component "angle.w"', "angle.x, angle.y, angle.z"]),
    (('measure = "angle.z"', 'measure = "angle"'),
     ["forces[0].measure", "no component \"angle\""]),
    (('Kd = ', 'T_f = -1.0\nKd = '), ["forces[0].T_f", ">= 0"]),
])
def test_controller_mistakes_are_one_line(tmp_path, capsys, edit, needles):
    check(tmp_path, capsys, PID_CASE.replace(*edit), *needles)


def test_state_space_matrix_shape_is_one_line(tmp_path, capsys):
    text = PID_CASE.replace('type = "pid"', 'type = "state_space_controller"').replace(
        'measure = "angle.z"\nrate = "rate.z"\nreference = 0.2\nKp = 40.0\nKd = 4.0',
        'feeds = ["angle.z"]\nreferences = [0.2]\nA = [[0.0]]\nB = [[1.0, 2.0]]\n'
        'C = [[1.0]]\nD = [[40.0]]')
    check(tmp_path, capsys, text, "forces[0]", "B must have shape (1, 1)", "got (1, 2)")


CYLINDER_CASE = """
[model]
gravity = [0.0, 0.0, 0.0]

[[bodies]]
name = "rod"
type = "point_mass"
m = {m}
position = [0.5, 0.0, 0.0]
velocity = [{v0}, 0.0, 0.0]

[[forces]]
name = "cyl"
type = "hydraulic_cylinder"
first = "ground"
second = "rod"
A1 = {A}
A2 = {A}
V01 = {V0}
V02 = {V0}
beta = {beta}
p10 = {p0}
p20 = {p0}

[solver]
t_end = 0.02
dt = 1e-4
"""


def test_cylinder_case_runs_the_api_model(tmp_path):
    """The case file's cylinder is the API's (tests/forces/test_hydraulics.py): same
    trajectory to the last bit."""
    from forces.test_hydraulics import BETA, M_KG, P0, V0, V_START, A, cylinder_model
    path = tmp_path / "case.toml"
    path.write_text(CYLINDER_CASE.format(m=M_KG, v0=V_START, A=A, V0=V0, beta=BETA, p0=P0))
    case = fm.simulate(build(load_case(path)).system, t_end=0.02, dt=1e-4)
    api = fm.simulate(cylinder_model(), t_end=0.02, dt=1e-4)
    np.testing.assert_array_equal(case.q, api.q)
    assert case.states("cyl").shape == (len(case.t), 2)


def test_cylinder_on_one_side_twice_is_one_line(tmp_path, capsys):
    from forces.test_hydraulics import BETA, M_KG, P0, V0, V_START, A
    text = CYLINDER_CASE.format(m=M_KG, v0=V_START, A=A, V0=V0, beta=BETA, p0=P0)
    check(tmp_path, capsys, text.replace('first = "ground"', 'first = "rod"'),
          "forces[0].second", "a side other than first", '"rod"')
