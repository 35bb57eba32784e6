"""Continuous controllers fed by sensors (flexmbs.forces.controllers): the closed-loop
step response of a rotary inertia."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

import flexmbs as fm
from flexmbs.forces.controllers import LinearController, pid
from flexmbs.sensors.rotation import AngularVelocitySensor, OrientationSensor

from .statecheck import check_tangent, slope

J_Z, R_STEP = 0.5, 0.2          # rotary inertia [kg m^2], step of the reference [rad]
KP, KD, KI = 40.0, 4.0, 60.0


def inertia_model(controller_kw, *, omega0=0.0):
    disk = fm.RigidBody("disk", 1.0, np.diag([1.0, 1.0, J_Z]), omega0=(0.0, 0.0, omega0))
    hinge = fm.Revolute("hinge", fm.ground, disk, at=(0.0, 0.0, 0.0), axis="z")
    angle = OrientationSensor("angle", disk, output="rotvec")
    rate = AngularVelocitySensor("rate", disk)
    model = fm.System(gravity=(0.0, 0.0, 0.0))
    model.add(disk, hinge, angle, rate,
              pid("pid", hinge, (angle, 2), R_STEP, rate=(rate, 2), **controller_kw))
    return model


def pd_closed_form(t):
    """``J th'' = Kp (r - th) - Kd th'``, ``th(0) = th'(0) = 0``: the underdamped
    second-order step response."""
    wn = np.sqrt(KP / J_Z)
    zeta = KD / (2 * np.sqrt(KP * J_Z))
    wd = wn * np.sqrt(1 - zeta**2)
    decay = np.exp(-zeta * wn * t)
    return R_STEP * (1 - decay * (np.cos(wd * t) + zeta * wn / wd * np.sin(wd * t)))


def pid_reference(t):
    """``Theta/R = (Kp s + Ki) / (J s^3 + Kd s^2 + Kp s + Ki)`` (derivative on the
    measurement) by scipy.signal.lsim (exact for a step)."""
    sys = signal.lti([KP, KI], [J_Z, KD, KP, KI])
    return signal.lsim(sys, np.full_like(t, R_STEP), t)[1]


def angle_errors(controller_kw, reference, dts, t_end=0.5):
    out = []
    for dt in dts:
        r = fm.simulate(inertia_model(controller_kw), t_end=t_end, dt=dt, rho_inf=1.0)
        th = r.sensors["angle"][:, 2]
        out.append(np.abs(th - reference(r.t)).max())
    return np.array(out)


def test_tangent_against_central_differences():
    """Sensor feeds (finite differences in the system) and controller states."""
    model = inertia_model(dict(Kp=KP, Ki=KI, Kd=KD), omega0=0.7)
    check_tangent(model, np.random.default_rng(2), scale=0.1, rtol=1e-5, atol=1e-5)


def test_pd_step_response_matches_the_second_order_closed_form():
    dts = 1.0 / np.array([200.0, 400.0, 800.0])
    err = angle_errors(dict(Kp=KP, Kd=KD), pd_closed_form, dts)
    assert slope(dts, err) == pytest.approx(2.0, abs=0.15)
    assert err[-1] < 1e-4 * R_STEP


def test_pid_step_response_matches_lsim_of_the_closed_loop():
    dts = 1.0 / np.array([200.0, 400.0, 800.0])
    err = angle_errors(dict(Kp=KP, Ki=KI, Kd=KD), pid_reference, dts)
    assert slope(dts, err) == pytest.approx(2.0, abs=0.15)
    assert err[-1] < 1e-4 * R_STEP


@pytest.mark.slow
def test_filtered_derivative_approaches_the_ideal_one():
    """Without a rate feed the derivative is ``s / (T_f s + 1) e``: the response tends to
    the PD closed form as ``T_f -> 0`` (difference ~ T_f; the filter starts at the
    initial error ``e0 = r``, so the step does not kick the derivative)."""
    disk = fm.RigidBody("disk", 1.0, np.diag([1.0, 1.0, J_Z]))
    hinge = fm.Revolute("hinge", fm.ground, disk, at=(0.0, 0.0, 0.0), axis="z")
    angle = OrientationSensor("angle", disk, output="rotvec")
    diffs = []
    for T_f in (4e-3, 2e-3, 1e-3):
        model = fm.System(gravity=(0.0, 0.0, 0.0))
        model.add(disk, hinge, angle, pid("pid", hinge, (angle, 2), R_STEP, Kp=KP, Kd=KD,
                                          T_f=T_f, e0=R_STEP))
        r = fm.simulate(model, t_end=0.3, dt=T_f / 8, rho_inf=1.0)
        diffs.append(np.abs(r.sensors["angle"][:, 2] - pd_closed_form(r.t)).max())
    assert slope([4e-3, 2e-3, 1e-3], diffs) == pytest.approx(1.0, abs=0.15)


def test_wrong_matrix_shape_is_one_line():
    disk = fm.RigidBody("disk", 1.0, np.eye(3))
    hinge = fm.Revolute("hinge", fm.ground, disk, axis="z")
    angle = OrientationSensor("angle", disk, output="rotvec")
    m = fm.System()
    m.add(disk, hinge, LinearController("ss", joint=hinge, feeds=((angle, 2),),
                                        references=(0.0,), A=[[0.0]], B=[[1.0, 2.0]],
                                        C=[[1.0]], D=[[0.0]]))
    with pytest.raises(fm.ModelError, match=r"LinearController 'ss': B must have shape "
                                            r"\(1, 1\) for 1 states and 1 feeds, got \(1, 2\)"):
        m.assemble()


def test_continued_run_repeats_the_uninterrupted_one(tmp_path):
    """The controller's states are saved with the bodies' coordinates: a run continued
    from the result file of its first half ends bit-identical to the whole run."""
    kw = dict(Kp=KP, Ki=KI, Kd=KD)
    full = fm.simulate(inertia_model(kw), t_end=0.1, dt=1e-3, rho_inf=1.0)
    half = fm.simulate(inertia_model(kw), t_end=0.05, dt=1e-3, rho_inf=1.0,
                       output=str(tmp_path / "half"))
    cont = fm.simulate(inertia_model(kw), t_end=0.1, dt=1e-3, rho_inf=1.0, restart=half.path)
    np.testing.assert_array_equal(cont.q[-1], full.q[-1])
    assert cont.states("pid").shape[1] == 1
