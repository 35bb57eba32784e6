"""The compiled (numba) kernels against their numpy formulations.

* ``ffrf_residual`` and ``ffrf_tangent`` (:mod:`flexmbs.bodies.ffrf_kernel`) against
  ``FlexibleBody.residual_reference``/``tangent_reference`` (numpy products over the same
  invariants), with and without geometric stiffening, and a body with damping; with
  ``n_q = 0`` against ``RigidBody.residual_reference``/``tangent_reference``;
* ``fill_frame`` (:mod:`flexmbs.kinematics.frame_kernel`) against the order-2 numpy path
  of ``PairFrames.evaluate`` (``_fill_flexible``/``_fill_rigid``) and against central
  differences of the frame vectors (an independent check of ``dA/de`` in closed form);
* ``label_rows`` against ``LabelRows.evaluate`` with Hessians (numpy) and the jet algebra
  of ``LabelRows.jets``.

The two formulations sum in different orders, so they agree to round-off, not bitwise.
"""
from __future__ import annotations

import numpy as np
import pytest
from flexcases import beam_cb, fd_jacobian, pendulum_cb, random_unit_e

from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.bodies.rigid import RigidBody
from flexmbs.constraints.rows import LabelRows
from flexmbs.kinematics.frames import PairFrames

G = np.array([0.3, -9.81, 0.2])


def _state(rng, body, qs=1e-2):
    n = body.n_coords
    q = np.concatenate([rng.normal(size=3), random_unit_e(rng), qs * rng.normal(size=n - 7)])
    return q, rng.normal(size=n), rng.normal(size=n)


@pytest.mark.parametrize("stiffening", [True, False])
@pytest.mark.parametrize("reduced", ["beam", "beam_damped"])
def test_ffrf_kernel_equals_numpy_residual(stiffening, reduced):
    body = beam_cb(4) if reduced == "beam" else beam_cb(3, damping=1e-3)
    assert (reduced == "beam") == (not np.any(body.D_e))
    fb = FlexibleBody("b", body, stiffening=stiffening)
    assert fb.uses_stiffening == stiffening
    rng = np.random.default_rng(7)
    for qs in (1e-3, 5e-2):
        for _ in range(5):
            q, qd, qdd = _state(rng, fb, qs)
            ref = fb.residual_reference(q, qd, qdd, G)
            got = fb.residual(q, qd, qdd, G)
            assert np.abs(got - ref).max() <= 1e-13 * np.abs(ref).max()
            for X, Xr in zip(fb.tangent(q, qd, qdd, G), fb.tangent_reference(q, qd, qdd, G)):
                assert np.abs(X - Xr).max() <= 1e-13 * np.abs(Xr).max()


def test_ffrf_kernel_stiffening_is_the_elastic_force():
    """With the frame at rest and no gravity the residual is ``f_e = h_e(q_e)``."""
    fb = FlexibleBody("b", beam_cb(4), stiffening=True)
    rng = np.random.default_rng(3)
    q = np.concatenate([np.zeros(3), [1.0, 0, 0, 0], 0.05 * rng.normal(size=fb.n_q)])
    z = np.zeros(fb.n_coords)
    r = fb.residual(q, z, z, np.zeros(3))
    h = fb.elastic_force(q[7:])
    assert np.abs(r[7:] - h).max() <= 1e-13 * np.abs(h).max()
    assert np.abs(h - fb.body.K_e @ q[7:]).max() > 1e-3 * np.abs(h).max()   # K2, K3 matter


def _pair(kind_p, kind_q):
    fb = FlexibleBody("f", pendulum_cb(3))
    rb = RigidBody.box("r", (0.3, 0.02, 0.02), 7850.0, com=(0.15, 0, 0))
    from flexmbs.bodies.ground import ground
    pick = {"flexible": fb["pin"], "rigid": rb.marker("m", s=(0.1, 0.02, -0.03)),
            "ground": ground.marker("g", at=(0.2, 0.0, 0.1))}
    markers = [pick[kind_p], pick[kind_q]]
    offsets, n = [], 0
    for m in markers:
        if getattr(m.body, "is_ground", False):
            offsets.append(None)
        else:
            offsets.append(n)
            n += m.body.n_coords
    return markers, offsets, n + 1


def _random_x(markers, offsets, n, rng):
    """A local vector with unit Euler parameters and small elastic coordinates."""
    x = np.zeros(n)
    for m, o in zip(markers, offsets):
        if o is not None:
            nb = m.body.n_coords
            x[o:o + 3] = rng.normal(size=3)
            x[o + 3:o + 7] = random_unit_e(rng)
            x[o + 7:o + nb] = 1e-2 * rng.normal(size=nb - 7)
    return x


@pytest.mark.parametrize("kinds", [("flexible", "ground"), ("rigid", "flexible"),
                                   ("ground", "rigid")])
