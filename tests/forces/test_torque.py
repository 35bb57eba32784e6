"""Generalized torques on Euler parameters (flexmbs.kinematics.torque)."""
from __future__ import annotations

import numpy as np
import pytest
from constraints.jetcheck import Layout, context, fd_gradient, random_e

from flexmbs.bodies.rigid import RigidBody
from flexmbs.forces.external import ExternalForce
from flexmbs.kinematics.rotation import A_of
from flexmbs.kinematics.torque import Q_e_body, Q_e_inertial, dQ_e_dm_body, dQ_e_dm_inertial


@pytest.mark.parametrize("fun", [Q_e_inertial, Q_e_body])
def test_derivatives_against_central_differences(fun):
    rng = np.random.default_rng(0)
    e, m = rng.normal(size=4), rng.normal(size=3)      # any e: Q_e is linear in e
    _, dQ = fun(e, m)
    np.testing.assert_allclose(dQ, fd_gradient(lambda y: fun(y, m)[0], e), atol=1e-8)
    dm = dQ_e_dm_inertial(e) if fun is Q_e_inertial else dQ_e_dm_body(e)
    np.testing.assert_allclose(dm, fd_gradient(lambda y: fun(e, y)[0], m), atol=1e-8)


def test_couple_of_forces_equals_torque():
    """A couple F at p1 and -F at p2 is the torque m = (p1 - p2) x F (statics); its
    generalized force on e (from the virtual work of the two forces) equals 2 G^T m
    and, in body components m' = A^T m, 2 L^T m', on the tangent space of |e| = 1 (the
    component along e is taken by the normalisation constraint's multiplier)."""
    rng = np.random.default_rng(1)
    b = RigidBody("b", 1.0, np.eye(3) * 0.1)
    s1, s2, F = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    e = random_e(rng)
    x = np.concatenate([rng.normal(size=3), e, [0.0]])
    xd = np.zeros(8)
    xd[-1] = 1.0
    Q = np.zeros(8)
    for s, f in ((s1, F), (s2, -F)):
        el = ExternalForce("f", b.marker("p", s), f)
        Q += el.contribution(context(Layout(el.resolve()), x, xd, 1)).Q
    A = A_of(e)
    m = np.cross(A @ (s1 - s2), F)
    np.testing.assert_allclose(Q[0:3], 0.0, atol=1e-12)
    T = np.eye(4) - np.outer(e, e)
    Q_in, Q_b = Q_e_inertial(e, m)[0], Q_e_body(e, A.T @ m)[0]
    assert Q_in @ e == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(T @ Q[3:7], Q_in, atol=1e-12)
    np.testing.assert_allclose(T @ Q[3:7], Q_b, atol=1e-12)
