"""The compiled (numba) kernels against their numpy references, module by module.

Every compiled kernel module ``<name>_kernel`` has its reference ``<name>_reference``
beside it (same function names, same arguments; :func:`flexmbs.compiled.backend` chooses):

* ``kinematics/rotation_*``: every Euler-parameter helper at random, non-unit ``e``;
* ``bodies/rigid_kernel``: the rigid body's residual in scalars and its Newton matrix
  block without allocation, bit for bit the general ``ffrf_residual`` and
  ``ffrf_tangent`` at ``n_q = 0``;
* ``bodies/ffrf_*``: ``ffrf_residual``, ``ffrf_tangent`` (flexible bodies with and without
  geometric stiffening, with damping; rigid bodies, ``n_q = 0``), ``bodies_residual``,
  ``bodies_newton_values`` (rigid, flexible and point-mass bodies in one pack, through
  its C function ``bodies_newton_values_c`` and the pack's table);
* ``kinematics/frame_*``: ``fill_frame``, ``label_rows``, ``label_hessian_sum``, and
  ``stacked_rows``, ``stacked_hessian_sum`` of an assembled system (ground, rigid,
  flexible and point-mass markers, normalisations).

Independent of both formulations: ``fill_frame`` against the order-2 numpy path of
``PairFrames.evaluate`` and central differences; the label rows against their jets and
the full row Hessians; the rigid bodies against the Newton-Euler rows
(``newton_euler.py``).  The bodies run on both backends (fixture ``kernels``), also with
bad input: read-only, strided or list arguments, wrong shapes.

The two formulations sum in different orders, so they agree to round-off (the stated
tolerances, relative to the largest entry), not bitwise.
"""
from __future__ import annotations

import numpy as np
import pytest
from flexcases import beam_cb, fd_jacobian, pendulum_cb, random_unit_e

import flexmbs as fm
import newton_euler
from flexmbs.bodies import ffrf_kernel, ffrf_reference, rigid_kernel
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.bodies.pack import BodyPack
from flexmbs.bodies.rigid import RigidBody
from flexmbs.compiled import arg
from flexmbs.constraints.rows import LabelRows
from flexmbs.kinematics import (
    frame_kernel, frame_reference, rotation_kernel, rotation_reference,
)
from flexmbs.kinematics.frames import T_A_KERNEL, PairFrames, kernel_consts

G = np.array([0.3, -9.81, 0.2])
FRAME_MODULES = pytest.mark.parametrize("frames", [frame_kernel, frame_reference],
                                        ids=["kernel", "reference"])


def _state(rng, body, qs=1e-2):
    n = body.n_coords
    q = np.concatenate([rng.normal(size=3), random_unit_e(rng), qs * rng.normal(size=n - 7)])
    return q, rng.normal(size=n), rng.normal(size=n)


def _close(got, ref, rtol):
    """``|got - ref| <= rtol max|ref|`` entry by entry (arrays or tuples of arrays)."""
    if isinstance(ref, tuple):
        assert len(got) == len(ref)
        for a, b in zip(got, ref, strict=True):
            _close(a, b, rtol)
        return
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape
    assert np.abs(got - ref).max(initial=0.0) <= rtol * max(np.abs(ref).max(initial=0.0),
                                                             1e-300)


# -- rotation_kernel / rotation_reference ------------------------------------------------
def test_rotation_kernel_equals_reference():
    """The shared Euler-parameter helpers at random, non-unit ``e``: the kernels' closed
    forms against the quadratic form ``T_A`` and the numpy matrices of ``rotation``."""
    rng = np.random.default_rng(3)
    for _ in range(5):
        e = 1.7 * rng.normal(size=4)
        v, a, b = rng.normal(size=4), rng.normal(size=3), rng.normal(size=3)
        for name, args in (("rotation_matrix", e), ("rotation_entries", e),
                           ("rotation_and_derivative", e),
                           ("two_L", (*e, *v)), ("L_matrix", e), ("LT_matrix", a),
                           ("tilde", (a,)), ("cross", (a, b))):
            got = getattr(rotation_kernel, name)(*args)
            ref = getattr(rotation_reference, name)(*args)
            _close(got, ref, 1e-15)


