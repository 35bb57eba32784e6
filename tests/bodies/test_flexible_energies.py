"""The flexible bodies' energies in one call (:mod:`flexmbs.bodies.flexible_set`): the
compiled kernel against its numpy reference, and both against a second formulation, the
body's own ``kinetic_energy`` (``1/2 z^T M(q_e) z`` with the assembled mass matrix),
``potential_energy`` (``A(e) c(q_e)``) and ``elastic_energy``, on deformed moving states
(unit Euler parameters, elastic coordinates large enough for the stiffening terms to
count), with the geometric stiffening on and off.  The strain energy's gradient is
checked against the elastic force ``K_e q + K2:qq + K3:qqq`` by central differences.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from flexcases import beam_cb, fd_jacobian, random_unit_e

from flexmbs.bodies import flexible_set_kernel
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.bodies.flexible_set import FlexibleSet, energy_args, flexible_energies
from flexmbs.bodies.rigid import RigidBody
from flexmbs.bodies.rigid_set import TAk, TLk
from flexmbs.kinematics.rotation import A_of, L_of
from flexmbs.reduction.invariants import invariants_from_shape_integrals
from flexmbs.reduction.quadrature import ShapeIntegrals

G = np.array([0.3, -9.81, 0.2])


def _bodies():
    return [FlexibleBody("stiff", beam_cb(4), stiffening=True),
            FlexibleBody("linear", beam_cb(4), stiffening=False)]


def _state(rng, body, qs):
    n = body.n_coords
    q = np.concatenate([rng.normal(size=3), random_unit_e(rng), qs * rng.normal(size=n - 7)])
    return q, rng.normal(size=n)


@pytest.mark.parametrize("qs", [1e-3, 3e-2])
def test_kernel_equals_reference_and_body_methods(qs):
    rng = np.random.default_rng(7)
    for body in _bodies():
        assert body.uses_stiffening == (body.name == "stiff")
        a = energy_args(body)
        for _ in range(5):
            q, qd = _state(rng, body, qs)
            got = flexible_set_kernel.flexible_energies(q, qd, G, *a, TLk, TAk)
            ref = flexible_energies(q, qd, G, *a, TLk, TAk)
            body_ref = (body.kinetic_energy(q, qd), body.potential_energy(q, G),
                        body.elastic_energy(q))
            for x, y, z in zip(got, ref, body_ref, strict=True):
                scale = max(abs(z), 1e-300)
                assert abs(x - y) <= 1e-13 * scale
                assert abs(x - z) <= 1e-12 * scale
            if body.uses_stiffening and qs > 1e-2:   # the stiffening terms count here
                lin = 0.5 * q[7:] @ body.body.K_e @ q[7:]
                assert abs(got[2] - lin) > 1e-6 * abs(lin)


def test_strain_energy_gradient_is_the_elastic_force():
    rng = np.random.default_rng(11)
    for body in _bodies():
        a = energy_args(body)
        q, qd = _state(rng, body, 3e-2)

        def V_e(qe):
            x = np.concatenate([q[:7], qe])
            return np.array([flexible_set_kernel.flexible_energies(x, qd, G, *a, TLk,
                                                                   TAk)[2]])
        grad = fd_jacobian(V_e, q[7:], h=1e-7)[0]
        f = body.elastic_force(q[7:])
        assert np.abs(grad - f).max() <= 1e-6 * np.abs(f).max()


@pytest.mark.parametrize("kernels", ["compiled", "reference"])
def test_set_sums_the_flexible_bodies_only(kernels, monkeypatch):
    """A set over two flexible bodies and a rigid one: the sums of the flexible bodies'
    methods, the rigid body left out, on both backends."""
    import flexmbs.compiled as C
    monkeypatch.setattr(C, "KERNELS", kernels)
    rng = np.random.default_rng(5)
    bodies = _bodies() + [RigidBody("r", m=2.0, I_S=np.diag([1.0, 2.0, 3.0]))]
    starts = np.cumsum([0] + [b.n_coords for b in bodies])[:-1]
    fs = FlexibleSet(bodies, starts)
    assert bodies[0] in fs and bodies[1] in fs and bodies[2] not in fs
    parts = [_state(rng, b, 3e-2) for b in bodies]
    q = np.concatenate([p[0] for p in parts])
    qd = np.concatenate([p[1] for p in parts])
    T, V, W = fs.energies(q, qd, G)
    ref = np.sum([(b.kinetic_energy(x, xd), b.potential_energy(x, G), b.elastic_energy(x))
                  for b, (x, xd) in zip(bodies[:2], parts[:2])], axis=0)
    assert np.allclose([T, V, W], ref, rtol=1e-12, atol=0.0)


def _point_cloud_body(rng, lumped: bool):
    """A body of ``N`` points ``X_i`` with random modes ``phi_i`` (3, n) and the scalar mass
    matrix ``mu`` (lumped: diagonal; consistent: ``B B^T`` plus a diagonal), its invariants
    from its shape integrals ``int f g dm = sum_ij mu_ij f_i g_j`` (no symmetry of the
    beam's modes left, only the invariants' own), the beam's stiffness kept."""
    beam = beam_cb(4)
    n, N = beam.n_q, 23
    X = rng.normal(size=(N, 3))
    phi = rng.normal(size=(N, 3, n))
    if lumped:
        mu = np.diag(rng.uniform(0.5, 2.0, size=N))
    else:
        B = rng.normal(size=(N, N)) / N
        mu = B @ B.T + np.diag(rng.uniform(0.1, 0.5, size=N))
    si = ShapeIntegrals(
        m=float(mu.sum()), s0=np.einsum("ij,jx->x", mu, X),
        S=np.einsum("ij,jxk->xk", mu, phi), J0=np.einsum("ij,ix,jy->xy", mu, X, X),
        J1=np.einsum("ij,ix,jyk->kxy", mu, X, phi),
        J2=np.einsum("ij,ixk,jyl->klxy", mu, phi, phi))
    inv = invariants_from_shape_integrals(si)
    fields = {f.name: getattr(inv, f.name) for f in dataclasses.fields(inv)}
    return dataclasses.replace(beam, **fields), X, phi, mu