def test_frame_kernel_equals_numpy_frames_and_differences(kinds):
    markers, offsets, n = _pair(*kinds)
    pf = PairFrames(markers, offsets, n)
    rng = np.random.default_rng(11)

    def q_bodies(x):
        return [None if o is None else x[o:o + m.body.n_coords]
                for m, o in zip(markers, offsets)]

    for _ in range(4):
        x = _random_x(markers, offsets, n, rng)
        C1, D1, _ = pf.evaluate(q_bodies(x), 1)
        C2, D2, _ = pf.evaluate(q_bodies(x), 2)
        assert np.abs(C1 - C2).max() <= 1e-14 * np.abs(C2).max()
        assert np.abs(D1 - D2).max() <= 1e-14 * np.abs(D2).max()
        D_fd = fd_jacobian(lambda y: pf.evaluate(q_bodies(y), 1)[0], x)
        assert np.abs(D1 - D_fd).max() <= 1e-8 * np.abs(D_fd).max()


def test_label_rows_kernel_equals_numpy_and_jets():
    markers, offsets, n = _pair("rigid", "flexible")
    pf = PairFrames(markers, offsets, n)
    rows = LabelRows(["x", "y", "z", "x_P.y_Q", "z_P.x_Q", "y_P.d", "z_P.z_Q"])
    rng = np.random.default_rng(5)
    x = _random_x(markers, offsets, n, rng)
    qb = [x[o:o + m.body.n_coords] for m, o in zip(markers, offsets)]
    C, D, H = pf.evaluate(qb, 2)
    g1, dg1, h1 = rows.evaluate(C, D, None)
    g2, dg2, _ = rows.evaluate(C, D, H)
    assert h1 is None
    assert np.abs(g1 - g2).max() <= 1e-14 * max(1.0, np.abs(g2).max())
    assert np.abs(dg1 - dg2).max() <= 1e-14 * np.abs(dg2).max()
    P, Q = pf.frame_jets(C, D, H)
    jets = rows.jets(P, Q)
    assert np.allclose(g1, [float(j.v) for j in jets], rtol=0, atol=1e-14)
    assert np.allclose(dg1, [j.d for j in jets], rtol=0, atol=1e-14 * np.abs(dg1).max())


@pytest.mark.parametrize("shape", [(3, 8, 5), (17, 32, 21)])
def test_label_rows_kernel_any_number_of_frame_vectors(shape):
    """The stacked rows of a whole system (V = 4 M frame vectors) against the products of
    ``flexmbs.system.stacked``'s numpy formulation, on random data."""
    from flexmbs.kinematics.frame_kernel import label_rows
    R, V, N = shape
    rng = np.random.default_rng(2)
    Sa, Sb, k = rng.normal(size=(R, V)), rng.normal(size=(R, V)), rng.normal(size=(R, 3))
    C, D = rng.normal(size=(V, 3)), rng.normal(size=(V, 3, N))
    al, be = Sa @ C + k, Sb @ C
    dal, dbe = np.einsum("rv,vin->rin", Sa, D), np.einsum("rv,vin->rin", Sb, D)
    g, dg = label_rows(Sa, Sb, k, C, D)
    assert np.abs(g - np.einsum("ri,ri->r", al, be)).max() <= 1e-13 * np.abs(g).max()
    ref = np.einsum("ri,rin->rn", al, dbe) + np.einsum("ri,rin->rn", be, dal)
    assert np.abs(dg - ref).max() <= 1e-13 * np.abs(ref).max()


def test_rigid_kernels_equal_newton_euler_formulation():
    """``RigidBody.residual``/``tangent`` (the kernels with n_q = 0) against the
    Newton-Euler rows and their derivatives written out with Python floats and numpy
    (``residual_reference``, ``tangent_reference``)."""
    rb = RigidBody.box("r", (0.3, 0.05, 0.02), 7850.0, com=(0.12, 0.01, -0.02))
    rng = np.random.default_rng(9)
    for _ in range(5):
        q = np.concatenate([rng.normal(size=3), random_unit_e(rng)])
        qd, qdd = rng.normal(size=7), rng.normal(size=7)
        ref = rb.residual_reference(q, qd, qdd, G)
        assert np.abs(rb.residual(q, qd, qdd, G) - ref).max() <= 1e-13 * np.abs(ref).max()
        for X, Xr in zip(rb.tangent(q, qd, qdd, G), rb.tangent_reference(q, qd, qdd, G)):
            assert np.abs(X - Xr).max() <= 1e-13 * np.abs(Xr).max()


def test_kernels_accept_read_only_and_strided_input():
    """Read-only or strided arguments are copied to the one compiled signature."""
    fb = FlexibleBody("b", beam_cb(3))
    rng = np.random.default_rng(4)
    q, qd, qdd = _state(rng, fb)
    ref = fb.residual(q, qd, qdd, G)
    read_only = q.copy()
    read_only.setflags(write=False)
    strided = np.repeat(q, 2)[::2]
    assert not strided.flags.c_contiguous
    for a in (read_only, strided):
        assert np.array_equal(fb.residual(a, qd, qdd, G), ref)
    assert np.array_equal(fb.residual(list(q), qd, qdd, G), ref)


