"""Hydraulic cylinder (flexmbs.forces.hydraulics): a mass on the closed cylinder's oil
spring; Jacobians; the orifice law."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

import flexmbs as fm
from flexmbs.forces.hydraulics import HydraulicCylinder, orifice
from flexmbs.kinematics.time_functions import Sine

from .statecheck import check_tangent, slope

A, V0, BETA, M_KG, P0, V_START = 2e-3, 5e-4, 1.5e9, 200.0, 1e6, 0.01
#: closed-form natural frequency of the mass on the oil spring, sqrt(A^2 beta (1/V1 + 1/V2) / m)
OMEGA = np.sqrt(A**2 * BETA * (2.0 / V0) / M_KG)


def cylinder_model(v0=V_START, **kw):
    mass = fm.PointMass("rod", M_KG, r0=(0.5, 0.0, 0.0), v0=(v0, 0.0, 0.0))
    model = fm.System(gravity=(0.0, 0.0, 0.0))
    args = dict(A1=A, A2=A, V01=V0, V02=V0, beta=BETA, p10=P0, p20=P0)
    args.update(kw)
    model.add(mass, HydraulicCylinder("cyl", fm.ground.marker("o"), mass, **args))
    return model


def oil_energy(p, V_start, p_start):
    """``-int p dV`` [J] of a closed chamber whose pressure follows ``p' = -beta V'/V``,
    i.e. ``V = V_start exp(-(p - p_start)/beta)``, from ``p_start`` to ``p``."""
    P = p - p_start
    e = np.exp(-P / BETA)
    return V_start * ((p_start + BETA) * (1.0 - e) - P * e)


def test_orifice_law_and_its_derivative():
    """Far above ``dp_r`` the regularised law is ``sqrt(2 |dp| / rho) sign(dp)`` (relative
    error ``(dp_r/dp)^2/4``); its derivative against central differences."""
    for dp in (-5e6, 2e6):
        q, _ = orifice(dp, 850.0, 1e4)
        assert q == pytest.approx(np.sign(dp) * np.sqrt(2 * abs(dp) / 850.0), rel=1e-5)
    for dp in (-3e4, 0.0, 5e3, 2e5):
        h = 1e-2
        fd = (orifice(dp + h, 850.0, 1e4)[0] - orifice(dp - h, 850.0, 1e4)[0]) / (2 * h)
        assert orifice(dp, 850.0, 1e4)[1] == pytest.approx(fd, rel=1e-7)


@pytest.mark.parametrize("u", [0.7, -0.4])
def test_tangent_against_central_differences(u):
    """Valve open either way (time-varying opening), cushions engaged at the random state."""
    model = cylinder_model(valve=Sine(amplitude=0.2, omega=3.0, offset=u), w=1e-5,
                           p_s=2e7, p_t=1e5, dp_r=1e6, x_min=-1e-3, x_max=1e-3, k_c=1e8, b=3e3)
    check_tangent(model, np.random.default_rng(1), scale=5e-3)


def closed_cylinder_frequency(dt, periods=3):
    """Frequency [rad/s] from the upward zero crossings of the stroke (a cubic spline
    through the steps), and the recorded result."""
    T = 2 * np.pi / OMEGA
    r = fm.simulate(cylinder_model(), t_end=periods * T * 1.02, dt=dt, rho_inf=1.0)
    x = r.q[:, 0] - 0.5
    roots = CubicSpline(r.t, x).roots(extrapolate=False)
    v = CubicSpline(r.t, x).derivative()(roots)
    up = roots[(v > 0) & (roots > 0.25 * T)]
    return 2 * np.pi * (len(up) - 1) / (up[-1] - up[0]), r


def test_oil_spring_natural_frequency_converges_to_closed_form():
    """Mass on the closed cylinder: the measured frequency converges to sqrt(A^2 beta
    (1/V1 + 1/V2) / m) at order 2 (the trapezoidal period error of generalized-alpha
    with rho_inf = 1, ``-(omega h)^2 / 12``)."""
    T = 2 * np.pi / OMEGA
    dts = T / np.array([40.0, 80.0, 160.0, 320.0])
    err = np.array([abs(closed_cylinder_frequency(dt)[0] / OMEGA - 1.0) for dt in dts])
    assert slope(dts, err) == pytest.approx(2.0, abs=0.15)
    np.testing.assert_allclose(err, (OMEGA * dts) ** 2 / 12, rtol=0.05)
    assert err[-1] < 5e-5


def test_closed_cylinder_conserves_kinetic_plus_oil_energy():
    """``m v^2/2 + sum_i -int p_i dV_i`` stays at its initial value (no valve flow, no
    dissipation at rho_inf = 1); drift below 1e-4 of the kinetic energy at T/80."""
    _, r = closed_cylinder_frequency(2 * np.pi / OMEGA / 80.0)
    p = r.states("cyl")
    E = 0.5 * M_KG * r.qd[:, 0] ** 2 + oil_energy(p[:, 0], V0, P0) + oil_energy(p[:, 1], V0, P0)
    E0 = 0.5 * M_KG * V_START**2
    assert np.abs(E - E0).max() < 1e-4 * E0
    assert np.ptp(p[:, 0]) == pytest.approx(2 * BETA * A * V_START / (OMEGA * V0), rel=1e-3)


def test_bad_area_is_one_line():
    msg = r"HydraulicCylinder 'cyl': A1 must be > 0 \[m\^2\], got -1"
    with pytest.raises(fm.ModelError, match=msg):
        cylinder_model(A1=-1.0).assemble()


def test_end_cushion_returns_the_mass_elastically():
    """A mass at 1 m/s runs into the end cushion k_c (oil spring negligible: A = 1e-6 m^2,
    V = 1 m^3): half a period of sqrt(k_c/m) in contact, penetration v0/omega_c, and it
    leaves at -v0 (an elastic stop; errors of the kinked contact law, first order in h)."""
    k_c, m, x_max = 1e4, 1.0, 0.01
    mass = fm.PointMass("m", m, r0=(0.5, 0.0, 0.0), v0=(1.0, 0.0, 0.0))
    model = fm.System(gravity=(0.0, 0.0, 0.0))
    model.add(mass, HydraulicCylinder("cyl", fm.ground.marker("o"), mass, A1=1e-6, A2=1e-6,
                                      V01=1.0, V02=1.0, x_max=x_max, k_c=k_c))
    r = fm.simulate(model, t_end=0.06, dt=2e-5, rho_inf=1.0)
    omega_c = np.sqrt(k_c / m)
    assert r.q[:, 0].max() - 0.5 - x_max == pytest.approx(1.0 / omega_c, rel=1e-3)
    assert r.qd[-1, 0] == pytest.approx(-1.0, rel=1e-3)
    back = r.t[np.flatnonzero(r.q[:, 0] - 0.5 > x_max)[-1]]
    assert back - x_max / 1.0 == pytest.approx(np.pi / omega_c, abs=2 * 2e-5)


def test_an_initial_stroke_beyond_a_chamber_is_one_line():
    """The marker distance at x = 0 given as 1.5 m with the rod end at 0.5 m: the
    initial stroke x = -1 m empties chamber 1 (V1 = V01 + A1 x = 5e-4 - 2e-3 < 0).  Found
    by the fuzz (excavator_arm, seeds 11 and 12): a ValueError traceback from
    ``flexmbs check``; now the model error of the initial state, naming the cylinder."""
    msg = (r"the initial state \(t = 0.0 s\) cannot be evaluated: HydraulicCylinder 'cyl': "
           r"expected positive chamber volumes, got V1 = -1\.500e-03 m\^3, V2 = 2\.500e-03 "
           r"m\^3 at stroke x = -1 m")
    with pytest.raises(fm.ModelError, match=msg):
        fm.simulate(cylinder_model(l0=1.5), 0.01, 1e-3)
