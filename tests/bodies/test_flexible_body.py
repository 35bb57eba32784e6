"""FlexibleBody equations: tangent, rigid limit n_q = 0, energies, mass matrix.

References: central differences of the residual (tangent) and of the energies (the
elastic force is the gradient of the strain energy; the gravity force is the gradient of
the potential); the rigid-body Newton-Euler equations of ``RigidBody`` (THEORY §5.3,
(2.4)) as a second, independent formulation for n_q = 0; ``T = 1/2 qd^T M qd``.  The
residual and tangent run on the compiled kernels and on their numpy references
(fixture ``kernels``).
"""
from __future__ import annotations

import numpy as np
import pytest
from flexcases import beam_cb, random_unit_e, truncated

from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.bodies.rigid import RigidBody
from flexmbs.kinematics.rotation import A_of, L_of

G = np.array([0.3, -9.81, 0.2])
BLOCKS = (slice(0, 3), slice(3, 7), slice(7, None))


def random_state(rng, body, qs):
    n = body.n_coords
    q = np.concatenate([rng.normal(size=3), random_unit_e(rng), qs * rng.normal(size=body.n_q)])
    qd = rng.normal(size=n)
    qd[7:] *= 100 * qs
    return q, qd, rng.normal(size=n)


def fd_tangents(body, q, qd, qdd, qs):
    """Central differences of the residual; steps: q_e scaled by ``qs``; the residual is
    quadratic in qd and linear in qdd, so a large step is exact there."""
    n = body.n_coords
    out = []
    for idx, h in ((0, 1e-6), (1, 1e-2), (2, 1e-2)):
        hh = np.full(n, h)
        if idx == 0:
            hh[7:] = h * qs
        cols = []
        for i in range(n):
            args_p = [q.copy(), qd.copy(), qdd.copy()]
            args_m = [q.copy(), qd.copy(), qdd.copy()]
            args_p[idx][i] += hh[i]
            args_m[idx][i] -= hh[i]
            cols.append((body.residual(*args_p, G) - body.residual(*args_m, G)) / (2 * hh[i]))
        out.append(np.stack(cols, axis=1))
    return out


def blockwise_error(X, Xf):
    """Max over the 3x3 coordinate blocks of |X - Xf| / max|Xf| of that block."""
    err = 0.0
    for a in BLOCKS:
        for b in BLOCKS:
            scale = np.abs(Xf[a, b]).max()
            if scale > 0:
                err = max(err, np.abs(X[a, b] - Xf[a, b]).max() / scale)
            else:
                err = max(err, np.abs(X[a, b]).max())
    return err


@pytest.mark.parametrize("stiffening", [True, False])
@pytest.mark.parametrize("qs", [1e-3, 2e-2])
def test_tangent_matches_central_differences(stiffening, qs, kernels):
    """K, C, M of the quadratic (K2, K3) and linear models with damping, at random states;
    ``qs`` = 2e-2 makes the stiffening terms a sizeable part of the elastic force."""
    body = FlexibleBody("beam", beam_cb(3, damping=0.02), stiffening=stiffening)
    assert body.uses_stiffening == stiffening
    rng = np.random.default_rng(7)
    q, qd, qdd = random_state(rng, body, qs)
    K, C, M = body.tangent(q, qd, qdd, G)
    Kf, Cf, Mf = fd_tangents(body, q, qd, qdd, qs)
    errs = [blockwise_error(X, Xf) for X, Xf in ((K, Kf), (C, Cf), (M, Mf))]
    assert max(errs) < 1e-5, errs


def test_stiffening_changes_the_force():
    """Sanity of the test above: at qs = 2e-2 the K2, K3 terms are not negligible."""
    body = FlexibleBody("beam", beam_cb(3))
    lin = FlexibleBody("beam", beam_cb(3), stiffening=False)
    qe = 2e-2 * np.random.default_rng(3).normal(size=body.n_q)
    f, f_lin = body.elastic_force(qe), lin.elastic_force(qe)
    assert np.linalg.norm(f - f_lin) > 1e-3 * np.linalg.norm(f_lin)


def rigid_twin(rb):
    """RigidBody with the file's m, c and I about the frame origin (I_S by Steiner)."""
    c = rb.s0 / rb.m
    I_S = rb.I0 - rb.m * ((c @ c) * np.eye(3) - np.outer(c, c))
    return RigidBody("twin", rb.m, 0.5 * (I_S + I_S.T), com=c)


def test_zero_modes_reproduce_rigid_body(kernels):
    """n_q = 0: residual and (K, C, M) equal RigidBody's to round-off, at random states
    including non-unit Euler parameters."""
    rb = truncated(beam_cb(3), 0)
    flex, rigid = FlexibleBody("b", rb), rigid_twin(rb)
    assert flex.n_coords == 7
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, qd, qdd = (rng.normal(size=7) for _ in range(3))
        r_f, r_r = flex.residual(q, qd, qdd, G), rigid.residual(q, qd, qdd, G)
        assert np.allclose(r_f, r_r, rtol=1e-12, atol=1e-12 * np.abs(r_r).max())
        for X, Y in zip(flex.tangent(q, qd, qdd, G), rigid.tangent(q, qd, qdd, G), strict=True):
            assert np.allclose(X, Y, rtol=1e-12, atol=1e-12 * np.abs(Y).max())
        assert flex.kinetic_energy(q, qd) == pytest.approx(rigid.kinetic_energy(q, qd), rel=1e-12)
        assert flex.potential_energy(q, G) == pytest.approx(rigid.potential_energy(q, G), rel=1e-12)


