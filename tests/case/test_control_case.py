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
