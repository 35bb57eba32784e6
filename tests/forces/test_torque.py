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


def test_torque_on_a_flexible_body_frame_equals_a_marker_without_elastic_rotation():
    import flexmbs as fm
    """``ExternalTorque(at=beam)`` (a flexible body itself: a marker on its floating
    frame, which used to end in a traceback) works on the frame's rotation only.  Second
    formulation: the flexible-marker path (``Q = J_R^T m``, ``J_R = [0, 2 G(e), A Psi]``)
    on a marker with ``Psi = 0`` and ``Phi = 0`` at the origin gives the same residual
    and tangent at random states, inertial and body-frame torques."""
    import sys
    from pathlib import Path

    from flexmbs.bodies.marker import Marker
    from flexmbs.system.assembly import AssembledSystem
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bodies"))
    from flexcases import pendulum_cb
    beam = fm.FlexibleBody("beam", pendulum_cb(3))
    n_e = beam.n_coords - 7
    zero_psi = Marker("frame0", beam, np.zeros(3), np.eye(3), np.zeros((3, n_e)),
                      np.zeros((3, n_e)))
    for frame in ("inertial", "body"):
        res = []
        for at in (beam, zero_psi):
            model = fm.System(gravity=(0, 0, 0)).add(
                fm.Revolute("pin", fm.ground, beam["pin"], axis="z"),
                fm.ExternalTorque("drive", at=at, torque=(0.1, -0.2, 0.3), frame=frame))
            asm = AssembledSystem(model)
            r = np.random.default_rng(7)
            q = asm.initial_q() + 1e-2 * r.normal(size=asm.n_q)
            q[3:7] /= np.linalg.norm(q[3:7])   # unit e (the body-frame forms use it)
            qd, qdd = r.normal(size=asm.n_q), r.normal(size=asm.n_q)
            lam = np.zeros(asm.n_lam)
            K = asm.newton_matrix(q, qd, qdd, lam, 0.2, 1.0, 0.0, 0.0).toarray()[:asm.n_q, :asm.n_q]
            P = np.eye(asm.n_q)                 # directions along |e| = 1 (the forms
            P[3:7, 3:7] -= np.outer(q[3:7], q[3:7])  # differ off it, at |e| != 1)
            res.append((asm.residual(q, qd, qdd, lam, 0.2), K @ P))
        assert np.abs(res[0][0]).max() > 0
        assert np.allclose(res[0][0], res[1][0], rtol=1e-13, atol=1e-13)
        assert np.allclose(res[0][1], res[1][1], rtol=1e-12, atol=1e-12)
