"""Runs with the nonlinear force laws against independent references.

* Rope pendulum (point mass on a rope of length L to a pivot, released inside the
  circle): the slack phase is free flight, ``r = r0 + g t^2 / 2``, until ``|r| = L`` at
  ``t* = sqrt(2 sqrt(L^2 - x0^2) / g)``; a critically damped rope takes out the radial
  velocity and the mass swings as a pendulum from ``theta*`` with the tangential velocity
  ``v_t``: amplitude ``cos theta_max = cos theta* - v_t^2 / (2 g L)`` (energy), half
  period ``2 sqrt(L/g) K(sin^2(theta_max / 2))`` (large-amplitude pendulum, e.g.
  Landau & Lifshitz, *Mechanics*, §11).  The rope engages once and never chatters.
* Elastic rope (no damper): ``T + V_g + V_rope`` is conserved through the catch and
  rebound (conservation law), and the slack phase after the rebound is again a parabola.
* Compression-only spring as a contact (mass dropped from ``h`` onto a spring of
  stiffness k): while in contact ``y`` is harmonic about ``y_s = l0 - m g / k``, so the
  contact lasts ``(2 pi - 2 arccos(delta_s / A)) / omega`` with ``omega = sqrt(k/m)``,
  ``delta_s = m g / k``, ``A = sqrt(delta_s^2 + 2 g h / omega^2)``; the mass bounces
  back to ``h`` (no damper: energy conserved).
* Hardening oscillator ``m x'' + k x + k3 x^3 = 0``: period
  ``4 K(mu) / omega``, ``omega^2 = (k + k3 A^2) / m``, ``mu = k3 A^2 / (2 m omega^2)``
  (Jacobi cn solution of the Duffing equation); the tabulated (PCHIP of cubic samples)
  and the callable spring against an independent ODE solve (:func:`scipy.integrate.
  solve_ivp`, rtol 1e-11) of the same law.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.interpolate import PchipInterpolator
from scipy.special import ellipk

import flexmbs as fm

G = 9.81


def _crossings(t, x):
    """Times where ``x`` changes sign (linear interpolation)."""
    i = np.nonzero(np.diff(np.sign(x)) != 0)[0]
    return t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])


def _rope_drop(k, d, t_end, dt, x0=0.6, L=1.0, m=1.0, smoothing=0.0):
    mass = fm.PointMass("m", m, r0=(x0, 0.0, 0.0))
    rope = fm.Rope("rope", fm.ground.marker("o"), mass, k=k, d=d, l0=L, smoothing=smoothing)
    model = fm.System(gravity=(0.0, -G, 0.0)).add(mass, rope)
    res = fm.simulate(model, t_end, dt)
    return res, res.body_q("m"), rope


@pytest.mark.parametrize("smoothing", [0.0, 1e-5])
def test_rope_pendulum_slack_flight_then_taut_swing(smoothing):
    """C0 law (kink at l0) and C1 law (engaged over 10 um, 1/10 of the static stretch)."""
    L, x0, k = 1.0, 0.6, 1e5
    res, r, rope = _rope_drop(k, 2.0 * np.sqrt(k), 1.9, 1e-3, x0=x0, L=L, smoothing=smoothing)
    y_star = -np.sqrt(L**2 - x0**2)
    t_star = np.sqrt(-2.0 * y_star / G)
    slack = res.t < t_star - 1e-3
    np.testing.assert_allclose(r[slack, 0], x0, atol=1e-12)
    np.testing.assert_allclose(r[slack, 1], -0.5 * G * res.t[slack] ** 2, atol=1e-10)
    engaged = np.array([rope.engaged(v) for v in np.linalg.norm(r, axis=1)])
    assert np.count_nonzero(np.diff(engaged.astype(int))) == 1      # no chattering
    assert res.stats.step_cuts == 0          # Newton converged through the switch
    assert engaged[-1]
    v_t = -G * t_star * x0 / L
    theta_max = np.arccos(-y_star / L - v_t**2 / (2 * G * L))
    theta = np.arctan2(r[:, 0], -r[:, 1])
    swing = res.t > t_star + 0.05
    assert theta[swing].min() == pytest.approx(-theta_max, rel=2e-4)
    half = np.diff(_crossings(res.t[swing], theta[swing]))
    assert half.size >= 1
    assert half[0] == pytest.approx(2 * np.sqrt(L / G) * ellipk(np.sin(theta_max / 2) ** 2),
                                    rel=5e-4)


def test_elastic_rope_conserves_energy_and_flies_free_when_slack():
    from flexmbs.post.energy import is_conservative, relative_drift
    mass = fm.PointMass("m", 1.0, r0=(0.6, 0.0, 0.0))
    rope = fm.Rope("rope", fm.ground.marker("o"), mass, k=1e4, l0=1.0)
    model = fm.System(gravity=(0.0, -G, 0.0)).add(mass, rope)
    assert is_conservative(model)
    res = fm.simulate(model, 1.0, 5e-4, rho_inf=1.0)
    r, v = res.body_q("m"), res.qd[:, res.bodies["m"]]
    engaged = np.array([rope.engaged(x) for x in np.linalg.norm(r, axis=1)])
    switches = np.nonzero(np.diff(engaged.astype(int)))[0]
    assert switches.size == 4               # catch, rebound into slack, twice
    assert relative_drift(res.energy) < 1e-3
    i0, i1 = switches[1] + 2, switches[2] - 1           # the second slack phase
    tau = res.t[i0:i1] - res.t[i0]
    flight = r[i0] + np.outer(tau, v[i0]) + 0.5 * np.outer(tau**2, (0.0, -G, 0.0))
    np.testing.assert_allclose(r[i0:i1], flight, atol=1e-10)


def test_compression_spring_contact_bounce():
    from flexmbs.post.energy import relative_drift
    m, k, h, l0 = 1.0, 1e4, 0.2, 1.0
    mass = fm.PointMass("m", m, r0=(0.0, l0 + h, 0.0))
    spring = fm.CompressionSpring("c", fm.ground.marker("o"), mass, k=k, l0=l0)
    res = fm.simulate(fm.System(gravity=(0.0, -G, 0.0)).add(mass, spring), 0.9, 2e-4,
                      rho_inf=1.0)
    y = res.body_q("m")[:, 1]
    omega, delta_s, v = np.sqrt(k / m), m * G / k, np.sqrt(2 * G * h)
    A = np.sqrt(delta_s**2 + (v / omega) ** 2)
    contact = (2 * np.pi - 2 * np.arccos(delta_s / A)) / omega
    touch = _crossings(res.t, y - l0)
    assert touch.size == 4
    assert touch[0] == pytest.approx(np.sqrt(2 * h / G), rel=1e-6)   # free fall
    assert touch[1] - touch[0] == pytest.approx(contact, rel=2e-4)
    assert touch[2] - touch[1] == pytest.approx(2 * v / G, rel=2e-4)  # flight up and down
    assert touch[3] - touch[2] == pytest.approx(contact, rel=2e-4)
    assert y[(res.t > touch[1]) & (res.t < touch[2])].max() == pytest.approx(l0 + h, rel=1e-5)
    assert relative_drift(res.energy) < 1e-4


@pytest.mark.parametrize("how", ["table", "callable"])
def test_hardening_spring_period_and_ode(how):
    m, k, k3, A, l0 = 1.0, 100.0, 1e4, 0.1, 1.0
    omega2 = (k + k3 * A * A) / m
    period = 4 * ellipk(k3 * A * A / (2 * m * omega2)) / np.sqrt(omega2)
    s = np.linspace(-0.15, 0.15, 31)
    if how == "table":
        kw = {"deflection": tuple(s), "force": tuple(k * s + k3 * s**3)}
        law = PchipInterpolator(s, k * s + k3 * s**3)            # scipy's own, for the ODE
    else:
        kw = {"law": lambda u, ud: k * u + k3 * u**3, "rate_independent": True}
        law = lambda u: k * u + k3 * u**3                        # noqa: E731
    mass = fm.PointMass("m", m, r0=(l0 + A, 0.0, 0.0))
    spring = fm.NonlinearSpring("s", fm.ground.marker("o"), mass, l0=l0, **kw)
    res = fm.simulate(fm.System().add(mass, spring), 1.2 * period, 5e-4, rho_inf=1.0)
    x = res.body_q("m")[:, 0] - l0
    zero = _crossings(res.t, x)
    assert 2 * (zero[1] - zero[0]) == pytest.approx(period, rel=2e-5)
    ode = solve_ivp(lambda t, z: [z[1], -float(law(z[0])) / m], (0.0, res.t[-1]), [A, 0.0],
                    rtol=1e-11, atol=1e-13, t_eval=res.t)
    assert np.abs(ode.y[0] - x).max() < 5e-5 * A                # O(dt^2) of generalized-alpha


def test_rotational_table_of_a_linear_law_runs_as_the_torsion_spring():
    """A second formulation: a bar on a revolute with a torsion spring k = 20 N m/rad,
    once as ``RotationalSpringDamper`` and once as a linear ``angle -> moment`` table
    (PCHIP reproduces linear data); the joint angles agree to round-off."""
    from scipy.spatial.transform import Rotation

    def run(make_spring):
        R0 = Rotation.from_rotvec([0.0, 0.0, np.deg2rad(60.0) - np.pi / 2]).as_matrix()
        arm = fm.RigidBody.box("arm", (0.5, 0.03, 0.03), rho=7850.0, com=(0.25, 0, 0), R0=R0)
        pin = fm.Revolute("pin", fm.ground, arm, at=(0, 0, 0), axis="z")
        model = fm.System(gravity=(0, -G, 0)).add(pin, make_spring(pin))
        return fm.simulate(model, 0.5, 2e-3).joint_coordinates["pin"][:, 0]

    lin = run(lambda pin: fm.RotationalSpringDamper("s", pin, k=20.0, d=0.3, angle0=0.1))
    tab = run(lambda pin: fm.NonlinearRotationalSpring(
        "s", pin, angle=(-2.0, 0.0, 1.0, 3.0), moment=(-40.0, 0.0, 20.0, 60.0), d=0.3,
        angle0=0.1))
    assert np.ptp(lin) > 0.3                 # it swings
    np.testing.assert_allclose(tab, lin, atol=1e-9)
