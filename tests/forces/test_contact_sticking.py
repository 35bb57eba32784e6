"""Bristle (LuGre) friction of contacts (flexmbs.forces.contact, friction_model "bristle").

A sphere that cannot roll (a point mass of radius R) rests through a SpherePlaneContact
on a plane inclined by ``theta`` (gravity tilted in the plane's frame).  References: the
bristle equilibrium ``z_t = F_t / (sigma0 F_n) = tan(theta) z_s / mu_s`` (statics of the
law) and Coulomb sliding ``a = g (sin(theta) - mu_k cos(theta))`` (closed form), with
the energy balance ``E + W_f = const`` (conservation law) for the friction work.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.forces.contact import SpherePlaneContact
from flexmbs.forces.contact_law import ContactLaw
from flexmbs.forces.friction_law import FrictionLaw

G, R, M, K = 9.81, 0.05, 2.0, 1e7
MU_S, MU_K, Z_S = 0.5, 0.4, 1e-5


def incline(tan_theta: float, e: float | None = 0.5, model: str = "bristle"):
    """The sphere at the static penetration ``M g cos(theta) / K`` of a linear law."""
    theta = np.arctan(tan_theta)
    g = (G * np.sin(theta), 0.0, -G * np.cos(theta))     # downhill: +x
    delta = M * G * np.cos(theta) / K
    ball = fm.PointMass("ball", m=M, r0=(0.0, 0.0, R - delta))
    c = SpherePlaneContact("c", first=fm.ground, second=ball, R=R,
                           law=ContactLaw(K=K, n=1.0, e=e),
                           friction=FrictionLaw(mu_s=MU_S, mu_k=MU_K),
                           stiction_deformation=Z_S, friction_model=model)
    return fm.System(gravity=g).add(ball, c)


def test_sphere_sticks_on_an_incline_below_mu_s():
    """tan(theta) = 0.4 < mu_s = 0.5: over 10 s the sphere moves less than the stated
    tolerance 2 z_s = 2e-5 m (the bristle deflection plus the pre-sliding slip of the
    step load at t = 0), the bristles settle at the equilibrium tan(theta) z_s / mu_s =
    8e-6 m (0.1 %), and nothing drifts over the last 5 s (< 1e-10 m)."""
    tan_theta = 0.4
    res = fm.simulate(incline(tan_theta), t_end=10.0, dt=2e-3, output_dt=0.05)
    x = res.body_q("ball")[:, 0]
    z = res.states("c")[:, 1:4]
    assert np.abs(x).max() < 2 * Z_S
    assert z[-1, 0] == pytest.approx(tan_theta * Z_S / MU_S, rel=1e-3)
    assert np.abs(z[-1, 1:]).max() < 1e-12
    late = res.t >= 5.0
    assert np.abs(x[late] - x[-1]).max() < 1e-10
    assert np.abs(z[late, 0] - z[-1, 0]).max() < 1e-10


def test_regularised_friction_creeps_where_bristles_stick():
    """An incline of tan(theta) = 0.3 with the regularised law (v_eps = 1e-4 m/s, mu = mu_k
    for v > 0): the sphere creeps at the speed where mu_k v / sqrt(v^2 + v_eps^2) =
    tan(theta), v = v_eps r / sqrt(1 - r^2) with r = tan(theta) / mu_k (1 %): 1.1e-3 m in
    10 s, far beyond the bristles' 2 z_s (the reason for the bristle default)."""
    res = fm.simulate(incline(0.3, model="regularised"), t_end=1.0, dt=2e-3,
                      output_dt=0.05)
    x = res.body_q("ball")[:, 0]
    speed = (x[-1] - x[res.t >= 0.5][0]) / (res.t[-1] - 0.5)
    r = 0.3 / MU_K
    assert speed == pytest.approx(1e-4 * r / np.sqrt(1 - r * r), rel=1e-2)


def test_sphere_slides_above_mu_s_with_coulomb_acceleration():
    """tan(theta) = 0.7 > mu_s: it slides with a = g (sin(theta) - mu_k cos(theta)) (0.1 %
    between 0.5 s and 1 s), and with an undamped normal law the total energy plus the
    friction work is constant (1e-6 of the work)."""
    tan_theta = 0.7
    theta = np.arctan(tan_theta)
    res = fm.simulate(incline(tan_theta, e=None), t_end=1.0, dt=1e-3, output_dt=0.05)
    vx = res.qd[:, res.bodies["ball"]][:, 0]
    i, j = np.searchsorted(res.t, 0.5), len(res.t) - 1
    a = (vx[j] - vx[i]) / (res.t[j] - res.t[i])
    assert a == pytest.approx(G * (np.sin(theta) - MU_K * np.cos(theta)), rel=1e-3)
    E, W = res.energy["total"], res.energy["friction_work"]
    assert W[-1] > 0.0
    assert np.abs(E + W - E[0] - W[0]).max() < 1e-6 * W[-1]


def test_oblique_elastic_bounce_loses_the_coulomb_impulse():
    """A sphere dropped from 0.2 m with 3 m/s along an (elastic Hertz) floor, sliding all
    through the impact: the tangential speed drops by mu_k times the normal impulse per
    mass, mu_k (2 v_n + g t_c) with t_c the contact time (0.1 %); the bristles, following
    their rate while the contact is open (to the steady sliding deflection mu_k z_s / mu_s,
    1e-3) and are reset at the impact, stay below z_s; E + W_f is constant (5e-4 of W_f:
    the step error through the impact)."""
    h, vx0 = 0.2, 3.0
    ball = fm.PointMass("ball", m=M, r0=(0.0, 0.0, R + h), v0=(vx0, 0.0, 0.0))
    c = SpherePlaneContact("c", first=fm.ground, second=ball, R=R,
                           law=ContactLaw(K=1e8, n=1.5),
                           friction=FrictionLaw(mu_s=MU_S, mu_k=MU_K),
                           stiction_deformation=Z_S)
    res = fm.simulate(fm.System(gravity=(0.0, 0.0, -G)).add(ball, c), t_end=0.3,
                      dt=1e-3, adaptive=True, rtol=1e-6, atol=1e-9)
    imp = res.impact_table("c")
    assert len(imp["t"]) == 1 and np.isfinite(imp["t_release"][0])
    v_n = np.sqrt(2 * G * h)
    vx = res.qd[:, res.bodies["ball"]][:, 0]
    t_c = imp["t_release"][0] - imp["t"][0]
    assert vx[-1] == pytest.approx(vx0 - MU_K * (2 * v_n + G * t_c), rel=1e-3)
    z = res.states("c")[:, 1:4]
    assert np.all(np.isfinite(z)) and np.abs(z).max() < Z_S
    k = int(np.flatnonzero(res.t == imp["t"][0])[0])     # recorded after the reset
    assert z[k - 1, 0] == pytest.approx(MU_K * Z_S / MU_S, rel=1e-3)
    assert np.all(z[k] == 0.0)
    E, W = res.energy["total"], res.energy["friction_work"]
    assert np.abs(E + W - E[0] - W[0]).max() < 5e-4 * W[-1]