@pytest.mark.parametrize("kinds", [("rigid", "flexible"), ("flexible", "ground"),
                                   ("ground", "rigid")])
def test_label_hessian_sum_kernel_equals_numpy_and_full_hessians(kinds):
    """``label_hessian_sum`` against ``LabelRows.hessian_sum`` with
    ``PairFrames.hessian_contract`` (numpy) and against ``sum_r mu_r h_r`` of the rows'
    full Hessians (``LabelRows.evaluate`` with the frame Hessians ``H``)."""
    from flexmbs.compiled import arg
    from flexmbs.kinematics.frame_kernel import label_hessian_sum
    from flexmbs.kinematics.frames import T_A_KERNEL
    markers, offsets, n = _pair(*kinds)
    pf = PairFrames(markers, offsets, n)
    rows = LabelRows(["x", "y", "z", "x_P.y_Q", "z_P.x_Q", "y_P.d", "z_P.z_Q"])
    rng = np.random.default_rng(8)
    x = _random_x(markers, offsets, n, rng)
    qb = [None if o is None else x[o:o + m.body.n_coords] for m, o in zip(markers, offsets)]
    C, D, H = pf.evaluate(qb, 2)
    mu = rng.normal(size=len(rows.labels))
    got = label_hessian_sum(*rows._kernel_args(), arg(C), arg(D), arg(mu), T_A_KERNEL,
                            *pf.kernel_markers(qb))
    ref = rows.hessian_sum(C, D, lambda W: pf.hessian_contract(W, qb), mu)
    full = np.einsum("r,rab->ab", mu, rows.evaluate(C, D, H)[2])
    scale = np.abs(full).max()
    assert np.abs(got - ref).max() <= 1e-13 * scale
    assert np.abs(got - full).max() <= 1e-13 * scale


@pytest.mark.parametrize("stiffening", [True, False])
def test_body_pack_equals_body_by_body(stiffening):
    """All bodies in one compiled call (``BodyPack``: residuals and scaled tangents)
    against each body's own ``residual``/``tangent``: a rigid body, a flexible body with
    damping, another rigid body."""
    from flexmbs.bodies.pack import BodyPack
    bodies = [RigidBody.box("a", (0.3, 0.05, 0.02), 7850.0, com=(0.12, 0.01, -0.02)),
              FlexibleBody("f", beam_cb(3, damping=1e-3), stiffening=stiffening),
              RigidBody.box("c", (0.1, 0.1, 0.1), 2700.0)]
    offs = np.cumsum([0] + [b.n_coords for b in bodies])[:-1]
    pack = BodyPack(bodies, offs)
    rng = np.random.default_rng(12)
    parts = [_state(rng, b, 1e-2) for b in bodies]
    q, qd, qdd = (np.concatenate([p[k] for p in parts]) for k in range(3))
    r = pack.residual(q, qd, qdd, G)
    vals = pack.newton_values(q, qd, qdd, G, 0.7, 0.3, 1.1)
    pos = 0
    for b, o, (qb, qdb, qddb) in zip(bodies, offs, parts):
        ref = b.residual(qb, qdb, qddb, G)
        assert np.abs(r[o:o + b.n_coords] - ref).max() <= 1e-14 * np.abs(ref).max()
        K, C, M = b.tangent(qb, qdb, qddb, G)
        block = (0.7 * K + 0.3 * C + 1.1 * M).ravel()
        got = vals[pos:pos + block.size]
        assert np.abs(got - block).max() <= 1e-14 * np.abs(block).max()
        pos += block.size
    assert pos == vals.size


def test_kernels_reject_wrong_shapes_with_a_clear_error():
    """The kernels do not check indices, so the bodies check the shapes first: a short
    state names the body, the argument, the expected and the found shape."""
    fb = FlexibleBody("arm", beam_cb(3))
    rb = RigidBody.box("crank", (0.3, 0.05, 0.02), 7850.0)
    rng = np.random.default_rng(1)
    q, qd, qdd = _state(rng, fb)
    n = fb.n_coords
    with pytest.raises(ValueError, match=rf"FlexibleBody 'arm': qd must have shape \({n},\), "
                                         rf"got \({n - 1},\)"):
        fb.residual(q, qd[:-1], qdd, G)
    with pytest.raises(ValueError, match=r"FlexibleBody 'arm': gravity must have shape \(3,\)"):
        fb.tangent(q, qd, qdd, G[:2])
    with pytest.raises(ValueError, match=rf"RigidBody 'crank': q must have shape \(7,\), "
                                         rf"got \({n},\)"):
        rb.residual(q, qd[:7], qdd[:7], G)
