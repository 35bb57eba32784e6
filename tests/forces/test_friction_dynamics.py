"""Joint friction against closed forms (flexmbs.forces.joint_friction, docs/friction.md):
a block on an incline (sticking and sliding), a pendulum with a bearing friction torque
(linear amplitude decay, stop band) and the stick-slip oscillator (limit cycle)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

import flexmbs as fm

G = 9.81


def incline(theta, mu_s, mu_k, **kw):
    """A 1 kg block on a prismatic joint down an incline of ``theta`` [rad] (x-y plane,
    gravity -y), with friction in the joint; the joint coordinate runs downhill."""
    axis = (np.cos(theta), -np.sin(theta), 0.0)
    block = fm.RigidBody.box("block", size=(0.1, 0.1, 0.1), rho=1000.0)
    joint = fm.Prismatic("slide", fm.ground, block, at=(0.0, 0.0, 0.0), axis=axis)
    model = fm.System(gravity=(0.0, -G, 0.0))
    model.add(block, joint, fm.JointFriction("friction", joint=joint,
                                             law=fm.FrictionLaw(mu_s=mu_s, mu_k=mu_k), **kw))
    return model


def test_block_sticks_below_the_static_limit_without_drift():
    """tan(theta) = 0.25 < mu_s = 0.3 (but > mu_k = 0.2): the block holds.  Stated
    tolerance (docs/friction.md): displacement below 2 z_s over 10 s, and no drift once
    stuck (the bristle law has zd = 0 exactly at v = 0)."""
    z_s = 1e-5
    res = fm.simulate(incline(np.arctan(0.25), 0.3, 0.2, stiction_deformation=z_s),
                      t_end=10.0, dt=5e-3, output_dt=0.5)
    s = res.joint_coordinates["slide"][:, 0]
    assert np.abs(s).max() < 2.0 * z_s
    late = s[res.t >= 5.0]
    assert np.ptp(late) < 1e-6 * z_s
    # the bristles carry the whole downhill load: z = tan(theta) / sigma0, sigma0 = mu_s / z_s
    z = res.states("friction")[-1, 0]
    assert z == pytest.approx(0.25 * z_s / 0.3, rel=1e-6)


def test_block_slides_above_the_static_limit_with_kinetic_friction():
    """tan(0.4) = 0.423 > mu_s = 0.3: a = g (sin theta - mu_k cos theta); the friction
    work is mu_k m g cos(theta) times the distance, and E + W_f is constant."""
    theta, mu_k = 0.4, 0.2
    res = fm.simulate(incline(theta, 0.3, mu_k), t_end=1.0, dt=1e-3, output_dt=0.1)
    axis = np.array([np.cos(theta), -np.sin(theta), 0.0])
    v = res.qd[:, res.bodies["block"]][:, :3] @ axis
    i5, i10 = np.argmin(abs(res.t - 0.5)), len(res.t) - 1
    a = (v[i10] - v[i5]) / (res.t[i10] - res.t[i5])
    a_ref = G * (np.sin(theta) - mu_k * np.cos(theta))
    assert a == pytest.approx(a_ref, rel=1e-4)
    s = res.joint_coordinates["slide"][:, 0]
    W = res.energy["friction_work"]
    m = 1.0
    assert W[i10] - W[i5] == pytest.approx(mu_k * m * G * np.cos(theta) * (s[i10] - s[i5]),
                                           rel=1e-4)
    E = res.energy["total"] + W
    assert np.abs(E - E[0]).max() < 1e-5 * W[-1]


def turning_points(t, x):
    """Times and values of the local extrema of ``x(t)`` (parabola through three
    samples around each sign change of the difference)."""
    dx = np.diff(x)
    out = []
    for i in np.nonzero(dx[:-1] * dx[1:] < 0)[0] + 1:
        c = np.polyfit(t[i - 1:i + 2] - t[i], x[i - 1:i + 2], 2)
        tau = -c[1] / (2 * c[0])
        out.append((t[i] + tau, np.polyval(c, tau)))
    return np.array(out)


def pendulum_amplitudes(theta0, mgl, T_c, n):
    """Successive turning-point magnitudes of a pendulum (potential ``mgl (1 - cos)``)
    with a constant friction torque ``T_c``: energy lost over a half swing,
    ``mgl (cos th_{k+1} - cos th_k) = T_c (th_k + th_{k+1})``, until
    ``mgl sin th_k <= T_c`` (it stays)."""
    out = [theta0]
    while len(out) < n and mgl * np.sin(out[-1]) > T_c:
        th = out[-1]
        out.append(brentq(lambda x, th=th: mgl * (np.cos(x) - np.cos(th)) - T_c * (th + x),
                          -th + 1e-12, th))
    return np.array(out)


def hanging_rod(theta0, m=1.0, L=1.0):
    """A rod of mass ``m`` [kg], length ``L`` [m] hanging from a revolute about z at the
    origin, released at ``theta0`` [rad] from the vertical."""
    c, s = np.cos(theta0), np.sin(theta0)
    R0 = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    rod = fm.RigidBody.box("rod", size=(0.02, L, 0.02), rho=m / (0.02 * L * 0.02),
                           r0=R0 @ np.array([0.0, -L / 2, 0.0]), R0=R0)
    return rod, fm.Revolute("pin", fm.ground, rod, at=(0.0, 0.0, 0.0), axis="z")


def test_pendulum_with_bearing_friction_decays_linearly_and_stops_in_the_band():
    """A 1 kg, 1 m rod hanging from a revolute with a bearing friction torque
    T_c = mu r N_0 = 0.25 N m (normal force a preload, ``from_reaction = False``): the
    turning points follow the energy balance of a constant Coulomb torque (about
    2 T_c / (m g l) = 0.1 rad less per half swing) and the rod stops where that balance
    puts it, within the band m g l |sin theta| <= T_c.  Tolerance 2e-3 rad (the bristle
    compliance z_s / r = 2e-4 rad and the Stribeck-free transition)."""
    m, L, theta0 = 1.0, 1.0, 0.5
    mu, r, N0 = 0.1, 0.05, 50.0
    T_c, mgl = mu * r * N0, m * G * L / 2
    rod, pin = hanging_rod(theta0, m, L)
    model = fm.System(gravity=(0.0, -G, 0.0))
    model.add(rod, pin, fm.JointFriction("bearing", joint=pin, law=fm.FrictionLaw(mu, mu),
                                         pin_radius=r, preload=N0, from_reaction=False))
    res = fm.simulate(model, t_end=5.0, dt=2e-3)
    theta = theta0 + res.joint_coordinates["pin"][:, 0]
    ref = pendulum_amplitudes(theta0, mgl, T_c, 20)
    tp = turning_points(res.t, theta)
    amp = np.abs(tp[:len(ref) - 1, 1])
    np.testing.assert_allclose(amp, np.abs(ref[1:]), atol=2e-3)
    assert len(ref) == 6     # five swings; the last ends before crossing zero and stays
    band = np.arcsin(T_c / mgl)
    assert abs(theta[-1]) <= band
    assert abs(theta[-1] - ref[-1] * (-1) ** (len(ref) - 1)) < 2e-3
    assert np.ptp(theta[res.t > res.t[-1] - 0.5]) < 1e-6   # at rest


def test_pendulum_with_pin_friction_from_the_reaction_small_angle_estimate():
    """The same rod with pin friction T = mu r N, N the pin reaction (from the
    multipliers).  Small-angle estimate: N = m g (1 + O(theta0^2)) (the centripetal and
    tangential parts of the reaction are 0.75 theta0^2 and theta / 4 of m g for a rod),
    so the amplitude drops by 2 mu r / l_c per half swing (l_c = L / 2) and the rod stops
    within |theta| <= mu r / l_c.  With theta0 = 0.1 rad the stated error of the estimate
    is 2 %; the reaction is also checked against N at the last output."""
    m, L, theta0, mu, r = 1.0, 1.0, 0.1, 0.1, 0.05
    rod, pin = hanging_rod(theta0, m, L)
    model = fm.System(gravity=(0.0, -G, 0.0))
    model.add(rod, pin, fm.JointFriction("pin_friction", joint=pin,
                                         law=fm.FrictionLaw(mu, mu), pin_radius=r))
    res = fm.simulate(model, t_end=5.0, dt=2e-3)
    theta = theta0 + res.joint_coordinates["pin"][:, 0]
    tp = turning_points(res.t, theta)
    amp = np.abs(tp[:, 1])
    drop = 2 * mu * r / (L / 2)
    moving = amp > drop                          # half swings before the last one
    assert moving.sum() >= 3
    steps = -np.diff(np.concatenate([[theta0], amp[moving]]))
    np.testing.assert_allclose(steps, drop, rtol=2e-2)
    assert abs(theta[-1]) <= mu * r / (L / 2) * 1.02
    # stuck: what is left is the bristle spring's dying oscillation, well inside the
    # stated pre-sliding compliance z_s / r = 2e-4 rad
    assert np.ptp(theta[res.t > res.t[-1] - 0.5]) < 1e-5
    # at rest the reaction is the weight, and the friction torque holds m g l_c sin(theta)
    F = res.reactions["pin"][-1, :3]
    assert np.linalg.norm(F) == pytest.approx(m * G, rel=1e-6)


@pytest.mark.slow
def test_stick_slip_oscillator_limit_cycle_matches_the_closed_form():
    """A 1 kg mass on a belt moving at v_b = 0.1 m/s, held by a spring k = 100 N/m,
    mu_s = 0.4, mu_k = 0.3, N = m g from the joint reaction.  Closed form (stick while
    the spring force is below mu_s N, harmonic slip about x_k = mu_k N / k):
    x_max = x_k + A, x_min = x_k - A, A = sqrt((x_s - x_k)^2 + (v_b / omega)^2),
    period 2 (x_s - x_k) / v_b + (pi + 2 atan(v_b / (omega (x_s - x_k)))) / omega."""
    m, k, v_b, mu_s, mu_k = 1.0, 100.0, 0.1, 0.4, 0.3
    N, omega = m * G, np.sqrt(k / m)
    x_s, x_k = mu_s * N / k, mu_k * N / k
    A = np.hypot(x_s - x_k, v_b / omega)
    period = 2 * (x_s - x_k) / v_b + (np.pi + 2 * np.arctan(v_b / (omega * (x_s - x_k)))) \
        / omega
    v0 = (v_b, 0.0, 0.0)
    belt = fm.RigidBody.box("belt", size=(1.0, 0.02, 0.1), rho=1000.0, v0=v0)
    mass = fm.RigidBody.box("mass", size=(0.1, 0.1, 0.1), rho=m / 1e-3, v0=v0)
    rail = fm.Prismatic("rail", fm.ground, belt, at=(0.0, 0.0, 0.0), axis="x")
    contact = fm.Prismatic("contact", belt, mass, at=(0.0, 0.0, 0.0), axis="x")
    model = fm.System(gravity=(0.0, -G, 0.0))
    model.add(belt, mass, rail, contact,
              fm.VelocityDrive("belt_speed", joint="rail", v=v_b),
              fm.PointToPointSpringDamper("spring", first=(fm.ground, (-1.0, 0.0, 0.0)),
                                          second=mass, k=k, l0=1.0),
              fm.JointFriction("friction", joint=contact,
                               law=fm.FrictionLaw(mu_s=mu_s, mu_k=mu_k)))
    res = fm.simulate(model, t_end=3.0, dt=1e-3)
    x = res.q[:, res.bodies["mass"]][:, 0]
    late = res.t > 1.0
    assert x[late].max() == pytest.approx(x_k + A, abs=3e-2 * A)
    assert x[late].min() == pytest.approx(x_k - A, abs=3e-2 * A)
    tp = turning_points(res.t, x)
    maxima = tp[(tp[:, 1] > x_k) & (tp[:, 0] > 0.5)]
    assert np.diff(maxima[:, 0]).mean() == pytest.approx(period, rel=1.5e-2)


def test_spherical_joint_friction_brakes_a_spinning_ball_at_the_coulomb_rate():
    """A sphere (m = 1 kg, I = 2/5 m R^2) on a spherical joint at its centre, gravity -y,
    spinning at omega0 about an oblique axis: the reaction is m g, the friction torque
    mu r m g opposes the spin, so |omega| falls linearly at mu r m g / I about a fixed
    axis and stops at t* = I omega0 / (mu r m g) (Coulomb; isotropic law)."""
    m, R, mu, r, w0 = 1.0, 0.1, 0.2, 0.02, 3.0
    rho = m / (4.0 / 3.0 * np.pi * R**3)
    axis = np.array([0.3, 0.5, 0.8]) / np.linalg.norm([0.3, 0.5, 0.8])
    ball = fm.RigidBody.sphere("ball", radius=R, rho=rho, omega0=tuple(w0 * axis))
    joint = fm.Spherical("socket", fm.ground, ball, at=(0.0, 0.0, 0.0))
    model = fm.System(gravity=(0.0, -G, 0.0))
    model.add(ball, joint, fm.JointFriction("socket-friction", joint=joint,
                                            law=fm.FrictionLaw(mu, mu), pin_radius=r))
    I_S = 0.4 * m * R**2
    rate = mu * r * m * G / I_S
    t_stop = w0 / rate
    res = fm.simulate(model, t_end=1.2 * t_stop, dt=2e-3)
    e, ed = res.q[:, 3:7], res.qd[:, 3:7]
    # omega = 2 G(e) ed (inertial): G(e) = [-e1 e0 -e3 e2; -e2 e3 e0 -e1; -e3 -e2 e1 e0]
    omega = np.array([2 * np.array([[-a[1], a[0], -a[3], a[2]], [-a[2], a[3], a[0], -a[1]],
                                    [-a[3], -a[2], a[1], a[0]]]) @ b
                      for a, b in zip(e, ed, strict=True)])
    sliding = res.t < 0.9 * t_stop
    speed = np.linalg.norm(omega, axis=1)
    err = np.abs(speed[sliding] - (w0 - rate * res.t[sliding])).max()
    assert err < 2e-3 * w0, err
    assert np.abs(omega[sliding] / speed[sliding, None] - axis).max() < 1e-6
    assert speed[-1] < 1e-3 * w0



def test_cylindrical_joint_friction_brakes_sliding_and_spin_along_the_slip_direction():
    """A shaft (m = 1 kg, radius 0.02 m) in a horizontal cylindrical joint along x,
    gravity -y, sliding at 0.5 m/s and spinning at 20 rad/s, pin radius r = 0.02 m: with
    N = m g from the reaction, Coulomb friction mu N acts against the slip vector
    v = (s', r theta') on the bore surface:

        m s'' = -mu N s' / |v|,     I_x theta'' = -mu N r (r theta') / |v|.

    Reference: that ODE by scipy's solve_ivp (rtol 1e-10), a second formulation."""
    from scipy.integrate import solve_ivp
    m, R, L, mu, r, v0, w0 = 1.0, 0.02, 0.2, 0.1, 0.02, 0.5, 20.0
    rho = m / (np.pi * R**2 * L)
    shaft = fm.RigidBody.cylinder("shaft", radius=R, length=L, rho=rho, axis="x",
                                  v0=(v0, 0.0, 0.0), omega0=(w0, 0.0, 0.0))
    joint = fm.Cylindrical("bore", fm.ground, shaft, at=(0.0, 0.0, 0.0), axis="x")
    model = fm.System(gravity=(0.0, -G, 0.0))
    model.add(shaft, joint, fm.JointFriction("bore-friction", joint=joint,
                                             law=fm.FrictionLaw(mu, mu), pin_radius=r))
    I_x, N = 0.5 * m * R**2, m * G
    res = fm.simulate(model, t_end=0.3, dt=1e-3)
    angle, s = res.joint_coordinates["bore"].T
    angle = np.unwrap(angle)                     # the joint angle is in (-pi, pi]

    def rhs(t, y):
        sd, wd = y[2], y[3]
        speed = np.hypot(sd, r * wd)
        return [sd, wd, -mu * N * sd / speed / m, -mu * N * r * (r * wd) / speed / I_x]

    ref = solve_ivp(rhs, (0.0, 0.3), [0.0, 0.0, v0, w0], t_eval=res.t, rtol=1e-10,
                    atol=1e-12).y
    np.testing.assert_allclose(s, ref[0], atol=2e-5)
    np.testing.assert_allclose(angle, ref[1], atol=2e-3)


