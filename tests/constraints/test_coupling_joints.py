"""Coupling joints (gear pair, rack and pinion, distance) and the remaining VDI lower
pairs (double prismatic, sphere on plane, cylinder on plane, sphere in tube).

References: central differences for Jacobians, Hessians and the acceleration term
(tests/constraints/jetcheck.py); THEORY §5.5 Table 2.2 (VDI 2156) for the constraint
count u_g and the freedom f_g = 6 - u_g, the latter measured by the rank test of a
system (a free rigid body on the ground through the joint); for the point on a curve
(4) or a surface (5) and the distance (5) the freedoms of the point's motion plus the
three rotations; for the couplings the mobility of the mechanism they close (two wheels
on revolutes: 2 - 1 = 1).
"""
from __future__ import annotations

import numpy as np
import pytest

from constraints.jetcheck import check_joint, pair
from flexmbs.bodies.ground import ground
from flexmbs.bodies.rigid import RigidBody
from flexmbs.constraints.cam import PointOnCurve
from flexmbs.constraints.curve_contact import CurveOnCurve
from flexmbs.constraints.cylinder_on_plane import CylinderOnPlane
from flexmbs.constraints.distance import Distance
from flexmbs.constraints.double_prismatic import DoublePrismatic
from flexmbs.constraints.gear import GearPair
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.constraints.rack_pinion import RackPinion
from flexmbs.constraints.revolute import Revolute
from flexmbs.constraints.sphere_in_tube import SphereInTube
from flexmbs.constraints.sphere_on_plane import SphereOnPlane
from flexmbs.constraints.surface import PointOnSurface
from flexmbs.kinematics.rotation import frame_from_axis
from flexmbs.simulate import prepare
from flexmbs.system.model import System

#: a disc cam's pitch curve rho(psi) (rho(0) = 1.3 m) and a track's / surface's grid
PSI = np.linspace(0.0, 2 * np.pi, 24, endpoint=False)
GRID = np.linspace(-4.0, 4.0, 17)


def _normal_to(rng, a):
    b = np.cross(a, rng.normal(size=3))
    return b / np.linalg.norm(b)


#: kind: (maker(a, b, at, axis, rng), u_g of the VDI table or of the coupling)
JOINTS = {
    "double_prismatic": (lambda a, b, at, ax, rng: DoublePrismatic("J", a, b, at, ax), 4),
    "sphere_on_plane": (lambda a, b, at, ax, rng: SphereOnPlane("J", a, b, at, ax), 1),
    "sphere_in_tube": (lambda a, b, at, ax, rng: SphereInTube("J", a, b, at, ax), 2),
    "cylinder_on_plane": (lambda a, b, at, ax, rng: CylinderOnPlane(
        "J", a, b, at, ax, second_axis=_normal_to(rng, ax)), 2),
    "distance": (lambda a, b, at, ax, rng: Distance(
        "J", a, b, at, second_at=at + rng.normal(size=3)), 1),
    "gear": (lambda a, b, at, ax, rng: GearPair(
        "J", a, b, at, ax, second_at=at + rng.normal(size=3), second_axis=rng.normal(size=3),
        teeth=(3, 7)), 1),
    "internal_gear": (lambda a, b, at, ax, rng: GearPair(
        "J", a, b, at, ax, second_at=at + rng.normal(size=3), second_axis=ax,
        teeth=(2, 5), internal=True), 1),
    "rack_pinion": (lambda a, b, at, ax, rng: RackPinion(
        "J", a, b, at, ax, second_at=at + rng.normal(size=3),
        second_axis=_normal_to(rng, ax), radius=0.03), 1),
    "cam_polar": (lambda a, b, at, ax, rng: PointOnCurve(
        "J", a, b, at, ax, second_at=at + 1.3 * frame_from_axis(ax)[:, 0], curve="polar",
        curve_x=PSI, curve_y=1.0 + 0.3 * np.cos(PSI) + 0.1 * np.sin(2 * PSI)), 2),
    "cam_graph": (lambda a, b, at, ax, rng: PointOnCurve(
        "J", a, b, at, ax, curve="graph", curve_x=GRID, curve_y=0.2 * np.sin(GRID)), 2),
    "curve_on_curve": (lambda a, b, at, ax, rng: CurveOnCurve(
        "J", a, b, at, ax, second_at=at + 1.5 * frame_from_axis(ax)[:, 0], curve_x=PSI,
        curve_y=1.0 + 0.2 * np.cos(PSI), second_curve_x=PSI,
        second_curve_y=0.5 + 0.05 * np.sin(2 * PSI)), 1),
    "point_on_surface": (lambda a, b, at, ax, rng: PointOnSurface(
        "J", a, b, at, ax, surface_x=GRID, surface_y=GRID,
        surface_z=0.1 * np.outer(np.sin(GRID), np.cos(0.5 * GRID))), 1),
}


