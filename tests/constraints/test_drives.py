"""Drives (rheonomic joint constraints): time functions, Jacobians including the time
column, the acceleration term, and the prescribed coordinate itself."""
from __future__ import annotations

import numpy as np
import pytest

from constraints.jetcheck import Layout, check_acceleration, check_jets, pair, random_q
from flexmbs.constraints.drives import (
    AngleDrive,
    AngularVelocityDrive,
    DisplacementDrive,
    VelocityDrive,
)
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.constraints.revolute import Revolute
from flexmbs.kinematics.relative import rotation_angle
from flexmbs.kinematics.rotation import A_of, e_from_matrix, matrix_from_axis_angle
from flexmbs.kinematics.time_functions import (
    Constant,
    FromCallables,
    Polynomial,
    Ramp,
    Scaled,
    Sine,
    SpinUp,
    as_time_function,
)

FUNCTIONS = [
    Constant(0.4), Ramp(2.0, 0.1), Polynomial((0.1, -0.3, 0.7, 0.2)), Sine(0.5, 3.0, 0.2, 0.1),
    SpinUp(Omega=4.0, T=0.6), FromCallables(np.cos, lambda t: -np.sin(t), lambda t: -np.cos(t)),
    Scaled(2.0, Sine(1.0, 2.0)),
]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: type(f).__name__)
def test_time_function_derivatives(fn):
    """f' and f'' against central differences of f and f' (t before and after SpinUp's T)."""
    for t in (0.13, 0.45, 0.9):
        _, fd, fdd = fn(t)
        h = 1e-6
        assert fd == pytest.approx((fn(t + h)[0] - fn(t - h)[0]) / (2 * h), rel=1e-6, abs=1e-7)
        assert fdd == pytest.approx((fn(t + h)[1] - fn(t - h)[1]) / (2 * h), rel=1e-5, abs=1e-6)


def test_spin_up_profile_closed_form():
    """Kane, Ryan & Banerjee (J. Guid. Control Dyn. 10(2), 1987) spin-up: thetad(T) = Omega,
    theta(T) = Omega T / 2 (integral of the profile), thetadd(0) = thetadd(T) = 0."""
    W, T = 6.0, 15.0
    fn = SpinUp(W, T)
    assert fn(T - 1e-12)[0] == pytest.approx(W * T / 2, rel=1e-10)
    assert fn(T)[0] == pytest.approx(W * T / 2)
    assert fn(T - 1e-12)[1] == pytest.approx(W, rel=1e-10)
    assert fn(0.0) == (0.0, 0.0, 0.0)
    assert fn(T - 1e-9)[2] == pytest.approx(0.0, abs=1e-9)
    # mid-profile: thetad(T/2) = Omega/2 (sin(pi) = 0)
    assert fn(T / 2)[1] == pytest.approx(W / 2)
    # trapezoid rule on thetad reproduces theta
    ts = np.linspace(0.0, T, 20001)
    thd = np.array([fn(t)[1] for t in ts])
    assert np.trapz(thd, ts)  # noqa: NPY201 (numpy < 2 pinned) == pytest.approx(fn(T)[0], rel=1e-8)


def test_single_callable_is_rejected():
    with pytest.raises(TypeError, match="derivatives"):
        as_time_function(np.sin, "AngleDrive 'd'")


def _drives():
    return [
        ("revolute", AngleDrive("d", "J", SpinUp(3.0, 0.8))),
        ("revolute", AngleDrive("d", "J", Sine(1.0, 2.0, 0.3))),
        ("revolute", AngularVelocityDrive("d", "J", 5.0, phi0=0.3)),
        ("prismatic", DisplacementDrive("d", "J", Polynomial((0.1, 0.2, -0.5)))),
        ("prismatic", VelocityDrive("d", "J", -0.4, s0=0.2)),
    ]


def _joint(kind, a, b, at, ax):
    return (Revolute if kind == "revolute" else Prismatic)("J", a, b, at, ax)