def test_pin_friction_on_a_flexible_pendulum_balances_energy_and_matches_the_reactions():
    """A flexible rod (3 Craig-Bampton modes) swinging from a pin with friction
    mu r N, N from the reaction.  References: conservation, T + V + W_f constant
    (no structural damping; generalized-alpha's own dissipation is below 1e-5 of
    max T here); and a second formulation of the friction work,
    W_f = sum mu r |F_perp| |d theta| from the reported pin reactions and angles
    (trapezoidal), to 0.1 %."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bodies"))
    from flexcases import pendulum_cb
    mu, r = 0.1, 0.01
    beam = fm.FlexibleBody("beam", pendulum_cb(3))
    pin = fm.Revolute("pin", fm.ground, beam["pin"], axis="z")
    model = fm.System(gravity=(0, -G, 0)).add(
        beam, pin, fm.JointFriction("pin-friction", joint=pin, law=fm.FrictionLaw(mu, mu),
                                    pin_radius=r))
    res = fm.simulate(model, t_end=0.5, dt=1e-3)
    E, W = res.energy["total"], res.energy["friction_work"]
    assert W[-1] > 0.05
    assert np.abs(E + W - E[0] - W[0]).max() < 1e-5 * res.energy["kinetic"].max()
    F = res.reactions["pin"][:, :3]
    N = np.hypot(F[:, 0], F[:, 1])
    theta = np.unwrap(res.joint_coordinates["pin"][:, 0])
    W_ref = np.sum(mu * r * 0.5 * (N[1:] + N[:-1]) * np.abs(np.diff(theta)))
    assert W[-1] == pytest.approx(W_ref, rel=1e-3)
