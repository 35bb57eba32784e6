"""Contact elements with event location (flexmbs.forces.contact, flexmbs.integrate.events).

References: free flight under gravity in closed form (impact times, apex heights),
Newton's law of restitution with conservation of momentum (two spheres), Coulomb's law
for a block sliding to rest (``a = -mu_k g``), and central differences of the assembled
residual for the tangents.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.forces.contact import PinInHoleContact, SpherePlaneContact, SphereSphereContact
from flexmbs.forces.contact_law import ContactLaw
from flexmbs.forces.friction_law import FrictionLaw

from .statecheck import check_tangent

G, R = 9.81, 0.05


def bouncing_ball(e: float, h0: float):
    ball = fm.PointMass("ball", m=1.0, r0=(0.0, 0.0, h0 + R))
    floor = SpherePlaneContact("floor", first=fm.ground, second=ball, R=R,
                               law=ContactLaw(K=1e8, n=1.5, e=e))
    return fm.System(gravity=(0.0, 0.0, -G)).add(ball, floor)


def test_bouncing_ball_restitution_and_impact_times():
    """Hunt-Crossley with e = 0.8: successive apex heights drop by e^2 within 1 %, and
    each impact is located to 1e-6 s against the closed-form free flight from the
    state at which the ball left the floor."""
    e, h0 = 0.8, 0.5
    res = fm.simulate(bouncing_ball(e, h0), t_end=1.5, dt=2e-3, adaptive=True, rtol=1e-6,
                      atol=1e-9)
    imp = res.impact_table("floor")
    assert len(imp["t"]) == 3
    assert imp["t"][0] == pytest.approx(np.sqrt(2 * h0 / G), abs=1e-6)
    z, vz = res.body_q("ball")[:, 2] - R, res.qd[:, res.bodies["ball"]][:, 2]
    apex = [h0]
    for k, t_rel in enumerate(imp["t_release"][:-1]):
        i = int(np.argmin(np.abs(res.t - t_rel)))
        assert res.t[i] == pytest.approx(t_rel, abs=1e-12)
        apex.append(z[i] + vz[i] ** 2 / (2 * G))
        t_next = res.t[i] + (vz[i] + np.sqrt(vz[i] ** 2 + 2 * G * z[i])) / G
        assert imp["t"][k + 1] == pytest.approx(t_next, abs=1e-6)
    ratios = np.array(apex[1:]) / np.array(apex[:-1])
    np.testing.assert_allclose(ratios, e ** 2, rtol=1e-2)
    # the approach speed from the apex (energy); 1e-4: the Newton tolerance of the steps
    np.testing.assert_allclose(imp["v_impact"], np.sqrt(2 * G * np.array(apex)), rtol=1e-4)
    # the peak force of a Hertz impact of mass m at v: F = K d^1.5, d = (5 m v^2 / 4K)^0.4
    # is an upper bound of the damped one
    d_max = (5 * imp["v_impact"] ** 2 / (4 * 1e8)) ** 0.4
    assert np.all(imp["peak_force"] < 1e8 * d_max ** 1.5)
    assert np.all(imp["peak_force"] > 0.5 * 1e8 * d_max ** 1.5)


def two_spheres(e: float, m1: float, m2: float, v1: float, v2: float):
    a = fm.PointMass("a", m=m1, r0=(0.0, 0.0, 0.0), v0=(v1, 0.0, 0.0))
    b = fm.PointMass("b", m=m2, r0=(0.25, 0.0, 0.0), v0=(v2, 0.0, 0.0))
    c = SphereSphereContact("ab", first=a, second=b, R_P=0.1, R_Q=0.1,
                            law=ContactLaw(K=5e8, n=1.5, e=e))
    return fm.System(gravity=(0.0, 0.0, 0.0)).add(a, b, c)


@pytest.mark.parametrize("e", [1.0, 0.6])
def test_two_spheres_momentum_and_restitution(e):
    """Momentum conserved through the impact (to 1e-9 relative); the relative speed after
    it is e times the one before (Newton's law, 0.5 %)."""
    m1, m2, v1, v2 = 2.0, 3.0, 2.0, -1.0
    res = fm.simulate(two_spheres(e, m1, m2, v1, v2), t_end=0.06, dt=1e-4, adaptive=True,
                      rtol=1e-6, atol=1e-10)
    imp = res.impact_table()
    assert len(imp["t"]) == 1 and np.isfinite(imp["t_release"][0])
    assert imp["t"][0] == pytest.approx(0.05 / (v1 - v2), abs=1e-6)
    va, vb = res.qd[-1, res.bodies["a"]][0], res.qd[-1, res.bodies["b"]][0]
    p = m1 * res.qd[:, res.bodies["a"]][:, 0] + m2 * res.qd[:, res.bodies["b"]][:, 0]
    np.testing.assert_allclose(p, m1 * v1 + m2 * v2, rtol=1e-9)
    assert vb - va == pytest.approx(e * (v1 - v2), rel=5e-3)


def test_block_slides_to_rest_with_coulomb_friction():
    """A mass thrown at v0 along a plane stops after v0 / (mu_k g) s having slid
    v0^2 / (2 mu_k g) m (regularised Coulomb: within 1 %)."""
    mu, v0 = 0.3, 1.0
    block = fm.PointMass("block", m=2.0, r0=(0.0, 0.0, 0.0), v0=(v0, 0.0, 0.0))
    law = ContactLaw(K=1e7, n=1.0, e=0.5)
    weight = 2.0 * G
    block = fm.PointMass("block", m=2.0, r0=(0.0, 0.0, -weight / 1e7), v0=(v0, 0.0, 0.0))
    c = SpherePlaneContact("c", first=fm.ground, second=block, law=law,
                           friction=FrictionLaw(mu_s=mu, mu_k=mu), v_eps=1e-4,
                           friction_model="regularised")
    res = fm.simulate(fm.System(gravity=(0.0, 0.0, -G)).add(block, c), t_end=0.5,
                      dt=1e-3, output_dt=0.01)
    x = res.body_q("block")[:, 0]
    t_stop = v0 / (mu * G)
    assert x[-1] == pytest.approx(v0 ** 2 / (2 * mu * G), rel=1e-2)
    k = int(np.searchsorted(res.t, 0.5 * t_stop))
    assert res.qd[k, 0] == pytest.approx(v0 - mu * G * res.t[k], rel=1e-2)


@pytest.mark.parametrize("model", ["bristle", "regularised"])
def test_contact_tangents_against_central_differences(model):
    """Normal and friction forces of the three geometries between point masses (friction
    with Stribeck and viscous parts, on a turning normal for the spheres and the pin);
    the bristle law with its states z (random, so out of the tangent plane too) and W."""
    rng = np.random.default_rng(3)
    a = fm.PointMass("a", m=1.0, r0=(0.0, 0.0, -0.01))
    b = fm.PointMass("b", m=2.0, r0=(0.15, 0.02, 0.0))
    law = ContactLaw(K=1e3, n=1.5, e=0.7)
    fr = FrictionLaw(mu_s=0.4, mu_k=0.3, v_s=0.5)
    # bristles of z_s = 0.05 m, v_st = 0.5 m/s: the random velocities span sticking,
    # the Stribeck range and sliding
    opt = dict(law=law, friction=fr, v_eps=0.3, friction_model=model,
               stiction_deformation=0.05, stiction_velocity=0.5)
    model = fm.System().add(
        a, b,
        SpherePlaneContact("pl", first=fm.ground, second=a, **opt),
        SphereSphereContact("ss", first=a, second=b, R_P=0.1, R_Q=0.1, **opt),
        PinInHoleContact("pin", first=fm.ground.marker("hole"), second=b, c=0.1, R=0.01,
                         **opt))
    check_tangent(model, rng, scale=1e-3, rtol=1e-5, atol=1e-6)


def test_contact_problems_are_one_line_each():
    ball = fm.PointMass("ball", m=1.0)
    c = SpherePlaneContact("c", first=fm.ground, second=ball, R=-1.0, normal="w",
                           law=ContactLaw(K=0.0))
    with pytest.raises(fm.ModelError) as err:
        fm.System().add(ball, c).validate()
    msg = str(err.value)
    for part in ("contact stiffness K must be > 0", "radius R must be >= 0",
                 "normal must be 'x', 'y' or 'z'"):
        assert f"SpherePlaneContact 'c': {part}" in msg


def test_resting_ball_static_equilibrium():
    """A ball resting on the floor: static equilibrium (the held approach speed kept) at
    the Hertz penetration (m g / K)^(2/3)."""
    ball = fm.PointMass("ball", m=1.0, r0=(0.0, 0.0, R - 1e-4))
    model = fm.System(gravity=(0.0, 0.0, -G)).add(
        ball, fm.Cylindrical("guide", fm.ground, ball, at=(0.0, 0.0, R), axis="z"),
        SpherePlaneContact("floor", first=fm.ground, second=ball, R=R,
                           law=ContactLaw(K=1e6, n=1.5, e=0.8)))
    q = fm.static_equilibrium(model).q
    assert q[2] == pytest.approx(R - (G / 1e6) ** (2 / 3), abs=1e-12)


def test_elastic_hertz_impact_conserves_energy():
    """Hertz (no damping), rho_inf = 1: kinetic + gravity + contact energy
    (V = K delta^(n+1) / (n+1)) is conserved: after two bounces to 1e-5 of the drop
    energy, during the contacts (some 50 steps each) to 1e-3 (the O(h^2) error of the
    stiff phase, given back at release); the ball comes back to its drop height."""
    h0 = 0.2
    ball = fm.PointMass("ball", m=1.0, r0=(0.0, 0.0, h0 + R))
    model = fm.System(gravity=(0.0, 0.0, -G)).add(
        ball, SpherePlaneContact("floor", first=fm.ground, second=ball, R=R,
                                 law=ContactLaw(K=1e7, n=1.5)))
    res = fm.simulate(model, t_end=0.5, dt=1e-4, rho_inf=1.0, output_dt=1e-3)
    E = res.energy["total"]
    assert np.abs(E - E[0]).max() < 1e-3 * G * h0
    assert abs(E[-1] - E[0]) < 1e-5 * G * h0
    assert res.body_q("ball")[:, 2].max() == pytest.approx(h0 + R, abs=1e-4 * h0)
