"""Joints of THEORY §5.5: Jacobians/Hessians/acceleration terms against finite differences,
allowed and blocked relative motions, and the constraint counts u_g of Table 2.2."""
from __future__ import annotations

import numpy as np
import pytest

from constraints.jetcheck import Layout, check_joint, pair, random_q
from flexmbs.bodies.ground import ground
from flexmbs.constraints.cylindrical import Cylindrical
from flexmbs.constraints.fixed import Fixed
from flexmbs.constraints.helical import Helical
from flexmbs.constraints.planar import Planar
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.constraints.revolute import Revolute
from flexmbs.constraints.universal import Universal
from flexmbs.kinematics.rotation import A_of, e_from_matrix, matrix_from_axis_angle

PITCH = 0.05

JOINTS = {
    "fixed": (lambda a, b, at, ax: Fixed("J", a, b, at, ax), 6),
    "prismatic": (lambda a, b, at, ax: Prismatic("J", a, b, at, ax), 5),
    "cylindrical": (lambda a, b, at, ax: Cylindrical("J", a, b, at, ax), 4),
    "universal": (lambda a, b, at, ax: Universal("J", a, b, at, ax), 4),
    "planar": (lambda a, b, at, ax: Planar("J", a, b, at, ax), 3),
    "helical": (lambda a, b, at, ax: Helical("J", a, b, at, ax, PITCH), 5),
}


def _make(kind, rng, with_ground):
    a, b, at, ax = pair(rng, with_ground)
    joint = JOINTS[kind][0](a, b, at, ax)
    assert joint.problems() == []
    return joint