# -- ffrf_kernel / ffrf_reference --------------------------------------------------------
def _bodies():
    return {"beam": FlexibleBody("b", beam_cb(4)),
            "beam_linear": FlexibleBody("b", beam_cb(4), stiffening=False),
            "beam_damped": FlexibleBody("b", beam_cb(3, damping=1e-3)),
            "beam_damped_linear": FlexibleBody("b", beam_cb(3, damping=1e-3), stiffening=False),
            "rigid": RigidBody.box("r", (0.3, 0.05, 0.02), 7850.0, com=(0.12, 0.01, -0.02))}


@pytest.mark.parametrize("kind", ["beam", "beam_linear", "beam_damped", "beam_damped_linear",
                                  "rigid"])
def test_ffrf_kernel_equals_reference(kind):
    """``ffrf_residual`` and ``ffrf_tangent`` of both modules on the same arguments, at
    small and sizeable elastic coordinates (``qs`` = 5e-2: the stiffening terms matter)."""
    body = _bodies()[kind]
    if kind != "rigid":
        assert body.uses_stiffening == ("linear" not in kind)
        assert ("damped" in kind) == bool(np.any(body.body.D_e))
    rng = np.random.default_rng(7)
    for qs in (1e-3, 5e-2):
        for _ in range(4):
            args = (*body._state_args(*_state(rng, body, qs), G), *body.kernel_args())
            _close(ffrf_kernel.ffrf_residual(*args), ffrf_reference.ffrf_residual(*args), 1e-13)
            targs = (*args[:10], *body.tangent_args())
            for X, Xr in zip(ffrf_kernel.ffrf_tangent(*targs),
                             ffrf_reference.ffrf_tangent(*targs), strict=True):
                _close(X, Xr, 1e-13)


def _pack(stiffening):
    bodies = [RigidBody.box("a", (0.3, 0.05, 0.02), 7850.0, com=(0.12, 0.01, -0.02)),
              FlexibleBody("f", beam_cb(3, damping=1e-3), stiffening=stiffening),
              fm.PointMass("p", 0.7),
              RigidBody.box("c", (0.1, 0.1, 0.1), 2700.0)]
    offs = np.cumsum([0] + [b.n_coords for b in bodies])[:-1]
    return bodies, offs, BodyPack(bodies, offs)


@pytest.mark.parametrize("stiffening", [True, False])
def test_bodies_kernels_equal_reference(stiffening):
    """``bodies_residual`` and ``bodies_newton_values`` of both modules on one pack of a
    rigid body, a damped flexible body, a point mass (``n_q = -4``) and a rigid body."""
    bodies, _, pack = _pack(stiffening)
    rng = np.random.default_rng(12)
    parts = [_state(rng, b) if b.n_coords >= 7 else tuple(rng.normal(size=(3, 3)))
             for b in bodies]
    q, qd, qdd = (np.concatenate([p[k] for p in parts]) for k in range(3))
    _close(ffrf_kernel.bodies_residual(q, qd, qdd, G, *pack.args),
           ffrf_reference.bodies_residual(q, qd, qdd, G, *pack.args), 1e-13)
    nargs = (q, qd, qdd, G, 0.7, 0.3, 1.1, *pack.args[:5], *pack.flats[:5],
             *pack.tangent_pack())
    _close(pack.newton_values(q, qd, qdd, G, 0.7, 0.3, 1.1),  # bodies_newton_values_c
           ffrf_reference.bodies_newton_values(*nargs), 1e-13)


