"""The compiled force elements of systems above the stacked rows' size
(flexmbs.system.spring_pack.LocalSprings, flexmbs.forces.spring_local_kernel) on a chain
of 16 flexible links (the chain of benchmarks/scaling.py, 240 coordinates) with
spring-dampers, torsion springs, bushings, a tabulated spring, a rope, a joint stop and
point forces between and on the links: the kernel against its numpy reference on the frames made
dense, the system's residual against the Python elements (frame jets) to round-off, the
Newton matrix's damping part against the Python elements' to round-off (the stiffness
part leaves out the measures' curvature like the dense kernel, against which it is
checked), and a simulation against the Python path to the Newton tolerance."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
import flexmbs.compiled
from flexmbs.forces import spring_reference
from flexmbs.forces.bushing import Bushing
from flexmbs.forces.external import ExternalForce
from flexmbs.forces.nonlinear_spring import NonlinearSpring
from flexmbs.forces.one_sided import Rope
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.forces.stops import JointStop
from flexmbs.forces.spring_local_kernel import spring_local_newton, spring_local_residual
from flexmbs.system.assembly import AssembledSystem
from flexmbs.system.stacked import MAX_N

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reduction"))
from boxmesh import box_meshio  # noqa: E402

pytestmark = pytest.mark.skipif(not flexmbs.compiled.use_compiled(), reason="the local "
                                "springs exist only with the compiled kernels")
LINK = (0.2, 0.02, 0.02)


@pytest.fixture(scope="module")
def link():
    """The chain link of benchmarks/scaling.py: hex27 10x1x1 steel, Craig--Bampton with
    2 fixed-interface modes and RBE2 frames at both ends."""
    from flexmbs.fe.assemble import assemble
    from flexmbs.fe.material import material_from_name
    from flexmbs.io.mesh import mesh_from_meshio
    from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model
    mesh = mesh_from_meshio(box_meshio("hex27", (10, 1, 1), LINK), source="link")
    fe = assemble(mesh, material_from_name("steel"))
    specs = (InterfaceSpec("x0", "rbe2"), InterfaceSpec("x1", "rbe2"))
    return reduce_model(fe, ReductionSettings(n_modes=2, interfaces=specs,
                                              frame="interface:x0", static_modes=False),
                        name="link")


def chain(body, n=16):
    """``n`` links pinned end to end about z (the scaling chain) with, between each pair,
    a torsion spring on the pin and alternately a spring-damper or a bushing from the
    middle of one link to the middle of the next; a tabulated spring from the ground,
    a rope, a smoothed stop on the second pin's angle, an inertial and a follower force."""
    links = [fm.FlexibleBody(f"link{i}", body, r0=(i * LINK[0], 0.0, 0.0)) for i in range(n)]
    model = fm.System(gravity=(0.0, -9.81, 0.0), name=f"chain_{n}")
    model.add(fm.Revolute("pin", fm.ground, links[0]["x0"], axis="z"))
    for i in range(1, n):
        J = fm.Revolute(f"J{i}", links[i - 1]["x1"], links[i]["x0"], axis="z")
        model.add(J, RotationalSpringDamper(f"t{i}", joint=J, k=2.0 + i, d=0.01, angle0=0.02))
        mid0, mid1 = ((i - 0.5) * LINK[0], 0.0, 0.0), ((i + 0.5) * LINK[0], 0.0, 0.0)
        if i % 2:
            model.add(PointToPointSpringDamper(f"s{i}", first=(links[i - 1], mid0),
                                               second=(links[i], mid1), k=300.0, d=0.5,
                                               l0=0.19))
        else:
            model.add(Bushing(f"b{i}", first=(links[i - 1], mid0), second=(links[i], mid1),
                              K=(50.0, 80.0, 60.0, 2.0, 3.0, 4.0),
                              D=(0.5, 0.5, 0.5, 0.01, 0.01, 0.01)))
    end = n * LINK[0]
    model.add(
        NonlinearSpring("nl", first=(fm.ground, (end, -0.3, 0.0)), second=links[-1]["x1"],
                        deflection=(-0.1, 0.0, 0.05, 0.2), force=(-3.0, 0.0, 0.8, 9.0), d=0.1),
        Rope("rope", first=(fm.ground, (0.5 * end, 0.2, 0.0)),
             second=(links[n // 2], ((n // 2 + 0.5) * LINK[0], 0.0, 0.0)), k=200.0, d=0.5,
             l0=0.1),
        JointStop("stop", joint=model.joints[1], lower=-0.01, upper=0.01, k=5.0, d=0.05,
                  smoothing=0.005, coordinate="angle"),
        ExternalForce("push", at=links[3]["x1"], force=(0.5, -1.0, 0.0)),
        ExternalForce("follow", at=links[-1]["x1"], force=(0.0, 0.3, 0.0), frame="body"))
    return model


@pytest.fixture(scope="module")
def system(link):
    return AssembledSystem(chain(link))


def state(system, seed):
    """A state near the initial one: ``(q, qd)``, Euler parameters normalised."""
    rng = np.random.default_rng(seed)
    q = system.initial_q() + 0.02 * rng.standard_normal(system.n_q)
    return system.normalize(q), rng.standard_normal(system.n_q)


def test_the_chain_is_above_the_stacked_rows_and_every_element_is_compiled(system):
    ls = system.local_springs()
    assert system.n_q > MAX_N and system.affine_plan() is None
    assert ls is not None and len(ls) == len(system.force_blocks) and not ls.others


@pytest.mark.parametrize("seed", [0, 1])
def test_kernel_equals_the_reference_on_dense_frames(system, seed):
    ls = system.local_springs()
    q, qd = state(system, seed)
    r = np.zeros(system.n_q)
    C, D = ls.frames(q)
    spring_local_residual(r, qd, C, D, ls.pm, ls.cols, ls.sp_int, ls.pack.sp_par,
                          ls.pack.sp_tab)
    ref = np.zeros(system.n_q)
    Cd, Dd = ls.dense_frames(q)
    spring_reference.spring_residual(ref, q, qd, Cd, Dd, ls.pack.sp_int, ls.pack.sp_par,
                                     ls.pack.sp_tab)
    assert np.abs(ref).max() > 1.0
    np.testing.assert_allclose(r, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("seed", [0, 1])
def test_newton_blocks_equal_the_reference_on_dense_frames(system, seed):
    ls = system.local_springs()
    q, qd = state(system, seed)
    n = system.n_q
    vals = np.empty(int(ls.ptr[-1]))
    C, D = ls.frames(q)
    spring_local_newton(vals, qd, C, D, ls.pm, ls.cols, ls.pos, ls.ptr, ls.sp_int,
                        ls.pack.sp_par, ls.pack.sp_tab, 0.7, 0.3)
    out = np.zeros((n, n))
    for e, fb in enumerate(ls.pack.blocks):
        nb = len(fb.idx)
        out[np.ix_(fb.idx, fb.idx)] += vals[ls.ptr[e]:ls.ptr[e + 1]].reshape(nb, nb)
    ref = np.zeros((n, n))
    Cd, Dd = ls.dense_frames(q)
    spring_reference.spring_newton(ref, q, qd, Cd, Dd, ls.pack.sp_int, ls.pack.sp_par,
                                   ls.pack.sp_tab, 0.7, 0.3)
    assert np.abs(ref).max() > 1.0
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("seed", [0, 1])
def test_newton_matrix_damping_part_equals_the_python_elements(system, seed, monkeypatch):
    """``c_K = 0``: the elements' ``-dQ/dqd = F_sd grad s grad s^T`` is exact in both."""
    q, qd = state(system, seed)
    qdd = np.zeros(system.n_q)
    lam = np.random.default_rng(seed + 20).standard_normal(system.n_lam)
    fast = system.newton_matrix(q, qd, qdd, lam, 0.1, 0.0, 1.0, 0.0)
    monkeypatch.setattr(AssembledSystem, "local_springs", lambda self: None)
    slow = system.newton_matrix(q, qd, qdd, lam, 0.1, 0.0, 1.0, 0.0)
    assert np.array_equal(fast.indices, slow.indices)
    scale = np.abs(slow.data).max()
    np.testing.assert_allclose(fast.data, slow.data, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_residual_equals_the_python_elements(system, seed, monkeypatch):
    q, qd = state(system, seed)
    qdd = np.random.default_rng(seed + 10).standard_normal(system.n_q)
    lam = np.random.default_rng(seed + 20).standard_normal(system.n_lam)
    fast = system.residual(q, qd, qdd, lam, 0.1)
    monkeypatch.setattr(AssembledSystem, "local_springs", lambda self: None)
    slow = system.residual(q, qd, qdd, lam, 0.1)
    Q = np.zeros(system.n_q)                     # the elements' forces alone, for the scale
    for fb, c in system.force_contributions(q, qd, 0.1, 1):
        Q[fb.idx] += c.Q[:-1]
    assert np.abs(Q).max() > 1.0
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-11 * np.abs(slow).max())


def test_simulation_equals_the_python_path(link, monkeypatch):
    """0.03 s at h = 1e-3 s: the same trajectory to the Newton tolerance."""
    fast = fm.simulate(chain(link), 0.03, 1e-3, rho_inf=0.9, output_dt=0.01)
    monkeypatch.setattr(AssembledSystem, "local_springs", lambda self: None)
    slow = fm.simulate(chain(link), 0.03, 1e-3, rho_inf=0.9, output_dt=0.01)
    assert np.abs(slow.q[-1] - slow.q[0]).max() > 1e-4          # it moved
    np.testing.assert_allclose(fast.q, slow.q, rtol=0, atol=1e-7)


def test_wrong_shapes_name_the_springs_and_the_array(system):
    """A short ``q``, ``qd`` or residual is refused before a kernel reads past its end,
    naming the springs, the array, the shape expected and the one found."""
    ls = system.local_springs()
    n = system.n_q
    q, qd = state(system, 0)
    r = np.zeros(n)
    with pytest.raises(ValueError, match=rf"LocalSprings \('.*'\): q must have shape "
                                         rf"\({n},\), got \({n - 1},\)"):
        ls.residual(r, q[:-1], qd, 0.0)
    with pytest.raises(ValueError, match=rf"LocalSprings .*: qd must have shape \({n},\)"):
        ls.newton_values(q, qd[:-1], 0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match=rf"LocalSprings .*: r must be a C-contiguous float "
                                         rf"array of shape \({n},\), got int64 \({n},\)"):
        ls.residual(np.zeros(n, dtype=np.int64), q, qd, 0.0)
    ls.residual(r, q, qd, 0.0)
    assert np.abs(r).max() > 0.0