def _make(kind, rng, with_ground):
    a, b, at, ax = pair(rng, with_ground)
    joint = JOINTS[kind][0](a, b, at, ax / np.linalg.norm(ax), rng)
    assert joint.problems() == []
    return joint


@pytest.mark.parametrize("kind", sorted(JOINTS))
@pytest.mark.parametrize("with_ground", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_jacobian_hessian_and_acceleration_term(kind, with_ground, seed):
    """G = dg/dx and H vs central differences; d2g/dt2 = G xdd + xd^T H xd vs FD in t
    (at random states, where the couplings' rows are not at their zero; small tooth counts
    keep the third derivatives, hence the error of the differences in t, moderate)."""
    rng = np.random.default_rng(100 * seed + len(kind))
    joint = _make(kind, rng, with_ground)
    # the gear's phi has large third derivatives at random states (the centre line
    # nearly along a wheel's axis): the second difference in t (step 1e-4) is then only
    # good to ~1e-4 relative
    check_joint(joint, rng, acc_rtol=1e-3 if "gear" in kind else 1e-5)


ONE_BODY = ("double_prismatic", "sphere_on_plane", "sphere_in_tube", "cylinder_on_plane",
               "distance", "cam_polar", "cam_graph", "point_on_surface", "curve_on_curve")


@pytest.mark.parametrize("kind", ONE_BODY)
def test_freedom_of_a_body_on_the_ground_matches_the_vdi_table(kind):
    """Rank test of G for one free rigid body on the ground: mobility f_g = 6 - u_g (VDI
    table for the lower pairs; a point on a curve 4, on a surface 5, a distance 5)."""
    rng = np.random.default_rng(3)
    body = RigidBody("b", 2.0, np.diag([0.1, 0.2, 0.3]), r0=rng.normal(size=3))
    joint = JOINTS[kind][0](ground, body, rng.normal(size=3), np.array([0.3, -0.5, 0.8]), rng)
    u_g = JOINTS[kind][1]
    assert joint.n_eq == u_g
    model = System(name="vdi")
    model.add(body, joint)
    report = prepare(model).dof
    assert report.redundant == ()
    assert report.mobility == report.grubler == 6 - u_g


def _wheel(name, at, m=1.0):
    return RigidBody(name, m, np.diag([0.01, 0.01, 0.02]), r0=at)


@pytest.mark.parametrize("internal", [False, True])
def test_gear_pair_closes_two_revolutes_to_one_freedom(internal):
    """Two wheels on revolutes to the ground (2 freedoms) coupled by a gear pair: 1."""
    c1, c2 = np.zeros(3), np.array([0.0, 0.1, 0.0])
    w1, w2 = _wheel("w1", c1), _wheel("w2", c2)
    model = System(name="gears")
    model.add(w1, w2, Revolute("R1", ground, w1, at=c1, axis="z"),
              Revolute("R2", ground, w2, at=c2, axis="z"),
              GearPair("G", w1, w2, at=c1, axis="z", second_at=c2, teeth=(20, 40),
                       internal=internal))
    report = prepare(model).dof
    assert report.mobility == report.grubler == 1 and report.redundant == ()


def test_rack_pinion_closes_a_revolute_and_a_prismatic_to_one_freedom():
    c = np.zeros(3)
    pinion, rack = _wheel("pinion", c), _wheel("rack", np.array([0.0, -0.05, 0.0]))
    model = System(name="rack")
    model.add(pinion, rack, Revolute("R", ground, pinion, at=c, axis="z"),
              Prismatic("S", ground, rack, at=rack.r0, axis="x"),
              RackPinion("RP", pinion, rack, at=c, axis="z", second_at=rack.r0,
                         second_axis="x", radius=0.05))
    report = prepare(model).dof
    assert report.mobility == report.grubler == 1 and report.redundant == ()


@pytest.mark.parametrize("joint, message", [
    (lambda a, b: GearPair("G", a, b, at=(0, 0, 0), axis="z", second_at=(0, 0, 0.1),
                           teeth=(20, 40)), "along the first wheel's axis"),
    (lambda a, b: GearPair("G", a, b, at=(0, 0, 0), axis="z", second_at=(0, 1, 0),
                           teeth=(20, 40.5)), "teeth must be two positive integers"),
    (lambda a, b: RackPinion("R", a, b, at=(0, 0, 0), axis="z", second_at=(0, 1, 0),
                             second_axis="z", radius=0.1), "must be normal"),
    (lambda a, b: RackPinion("R", a, b, at=(0, 0, 0), axis="z", second_axis="x"),
     "radius must be"),
    (lambda a, b: Distance("D", a, b, at=(0, 0, 0)), "coincide"),
    (lambda a, b: CylinderOnPlane("C", a, b, at=(0, 0, 0), axis="z"), "second_axis"),
])
def test_mistakes_are_one_line_naming_the_joint(joint, message):
    body = RigidBody("b", 1.0, np.eye(3))
    problems = joint(ground, body).problems()
    assert len(problems) == 1 and message in problems[0] and "'" in problems[0]