@pytest.mark.parametrize("stiffening", [True, False])
def test_body_pack_equals_body_by_body(stiffening, kernels):
    """All bodies in one compiled call (``BodyPack``: residuals and scaled tangents)
    against each body's own ``residual``/``tangent`` on either backend."""
    bodies, offs, pack = _pack(stiffening)
    rng = np.random.default_rng(12)
    parts = [_state(rng, b) if b.n_coords >= 7 else tuple(rng.normal(size=(3, 3)))
             for b in bodies]
    q, qd, qdd = (np.concatenate([p[k] for p in parts]) for k in range(3))
    r = pack.residual(q, qd, qdd, G)
    vals = pack.newton_values(q, qd, qdd, G, 0.7, 0.3, 1.1)
    pos = 0
    for b, o, (qb, qdb, qddb) in zip(bodies, offs, parts, strict=True):
        _close(r[o:o + b.n_coords], b.residual(qb, qdb, qddb, G), 1e-13)
        K, C, M = b.tangent(qb, qdb, qddb, G)
        block = (0.7 * K + 0.3 * C + 1.1 * M).ravel()
        _close(vals[pos:pos + block.size], block, 1e-13)
        pos += block.size
    assert pos == vals.size


def test_rigid_kernel_is_the_general_kernel_bit_for_bit():
    """``rigid_kernel.rigid_residual`` (scalars, no allocation) against ``ffrf_residual``
    at ``n_q = 0``: the same sums in the same order, so equal to the last bit, also at
    a non-unit ``e``, at rest (signed zeros) and at an offset in a longer vector."""
    body = _bodies()["rigid"]
    rng = np.random.default_rng(21)
    lin0 = body.kernel_args()[1]
    states = [_state(rng, body) for _ in range(6)]
    states.append((np.array([0.1, -0.2, 0.3, 1.3, -0.2, 0.1, 0.4]), np.zeros(7), np.zeros(7)))
    for q, qd, qdd in states:
        ref = ffrf_kernel.ffrf_residual(*body._state_args(q, qd, qdd, G),
                                        *body.kernel_args())
        out = np.full(12, np.nan)
        pad = [np.concatenate([np.ones(3), v, np.ones(2)]) for v in (q, qd, qdd)]
        rigid_kernel.rigid_residual(*pad, G, body.kernel_args()[0], lin0, out, 3)
        assert out[3:10].tobytes() == ref.tobytes()
        assert np.isnan(out[:3]).all() and np.isnan(out[10:]).all()   # nothing else written



def test_rigid_tangent_is_the_general_kernel_bit_for_bit():
    """``rigid_kernel.rigid_tangent`` (the Newton matrix block ``c_K K + c_C C + c_M M`` in
    a work array, no allocation) against ``ffrf_tangent`` at ``n_q = 0`` combined in the
    same order: equal to the last bit at random states, a non-unit ``e``, at rest, and at
    an offset in longer vectors; nothing outside its 49 entries written."""
    body = _bodies()["rigid"]
    rng = np.random.default_rng(22)
    lin0 = body.kernel_args()[1]
    states = [_state(rng, body) for _ in range(6)]
    states.append((np.array([0.1, -0.2, 0.3, 1.3, -0.2, 0.1, 0.4]), np.zeros(7), np.zeros(7)))
    for (q, qd, qdd), (cK, cC, cM) in zip(states, rng.normal(size=(len(states), 3)),
                                          strict=True):
        K, C, M = ffrf_kernel.ffrf_tangent(*body._state_args(q, qd, qdd, G),
                                           *body.kernel_args()[:6], *body.tangent_args())
        ref = (cK * K + cC * C + cM * M).ravel()
        out = np.full(60, np.nan)
        pad = [np.concatenate([np.ones(3), v, np.ones(2)]) for v in (q, qd, qdd)]
        work = np.full(rigid_kernel.RIGID_WORK, np.nan)
        rigid_kernel.rigid_tangent(*pad, G, body.kernel_args()[0], lin0, cK, cC, cM, work,
                                   out, 3, 5)
        assert out[5:54].tobytes() == ref.tobytes()
        assert np.isnan(out[:5]).all() and np.isnan(out[54:]).all()

