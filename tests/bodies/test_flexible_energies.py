"""The flexible bodies' energies in one call (:mod:`flexmbs.bodies.flexible_set`): the
compiled kernel against its numpy reference, and both against a second formulation, the
body's own ``kinetic_energy`` (``1/2 z^T M(q_e) z`` with the assembled mass matrix),
``potential_energy`` (``A(e) c(q_e)``) and ``elastic_energy``, on deformed moving states
(unit Euler parameters, elastic coordinates large enough for the stiffening terms to
count), with the geometric stiffening on and off.  The strain energy's gradient is
checked against the elastic force ``K_e q + K2:qq + K3:qqq`` by central differences.
"""
from __future__ import annotations

import numpy as np
import pytest
from flexcases import beam_cb, fd_jacobian, random_unit_e

from flexmbs.bodies import flexible_set_kernel
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.bodies.flexible_set import FlexibleSet, energy_args, flexible_energies
from flexmbs.bodies.rigid import RigidBody
from flexmbs.bodies.rigid_set import TAk, TLk

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