@pytest.mark.parametrize("lumped", [True, False])
def test_random_point_cloud_body(lumped):
    """Randomised invariants (see :func:`_point_cloud_body`; ``C_r1`` antisymmetric and
    ``I1`` non-zero in every entry, unlike the beam's): the kernel against the reference
    and against the energies summed over the points, ``T = 1/2 sum_ij mu_ij pd_i . pd_j``
    and ``V_g = -g . sum_ij mu_ij p_j`` with ``p_i = r + A (X_i + phi_i q_e)``, ``pd_i =
    rd + A (omega' x (X_i + phi_i q_e) + phi_i qd_e)``."""
    rng = np.random.default_rng(13 if lumped else 17)
    rb, X, phi, mu = _point_cloud_body(rng, lumped)
    for stiffening in (True, False):
        body = FlexibleBody("cloud", rb, stiffening=stiffening)
        a = energy_args(body)
        for _ in range(4):
            q, qd = _state(rng, body, 0.3)
            A = A_of(q[3:7])
            w = 2.0 * L_of(q[3:7]) @ qd[3:7]
            u = X + phi @ q[7:]                                   # (N, 3) in R
            p = q[0:3] + u @ A.T
            pd = qd[0:3] + (np.cross(w, u) + phi @ qd[7:]) @ A.T
            T = 0.5 * np.einsum("ij,ix,jx->", mu, pd, pd)
            V_g = -G @ np.einsum("ij,jx->x", mu, p)
            got = flexible_set_kernel.flexible_energies(q, qd, G, *a, TLk, TAk)
            ref = flexible_energies(q, qd, G, *a, TLk, TAk)
            for x, y, z in zip(got, ref, (T, V_g, body.elastic_energy(q)), strict=True):
                assert abs(x - y) <= 1e-13 * abs(z)
                assert abs(x - z) <= 1e-12 * abs(z)
