"""Revolute with radial clearance (flexmbs.system.clearance) in a rigid slider-crank:
crank 0.1 m at 30 rad/s, rod 0.4 m, slider 0.5 kg, the clearance at the piston pin.

References: the ideal joint (a second formulation of the same mechanism) for zero
clearance, where the pin sits ``delta = (F / K)^(1/n)`` off centre under the ideal
joint's radial reaction ``F``; step refinement for a clearance of 0.1 mm.
"""
from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.forces.contact_law import ContactLaw
from flexmbs.forces.friction_law import FrictionLaw
from flexmbs.system.clearance import ClearanceRevolute

OMEGA, A, B = 30.0, 0.1, 0.4


def slider_crank(c: float | None, K: float = 1e9):
    """``c = None``: the ideal pin (a spherical joint: the slider is a point mass)."""
    crank = fm.RigidBody.box("crank", (A, 0.01, 0.01), 7850.0, com=(A / 2, 0, 0),
                             omega0=(0, 0, OMEGA))
    rod = fm.RigidBody.box("rod", (B, 0.01, 0.01), 7850.0, com=(B / 2, 0, 0), r0=(A, 0, 0),
                           v0=(0, A * OMEGA, 0), omega0=(0, 0, -A * OMEGA / B))
    slider = fm.PointMass("slider", m=0.5, r0=(A + B, 0, 0))
    pin = (fm.Spherical("C", rod, slider, at=(A + B, 0, 0)) if c is None else
           ClearanceRevolute("C", rod, slider, c=c, R=0.005, at=(A + B, 0, 0), axis="z",
                             law=ContactLaw(K=K, n=1.5, e=0.7),
                             friction=FrictionLaw(mu_s=0.1, mu_k=0.1)))
    return fm.System(gravity=(0, -9.81, 0)).add(
        crank, rod, slider, pin,
        fm.Revolute("A", fm.ground, crank, at=(0, 0, 0), axis="z"),
        fm.Revolute("B", crank, rod, at=(A, 0, 0), axis="z"),
        fm.Cylindrical("D", fm.ground, slider, at=(A + B, 0, 0), axis="x"),
        fm.AngularVelocityDrive("motor", joint="A", omega=OMEGA))


def test_zero_clearance_matches_the_ideal_revolute():
    """Slider positions within the Hertz offset ``(F_max / K)^(2/3)`` of the ideal pin's
    largest radial reaction, and the difference falls as ``K^(-2/3)`` (10x stiffer:
    4.64x smaller, within 15 %)."""
    ideal = fm.simulate(slider_crank(None), t_end=0.1, dt=1e-4, output_dt=1e-3)
    x0 = ideal.body_q("slider")[:, 0]
    F_max = np.linalg.norm(ideal.reactions["C"][:, :2], axis=1).max()
    diff = {}
    for K in (1e9, 1e10):
        res = fm.simulate(slider_crank(0.0, K), t_end=0.1, dt=1e-4, output_dt=1e-3)
        diff[K] = np.abs(res.body_q("slider")[:, 0] - x0).max()
        assert diff[K] <= (F_max / K) ** (2 / 3)
    assert diff[1e9] / diff[1e10] == pytest.approx(10 ** (2 / 3), rel=0.15)


def test_clearance_slider_crank_converges_under_step_refinement():
    """c = 0.1 mm: the pin flies and hits twice in 0.03 s; halving the step three times,
    the largest change of the slider position shrinks by at least 2x per halving, and
    the impacts (time, approach speed) agree to 1e-6 s and 0.5 %."""
    runs = [fm.simulate(slider_crank(1e-4), t_end=0.03, dt=dt, output_dt=1e-3)
            for dt in (1e-4, 5e-5, 2.5e-5, 1.25e-5)]
    x = [r.body_q("slider")[:, 0] for r in runs]
    changes = [np.abs(a - b).max() for a, b in pairwise(x)]
    assert all(c1 < 0.5 * c0 for c0, c1 in pairwise(changes)), changes
    tables = [r.impact_table("C") for r in runs]
    assert all(len(t["t"]) == 2 for t in tables)
    np.testing.assert_allclose(tables[0]["t"][0], tables[-1]["t"][0], atol=1e-6)
    np.testing.assert_allclose(tables[0]["v_impact"], tables[-1]["v_impact"], rtol=5e-3)


def test_rigid_pendulum_on_a_clearance_joint_with_axial_rows():
    """Both sides with axes: the clearance joint adds the planar rows (pin axis parallel,
    pin in the hole's mid-plane).  A bar pendulum (0.5 m, released at 60 deg) hanging on
    a zero-clearance pin follows the ideal revolute: its tip within 1.5 x the Hertz offset
    (F_max / K)^(2/3) of the ideal pivot's largest reaction (the offset also turns the
    bar), and the pin's axial and tilting rows hold to 1e-10."""
    def pendulum(pin):
        bar = fm.RigidBody.box("bar", (0.5, 0.02, 0.02), 7850.0, com=(0.25, 0, 0),
                               R0=np.array([[0.5, -np.sqrt(0.75), 0], [np.sqrt(0.75), 0.5, 0],
                                            [0, 0, 1.0]]))
        return fm.System(gravity=(0, -9.81, 0)).add(bar, pin(bar))

    ideal = fm.simulate(pendulum(lambda b: fm.Revolute("O", fm.ground, b, at=(0, 0, 0),
                                                        axis="z")),
                        t_end=0.3, dt=1e-3, output_dt=1e-2)
    K = 1e9
    loose = fm.simulate(pendulum(lambda b: ClearanceRevolute(
        "O", fm.ground, b, c=0.0, at=(0, 0, 0), axis="z", law=ContactLaw(K=K, e=0.8))),
        t_end=0.3, dt=1e-3, output_dt=1e-2)
    assert [j.name for j in loose.extra["model"].joints] == ["O.axial"]
    F_max = np.linalg.norm(ideal.reactions["O"][:, :3], axis=1).max()

    def tip(res):
        from flexmbs.kinematics.rotation import A_of
        return np.array([q[:3] + A_of(q[3:7]) @ [0.5, 0, 0] for q in res.body_q("bar")])
    assert np.abs(tip(loose) - tip(ideal)).max() < 1.5 * (F_max / K) ** (2 / 3)
    assert np.abs(loose.body_q("bar")[:, 2]).max() < 1e-10
