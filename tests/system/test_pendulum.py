"""Compound pendulum against the exact elliptic-integral solution.

Reference: a rigid body pinned at O with moment of inertia I_O and centre of mass at
distance d obeys theta'' = -w0^2 sin(theta), w0^2 = m g d / I_O.  Released from rest at
theta0, sin(theta/2) = k sn(K - w0 t, k), k = sin(theta0/2), period T = 4 K(k) / w0
(e.g. Lawden, *Elliptic Functions and Applications*, 1989, §5.2).
"""
import numpy as np
import pytest
from scipy.special import ellipj, ellipk

import flexmbs as fm
from flexmbs.kinematics.rotation import matrix_from_axis_angle

L, G, THETA0 = 1.0, 9.81, np.deg2rad(60.0)


def pendulum_model():
    # rod along its body x axis, pinned at its end; hanging straight down is theta = 0
    R0 = matrix_from_axis_angle([0, 0, 1], THETA0 - np.pi / 2)
    rod = fm.RigidBody.box("rod", (L, 0.02, 0.02), rho=7850.0, com=(L / 2, 0, 0), R0=R0)
    model = fm.System(gravity=(0, -G, 0), name="pendulum")
    model.add(fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))
    return model, rod


def exact_theta(rod, t):
    w0 = np.sqrt(rod.m * G * (L / 2) / rod.I_O[2, 2])
    k = np.sin(THETA0 / 2)
    K = ellipk(k**2)
    sn = ellipj(K - w0 * np.asarray(t), k**2)[0]
    return 2 * np.arcsin(k * sn), 4 * K / w0


def crossings(t, y):
    """Times of upward zero crossings (linear interpolation)."""
    i = np.where((y[:-1] < 0) & (y[1:] >= 0))[0]
    return t[i] - y[i] * (t[i + 1] - t[i]) / (y[i + 1] - y[i])


@pytest.fixture(scope="module")
def run():
    model, rod = pendulum_model()
    return fm.simulate(model, 10.0, 2e-3, rho_inf=0.9), rod


def test_period(run):
    res, rod = run
    theta = THETA0 + res.joint_coordinates["pin"][:, 0]   # joint angle is relative to t = 0
    _, T = exact_theta(rod, 0.0)
    periods = np.diff(crossings(res.t, theta))
    assert len(periods) >= 4
    assert np.allclose(periods, T, rtol=2e-4), (periods, T)


def test_position_at_10s(run):
    res, rod = run
    theta = THETA0 + res.joint_coordinates["pin"][-1, 0]
    exact, _ = exact_theta(rod, 10.0)
    assert res.t[-1] == pytest.approx(10.0)
    assert theta == pytest.approx(exact, abs=2e-3)
    # tip position against the exact angle, through the body coordinates
    q = res.body_q("rod")[-1]
    tip = q[:3] + fm.RigidBody.A(rod, q) @ np.array([L, 0, 0])
    assert np.allclose(tip[:2], [L * np.sin(exact), -L * np.cos(exact)], atol=2e-3)


def test_constraint_and_reaction(run):
    """Pin reaction at release: radial m g cos(theta0) (no centripetal term, at rest) and
    tangential force from the angular acceleration, Newton-Euler by hand."""
    res, rod = run
    m, d, I_O = rod.m, L / 2, rod.I_O[2, 2]
    alpha = -m * G * d * np.sin(THETA0) / I_O
    # force of the pin on the rod = m a_c - m g; a_c tangential = alpha d along e_theta
    e_r = np.array([np.sin(THETA0), -np.cos(THETA0), 0.0])      # from pin to COM
    e_t = np.array([np.cos(THETA0), np.sin(THETA0), 0.0])
    F = m * alpha * d * e_t - m * np.array([0.0, -G, 0.0])
    # the reaction is reported in the joint frame, which is the inertial frame here
    assert np.allclose(res.reactions["pin"][0, :3], F, rtol=1e-6, atol=1e-8)
    assert np.allclose(res.reactions["pin"][0, 3:5], 0.0, atol=1e-8)
