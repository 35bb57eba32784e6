"""The velocity rows ``c = A(q, t) qd + a(q, t)`` of an assembled system
(:mod:`flexmbs.system.velocity_rows`): their derivatives against central differences at
seeded random states, ``A^T mu`` in the residual, and a velocity-ratio coupling against
its closed form."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.constraints.velocity import angular_velocity
from flexmbs.errors import ModelError


def rolling_system():
    disc = fm.RigidBody("disc", 2.0, np.diag([0.045, 0.045, 0.09]), r0=(0.1, 0.2, 0.3),
                        R0=np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]))
    plate = fm.RigidBody("plate", 5.0, np.diag([1.0, 1.0, 2.0]), r0=(0.0, 0.0, 0.0))
    model = fm.System(gravity=(0.0, 0.0, -9.81), name="rows")
    model.add(disc, plate, fm.Rolling("roll", plane=plate.marker("top"),
                                      disc=disc.marker("centre"), radius=0.3),
              fm.KnifeEdge("edge", plane=fm.ground.marker("floor"),
                           edge=plate.marker("blade", s=(0.2, 0.0, 0.0))))
    return model.assemble()


def random_state(asm, rng):
    q = asm.normalize(asm.initial_q() + 0.2 * rng.standard_normal(asm.n_q))
    return q, rng.standard_normal(asm.n_q)


def central(f, x, h=1e-6):
    cols = []
    for j in range(len(x)):
        xp, xm = x.copy(), x.copy()
        xp[j] += h
        xm[j] -= h
        cols.append((f(xp) - f(xm)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_derivatives_against_central_differences(seed):
    asm = rolling_system()
    rng = np.random.default_rng(seed)
    q, qd = random_state(asm, rng)
    c = asm.velocity_constraint(q, qd, 0.0)
    A, B, c_t = asm.velocity_jacobians(q, qd, 0.0)
    # c is affine in qd with slope A; a = c(q, 0)
    a = asm.velocity_constraint(q, np.zeros_like(qd), 0.0)
    assert np.allclose(c, A @ qd + a, atol=1e-13)
    B_fd = central(lambda x: asm.velocity_constraint(x, qd, 0.0), q)
    assert np.abs(B.toarray() - B_fd).max() < 1e-7 * (1 + np.abs(B_fd).max())
    assert np.all(c_t == 0.0)       # scleronomic rows
    mu = rng.standard_normal(asm.n_mu)
    H_fd = central(lambda x: asm.velocity_jacobians(x, qd, 0.0)[0].T @ mu, q)
    H = asm.velocity_force_jacobian(q, mu, 0.0).toarray()
    assert np.abs(H - H_fd).max() < 1e-7 * (1 + np.abs(H_fd).max())


def test_residual_takes_A_transpose_mu():
    asm = rolling_system()
    rng = np.random.default_rng(3)
    q, qd = random_state(asm, rng)
    lam = rng.standard_normal(asm.n_lam + asm.n_mu)
    zero_mu = np.concatenate([lam[:asm.n_lam], np.zeros(asm.n_mu)])
    r = asm.residual(q, qd, qd, lam, 0.0)
    r0 = asm.residual(q, qd, qd, zero_mu, 0.0)
    A = asm.velocity_jacobians(q, qd, 0.0)[0]
    assert np.allclose(r - r0, A.T @ lam[asm.n_lam:], atol=1e-12)


def test_velocity_ratio_closed_form():
    """Two wheels on fixed axes, ``omega_1 = r omega_2``, a torque T on wheel 2: the
    coupled inertia ``I_2 + r^2 I_1`` gives ``omega_2 = T t / (I_2 + r^2 I_1)``."""
    I1, I2, ratio, T = 0.3, 0.5, 2.5, 1.2
    w1 = fm.RigidBody("w1", 1.0, np.diag([1.0, 1.0, I1]))
    w2 = fm.RigidBody("w2", 1.0, np.diag([1.0, 1.0, I2]), r0=(1.0, 0.0, 0.0))
    model = fm.System(name="belt")
    model.add(fm.Revolute("j1", fm.ground, w1, at=(0.0, 0.0, 0.0), axis="z"),
              fm.Revolute("j2", fm.ground, w2, at=(1.0, 0.0, 0.0), axis="z"),
              fm.VelocityRatio("belt", first=w1, second=w2, ratio=ratio),
              fm.ExternalTorque("drive", at=w2, torque=(0.0, 0.0, T)))
    res = fm.simulate(model, t_end=1.0, dt=1e-2, rho_inf=0.9)
    omega = [(angular_velocity(q[3:7], qd[3:7])[2], angular_velocity(q[10:14], qd[10:14])[2])
             for q, qd in zip(res.q, res.qd)]
    omega1, omega2 = np.array(omega).T
    assert np.abs(omega1 - ratio * omega2).max() < 1e-12       # the row, to round-off
    # the integrator's O(h^2) error in the rotation (Euler parameters) is 1e-5 here
    assert omega2 == pytest.approx(T * res.t / (I2 + ratio**2 * I1), rel=1e-4, abs=1e-12)
    # the belt torque on wheel 1 accelerates it: mu = -I1 omega_1' = -I1 r T / (...)
    mu = res.lam[:, -1]
    assert mu[1:] == pytest.approx(np.full(len(mu) - 1, -I1 * ratio * T / (I2 + ratio**2 * I1)),
                                   rel=1e-4)


def test_invalid_velocity_constraint_names_the_problem():
    disc = fm.RigidBody("disc", 1.0, np.eye(3))
    model = fm.System(name="bad").add(fm.Rolling("roll", plane=fm.ground, disc=disc,
                                                 radius=-1.0))
    with pytest.raises(ModelError, match="Rolling 'roll': radius must be a positive length"):
        model.validate()
    flat = fm.System(name="flat").add(fm.Rolling("roll", plane=fm.ground, disc=disc,
                                                 radius=0.3))     # disc z = plane normal
    with pytest.raises(ModelError, match="Rolling 'roll': the disc lies flat on the plane"):
        flat.validate()


@pytest.mark.parametrize("seed", [0, 1])
def test_disc_contact_joint_derivatives(seed):
    """The rolling disc's normal contact (a jet joint): G and d(G^T lam)/dq against
    central differences of g and G^T lam."""
    asm = rolling_system()
    rng = np.random.default_rng(seed)
    q, _ = random_state(asm, rng)
    G = asm.constraint_jacobian(q, 0.0).toarray()
    assert np.abs(G - central(lambda x: asm.constraint(x, 0.0), q)).max() < 1e-7
    lam = rng.standard_normal(asm.n_lam)
    H = asm.constraint_force_jacobian(q, lam, 0.0).toarray()
    H_fd = central(lambda x: asm.constraint_jacobian(x, 0.0).T @ lam, q)
    assert np.abs(H - H_fd).max() < 1e-6 * (1 + np.abs(H_fd).max())