def test_ffrf_stiffening_is_the_elastic_force(kernels):
    """With the frame at rest and no gravity the residual is ``f_e = h_e(q_e)``."""
    fb = FlexibleBody("b", beam_cb(4), stiffening=True)
    rng = np.random.default_rng(3)
    q = np.concatenate([np.zeros(3), [1.0, 0, 0, 0], 0.05 * rng.normal(size=fb.n_q)])
    z = np.zeros(fb.n_coords)
    r = fb.residual(q, z, z, np.zeros(3))
    h = fb.elastic_force(q[7:])
    assert np.abs(r[7:] - h).max() <= 1e-13 * np.abs(h).max()
    assert np.abs(h - fb.body.K_e @ q[7:]).max() > 1e-3 * np.abs(h).max()   # K2, K3 matter


def test_rigid_body_equals_newton_euler_formulation(kernels):
    """``RigidBody.residual``/``tangent`` (the floating frame with ``n_q = 0``) against
    the Newton-Euler rows and their derivatives (``newton_euler.py``)."""
    rb = RigidBody.box("r", (0.3, 0.05, 0.02), 7850.0, com=(0.12, 0.01, -0.02))
    rng = np.random.default_rng(9)
    for _ in range(5):
        q = np.concatenate([rng.normal(size=3), random_unit_e(rng)])
        qd, qdd = rng.normal(size=7), rng.normal(size=7)
        _close(rb.residual(q, qd, qdd, G), newton_euler.residual(rb, q, qd, qdd, G), 1e-13)
        _close(rb.tangent(q, qd, qdd, G), newton_euler.tangent(rb, q, qd, qdd, G), 1e-13)


def test_bodies_accept_read_only_and_strided_input(kernels):
    """Read-only, strided or list arguments are copied to the one compiled signature and
    give the same numbers as contiguous arrays, on either backend."""
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
    K = fb.tangent(q, qd, qdd, G)
    for X, Y in zip(fb.tangent(strided, list(qd), qdd, G), K, strict=True):
        assert np.array_equal(X, Y)


def test_bodies_reject_wrong_shapes_with_a_clear_error(kernels):
    """The kernels do not check indices, so the bodies check the shapes first (on either
    backend): a short state names the body, the argument, the expected and the found
    shape."""
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


# -- frame_kernel / frame_reference ------------------------------------------------------
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
    for m, o in zip(markers, offsets, strict=True):
        if o is not None:
            nb = m.body.n_coords
            x[o:o + 3] = rng.normal(size=3)
            x[o + 3:o + 7] = random_unit_e(rng)
            x[o + 7:o + nb] = 1e-2 * rng.normal(size=nb - 7)
    return x


@pytest.mark.parametrize("kind", ["flexible", "rigid"])
def test_fill_frame_kernel_equals_reference(kind):
    """``fill_frame`` of both modules into the same templates, at a non-unit ``e``."""
    markers, offsets, n = _pair(kind, "ground")
    mk, off = markers[0], offsets[0]
    rng = np.random.default_rng(2)
    x = _random_x(markers, offsets, n, rng)
    x[off + 3:off + 7] *= 1.3
    q_b = arg(x[off:off + mk.body.n_coords])
    out = []
    for module in (frame_kernel, frame_reference):
        V, D = np.zeros((4, 3)), np.zeros((4, 3, n))
        module.fill_frame(q_b, *kernel_consts(mk, kind), off, V, D)
        out.append((V, D))
    _close(out[0], out[1], 1e-14)


@FRAME_MODULES
@pytest.mark.parametrize("kinds", [("flexible", "ground"), ("rigid", "flexible"),
                                   ("ground", "rigid")])
