"""Kane's spin-up beam: geometric stiffening keeps the tip deflection bounded.

Reference: Kane, Ryan & Banerjee, "Dynamics of a cantilever beam attached to a moving
base", J. Guidance 10 (1987) 139-151: L = 8 m, E = 6.8952e10 Pa, rho = 2766.67 kg/m^3,
A = 7.2968e-5 m^2, I = 8.2189e-9 m^4, hub angle with
``thetad = (Omega_s/T)(t - (T/2 pi) sin(2 pi t/T))`` for t < T, then ``Omega_s``;
Omega_s = 6 rad/s, T = 15 s.  With stiffening the in-plane tip deflection (rotating
frame) stays bounded (centimetres during spin-up, millimetres after); the linear
("premature linearisation") model diverges once thetad exceeds the first in-plane
bending frequency w1 = 3.516 sqrt(EI/(m L^4)) = 2.91 rad/s (thetad = w1 at t = 7.3 s).

Independent checks used here:
* the quasi-static deflection at low hub speed from ``steady_state`` (the elastic rows
  with qdd_e = qd_e = 0 under the same hub motion) against the Euler-Bernoulli static
  tip deflection ``11 q0 L^4 / (120 EI)`` under the tangential inertia load
  ``q0 = m thetadd L``;
* the Campbell analysis: the linear model's lag mode turns unstable (real eigenvalue)
  above 2.91 rad/s, the stiffened one does not.
The full 20 s run (dt = 0.01 s) is in ``benchmarks/flexible_steps.py --kane`` and its
numbers in docs/validation_flexible.md; here dt = 0.05 s and 9.5 s.
"""
import h5py
import numpy as np
import pytest
from flexcase_models import MESHES, nearest_node, reduce_cb, rotating_beam_model

import flexmbs as fm
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.constraints.drives import AngleDrive, SpinUp
from flexmbs.errors import DivergenceError
from flexmbs.fe.material import material_from_name
from flexmbs.io.mesh import read_mesh
from flexmbs.post import linearize, modes, steady_state

L, E, RHO, A, I = 8.0, 6.8952e10, 2766.67, 7.2968e-5, 8.2189e-9
OMEGA_S, T_S = 6.0, 15.0
W1 = 3.516 * np.sqrt(E * I / (RHO * A * L**4))          # 2.91 rad/s


@pytest.fixture(scope="module")
def kane():
    mat = material_from_name("aluminium_kane")
    # modal derivatives of the 3 lowest in-plane (y) bending vectors: without them the
    # exact Green-Lagrange terms lock the bending of the strip (docs/stiffening.md)
    body = reduce_cb(read_mesh(MESHES / "kane_hex27_40x1x1.msh"), mat, 6, static_modes=True,
                     name="kane", modal_derivatives=3, derivative_axis=1)
    tip = nearest_node(body.points, (L, body.points[:, 1].max() / 2, body.points[:, 2].max() / 2))
    return body, tip


def spinup_model(body, stiffening):
    beam = FlexibleBody("beam", body, damping=False, stiffening=stiffening)
    model = fm.System(name="kane")
    model.add(fm.Revolute("hub", fm.ground, beam["clamp"], axis="z"))
    model.drives.append(AngleDrive("spin", joint="hub", angle=SpinUp(Omega=OMEGA_S, T=T_S)))
    return model


def tip_y(body, tip, q_e):
    return np.asarray(q_e) @ np.asarray(body.modes[tip, 1])


def quasi_static(body, tip, t, stiffening):
    asm = spinup_model(body, stiffening).assemble()
    return tip_y(body, tip, steady_state(asm, t=t).q[7:])


def euler_bernoulli(t):
    """Static tip deflection of the cantilever under the tangential inertia load
    ``q(x) = m thetadd(t) x`` alone: ``-11 q0 L^4 / (120 EI)``, ``q0 = m thetadd L``."""
    c = T_S / (2 * np.pi)
    thetadd = OMEGA_S / T_S * (1 - np.cos(t / c))
    return -11 * RHO * A * thetadd * L * L**4 / (120 * E * I)


@pytest.mark.parametrize("t", [0.5, 2.0])
def test_quasi_static_linear_model_matches_euler_bernoulli(kane, t):
    """At low hub speed (thetad <= 0.09 rad/s) centrifugal effects are negligible."""
    body, tip = kane
    assert quasi_static(body, tip, t, False) == pytest.approx(euler_bernoulli(t), rel=0.01)


def test_quasi_static_stiffened_model_matches_euler_bernoulli_at_low_speed(kane):
    body, tip = kane
    assert quasi_static(body, tip, 2.0, True) == pytest.approx(euler_bernoulli(2.0), rel=0.05)