@pytest.mark.parametrize("kind", sorted(JOINTS))
@pytest.mark.parametrize("with_ground", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_jacobian_hessian_and_acceleration_term(kind, with_ground, seed):
    """G = dg/dx and H vs central differences; d2g/dt2 = G xdd + xd^T H xd vs FD in t."""
    rng = np.random.default_rng(100 * seed + len(kind))
    joint = _make(kind, rng, with_ground)
    check_joint(joint, rng)


@pytest.mark.parametrize("kind", sorted(JOINTS))
def test_constraint_count_matches_vdi_table(kind):
    """u_g from THEORY §5.5 Table 2.2 (fixed: rigid clamp, u = 6)."""
    rng = np.random.default_rng(0)
    joint = _make(kind, rng, False)
    u_g = JOINTS[kind][1]
    assert len(joint.labels) == joint.n_eq == u_g
    layout = Layout(joint.resolve())
    x = layout.random_x(rng)
    P, Q = layout.frames(x)
    assert len(joint.equations(P, Q, layout.time(x))) == u_g
    assert len(joint.coordinates(P, Q)) == len(joint.coordinate_names)


# -- semantics: place Q relative to P by (u, R_rel) and evaluate g ---------------------------
def _Rx(a):
    return matrix_from_axis_angle([1, 0, 0], a)


def _Ry(a):
    return matrix_from_axis_angle([0, 1, 0], a)


def _Rz(a):
    return matrix_from_axis_angle([0, 0, 1], a)


def _evaluate(joint, rng, u, R_rel):
    """g and joint coordinates with Q's frame at ``p_P + A_P u`` and axes ``A_P R_rel``."""
    P, Q = joint.resolve()
    qa = random_q(rng) if not getattr(P.body, "is_ground", False) else None
    A_a = np.eye(3) if qa is None else A_of(qa[3:7])
    r_a = np.zeros(3) if qa is None else qa[0:3]
    p_P, A_P = r_a + A_a @ P.s, A_a @ P.R
    A_Q = A_P @ R_rel
    A_b = A_Q @ Q.R.T
    r_b = p_P + A_P @ np.asarray(u, float) - A_b @ Q.s
    qb = np.concatenate([r_b, e_from_matrix(A_b)])
    layout = Layout((P, Q))
    x = np.concatenate(([] if qa is None else [qa]) + [qb, [0.3]])
    FP, FQ = layout.frames(x, 1)
    g = np.array([float(j.v) for j in joint.equations(FP, FQ, layout.time(x, 1))])
    c = np.array([float(j.v) for j in joint.coordinates(FP, FQ)])
    return g, c


E = np.eye(3)
SEMANTICS = {
    # kind: (allowed [(u, R, expected coordinates)], blocked [(u, R)])
    "fixed": ([((0, 0, 0), E, [])],
              [((0.1, 0, 0), E), ((0, 0.1, 0), E), ((0, 0, 0.1), E),
               ((0, 0, 0), _Rx(0.1)), ((0, 0, 0), _Ry(0.1)), ((0, 0, 0), _Rz(0.1))]),
    "prismatic": ([((0, 0, 0.7), E, [0.7]), ((0, 0, -2.0), E, [-2.0])],
                  [((0.1, 0, 0), E), ((0, 0.1, 0), E), ((0, 0, 0), _Rx(0.1)),
                   ((0, 0, 0), _Ry(0.1)), ((0, 0, 0), _Rz(0.1))]),
    "cylindrical": ([((0, 0, 0.7), _Rz(2.5), [2.5, 0.7]), ((0, 0, -1), _Rz(-1.0), [-1.0, -1])],
                    [((0.1, 0, 0), E), ((0, 0.1, 0), E), ((0, 0, 0), _Rx(0.1)),
                     ((0, 0, 0), _Ry(0.1))]),
    "universal": ([((0, 0, 0), _Rx(0.4) @ _Ry(-0.9), [0.4, -0.9]),
                   ((0, 0, 0), _Rx(-2.0) @ _Ry(1.2), [-2.0, 1.2])],
                  [((0.1, 0, 0), E), ((0, 0.1, 0), E), ((0, 0, 0.1), E), ((0, 0, 0), _Rz(0.1))]),
    "planar": ([((0.3, -0.8, 0), _Rz(3.0), [0.3, -0.8, 3.0])],
               [((0, 0, 0.1), E), ((0, 0, 0), _Rx(0.1)), ((0, 0, 0), _Ry(0.1))]),
}


@pytest.mark.parametrize("kind", sorted(SEMANTICS))
@pytest.mark.parametrize("with_ground", [False, True])
def test_allowed_motions_keep_g_zero_and_blocked_violate(kind, with_ground):
    """Reference: the definition of each joint (THEORY §5.5 table) — the freedoms it
    leaves satisfy g = 0 and reproduce the joint coordinates; each blocked motion does not."""
    rng = np.random.default_rng(7)
    joint = _make(kind, rng, with_ground)
    allowed, blocked = SEMANTICS[kind]
    for u, R, coords in allowed:
        g, c = _evaluate(joint, rng, u, R)
        np.testing.assert_allclose(g, 0.0, atol=1e-12)
        np.testing.assert_allclose(c, coords, atol=1e-12)
    for u, R in blocked:
        g, _ = _evaluate(joint, rng, u, R)
        assert np.max(np.abs(g)) > 1e-3, (u, R)


@pytest.mark.parametrize("with_ground", [False, True])
def test_helical_advances_one_pitch_per_turn_across_several_turns(with_ground):
    """Screw kinematics: s = h theta / 2 pi with theta continuous for |theta| up to 3 turns."""
    rng = np.random.default_rng(11)
    joint = _make("helical", rng, with_ground)
    for theta in np.linspace(-3 * 2 * np.pi, 3 * 2 * np.pi, 37) + 0.123:
        s = PITCH * theta / (2 * np.pi)
        g, c = _evaluate(joint, rng, (0, 0, s), _Rz(theta))
        np.testing.assert_allclose(g, 0.0, atol=1e-12)
        np.testing.assert_allclose(c, [theta, s], atol=1e-9)
        # turning without advancing (or advancing a quarter pitch too far) is blocked
        g_bad, _ = _evaluate(joint, rng, (0, 0, s + 0.25 * PITCH), _Rz(theta))
        assert abs(g_bad[4]) > 0.2 * PITCH
    g, _ = _evaluate(joint, rng, (0.1, 0, 0), E)
    assert np.max(np.abs(g)) > 1e-3


def test_helical_reports_missing_pitch():
    rng = np.random.default_rng(0)
    a, b, at, ax = pair(rng)
    problems = Helical("H", a, b, at, ax).problems()
    assert any("pitch" in p for p in problems)
    assert any("itself" in p for p in Fixed("F", b, b, at, ax).problems())
    assert Fixed("F", ground, b, at, ax).problems() == []


VALUE_JOINTS = {**JOINTS, "revolute": (lambda a, b, at, ax: Revolute("J", a, b, at, ax), 5)}


@pytest.mark.parametrize("kind", sorted(VALUE_JOINTS))
@pytest.mark.parametrize("with_ground", [False, True])
def test_coordinate_values_are_the_values_of_the_coordinate_jets(kind, with_ground):
    """``coordinate_values`` of the frames ``(p, R)``: the values of ``coordinates`` (the
    jets of the same frames), bit for bit, or None (then the jets are used)."""
    rng = np.random.default_rng(5 + len(kind))
    joint = VALUE_JOINTS[kind][0](*pair(rng, with_ground))
    layout = Layout(joint.resolve())
    P, Q = layout.frames(layout.random_x(rng))
    frames = [(F.p.v, np.column_stack([F.x.v, F.y.v, F.z.v])) for F in (P, Q)]
    values = joint.coordinate_values(*frames)
    if kind in ("fixed", "helical"):
        assert values is None
        return
    jets = [float(c.v) for c in joint.coordinates(P, Q)]
    assert len(jets) == len(joint.coordinate_names) > 0
    assert values == jets
