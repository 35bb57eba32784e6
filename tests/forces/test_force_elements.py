"""Force elements of THEORY §5.7: closed-form forces, conservative forces as -grad V,
and the tangents dQ/dx, dQ/dxd against central differences at random states."""
from __future__ import annotations

import numpy as np
import pytest
from constraints.jetcheck import (
    Layout,
    check_contribution,
    context,
    fd_gradient,
    pair,
    random_body,
    random_xd,
)

from flexmbs.bodies.ground import ground
from flexmbs.bodies.rigid import RigidBody
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.constraints.revolute import Revolute
from flexmbs.constraints.spherical import Spherical
from flexmbs.forces.bushing import Bushing
from flexmbs.forces.external import ExternalForce, ExternalTorque
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.forces.stops import JointStop
from flexmbs.kinematics.frames import orientation, position
from flexmbs.kinematics.rotation import G_of
from flexmbs.kinematics.time_functions import Sine


def _elements(rng, with_ground):
    a, b, at, ax = pair(rng, with_ground)
    rev = Revolute("R", a, b, at, ax)
    pri = Prismatic("S", a, b, at, ax)
    return [
        PointToPointSpringDamper("s", (a, at), (b, at + rng.normal(size=3)), k=30.0, d=2.0,
                                 l0=0.7),
        PointToPointSpringDamper("s0", (a, rng.normal(size=3)), b, k=10.0, d=0.5),
        RotationalSpringDamper("t", rev, k=20.0, d=1.5, angle0=0.2),
        Bushing("b", (a, at), b, K=(10, 20, 30, 4, 5, 6), D=(1, 2, 3, 0.4, 0.5, 0.6)),
        JointStop("st", rev, lower=-0.1, upper=0.1, k=50.0, d=3.0),
        JointStop("sts", rev, lower=-0.1, upper=0.1, k=50.0, d=3.0, smoothing=0.5),
        JointStop("sp", pri, lower=-0.2, upper=0.05, k=50.0, d=3.0, smoothing=0.01),
        ExternalForce("f", (b, at), Sine((1.0, -2.0, 0.5), 3.0, 0.1)),
        ExternalForce("fb", (b, at), Sine((1.0, -2.0, 0.5), 3.0, 0.1), frame="body"),
        ExternalTorque("m", b, Sine((1.0, -2.0, 0.5), 3.0, 0.1)),
        ExternalTorque("mb", b.marker("m", R=rev.resolve()[1].R), (0.3, 0.2, -1.0), frame="body"),
    ]


