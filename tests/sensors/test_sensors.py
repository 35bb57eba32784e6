"""Sensors (THEORY §5.8) against hand-computed kinematics of bodies in known motion.

Marker states are built as the assembler would (position and axes at t, their rates), here
from analytic trajectories by central differences in time, so the sensor formulas are
checked against numbers that do not use them."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.bodies.ground import ground
from flexmbs.bodies.rigid import RigidBody
from flexmbs.kinematics.rotation import matrix_from_axis_angle
from flexmbs.kinematics.time_functions import SpinUp
from flexmbs.sensors import (
    AccelerationSensor,
    AngularAccelerationSensor,
    AngularVelocitySensor,
    MarkerState,
    OrientationSensor,
    PositionSensor,
    VelocitySensor,
)

H = 1e-4


def _vee(W):
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def state(pfun, Rfun, t) -> MarkerState:
    """MarkerState from analytic p(t), R(t): v, a, omega (R' R^T = tilde omega), alpha by FD."""
    p = pfun(t)
    v = (pfun(t + H) - pfun(t - H)) / (2 * H)
    a = (pfun(t + H) - 2 * p + pfun(t - H)) / H**2

    def omega(tt):
        return _vee((Rfun(tt + H) - Rfun(tt - H)) / (2 * H) @ Rfun(tt).T)

    alpha = (omega(t + H) - omega(t - H)) / (2 * H)
    return MarkerState(p, Rfun(t), v, omega(t), a, alpha)


def spinning(point, omega=2.0, axis=(0, 0, 1), centre=(0, 0, 0), R_marker=None):
    """Marker of a body turning at constant rate ``omega`` about ``axis`` through ``centre``;
    ``point`` is its position at t = 0."""
    c, r0 = np.asarray(centre, float), np.asarray(point, float)
    R_marker = np.eye(3) if R_marker is None else R_marker

    def Rot(t):
        return matrix_from_axis_angle(axis, omega * t)

    return (lambda t: c + Rot(t) @ (r0 - c)), (lambda t: Rot(t) @ R_marker)


def _markers(k):
    b = RigidBody("b", 1.0, np.eye(3) * 0.1)
    return tuple(b.marker(f"m{i}") for i in range(k))


@pytest.mark.parametrize("t, p, v, a", [
    (0.0, (1, 0, 0), (0, 2, 0), (-4, 0, 0)),
    (np.pi / 4, (0, 1, 0), (-2, 0, 0), (0, -4, 0)),
])
def test_absolute_point_on_spinning_body(t, p, v, a):
    """Rotation about z at omega = 2 rad/s, point at radius 1: v = omega x r (|v| = 2),
    a = omega x (omega x r) = -omega^2 r (|a| = 4), by hand."""
    (m,) = _markers(1)
    s = (state(*spinning((1, 0, 0)), t),)
    np.testing.assert_allclose(PositionSensor("p", m).measure(s), p, atol=1e-9)
    np.testing.assert_allclose(VelocitySensor("v", m).measure(s), v, atol=1e-7)
    np.testing.assert_allclose(AccelerationSensor("a", m).measure(s), a, atol=1e-5)
    np.testing.assert_allclose(AngularVelocitySensor("w", m).measure(s), (0, 0, 2), atol=1e-7)
    np.testing.assert_allclose(AngularAccelerationSensor("al", m).measure(s), 0.0, atol=1e-5)


def test_relative_measurement_resolved_in_first_marker_frame():
    """P: ground marker at (0.5, 0, 0) with axes turned +90 deg about z; Q as above at t = 0.
    r = (0.5, 0, 0), v = (0, 2, 0), a = (-4, 0, 0) inertial -> in P's axes (x_P = e_y,
    y_P = -e_x): (0, -0.5, 0), (2, 0, 0), (0, 4, 0)."""
    P, Q = _markers(2)
    Rz90 = matrix_from_axis_angle((0, 0, 1), np.pi / 2)
    sP = state(lambda t: np.array([0.5, 0, 0]), lambda t: Rz90, 0.0)
    sQ = state(*spinning((1, 0, 0)), 0.0)
    st = (sP, sQ)
    np.testing.assert_allclose(PositionSensor("p", P, Q, "first").measure(st), (0, -0.5, 0),
                               atol=1e-9)
    np.testing.assert_allclose(VelocitySensor("v", P, Q, "first").measure(st), (2, 0, 0),
                               atol=1e-7)
    np.testing.assert_allclose(AccelerationSensor("a", P, Q, "first").measure(st), (0, 4, 0),
                               atol=1e-5)
    np.testing.assert_allclose(AngularVelocitySensor("w", P, Q, "first").measure(st),
                               (0, 0, 2), atol=1e-7)
    # a separate frame marker (appended by resolve) gives the same as "first"
    F = ground.marker("F", R=Rz90)
    sens = PositionSensor("p", P, Q, F)
    assert len(sens.resolve()) == 3
    np.testing.assert_allclose(sens.measure((sP, sQ, sP)), (0, -0.5, 0), atol=1e-9)


def test_frame_derivatives_vanish_between_points_of_one_rigid_body():
    """Two points of one rigid body: their distance vector is constant in the body frame,
    so velocity and acceleration seen in that frame are zero, while the inertial ones are not."""
    P, Q = _markers(2)
    R0 = matrix_from_axis_angle((1, 2, 3), 0.4)
    ax = np.array([0.3, -1.0, 0.5])
    t = 0.37
    st = (state(*spinning((0.2, 0.1, 0.0), 3.0, ax, (1, 0, 0), R0), t),
          state(*spinning((-0.4, 0.9, 0.3), 3.0, ax, (1, 0, 0), R0), t))
    for cls, tol in ((VelocitySensor, 1e-7), (AccelerationSensor, 1e-5)):
        assert np.linalg.norm(cls("s", P, Q, "first").measure(st)) > 0.1
        np.testing.assert_allclose(cls("s", P, Q, "first", "frame").measure(st), 0.0, atol=tol)


def test_frame_derivatives_against_time_differences_of_position():
    """d/dt and d2/dt2 of ^s r (PositionSensor in P's moving frame) by FD in t equal the
    VelocitySensor/AccelerationSensor with derivative='frame'."""
    P, Q = _markers(2)
    tr_P = spinning((0.2, 0.1, 0.0), 1.3, (0.3, -1.0, 0.5), (1, 0, 0),
                    matrix_from_axis_angle((1, 0, 1), 0.3))
    pQ = lambda t: np.array([np.sin(2 * t), t**2, 0.5 * np.cos(t)])     # noqa: E731
    RQ = lambda t: matrix_from_axis_angle((0, 1, 1), t)                  # noqa: E731
    pos = PositionSensor("p", P, Q, "first")

    def r_s(t):
        return pos.measure((state(*tr_P, t), state(pQ, RQ, t)))

    t, h = 0.6, 1e-3
    st = (state(*tr_P, t), state(pQ, RQ, t))
    np.testing.assert_allclose(VelocitySensor("v", P, Q, "first", "frame").measure(st),
                               (r_s(t + h) - r_s(t - h)) / (2 * h), atol=1e-5)
    np.testing.assert_allclose(AccelerationSensor("a", P, Q, "first", "frame").measure(st),
                               (r_s(t + h) - 2 * r_s(t) + r_s(t - h)) / h**2, atol=1e-4)


def test_angular_acceleration_of_spin_up():
    """Kane spin-up theta(t) about z: alpha = thetadd(t) e_z = (Omega/T)(1 - cos(2 pi t/T)) e_z;
    at t = T/2: 2 Omega / T (by hand)."""
    (m,) = _markers(1)
    prof = SpinUp(Omega=3.0, T=2.0)
    Rfun = lambda t: matrix_from_axis_angle((0, 0, 1), prof(t)[0])     # noqa: E731
    s = (state(lambda t: np.zeros(3), Rfun, 1.0),)
    np.testing.assert_allclose(AngularAccelerationSensor("al", m).measure(s), (0, 0, 3.0),
                               atol=1e-6)
    np.testing.assert_allclose(AngularVelocitySensor("w", m).measure(s), (0, 0, 1.5), atol=1e-7)


def _orientation_states(R_rel):
    R_P = matrix_from_axis_angle((1, -2, 0.5), 1.1)
    return (state(lambda t: np.zeros(3), lambda t: R_P, 0.0),
            state(lambda t: np.zeros(3), lambda t: R_P @ R_rel, 0.0))


@pytest.mark.parametrize("phi", [1e-9, 0.7, 2.5, np.pi - 1e-7])
def test_orientation_rotation_vector(phi):
    """Q turned by phi about n relative to P (Rodrigues): rotation vector = phi n."""
    n = np.array([2.0, -1.0, 0.5]) / np.linalg.norm([2.0, -1.0, 0.5])
    P, Q = _markers(2)
    st = _orientation_states(matrix_from_axis_angle(n, phi))
    np.testing.assert_allclose(OrientationSensor("o", P, Q).measure(st), phi * n, atol=1e-6)


def test_orientation_matrix_and_cardan_angles():
    """A^{PQ} = R_x(a) R_y(b) R_z(c) is recovered entrywise and as the angles (a, b, c)."""
    a, b, c = 0.3, -0.8, 2.2
    R = (matrix_from_axis_angle((1, 0, 0), a) @ matrix_from_axis_angle((0, 1, 0), b)
         @ matrix_from_axis_angle((0, 0, 1), c))
    P, Q = _markers(2)
    st = _orientation_states(R)
    np.testing.assert_allclose(OrientationSensor("o", P, Q, output="xyz").measure(st),
                               (a, b, c), atol=1e-12)
    np.testing.assert_allclose(OrientationSensor("o", P, Q, output="matrix").measure(st),
                               R.reshape(9), atol=1e-12)
    # absolute: rotation of the single marker relative to the inertial frame
    np.testing.assert_allclose(OrientationSensor("o", Q, output="matrix").measure(st[1:]),
                               st[1].R.reshape(9))


def test_labels_units_and_problems():
    P, Q = _markers(2)
    assert PositionSensor("p", P).columns == ("p.x", "p.y", "p.z")
    assert (PositionSensor("p", P).unit, VelocitySensor("v", P).unit,
            AccelerationSensor("a", P).unit) == ("m", "m/s", "m/s^2")
    assert (AngularVelocitySensor("w", P).unit, AngularAccelerationSensor("a", P).unit) == (
        "rad/s", "rad/s^2")
    assert len(OrientationSensor("o", P, Q, output="matrix").columns) == 9
    assert OrientationSensor("o", P, Q).unit == "rad"
    assert PositionSensor("p", P, Q).problems() == []
    assert any("frame" in p for p in PositionSensor("p", P, frame="body").problems())
    assert any("second" in p for p in PositionSensor("p", P, frame="second").problems())
    assert any("derivative" in p for p in VelocitySensor("v", P, Q, derivative="x").problems())
    assert any("output" in p for p in OrientationSensor("o", P, output="quat").problems())
    b = P.body
    m = PositionSensor("p", (b, (1.0, 2.0, 3.0))).resolve()[0]
    np.testing.assert_allclose(m.s, (1.0, 2.0, 3.0))       # body at the origin, R0 = E
