"""Coupling joints in motion (generalized-alpha runs of small mechanisms).

References: the gear law theta_Q = s (z_P / z_Q) theta_P and the rack law s = r theta
(definitions, closed form for a prescribed input angle omega t), and the power balance
of an ideal (lossless) transmission at constant speed, T_in omega_in + T_out omega_out
= 0, for the drive reaction; for the distance constraint the conservation of energy of
a pendulum and the limit of a slender rigid link whose mass goes to 0; for the cam the
profile itself (lift y = rho(psi)) and inverse dynamics of the follower,
m (y'' + g) = contact force, with y'' = omega^2 rho''(psi).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.bodies.ground import ground
from flexmbs.bodies.point_mass import PointMass
from flexmbs.bodies.rigid import RigidBody
from flexmbs.constraints.cam import PointOnCurve
from flexmbs.constraints.curve_contact import CurveOnCurve
from flexmbs.constraints.cylinder_on_plane import CylinderOnPlane
from flexmbs.constraints.distance import Distance
from flexmbs.constraints.double_prismatic import DoublePrismatic
from flexmbs.constraints.drives import AngularVelocityDrive
from flexmbs.constraints.gear import GearPair, mesh_forces
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.constraints.rack_pinion import RackPinion
from flexmbs.constraints.revolute import Revolute
from flexmbs.constraints.sphere_in_tube import SphereInTube
from flexmbs.constraints.sphere_on_plane import SphereOnPlane
from flexmbs.constraints.spherical import Spherical
from flexmbs.forces.external import ExternalForce, ExternalTorque
from flexmbs.simulate import prepare, simulate
from flexmbs.system.model import System


def _wheel(name, at):
    return RigidBody(name, 2.0, np.diag([0.01, 0.012, 0.02]), r0=at)


def _multiplier(prep, result, name):
    """The multiplier history of the (one-row) block ``name``."""
    rows = [i for i, lab in enumerate(prep.asm.active_row_labels) if f"'{name}'" in lab]
    assert len(rows) == 1
    return result.lam[:, rows[0]]


def _wrapped(a):
    return np.angle(np.exp(1j * a))


M = 0.004                                   # module [m]
GEARS = {   # name: (teeth, internal, centre 1, axis 1, centre 2, axis 2)
    "spur": ((20, 50), False, (0, 0, 0), (0, 0, 1), (0, M * 35, 0), (0, 0, 1)),
    "internal": ((20, 50), True, (0, 0, 0), (0, 0, 1), (0, M * 15, 0), (0, 0, 1)),
    "bevel": ((15, 30), False, (0, 0, 0.06), (0, 0, 1), (0.03, 0, 0), (1, 0, 0)),
}


@pytest.mark.parametrize("name", sorted(GEARS))
def test_gear_train_ratio_and_torque_balance(name):
    """Wheel 1 driven at omega, wheel 2 loaded by T_L: theta_2 = s (z1/z2) omega t to
    1e-10 rad over 2.5 turns of wheel 1; the drive's reaction torque is the power
    balance's -T_L omega_2 / omega_1 (rel. 1e-6 once generalized-alpha's start-up
    oscillation of the multipliers has decayed) and the gear multiplier's torques
    (mesh_forces) are -T_L on wheel 2 and the drive torque's opposite on wheel 1; the
    tooth forces split by the pressure angle and, on the bevel pair, the cone angle."""
    teeth, internal, c1, a1, c2, a2 = GEARS[name]
    c1, a1, c2, a2 = (np.array(v, dtype=float) for v in (c1, a1, c2, a2))
    w1, w2 = _wheel("w1", c1), _wheel("w2", c2)
    omega, T_L = 2 * np.pi, 3.0
    gear = GearPair("G", w1, w2, at=c1, axis=a1, second_at=c2, second_axis=a2,
                    teeth=teeth, internal=internal, module=M)
    model = System(name=f"gear_{name}")
    model.add(w1, w2, Revolute("R1", ground, w1, at=c1, axis=a1),
              Revolute("R2", ground, w2, at=c2, axis=a2), gear,
              AngularVelocityDrive("spin", joint="R1", omega=omega),
              ExternalTorque("load", at=w2, torque=tuple(T_L * a2)))
    prep = prepare(model)
    assert prep.dof.mobility == 0
    res = simulate(model, t_end=1.25, dt=5e-3, rho_inf=0.8, assembled=prep)
    ratio = (1.0 if internal else -1.0) * teeth[0] / teeth[1]
    theta2 = res.joint_coordinates["R2"][:, 0]
    np.testing.assert_allclose(_wrapped(theta2 - ratio * omega * res.t), 0.0, atol=1e-10)
    T_drive = -_multiplier(prep, res, "spin")          # torque of the drive on wheel 1
    # the multipliers' start-up oscillation of generalized-alpha has decayed after 1 s
    late = res.t > 1.0
    np.testing.assert_allclose(T_drive[late], -T_L * ratio, rtol=1e-6)
    mf = mesh_forces(gear, _multiplier(prep, res, "G")[-1])
    assert mf.torque_second == pytest.approx(-T_L, rel=1e-6)
    assert mf.torque_first == pytest.approx(-T_drive[-1], rel=1e-6)
    # tooth forces: F_t r_2 = torque on wheel 2; the separating force |F_t| tan(20 deg) is
    # radial on a spur pair and splits by the pitch cone angle of a 90 deg bevel pair,
    # tan(delta_2) = z_2 / z_1 (cone geometry)
    assert mf.tangential * M * teeth[1] / 2 == pytest.approx(mf.torque_second, rel=1e-12)
    separating = abs(mf.tangential) * np.tan(np.deg2rad(20))
    delta_2 = np.arctan2(teeth[1], teeth[0]) if name == "bevel" else 0.0
    assert mf.radial == pytest.approx(separating * np.cos(delta_2), rel=1e-12)
    assert mf.axial == pytest.approx(separating * np.sin(delta_2), rel=1e-12, abs=1e-12)


def test_rack_displacement_is_radius_times_pinion_turn():
    """Pinion driven at omega over 2 turns: rack advance r omega t (to 1e-10 m); the drive
    torque balances the rack load F: T = -F r (power balance, rel. 1e-6 after the
    start-up oscillation of the multipliers)."""
    r, omega, F = 0.05, 2 * np.pi, 40.0
    pinion = _wheel("pinion", np.zeros(3))
    rack = RigidBody("rack", 5.0, np.diag([0.01, 0.1, 0.1]), r0=(0.0, -r, 0.0))
    model = System(name="rack")
    model.add(pinion, rack, Revolute("R", ground, pinion, at=(0, 0, 0), axis="z"),
              Prismatic("S", ground, rack, at=(0, -r, 0), axis="x"),
              RackPinion("RP", pinion, rack, at=(0, 0, 0), axis="z", second_at=(0, -r, 0),
                         second_axis="x", radius=r),
              AngularVelocityDrive("spin", joint="R", omega=omega),
              ExternalForce("F", at=rack, force=(F, 0.0, 0.0)))
    prep = prepare(model)
    res = simulate(model, t_end=2.0, dt=5e-3, rho_inf=0.8, assembled=prep)
    np.testing.assert_allclose(res.joint_coordinates["S"][:, 0], r * omega * res.t, atol=1e-10)
    np.testing.assert_allclose(res.joint_coordinates["RP"][:, 0], omega * res.t, atol=1e-9)
    T_drive = -_multiplier(prep, res, "spin")
    np.testing.assert_allclose(T_drive[res.t > 1.5], -F * r, rtol=1e-6)


def _pendulum(L, m, eps):
    """Bob ``m`` [kg] released horizontally at distance ``L`` [m] from a pivot: on a
    Distance link (eps None) or on a slender rod of mass eps m (revolute + spherical)."""
    bob = PointMass("bob", m, r0=(L, 0.0, 0.0))
    model = System(gravity=(0.0, -9.81, 0.0), name="pendulum")
    if eps is None:
        model.add(bob, Distance("link", ground, bob, at=(0, 0, 0), second_at=(L, 0, 0)))
        return model
    mr = eps * m
    rod = RigidBody("rod", mr, mr * np.diag([1e-4 * L * L, L * L / 12, L * L / 12]),
                    com=(L / 2, 0, 0))
    model.add(bob, rod, Revolute("pivot", ground, rod, at=(0, 0, 0), axis="z"),
              Spherical("end", rod, bob, at=(L, 0, 0)))
    return model


def test_distance_link_is_the_massless_limit_of_a_slender_rod():
    """Bob position after 0.4 s: the rod model tends to the Distance model linearly in the
    rod's mass (error ratio 10 per decade of eps), and the Distance pendulum conserves
    energy (m g h = m v^2 / 2: 1.5e-5 relative at dt = 1 ms, rho_inf = 1; checked to
    1e-4)."""
    L, m, t_end, dt = 0.5, 1.0, 0.4, 1e-3
    ref = simulate(_pendulum(L, m, None), t_end=t_end, dt=dt, rho_inf=1.0)
    q, qd = ref.body_q("bob"), ref.qd[:, ref.bodies["bob"]]
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), L, atol=1e-10)
    np.testing.assert_allclose(0.5 * np.sum(qd**2, axis=1), -9.81 * q[:, 1], rtol=1e-4,
                               atol=1e-9)
    errs = []
    for eps in (1e-2, 1e-3):
        res = simulate(_pendulum(L, m, eps), t_end=t_end, dt=dt, rho_inf=1.0)
        errs.append(np.linalg.norm(res.body_q("bob")[-1] - q[-1]))
    assert errs[1] < 1e-3 * L                         # measured 1.04e-4 m
    assert 9.0 < errs[0] / errs[1] < 11.0             # measured 9.97


def _cam_on_slide(contact, m, y0, omega, g, t_end, dt):
    """A cam on a revolute at the origin (about z) driven at ``omega`` [rad/s] and a
    follower of mass ``m`` [kg] at ``(0, y0, 0)`` on a vertical slide, touching through
    ``contact(cam_body, follower)``; returns ``(prepared, result, joint)``."""
    cam_body = RigidBody("cam", 1.0, np.diag([1e-3, 1e-3, 2e-3]))
    follower = RigidBody("follower", m, np.diag([1e-5, 1e-5, 1e-5]), r0=(0.0, y0, 0.0))
    joint = contact(cam_body, follower)
    model = System(gravity=(0.0, -g, 0.0), name="cam")
    model.add(cam_body, follower, Revolute("R", ground, cam_body, at=(0, 0, 0), axis="z"),
              Prismatic("S", ground, follower, at=(0.0, y0, 0.0), axis="y"), joint,
              AngularVelocityDrive("spin", joint="R", omega=omega))
    prep = prepare(model)
    assert prep.dof.mobility == 0
    return prep, simulate(model, t_end=t_end, dt=dt, rho_inf=0.8, assembled=prep), joint


def test_cam_lift_follows_the_profile_and_contact_force_matches_inverse_dynamics():
    """Disc cam driven at omega, flat-bottomed follower on a vertical slide under gravity
    touching the pitch curve rho(psi) = 0.05 + 0.01 cos(psi) + 0.004 sin(2 psi) m on the
    cam's +y ray (72 samples): lift y(t) = rho(pi/2 - omega t) (to 1e-10 m on the spline,
    1e-7 m on the closed form) and contact force -lam = m (omega^2 rho'' + g) (to 2e-3 of
    its range, 1e-3 for the mean of two steps, after the start-up transient)."""
    omega, m, g = 4 * np.pi, 0.3, 9.81
    psi = np.linspace(0.0, 2 * np.pi, 72, endpoint=False)

    def rho(p):
        return 0.05 + 0.01 * np.cos(p) + 0.004 * np.sin(2 * p)

    y0 = rho(np.pi / 2)
    prep, res, cam = _cam_on_slide(
        lambda cam_body, follower: PointOnCurve(
            "cam_contact", cam_body, follower, at=(0, 0, 0), axis="z",
            second_at=(0.0, y0, 0.0), curve="polar", curve_x=psi, curve_y=rho(psi)),
        m, y0, omega, g, t_end=0.5, dt=1e-3)
    psi_t = np.pi / 2 - omega * res.t
    y = res.body_q("follower")[:, 1]
    spline = cam.spline()
    np.testing.assert_allclose(y, spline(psi_t), atol=1e-10)
    np.testing.assert_allclose(y, rho(psi_t), atol=1e-7)   # spline error: 1.1e-8 m
    F = -_multiplier(prep, res, "cam_contact")     # its in-plane row: redundant, dropped
    F_ref = m * (omega**2 * spline(psi_t, 2) + g)
    # the spline's third derivative jumps at its knots, which excites an alternating
    # (step-to-step) oscillation of generalized-alpha's multipliers; the mean of two
    # consecutive steps removes it (measured: raw 9.9e-4, mean 4.0e-4 of the force range
    # at dt = 1 ms; 1.8e-4 at 0.5 ms)
    late = res.t > 0.1
    scale = np.ptp(F_ref)
    assert np.max(np.abs(F[late] - F_ref[late])) < 2e-3 * scale
    mean_err = 0.5 * (F[1:] + F[:-1] - F_ref[1:] - F_ref[:-1])
    assert np.max(np.abs(mean_err[late[1:]])) < 1e-3 * scale


SLOPE = np.deg2rad(30.0)
INCLINE = {   # kind: joint of a 2 kg body on a frictionless incline through the origin
    "sphere_on_plane": lambda b, n, t: SphereOnPlane("J", ground, b, at=(0, 0, 0), axis=n),
    "double_prismatic": lambda b, n, t: DoublePrismatic("J", ground, b, at=(0, 0, 0), axis=n),
    "sphere_in_tube": lambda b, n, t: SphereInTube("J", ground, b, at=(0, 0, 0), axis=t),
    "cylinder_on_plane": lambda b, n, t: CylinderOnPlane("J", ground, b, at=(0, 0, 0), axis=n,
                                                         second_axis=(0.0, 0.0, 1.0)),
}


@pytest.mark.parametrize("kind", sorted(INCLINE))
def test_body_slides_down_a_frictionless_incline(kind):
    """Lower pairs in motion (label rows, compiled path): a body released on a 30 deg
    incline (plane normal n, line of steepest descent t) moves by g sin(a) t^2 / 2 down
    the slope (to 1e-9 m after 0.5 s: generalized-alpha integrates a constant
    acceleration exactly) and stays on it; on the plane the normal force is m g cos(a)
    (the multiplier lam of z_P . d, force -lam n on the body: lam = -m g cos(a))."""
    g, m, T = 9.81, 2.0, 0.5
    t_dir = np.array([np.cos(SLOPE), -np.sin(SLOPE), 0.0])
    n_dir = np.array([np.sin(SLOPE), np.cos(SLOPE), 0.0])
    body = RigidBody("b", m, np.diag([0.02, 0.03, 0.04]))
    model = System(gravity=(0.0, -g, 0.0), name=f"incline_{kind}")
    model.add(body, INCLINE[kind](body, n_dir, t_dir))
    prep = prepare(model)
    res = simulate(model, t_end=T, dt=5e-3, rho_inf=0.8, assembled=prep)
    r = res.body_q("b")[:, :3]
    if kind == "sphere_on_plane":
        np.testing.assert_allclose(_multiplier(prep, res, "J"), -m * g * np.cos(SLOPE),
                                   rtol=1e-9)
    np.testing.assert_allclose(r @ t_dir, 0.5 * g * np.sin(SLOPE) * res.t**2, atol=1e-9)
    np.testing.assert_allclose(r @ n_dir, 0.0, atol=1e-12)


def test_eccentric_disc_on_a_roller_follower_curve_on_curve():
    """Curve on curve: an eccentric disc (radius R about a point e from the pivot, a polar
    spline of 180 samples about the pivot) driven at omega lifts a roller (radius r, a
    constant polar curve) on a vertical slide: y = e sin(phi) + sqrt((R + r)^2 - e^2
    cos^2(phi)) (closed form of the centre distance R + r), and the contact force's
    vertical part -lam n_y balances m (y'' + g) (inverse dynamics; to 1e-3 of its range
    after the start-up transient)."""
    R, e, r, omega, m, g = 0.04, 0.01, 0.01, 2 * np.pi, 0.2, 9.81
    psi = np.linspace(-np.pi, np.pi, 180, endpoint=False)
    disc = e * np.cos(psi) + np.sqrt(R**2 - e**2 * np.sin(psi) ** 2)
    y0 = np.sqrt((R + r) ** 2 - e**2)
    prep, res, _ = _cam_on_slide(
        lambda cam_body, roller: CurveOnCurve(
            "contact", cam_body, roller, at=(0, 0, 0), axis="z", second_at=(0.0, y0, 0.0),
            curve_x=psi, curve_y=disc, second_curve_x=psi,
            second_curve_y=np.full_like(psi, r)),
        m, y0, omega, g, t_end=0.6, dt=2e-3)
    phi = omega * res.t
    L2, s, c = (R + r) ** 2, np.sin(phi), np.cos(phi)
    D = L2 - e**2 * c**2
    y_ref = e * s + np.sqrt(D)
    y = res.body_q("follower")[:, 1]
    np.testing.assert_allclose(y, y_ref, atol=1e-9)         # measured 7.4e-11 m
    D1, D2 = e**2 * omega * np.sin(2 * phi), 2 * e**2 * omega**2 * np.cos(2 * phi)
    ydd = -e * omega**2 * s + D2 / (2 * np.sqrt(D)) - D1**2 / (4 * D**1.5)
    n_y = (y_ref - e * s) / (R + r)                 # disc centre -> roller centre
    F_y = -_multiplier(prep, res, "contact") * n_y
    F_ref = m * (ydd + g)
    late = res.t > 0.2
    err = np.max(np.abs(F_y[late] - F_ref[late])) / np.ptp(F_ref)
    assert err < 1e-3                                       # measured 2.2e-4 (h = 2 ms)


def test_planetary_train_follows_the_willis_equation():
    """Sun (z_s = 20) driven at omega, ring (z_r = 60) fixed, planet (z_p = 20) on a
    rotating carrier: the carrier turns at omega z_s / (z_s + z_r) and the planet at
    omega_c - (omega - omega_c) z_s / z_p (Willis), to 1e-9 rad over one carrier turn —
    the gear pairs measure the wheels' turns relative to the moving carrier."""
    zs, zp, zr, m_ = 20, 20, 60, 0.002
    omega = 2 * np.pi
    c_p = np.array([0.0, m_ * (zs + zp) / 2, 0.0])          # planet centre at t = 0
    sun, arm = _wheel("sun", np.zeros(3)), _wheel("arm", np.zeros(3))
    planet = _wheel("planet", c_p)
    model = System(name="planetary")
    model.add(sun, arm, planet,
              Revolute("Rs", ground, sun, at=(0, 0, 0), axis="z"),
              Revolute("Ra", ground, arm, at=(0, 0, 0), axis="z"),
              Revolute("Rp", arm, planet, at=c_p, axis="z"),
              GearPair("sun_planet", sun, planet, at=(0, 0, 0), axis="z", second_at=c_p,
                       teeth=(zs, zp)),
              GearPair("planet_ring", planet, ground, at=c_p, axis="z", second_at=(0, 0, 0),
                       teeth=(zp, zr), internal=True),
              AngularVelocityDrive("spin", joint="Rs", omega=omega))
    prep = prepare(model)
    assert prep.dof.mobility == 0 and prep.dof.redundant == ()
    omega_c = omega * zs / (zs + zr)
    res = simulate(model, t_end=2 * np.pi / omega_c, dt=1e-2, rho_inf=0.8, assembled=prep)
    arm_angle = res.joint_coordinates["Ra"][:, 0]
    np.testing.assert_allclose(_wrapped(arm_angle - omega_c * res.t), 0.0, atol=1e-9)
    omega_p = omega_c - (omega - omega_c) * zs / zp        # absolute planet rate
    planet_rel = res.joint_coordinates["Rp"][:, 0]         # planet relative to the arm
    np.testing.assert_allclose(_wrapped(planet_rel - (omega_p - omega_c) * res.t), 0.0,
                               atol=1e-9)