def test_fill_frame_equals_numpy_frames_and_differences(kinds, frames, monkeypatch):
    """``fill_frame`` (the order-1 path of ``PairFrames.evaluate``) of each module against
    the order-2 numpy path and against central differences of the frame vectors (an
    independent check of ``dA/de`` in closed form)."""
    from flexmbs import compiled        # the switch, asked at each call (backend())
    monkeypatch.setattr(compiled, "KERNELS",
                        "compiled" if frames is frame_kernel else "reference")
    markers, offsets, n = _pair(*kinds)
    pf = PairFrames(markers, offsets, n)
    rng = np.random.default_rng(11)

    def q_bodies(x):
        return [None if o is None else x[o:o + m.body.n_coords]
                for m, o in zip(markers, offsets, strict=True)]

    for _ in range(4):
        x = _random_x(markers, offsets, n, rng)
        C1, D1, _ = pf.evaluate(q_bodies(x), 1)
        C2, D2, _ = pf.evaluate(q_bodies(x), 2)
        assert np.abs(C1 - C2).max() <= 1e-14 * np.abs(C2).max()
        assert np.abs(D1 - D2).max() <= 1e-14 * np.abs(D2).max()
        D_fd = fd_jacobian(lambda y: pf.evaluate(q_bodies(y), 1)[0], x)
        assert np.abs(D1 - D_fd).max() <= 1e-8 * np.abs(D_fd).max()


@FRAME_MODULES
def test_label_rows_equal_numpy_rows_and_jets(frames):
    """``label_rows`` of each module against ``LabelRows.evaluate`` with Hessians (numpy)
    and the jet algebra of ``LabelRows.jets``."""
    markers, offsets, n = _pair("rigid", "flexible")
    pf = PairFrames(markers, offsets, n)
    rows = LabelRows(["x", "y", "z", "x_P.y_Q", "z_P.x_Q", "y_P.d", "z_P.z_Q"])
    rng = np.random.default_rng(5)
    x = _random_x(markers, offsets, n, rng)
    qb = [x[o:o + m.body.n_coords] for m, o in zip(markers, offsets, strict=True)]
    C, D, H = pf.evaluate(qb, 2)
    g1, dg1 = frames.label_rows(*rows._kernel_args(), arg(C), arg(D))
    g2, dg2, _ = rows.evaluate(C, D, H)
    assert np.abs(g1 - g2).max() <= 1e-14 * max(1.0, np.abs(g2).max())
    assert np.abs(dg1 - dg2).max() <= 1e-14 * np.abs(dg2).max()
    P, Q = pf.frame_jets(C, D, H)
    jets = rows.jets(P, Q)
    assert np.allclose(g1, [float(j.v) for j in jets], rtol=0, atol=1e-14)
    assert np.allclose(dg1, [j.d for j in jets], rtol=0, atol=1e-14 * np.abs(dg1).max())


@FRAME_MODULES
@pytest.mark.parametrize("shape", [(3, 8, 5), (17, 32, 21)])
def test_label_rows_any_number_of_frame_vectors(shape, frames):
    """The stacked rows of a whole system (V = 4 M frame vectors) of each module against
    the products of ``flexmbs.system.stacked``'s formulation, on random data."""
    R, V, N = shape
    rng = np.random.default_rng(2)
    Sa, Sb, k = rng.normal(size=(R, V)), rng.normal(size=(R, V)), rng.normal(size=(R, 3))
    C, D = rng.normal(size=(V, 3)), rng.normal(size=(V, 3, N))
    al, be = Sa @ C + k, Sb @ C
    dal, dbe = np.einsum("rv,vin->rin", Sa, D), np.einsum("rv,vin->rin", Sb, D)
    g, dg = frames.label_rows(Sa, Sb, k, C, D)
    assert np.abs(g - np.einsum("ri,ri->r", al, be)).max() <= 1e-13 * np.abs(g).max()
    ref = np.einsum("ri,rin->rn", al, dbe) + np.einsum("ri,rin->rn", be, dal)
    assert np.abs(dg - ref).max() <= 1e-13 * np.abs(ref).max()


