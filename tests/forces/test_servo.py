"""Servo cylinder (flexmbs.forces.servo): a hydraulic cylinder whose valve is driven by a
PID law on a sensor feed.  Jacobians against central differences, and the closed-loop
step response against the velocity-servo closed form."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.forces.servo import ServoCylinder

from .statecheck import check_tangent

A, V0, BETA, P_S, C_D, W, RHO = 1e-3, 1e-4, 1.5e9, 1e7, 0.7, 1e-6, 850.0
KP, R_STEP = 20.0, 0.01              # 1/m, m


def servo_model(m=1.0, beta=BETA, **kw):
    """A point mass on a guide (x free), pushed by a cylinder from the ground at the
    origin; the valve reads the mass's position x from a sensor."""
    mass = fm.PointMass("rod", m, r0=(0.5, 0.0, 0.0))
    x = fm.PositionSensor("x", first=mass)
    args = dict(A1=A, A2=A, V01=V0, V02=V0, beta=beta, p10=P_S / 2, p20=P_S / 2,
                C_d=C_D, w=W, p_s=P_S, p_t=0.0, rho=RHO, measure=(x, 0),
                reference=0.5 + R_STEP, Kp=KP)
    args.update(kw)
    model = fm.System(gravity=(0.0, 0.0, 0.0))
    model.add(mass, x, fm.Prismatic("guide", fm.ground, mass, at=(0.5, 0.0, 0.0), axis="x"),
              ServoCylinder("cyl", fm.ground.marker("o"), mass, **args))
    return model


@pytest.mark.parametrize("kw", [dict(Ki=3.0, Kd=0.5, T_f=0.01, b=50.0), dict(Ki=2.0, u_max=0.05)])
def test_tangent_against_central_differences(kw):
    """Inside the valve band and in saturation (``u_max`` small), with the filtered
    derivative and the integral states."""
    check_tangent(servo_model(**kw), np.random.default_rng(3), scale=1e-3)


def test_step_response_is_the_velocity_servo_lag():
    """Light mass, stiff oil, equal areas: the chambers settle at ``(p_s + p_t)/2``, so the
    piston speed is ``xd = C_d w u sqrt((p_s - p_t)/rho) / A`` and with ``u = Kp (r - x)``
    the step response is the first-order lag ``x = r (1 - exp(-t/tau))``, ``tau = A /
    (Kp C_d w sqrt((p_s - p_t)/rho))``.  The neglected oil and mass dynamics (hydraulic
    frequency ``sqrt(2 A^2 beta / (V m))``, 5.5e3 rad/s against 1/tau = 1.5 rad/s) and the
    orifice regularisation ((dp_r/dp)^2/4 = 1e-4) bound the difference at 1e-3 of the
    step."""
    tau = A / (KP * C_D * W * np.sqrt(P_S / RHO))
    r = fm.simulate(servo_model(), t_end=3 * tau, dt=tau / 200)
    x = r.q[:, 0] - 0.5
    ref = R_STEP * (1 - np.exp(-r.t / tau))
    assert np.abs(x - ref).max() < 1e-3 * R_STEP
    p = r.states("cyl")
    assert p[-1, 0] == pytest.approx(P_S / 2, rel=1e-3)


def test_saturated_valve_moves_at_full_speed():
    """With ``u_max`` far below the P command the valve stays saturated and the piston
    runs at the constant speed ``C_d w u_max sqrt((p_s - p_t)/rho) / A`` (the mean speed:
    the start excites the lightly damped mass-on-oil oscillation about it, period 1.1 ms,
    so the slope of a line fit over many periods is compared)."""
    u_max = 0.05
    r = fm.simulate(servo_model(u_max=u_max, Kp=1e3), t_end=0.1, dt=1e-4)
    v = C_D * W * u_max * np.sqrt(P_S / RHO) / A
    late = r.t > 0.01
    assert np.polyfit(r.t[late], r.q[late, 0], 1)[0] == pytest.approx(v, rel=1e-3)


def test_bad_servo_inputs_are_named():
    mass = fm.PointMass("rod", 1.0)
    x = fm.PositionSensor("x", first=mass)
    s = ServoCylinder("cyl", fm.ground.marker("o"), mass, A1=A, A2=A, V01=V0, V02=V0,
                      measure=(x, 0), Kp=1.0, w=0.0, u_max=2.0)
    problems = " | ".join(s.problems())
    assert "ServoCylinder 'cyl': u_max must be in (0, 1]" in problems
    assert "ServoCylinder 'cyl': w must be > 0 [m^2]" in problems


def test_result_records_the_tracking_error_and_the_valve():
    """``result.outputs``: the error is ``r - x`` of the recorded motion, the valve
    ``Kp (r - x)`` inside the band (from the definition of the P law)."""
    r = fm.simulate(servo_model(), t_end=0.2, dt=2e-3)
    e = r.outputs["cyl"]["error"][:, 0]
    np.testing.assert_allclose(e, 0.5 + R_STEP - r.q[:, 0], atol=1e-15)
    np.testing.assert_allclose(r.outputs["cyl"]["valve"][:, 0], KP * e, rtol=1e-12)
    out = r.outputs["cyl"]
    np.testing.assert_allclose(out["stroke"][:, 0], r.q[:, 0] - 0.5, atol=1e-14)
    np.testing.assert_allclose(out["stroke"][:, 1], r.qd[:, 0], atol=1e-14)
    p = r.states("cyl")
    np.testing.assert_allclose(out["force"][:, 0], (p[:, 0] - p[:, 1]) * A, rtol=1e-12,
                               atol=1e-12 * P_S * A)


@pytest.mark.parametrize("key", ["reference", "valve"])
def test_vector_time_functions_are_refused_in_one_line(key):
    """A reference or valve opening is one number at every t (found by the case fuzzer)."""
    mass = fm.PointMass("rod", 1.0)
    x = fm.PositionSensor("x", first=mass)
    vector = fm.Sine(amplitude=(0.1, 0.2, 0.0), omega=1.0)
    kw = dict(A1=A, A2=A, V01=V0, V02=V0, measure=(x, 0), Kp=1.0, w=W, reference=0.0)
    kw[key] = vector
    problems = ServoCylinder("cyl", fm.ground.marker("o"), mass, **kw).problems()
    shape = "expected a scalar time function (a number at every t), got values of shape (3,)"
    if key == "reference":
        assert problems == [f"ServoCylinder 'cyl': reference 0: {shape}"]
    else:       # a servo's valve is its PID's: refused as such, and as a vector
        assert f"ServoCylinder 'cyl': valve: {shape}" in problems
        assert any("the valve opening is set by the PID law" in p for p in problems)
        kw.pop("measure"), kw.pop("Kp"), kw.pop("reference")
        assert fm.HydraulicCylinder("cyl", fm.ground.marker("o"), mass, **kw).problems() == [
            f"HydraulicCylinder 'cyl': valve: {shape}"]