@pytest.mark.parametrize("index", range(11))
@pytest.mark.parametrize("with_ground", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_tangents_against_central_differences(index, with_ground, seed):
    rng = np.random.default_rng(seed * 50 + index)
    element = _elements(rng, with_ground)[index]
    assert element.problems() == []
    layout = Layout(element.resolve())
    x = layout.random_x(rng)
    check_contribution(element, layout, x, random_xd(rng, layout))


def _potential(element, layout, x):
    """Potential energy from plain numpy marker kinematics (no jets)."""
    P, Q = layout.markers
    qP, qQ = layout.split(x)
    pP, pQ = position(P, qP), position(Q, qQ)
    AP, AQ = orientation(P, qP), orientation(Q, qQ)
    if isinstance(element, PointToPointSpringDamper):
        return 0.5 * element.k * (np.linalg.norm(pQ - pP) - element.free_length()) ** 2
    if isinstance(element, RotationalSpringDamper):
        phi = np.arctan2(AP[:, 1] @ AQ[:, 0], AP[:, 0] @ AQ[:, 0]) - element.angle0
        phi = (phi + np.pi) % (2 * np.pi) - np.pi
        return 0.5 * element.k * phi**2
    C = AP.T @ AQ                     # C[i, j] = a_P,i . a_Q,j
    s = np.concatenate([AP.T @ (pQ - pP),
                        0.5 * np.array([C[2, 1] - C[1, 2], C[0, 2] - C[2, 0], C[1, 0] - C[0, 1]])])
    return 0.5 * np.sum(np.asarray(element.K) * (s - element.unloaded()) ** 2)


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_conservative_part_is_minus_grad_potential(index):
    """With zero velocity the force is -dV/dx of the element's potential energy
    V = k/2 (l - l0)^2 (2.62), k/2 (phi - phi0)^2 (2.64), sum K_k/2 (s_k - s0_k)^2;
    reference: central differences of V computed from plain marker positions and axes."""
    rng = np.random.default_rng(80 + index)
    element = _elements(rng, False)[index]
    layout = Layout(element.resolve())
    x = layout.random_x(rng)
    xd = np.zeros(layout.n)
    xd[-1] = 1.0
    grad = fd_gradient(lambda y: _potential(element, layout, y), x)
    Q = element.contribution(context(layout, x, xd, 1)).Q
    np.testing.assert_allclose(Q[:-1], -grad[:-1], rtol=1e-6, atol=1e-7)


def test_spring_damper_closed_form():
    """(2.62): ground marker at 0, body origin at (l, 0, 0) moving with ld along x:
    F = k (l - l0) + d ld; the force on body j (at Q) is -F n with n = e_x."""
    b = _body_at_origin()
    el = PointToPointSpringDamper("s", ground.marker("o"), b.marker("o"), k=100.0, d=4.0, l0=0.5)
    layout = Layout(el.resolve())
    x = np.array([0.8, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    xd = np.array([0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    F = 100.0 * (0.8 - 0.5) + 4.0 * 0.3
    Q = el.contribution(context(layout, x, xd, 1)).Q
    np.testing.assert_allclose(Q[0:3], [-F, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(Q[3:7], 0.0, atol=1e-12)


def _body_at_origin(name="b"):
    return RigidBody(name, 1.0, np.eye(3) * 0.1)


def _revolute_ground(k_axis="z"):
    b = _body_at_origin()
    return b, Revolute("R", ground, b.marker("o"), axis=k_axis)


def _rotated_state(theta, thetad):
    """Body rotated by theta about inertial z: e = (cos theta/2, 0, 0, sin theta/2)."""
    e = np.array([np.cos(theta / 2), 0.0, 0.0, np.sin(theta / 2)])
    de = 0.5 * np.array([-np.sin(theta / 2), 0.0, 0.0, np.cos(theta / 2)])
    x = np.concatenate([np.zeros(3), e, [0.0]])
    xd = np.concatenate([np.zeros(3), de * thetad, [1.0]])
    return x, xd, de


@pytest.mark.parametrize("theta, thetad", [(0.05, 0.7), (0.3, 0.7), (-0.25, -2.0), (2.0, 0.0)])
def test_joint_stop_force_is_zero_in_play_and_k_times_penetration_outside(theta, thetad):
    """(2.55): M = 0 in [lower, upper]; else k (penetration) + d thetad, restoring.
    The generalized force conjugate to theta is Q_e . de/dtheta = -M."""
    _, rev = _revolute_ground()
    stop = JointStop("st", rev, lower=-0.2, upper=0.1, k=40.0, d=3.0)
    layout = Layout(stop.resolve())
    x, xd, de = _rotated_state(theta, thetad)
    Q = stop.contribution(context(layout, x, xd, 1)).Q
    if -0.2 <= theta <= 0.1:
        M = 0.0
    elif theta > 0.1:
        M = 40.0 * (theta - 0.1) + 3.0 * thetad
    else:
        M = 40.0 * (theta + 0.2) + 3.0 * thetad
    assert Q[3:7] @ de == pytest.approx(-M, abs=1e-12)
    np.testing.assert_allclose(Q[0:3], 0.0, atol=1e-12)


def test_joint_stop_smoothing_matches_linear_law_beyond_width():
    """C^1 ramp: F = k (z - w/2) for z >= w, k z^2 / (2 w) below; continuous slope at z = w."""
    from flexmbs.forces.stops import ramp
    w = 0.02
    assert ramp(0.05, w) == (pytest.approx(0.04), 1.0, 0.0)
    assert ramp(w, w)[1] == pytest.approx(ramp(w - 1e-12, w)[1])
    assert ramp(w / 2, w)[0] == pytest.approx(w / 8)
    assert ramp(-1.0, w) == (0.0, 0.0, 0.0)


def test_prismatic_stop_force():
    """Displacement stop on a prismatic joint: force on body j along -z = -k (s - upper)."""
    b = _body_at_origin()
    pri = Prismatic("S", ground, b.marker("o"), axis="z")
    stop = JointStop("sp", pri, lower=-0.2, upper=0.05, k=50.0, coordinate="displacement")
    layout = Layout(stop.resolve())
    x = np.array([0.0, 0.0, 0.3, 1.0, 0.0, 0.0, 0.0, 0.0])
    xd = np.zeros(8)
    xd[-1] = 1.0
    Q = stop.contribution(context(layout, x, xd, 1)).Q
    np.testing.assert_allclose(Q[0:3], [0.0, 0.0, -50.0 * 0.25], atol=1e-12)


@pytest.mark.parametrize("theta, angle0, expected", [(0.5, 0.2, 0.3), (-3.0, 3.0, 2 * np.pi - 6.0)])
def test_rotational_spring_closed_form(theta, angle0, expected):
    """(2.64): M = k (phi - phi0) + d phid with phi - phi0 wrapped to (-pi, pi]."""
    _, rev = _revolute_ground()
    el = RotationalSpringDamper("t", rev, k=20.0, d=1.5, angle0=angle0)
    layout = Layout(el.resolve())
    x, xd, de = _rotated_state(theta, 0.4)
    Q = el.contribution(context(layout, x, xd, 1)).Q
    assert Q[3:7] @ de == pytest.approx(-(20.0 * expected + 1.5 * 0.4), abs=1e-12)


def test_bushing_closed_form():
    """Translation u along x_P: force on j is -K_x u x_P; rotation theta about x_P:
    theta_x = sin(theta), so the conjugate torque is -K_rx sin(theta) cos(theta)."""
    b = _body_at_origin()
    bush = Bushing("b", ground.marker("o"), b.marker("o"), K=(10, 20, 30, 4, 5, 6))
    layout = Layout(bush.resolve())
    x = np.array([0.01, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    xd = np.zeros(8)
    xd[-1] = 1.0
    Q = bush.contribution(context(layout, x, xd, 1)).Q
    np.testing.assert_allclose(Q[0:3], [-0.1, 0.0, 0.0], atol=1e-12)
    th = 0.3
    x = np.array([0.0, 0.0, 0.0, np.cos(th / 2), np.sin(th / 2), 0.0, 0.0, 0.0])
    de = 0.5 * np.array([-np.sin(th / 2), np.cos(th / 2), 0.0, 0.0])
    Q = bush.contribution(context(layout, x, xd, 1)).Q
    assert Q[3:7] @ de == pytest.approx(-4.0 * np.sin(th) * np.cos(th), abs=1e-12)


def test_external_force_virtual_work():
    """Q . dx = F . dp for any dx (virtual work); reference: FD of the marker position."""
    rng = np.random.default_rng(4)
    b = random_body(rng, "b")
    el = ExternalForce("f", (b, rng.normal(size=3)), (1.0, 2.0, -3.0))
    layout = Layout(el.resolve())
    x = layout.random_x(rng)
    Q = el.contribution(context(layout, x, random_xd(rng, layout), 1)).Q
    dp = fd_gradient(lambda y: layout.frames(y, 1)[0].p.v, x)
    np.testing.assert_allclose(Q[:-1], (dp.T @ [1.0, 2.0, -3.0])[:-1], atol=1e-8)


@pytest.mark.parametrize("frame", ["inertial", "body"])
def test_external_torque_power(frame):
    """Power Q_e . ed = m . omega with omega = 2 G(e) ed (THEORY §3.3); body frame:
    m = A(e) R_P m'."""
    rng = np.random.default_rng(5)
    b = random_body(rng, "b")
    R_P = random_body(rng, "c").R0
    m = np.array([0.3, -1.0, 2.0])
    el = ExternalTorque("m", b.marker("p", R=R_P), m, frame=frame)
    layout = Layout(el.resolve())
    x = layout.random_x(rng)
    x[3:7] /= np.linalg.norm(x[3:7])
    xd = random_xd(rng, layout)
    Q = el.contribution(context(layout, x, xd, 1)).Q
    e = x[3:7]
    omega = 2.0 * G_of(e) @ xd[3:7]
    F = layout.frames(x, 1)[0]
    axes = np.column_stack([F.x.v, F.y.v, F.z.v])
    m_in = m if frame == "inertial" else axes @ m
    assert Q[3:7] @ xd[3:7] == pytest.approx(m_in @ omega, rel=1e-12)
    np.testing.assert_allclose(Q[0:3], 0.0)
    # the system's shortcut without frame jets gives the same force
    for order in (1, 2):
        full = el.contribution(context(layout, x, xd, order))
        fast = el.body_force(el.resolve()[0], x[:7], float(x[-1]), order)
        np.testing.assert_allclose(fast.Q, full.Q, rtol=0, atol=1e-15 * np.abs(Q).max())
        if order == 2:
            np.testing.assert_allclose(fast.dQ_dx, full.dQ_dx, rtol=0, atol=1e-14)
            np.testing.assert_allclose(fast.dQ_dxd, full.dQ_dxd, rtol=0, atol=0)


def test_problems_are_reported():
    rng = np.random.default_rng(6)
    a, b, at, ax = pair(rng)
    rev = Revolute("R", a, b, at, ax)
    assert any("k must be" in p
               for p in PointToPointSpringDamper("s", (a, at), (b, at + 1), k=-1).problems())
    assert any("coincide" in p
               for p in PointToPointSpringDamper("s", (a, at), (b, at), k=1).problems())
    assert any("lower" in p for p in JointStop("st", rev, lower=0.2, upper=0.1, k=1).problems())
    assert any("no joint coordinates" in p for p in
               JointStop("st", Spherical("J", a, b, at), k=1).problems())
    assert any("shape (6,)" in p for p in Bushing("b", a, b, K=(1, 2)).problems())
    assert any("frame" in p for p in ExternalForce("f", b, (1, 0, 0), frame="local").problems())
    assert any("3 components" in p for p in ExternalForce("f", b, (1, 0)).problems())
    assert any("k must be" in p for p in RotationalSpringDamper("t", rev, k=-2.0).problems())


def test_constant_torque_is_the_linear_force_it_declares():
    """``linear_force`` (the compiled residual's form, ``Q = K q``) against ``body_force``
    (``2 G(e)^T m``) at random orientations; None where it does not hold."""
    body = RigidBody.box("b", (0.2, 0.1, 0.05), rho=1000.0)
    tq = ExternalTorque("tq", at=body, torque=(0.3, -1.2, 0.7))
    (mk,) = tq.resolve()
    K = tq.linear_force(mk, 7)
    rng = np.random.default_rng(2)
    for _ in range(3):
        e = rng.normal(size=4)
        q = np.concatenate([rng.normal(size=3), e / np.linalg.norm(e)])
        Q = tq.body_force(mk, q, 0.0, 1).Q[:-1]
        assert np.abs(K @ q - Q).max() <= 1e-15 * np.abs(Q).max()
    tb = ExternalTorque("tb", at=body, torque=(0, 0, 1.0), frame="body")
    assert tb.linear_force(tb.resolve()[0], 7) is None


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_element_potential_matches_plain_numpy_energy(index):
    """The element's own ``potential`` (on frame jets) against ``_potential`` above
    (plain numpy marker positions and axes): the same closed forms (2.62), (2.64), bushing."""
    rng = np.random.default_rng(90 + index)
    element = _elements(rng, False)[index]
    layout = Layout(element.resolve())
    for _ in range(3):
        x = layout.random_x(rng)
        V = element.potential(context(layout, x, random_xd(rng, layout), 1))
        assert V == pytest.approx(_potential(element, layout, x), rel=1e-12, abs=1e-14)