@pytest.mark.parametrize("case", range(5))
@pytest.mark.parametrize("with_ground", [False, True])
def test_drive_jacobians_with_time_column(case, with_ground):
    """dg/dx (including dg/dt), Hessian (including g_tq, g_tt) vs FD; acceleration term."""
    kind, drive = _drives()[case]
    rng = np.random.default_rng(30 + case)
    joint = _joint(kind, *pair(rng, with_ground))
    assert drive.problems() == []
    layout = Layout(joint.resolve())
    x = layout.random_x(rng)

    def fun(y, order):
        P, Q = layout.frames(y, order)
        return drive.equations(P, Q, layout.time(y, order))

    check_jets(fun, x)
    check_acceleration(fun, x, rng)
    assert abs(fun(x, 2)[0].d[-1]) > 1e-6      # the time column is really there


@pytest.mark.parametrize("theta", [0.3, 2.9, -3.1, 3 * np.pi + 0.2, -7.0])
def test_angle_drive_is_sin_of_angle_error_without_wraparound(theta):
    """On a revolute joint y_P.x_Q = sin(theta), x_P.x_Q = cos(theta), so
    g = sin(theta - phi(t)) exactly; zero for theta = phi at any number of turns."""
    rng = np.random.default_rng(5)
    joint = Revolute("J", *pair(rng))
    for phi in (theta, theta + 0.4):
        drive = AngleDrive("d", "J", Ramp(1.0, phi - 0.3))   # phi(t = 0.3) = phi
        g = _drive_value(joint, drive, rng, theta)
        assert g == pytest.approx(np.sin(theta - phi), abs=1e-12)


def _drive_value(joint, drive, rng, theta, u=(0, 0, 0)):
    P, Q = joint.resolve()
    qa = random_q(rng)
    A_P = A_of(qa[3:7]) @ P.R
    p_P = qa[0:3] + A_of(qa[3:7]) @ P.s
    A_b = A_P @ matrix_from_axis_angle([0, 0, 1], theta) @ Q.R.T
    qb = np.concatenate([p_P + A_P @ np.asarray(u, float) - A_b @ Q.s, e_from_matrix(A_b)])
    layout = Layout((P, Q))
    x = np.concatenate([qa, qb, [0.3]])
    FP, FQ = layout.frames(x, 1)
    return float(drive.equations(FP, FQ, layout.time(x, 1))[0].v)


def test_velocity_drives_take_initial_coordinate():
    """with_initial(value, t0) sets phi0 = value - omega t0, so g(t0) = 0 at the initial state."""
    rng = np.random.default_rng(9)
    joint = Revolute("J", *pair(rng))
    drive = AngularVelocityDrive("d", "J", omega=2.0)
    assert drive.needs_initial
    with pytest.raises(ValueError, match="with_initial"):
        _drive_value(joint, drive, rng, 0.5)
    P, Q = joint.resolve()
    layout = Layout((P, Q))
    x = np.concatenate([random_q(rng), random_q(rng), [0.3]])
    FP, FQ = layout.frames(x, 1)
    ready = drive.with_initial(drive.measure(FP, FQ), t0=0.3)
    assert not ready.needs_initial
    assert ready.phi0 == pytest.approx(float(rotation_angle(FP, FQ).v) - 0.6)
    assert float(ready.equations(FP, FQ, layout.time(x, 1))[0].v) == pytest.approx(0.0, abs=1e-12)
    vd = VelocityDrive("v", "J", v=0.5).with_initial(0.2, t0=1.0)
    assert vd.s0 == pytest.approx(-0.3)


def test_displacement_drive_value():
    """On a prismatic joint advanced by s: g = s - s(t)."""
    rng = np.random.default_rng(3)
    joint = Prismatic("J", *pair(rng))
    drive = DisplacementDrive("d", "J", Ramp(2.0, 0.0))      # s(0.3) = 0.6
    assert _drive_value(joint, drive, rng, 0.0, u=(0, 0, 0.75)) == pytest.approx(0.15, abs=1e-12)


def test_drive_problems():
    assert AngleDrive("d", "J", 0.1).problems() == []
    assert any("joint" in p for p in AngleDrive("d", 3, 0.1).problems())
    assert AngleDrive("d", "J", np.sin).problems() != []
    assert AngularVelocityDrive("d", "J", np.inf).problems() != []