def test_linear_model_unstable_above_first_frequency(kane):
    body, _ = kane
    for stiffening, unstable in ((False, True), (True, False)):
        asm = rotating_beam_model(body, 1.1 * W1, stiffening=stiffening).assemble()
        res = modes(linearize(asm, steady_state(asm)), oscillatory_only=False)
        assert (res.s.real.max() > 1e-3) == unstable


def test_spinup_bounded_with_stiffening_divergent_without(kane):
    body, tip = kane
    res = fm.simulate(spinup_model(body, True), 9.5, 0.05, rho_inf=0.8, output_dt=0.1)
    d = tip_y(body, tip, res.body_q("beam")[:, 7:])
    assert res.t[-1] == pytest.approx(9.5)
    # bounded, near the quasi-static in-plane deflection at T/2: EB tip deflection under the
    # inertial load alpha m x with alpha = 2 Omega_s / T, alpha m L^5 (11/120) / EI = 0.86 m,
    # times the in-plane Southwell factor w0^2 / (w0^2 + 0.193 thetad^2) = 0.83 -> 0.71 m
    qs = 2 * 6.0 / 15.0 * RHO * A * L**5 * 11 / 120 / (E * I)
    qs *= W1**2 / (W1**2 + 0.193 * 3.0**2)
    assert np.all(np.isfinite(d)) and 0.8 * qs < np.abs(d).max() < 1.25 * qs


def test_spinup_without_stiffening_ends_diverged(kane, tmp_path):
    """The linear model grows without bound once thetad > w1 (t > 7.3 s): the run stops
    with status 'diverged' (it used to reach 1e25 m and end 'complete'), the steps kept."""
    out = tmp_path / "linear.h5"
    with pytest.raises(DivergenceError) as info:
        fm.simulate(spinup_model(kane[0], False), 12.0, 0.05, rho_inf=0.8, output_dt=0.1,
                    output=str(out))
    assert "beam" in str(info.value) and info.value.t > 7.3
    with h5py.File(tmp_path / "linear.diverged.h5") as f:   # docs/errors.md: file names
        assert f.attrs["status"] == "diverged" and f["time"][-1] > 7.3


@pytest.mark.parametrize("dt", [1e-3, 5e-4])
def test_spinup_small_steps(kane, dt):
    """The spin-up at the small steps reported failing (default settings).  At t = 1 s
    the hub turns at 0.01 rad/s (no centrifugal effect) and the tip follows the first
    in-plane mode (w1) driven from rest by the tangential inertia load, whose static
    response is ``euler_bernoulli(t) = x_s (1 - cos nu t)``, ``nu = 2 pi / T``: the
    undamped oscillator ``x'' + w1^2 x = w1^2 x_s (1 - cos nu t)`` from rest gives

        x / x_s = 1 - cos w1 t - w1^2 / (w1^2 - nu^2) (cos nu t - cos w1 t)

    (one mode: the static deflection under a linear load is 97 % the first mode)."""
    body, tip = kane
    res = fm.simulate(spinup_model(body, True), 1.0, dt, output_dt=0.1)
    assert res.t[-1] == pytest.approx(1.0)
    d = tip_y(body, tip, res.body_q("beam")[-1, 7:])
    t, nu = 1.0, 2 * np.pi / T_S
    x = 1 - np.cos(W1 * t) - W1**2 / (W1**2 - nu**2) * (np.cos(nu * t) - np.cos(W1 * t))
    assert d == pytest.approx(euler_bernoulli(t) / (1 - np.cos(nu * t)) * x, rel=0.03)


def test_spinup_peak_deflection_magnitude(kane):
    body, tip = kane
    res = fm.simulate(spinup_model(body, True), 8.0, 0.04, rho_inf=0.8, output_dt=0.2)
    d = tip_y(body, tip, res.body_q("beam")[:, 7:])
    assert 0.15 < np.abs(d).max() < 1.0


def test_millimetres_after_spinup(kane):
    """Kane, Ryan & Banerjee (1987): with geometric stiffening the tip deflection is a few
    tenths of a metre during the spin-up and millimetres once the hub turns at constant
    speed.  Measured over the full 20 s: peak 0.747 m at t = 6.5 s (dt = 0.02 and 0.01
    agree), max |deflection| after t = 17 s 7.1 mm (dt = 0.02) and 7.0 mm (dt = 0.01)."""
    body, tip = kane
    res = fm.simulate(spinup_model(body, True), 20.0, 0.02, rho_inf=0.8, output_dt=0.1)
    d = tip_y(body, tip, res.body_q("beam")[:, 7:])
    assert 0.15 < np.abs(d).max() < 1.0
    assert np.abs(d[res.t >= 17.0]).max() < 1e-2
