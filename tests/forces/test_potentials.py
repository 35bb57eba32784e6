"""Potential energies of the force elements (THEORY §5.6-5.7).

Reference: a conservative force is minus the gradient of its potential, ``Q_f = -dV/dx``.
Each element's ``potential`` is differentiated by central differences at seeded random
states and compared with the element's own generalized force with the dampers switched
off (``d = 0``: the conservative part, at a random velocity), and with the dampers on at
rest (where they apply nothing).  Closed forms: the stop's energy is the integral of its
ramp law, the bushing's rotational energy is ``K/2 sin(a)^2``.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from constraints.jetcheck import Layout, context, fd_gradient, pair, random_body, random_xd

from flexmbs.bodies.ground import ground
from flexmbs.bodies.rigid import RigidBody
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.constraints.revolute import Revolute
from flexmbs.forces.bushing import Bushing
from flexmbs.forces.external import ExternalForce, ExternalTorque
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.forces.stops import JointStop, ramp, ramp_integral
from flexmbs.kinematics.time_functions import Sine


def _conservative(rng, with_ground):
    """One element of each kind with a potential, dampers on."""
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
        ExternalForce("f", (b, at), (1.0, -2.0, 0.5)),
    ]


def _undamped(element):
    for key, zero in (("d", 0.0), ("D", (0.0,) * 6)):
        if hasattr(element, key):
            return dataclasses.replace(element, **{key: zero})
    return element


def _potential(element, layout, x):
    return element.potential(context(layout, x, np.append(np.zeros(layout.n - 1), 1.0), 1))


@pytest.mark.parametrize("index", range(8))
@pytest.mark.parametrize("with_ground", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_gradient_of_potential_is_minus_conservative_force(index, with_ground, seed):
    rng = np.random.default_rng(100 * seed + index)
    element = _conservative(rng, with_ground)[index]
    assert element.problems() == []
    layout = Layout(element.resolve())
    x = layout.random_x(rng)
    grad = fd_gradient(lambda y: _potential(element, layout, y), x)[:-1]
    scale = max(1.0, np.abs(grad).max())
    # the conservative part at a random velocity: the element without its dampers
    Q_k = _undamped(element).contribution(context(layout, x, random_xd(rng, layout), 1)).Q
    np.testing.assert_allclose(Q_k[:-1], -grad, rtol=0, atol=1e-7 * scale)
    # at rest the dampers apply nothing: the whole force is -dV/dx
    rest = np.append(np.zeros(layout.n - 1), 1.0)
    Q = element.contribution(context(layout, x, rest, 1)).Q
    np.testing.assert_allclose(Q[:-1], -grad, rtol=0, atol=1e-7 * scale)


def _rotated(theta):
    """Body at the origin rotated by theta about inertial z (the ground revolute's angle)."""
    return np.array([0.0, 0.0, 0.0, np.cos(theta / 2), 0.0, 0.0, np.sin(theta / 2), 0.0])


@pytest.mark.parametrize("w", [0.0, 0.04])
def test_stop_potential_is_the_integral_of_its_law(w):
    """V(theta) = int_0^theta M d theta' of the stop law (2.55), by the trapezoidal rule
    on a fine grid through the play, both contact zones and the smoothing zones; zero in
    the play, and dV/dtheta = M."""
    b = RigidBody("b", 1.0, np.eye(3) * 0.1)
    rev = Revolute("R", ground, b.marker("o"), axis="z")
    stop = JointStop("st", rev, lower=-0.2, upper=0.1, k=40.0, smoothing=w)
    layout = Layout(stop.resolve())
    theta = np.linspace(-0.5, 0.5, 20001)
    V = np.array([_potential(stop, layout, _rotated(th)) for th in theta])
    M = np.array([40.0 * (ramp(th - 0.1, w)[0] - ramp(-0.2 - th, w)[0]) for th in theta])
    i0 = np.argmin(np.abs(theta))
    integral = np.concatenate([[0.0], np.cumsum(0.5 * (M[1:] + M[:-1]) * np.diff(theta))])
    np.testing.assert_allclose(V, integral - integral[i0], rtol=0, atol=1e-6)
    assert np.all(V[(theta > -0.2 + 1e-9) & (theta < 0.1 - 1e-9)] == 0.0)
    # the ramp integral is continuous at z = w and has the ramp as its slope
    if w > 0:
        assert ramp_integral(w * (1 + 1e-12), w) == pytest.approx(ramp_integral(w, w), rel=1e-9)
        z = 0.7 * w
        h = 1e-7
        slope = (ramp_integral(z + h, w) - ramp_integral(z - h, w)) / (2 * h)
        assert slope == pytest.approx(ramp(z, w)[0], rel=1e-6)


def test_bushing_rotational_energy_closed_form():
    """Rotation by a about x_P: theta_x = sin a, so V = K_4/2 sin(a)^2 (not K_4/2 a^2);
    translation u along y_P: V = K_2/2 u^2."""
    b = RigidBody("b", 1.0, np.eye(3) * 0.1)
    bush = Bushing("b", ground.marker("o"), b.marker("o"), K=(10, 20, 30, 4, 5, 6))
    layout = Layout(bush.resolve())
    a = 1.1
    x = np.array([0.0, 0.0, 0.0, np.cos(a / 2), np.sin(a / 2), 0.0, 0.0, 0.0])
    assert _potential(bush, layout, x) == pytest.approx(0.5 * 4.0 * np.sin(a) ** 2, rel=1e-12)
    x = np.array([0.0, 0.03, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    assert _potential(bush, layout, x) == pytest.approx(0.5 * 20.0 * 0.03**2, rel=1e-12)


def test_constant_inertial_force_potential_closed_form():
    """V = -F . p_P for a constant inertial force at P."""
    rng = np.random.default_rng(7)
    b = random_body(rng, "b")
    F = np.array([1.0, 2.0, -3.0])
    el = ExternalForce("f", (b, rng.normal(size=3)), F)
    layout = Layout(el.resolve())
    x = layout.random_x(rng)
    p = layout.frames(x, 1)[0].p.v
    assert _potential(el, layout, x) == pytest.approx(-F @ p, rel=1e-14)


def test_energy_exchange_names_dampers_and_non_conservative_loads():
    """Undamped springs, bushings, stops and constant inertial forces are conservative;
    dampers, time-varying and follower forces and torques exchange energy."""
    rng = np.random.default_rng(8)
    elements = _conservative(rng, False)
    for el in elements:
        assert _undamped(el).energy_exchange() is None, el.name
    for el in elements[:-1]:
        assert "damping" in el.energy_exchange(), el.name
    b = random_body(rng, "b")
    assert "time-varying" in ExternalForce("f", b, Sine((1.0, 0.0, 0.0), 2.0)).energy_exchange()
    assert "follower" in ExternalForce("f", b, (1.0, 0.0, 0.0), frame="body").energy_exchange()
    assert ExternalForce("f", b, (0.0, 0.0, 0.0), frame="body").energy_exchange() is None
    assert "torque" in ExternalTorque("m", b, (0.0, 0.0, 1.0)).energy_exchange()
    assert ExternalTorque("m", b, (0.0, 0.0, 0.0)).energy_exchange() is None


def test_non_conservative_force_has_zero_potential():
    """A time-varying or follower force has no potential: it adds nothing to V."""
    rng = np.random.default_rng(9)
    b = random_body(rng, "b")
    for el in (ExternalForce("f", (b, np.zeros(3)), Sine((1.0, -2.0, 0.5), 3.0, 0.1)),
               ExternalForce("fb", (b, np.zeros(3)), (1.0, -2.0, 0.5), frame="body")):
        layout = Layout(el.resolve())
        assert _potential(el, layout, layout.random_x(rng)) == 0.0