@FRAME_MODULES
@pytest.mark.parametrize("kinds", [("rigid", "flexible"), ("flexible", "ground"),
                                   ("ground", "rigid")])
def test_label_hessian_sum_equals_numpy_and_full_hessians(kinds, frames):
    """``label_hessian_sum`` of each module against ``LabelRows.hessian_sum`` with
    ``PairFrames.hessian_contract`` (numpy) and against ``sum_r mu_r h_r`` of the rows'
    full Hessians (``LabelRows.evaluate`` with the frame Hessians ``H``)."""
    markers, offsets, n = _pair(*kinds)
    pf = PairFrames(markers, offsets, n)
    rows = LabelRows(["x", "y", "z", "x_P.y_Q", "z_P.x_Q", "y_P.d", "z_P.z_Q"])
    rng = np.random.default_rng(8)
    x = _random_x(markers, offsets, n, rng)
    qb = [None if o is None else x[o:o + m.body.n_coords]
          for m, o in zip(markers, offsets, strict=True)]
    C, D, H = pf.evaluate(qb, 2)
    mu = rng.normal(size=len(rows.labels))
    got = frames.label_hessian_sum(*rows._kernel_args(), arg(C), arg(D), arg(mu), T_A_KERNEL,
                                   *pf.kernel_markers(qb))
    ref = rows.hessian_sum(C, D, lambda W: pf.hessian_contract(W, qb), mu)
    full = np.einsum("r,rab->ab", mu, rows.evaluate(C, D, H)[2])
    scale = np.abs(full).max()
    assert np.abs(got - ref).max() <= 1e-13 * scale
    assert np.abs(got - full).max() <= 1e-13 * scale


def _assembled():
    """Ground - revolute - rigid crank - revolute - flexible rod - spherical - point mass:
    ground, rigid, flexible and point-mass markers, two normalisations."""
    rod = FlexibleBody("rod", pendulum_cb(2))
    crank = RigidBody.box("crank", (0.3, 0.02, 0.02), 7850.0, com=(0.15, 0, 0))
    tip = int(np.argmax(rod.body.points[:, 0]))
    mass = fm.PointMass("m", 0.5)
    model = fm.System(gravity=(0, -9.81, 0))
    model.add(crank, rod, mass,
              fm.Revolute("J1", fm.ground, crank, at=(0.0, 0.0, 0.0), axis="z"),
              fm.Revolute("J2", crank.marker("end", s=(0.3, 0, 0)), rod["pin"], axis="z"),
              fm.Spherical("J3", rod.node_marker("tip", tip), mass.marker("c")))
    return model.assemble()


def test_stacked_rows_and_hessian_kernel_equal_reference():
    """``stacked_rows`` and ``stacked_hessian_sum`` of both modules on the data of an
    assembled system (``StackedRows``), at random coordinates with non-unit ``e``."""
    from flexmbs.system.stacked import StackedRows
    asm = _assembled()
    st = StackedRows(asm)
    data = st.kernel_data
    rng = np.random.default_rng(6)
    q = arg(rng.normal(size=asm.n_q))
    out = [m.stacked_rows(q, *data, st.n_rows_all) for m in (frame_kernel, frame_reference)]
    _close(out[0], out[1], 1e-13)
    C, D = out[0][2], out[0][3]
    (_, _, start, nq, U0T, W12, _, wptr, Sa, Sb, kc, _, _, _, norm_idx) = data
    assert np.any(start >= 0) and np.any(start <= -2) and np.any(start == -1)
    assert len(norm_idx) == 2
    mu, mu_norm = rng.normal(size=Sa.shape[0]), rng.normal(size=len(norm_idx))
    H = [m.stacked_hessian_sum(q, C, D, start, nq, U0T, W12, wptr, Sa, Sb, kc, mu, T_A_KERNEL,
                               norm_idx, mu_norm) for m in (frame_kernel, frame_reference)]
    _close(H[0], H[1], 1e-13)