@pytest.mark.parametrize("stiffening", [True, False])
def test_elastic_energy_gradient_is_elastic_force(stiffening):
    body = FlexibleBody("beam", beam_cb(3), stiffening=stiffening)
    rng = np.random.default_rng(5)
    q = np.concatenate([np.zeros(3), [1, 0, 0, 0], 2e-2 * rng.normal(size=body.n_q)])
    h = 1e-7
    grad = np.array([(body.elastic_energy(q + h * u) - body.elastic_energy(q - h * u)) / (2 * h)
                     for u in np.eye(len(q))[7:]])
    f = body.elastic_force(q[7:])
    assert np.allclose(grad, f, rtol=1e-6, atol=1e-7 * np.abs(f).max())
    assert body.elastic_energy(q) > 0


def test_gravity_force_is_gradient_of_potential(kernels):
    """``residual(q, 0, 0, g) - residual(q, 0, 0, 0) = dV/dq`` along virtual displacements
    that keep |e| = 1 (the e-component is taken by the normalisation multiplier)."""
    body = FlexibleBody("beam", beam_cb(3))
    rng = np.random.default_rng(2)
    q = np.concatenate([rng.normal(size=3), random_unit_e(rng), 1e-3 * rng.normal(size=body.n_q)])
    z = np.zeros_like(q)
    Qg = body.residual(q, z, z, G) - body.residual(q, z, z, np.zeros(3))
    for _ in range(5):
        dq = rng.normal(size=len(q))
        dq[3:7] -= (dq[3:7] @ q[3:7]) * q[3:7]
        h = 1e-6
        dV = (body.potential_energy(q + h * dq, G) - body.potential_energy(q - h * dq, G)) / (2 * h)
        assert Qg @ dq == pytest.approx(dV, rel=1e-7, abs=1e-9)


def test_kinetic_energy_and_mass_matrix(kernels):
    """``T = 1/2 qd^T M qd`` with the tangent's M (unit e); M(q_e) of THEORY §2.3 is
    symmetric positive definite and, projected with the velocity map
    ``z_II = [A^T rd; 2 L ed; qd_e] = P qd``, equals the tangent's ``M = P^T M(q_e) P``
    (the kernels use the invariants in their own layout)."""
    rb = beam_cb(3)
    body = FlexibleBody("beam", rb)
    rng = np.random.default_rng(4)
    q, qd, qdd = random_state(rng, body, 1e-2)
    _, _, M = body.tangent(q, qd, qdd, G)
    assert body.kinetic_energy(q, qd) == pytest.approx(0.5 * qd @ M @ qd, rel=1e-12)
    Mb = body.mass_matrix(q[7:])
    assert np.allclose(Mb, Mb.T) and np.linalg.eigvalsh(Mb).min() > 0
    P = np.zeros((6 + body.n_q, body.n_coords))
    P[0:3, 0:3], P[3:6, 3:7] = A_of(q[3:7]).T, 2.0 * L_of(q[3:7])
    P[6:, 7:] = np.eye(body.n_q)
    assert np.allclose(P.T @ Mb @ P, M, rtol=0, atol=1e-12 * np.abs(M).max())


def test_initial_state_and_problems():
    rb = beam_cb(3)
    R0 = A_of(np.array([0.9, 0.1, -0.3, 0.2]) / np.linalg.norm([0.9, 0.1, -0.3, 0.2]))
    qe0 = np.arange(rb.n_q) * 1e-4
    body = FlexibleBody("beam", rb, r0=(1, 2, 3), R0=R0, v0=(0.1, 0, 0), omega0=(0, 0, 2.0),
                        qe0=qe0)
    q, qd = body.initial_q(), body.initial_qd()
    assert q.shape == qd.shape == (7 + rb.n_q,)
    assert np.allclose(A_of(q[3:7]), R0) and np.allclose(q[7:], qe0)
    assert np.allclose(body.omega(q, qd), [0, 0, 2.0])
    assert body.problems() == []
    bad = FlexibleBody("bad", rb, qe0=np.zeros(2), R0=2 * np.eye(3))
    probs = bad.problems()
    assert any("qe0" in p for p in probs) and any("R0" in p for p in probs)


def test_from_file_round_trip(tmp_path, kernels):
    """``FlexibleBody.from_file`` reads a saved reduced body and gives the same residual."""
    from flexmbs.io.bodyfile import save_body
    rb = beam_cb(3)
    save_body(tmp_path / "beam.h5", rb)
    a = FlexibleBody("beam", rb)
    b = FlexibleBody.from_file("beam", tmp_path / "beam.h5", stiffening=True)
    rng = np.random.default_rng(6)
    q, qd, qdd = random_state(rng, a, 1e-2)
    assert np.array_equal(a.residual(q, qd, qdd, G), b.residual(q, qd, qdd, G))
