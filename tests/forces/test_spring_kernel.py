"""The compiled spring-dampers, torsion springs, bushings, point forces, ropes,
compression springs and joint stops of the whole step (flexmbs.forces.spring_kernel)
against their numpy reference, against the elements' own formulation (frame jets,
flexmbs.forces.*) and finite differences, on rigid and floating-frame elastic markers;
the one-sided laws open, exactly at contact and closed, and against the two-sided
elements where engaged; over a simulation against the Python path; a mass on a
spring-damper against the closed-form damped oscillation; bad inputs refused in one
line."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
import flexmbs.compiled
from flexmbs.forces.bushing import Bushing
from flexmbs.forces.external import ExternalForce
from flexmbs.forces.nonlinear_spring import NonlinearRotationalSpring, NonlinearSpring
from flexmbs.forces.one_sided import CompressionSpring, Rope
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.spring_columns import ANGLE_STOP, AXIAL_STOP, FORCE, SLIDE_STOP, kind_code
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.forces.stops import JointStop
from flexmbs.integrate.affine_step import AffineStep
from flexmbs.kinematics.time_functions import Sine
from flexmbs.system import spring_pack

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bodies"))
from flexcases import beam_cb  # noqa: E402

pytestmark = pytest.mark.skipif(not flexmbs.compiled.use_compiled(), reason="the stacked "
                                "frames exist only with the compiled kernels")


def rigid_model():
    """A crank on a revolute with a torsion spring, a free box held to it by a bushing
    and to the ground by a linear and a tabulated spring-damper, loaded by a constant
    inertial force and a follower force in its own axes."""
    crank = fm.RigidBody.box("crank", (0.3, 0.02, 0.02), 7850.0, com=(0.15, 0, 0))
    box = fm.RigidBody.box("box", (0.05, 0.04, 0.03), 2700.0, r0=(0.3, 0.01, 0.0))
    pin = fm.Revolute("pin", fm.ground, crank, at=(0, 0, 0), axis="z")
    return fm.System(gravity=(0.0, -9.81, 0.0)).add(
        crank, box, pin,
        RotationalSpringDamper("torsion", joint=pin, k=3.0, d=0.02, angle0=0.1),
        NonlinearRotationalSpring("torsion-nl", joint=pin, angle=(-1.0, 0.0, 0.5, 1.0),
                                  moment=(-2.0, 0.0, 0.4, 3.0)),
        Bushing("bush", first=(crank, (0.3, 0.0, 0.0)), second=box,
                K=(1e4, 2e4, 3e4, 50.0, 60.0, 70.0), D=(10.0, 20.0, 30.0, 0.1, 0.2, 0.3)),
        PointToPointSpringDamper("spring", first=(fm.ground, (0.3, 0.5, 0.0)),
                                 second=(box, (0.32, 0.01, 0.01)), k=500.0, d=2.0, l0=0.45),
        NonlinearSpring("spring-nl", first=(fm.ground, (0.0, -0.4, 0.1)), second=box,
                        deflection=(-0.1, 0.0, 0.05, 0.2), force=(-30.0, 0.0, 8.0, 90.0),
                        d=1.0),
        ExternalForce("push", at=(box, (0.31, 0.02, 0.0)), force=(1.0, -2.0, 0.5)),
        ExternalForce("follow", at=box, force=(0.0, 3.0, -1.0), frame="body"))


def flexible_model():
    """A flexible cantilever on a revolute (torsion spring), its tip held by a bushing
    to a rigid box, pulled by a spring from the ground and pushed by a follower force."""
    beam = fm.FlexibleBody("beam", beam_cb(3))
    box = fm.RigidBody.box("box", (0.05, 0.05, 0.05), 2700.0, r0=(1.0, 0.05, 0.05))
    pin = fm.Revolute("pin", fm.ground, beam["clamp"], axis="z")
    return fm.System(gravity=(0.0, -9.81, 0.0)).add(
        beam, box, pin,
        RotationalSpringDamper("torsion", joint=pin, k=40.0, d=0.5),
        Bushing("bush", first=beam["tip"], second=box,
                K=(1e5, 1e5, 1e5, 1e3, 1e3, 1e3), D=(50.0,) * 3 + (0.5,) * 3),
        PointToPointSpringDamper("spring", first=(fm.ground, (1.0, 0.8, 0.0)),
                                 second=beam["tip"], k=2e3, d=5.0),
        ExternalForce("follow", at=beam["tip"], force=(0.0, -20.0, 4.0), frame="body"))


def stops_model(pin_upper=-0.05, slide_lower=0.02):
    """A crank on a revolute with a stop on its angle (closed above ``pin_upper``; 0 at
    the start), a slider on a prismatic along x with a smoothed stop on its displacement
    (closed below ``slide_lower``), the crank's tip on a taut rope and a slack one, the
    slider pushed by a compression spring, a flexible cantilever's tip on a rope."""
    crank = fm.RigidBody.box("crank", (0.3, 0.02, 0.02), 7850.0, com=(0.15, 0, 0))
    slider = fm.RigidBody.box("slider", (0.05, 0.04, 0.03), 2700.0, r0=(0.5, 0.2, 0.0))
    beam = fm.FlexibleBody("beam", beam_cb(3))
    pin = fm.Revolute("pin", fm.ground, crank, at=(0, 0, 0), axis="z")
    guide = fm.Prismatic("guide", fm.ground, slider, at=(0.5, 0.2, 0.0), axis="x")
    clamp = fm.Revolute("clamp", fm.ground, beam["clamp"], axis="z")
    tip = (crank, (0.3, 0.0, 0.0))
    return fm.System(gravity=(0.0, -9.81, 0.0)).add(
        crank, slider, beam, pin, guide, clamp,
        JointStop("pin-stop", joint=pin, lower=-1.0, upper=pin_upper, k=40.0, d=0.3,
                  coordinate="angle"),
        JointStop("slide-stop", joint=guide, lower=slide_lower, upper=0.3, k=2e3, d=5.0,
                  smoothing=0.05, coordinate="displacement"),
        Rope("rope", first=(fm.ground, (0.3, 0.4, 0.0)), second=tip, k=800.0, d=3.0,
             l0=0.37),
        Rope("slack", first=(fm.ground, (0.0, 0.3, 0.1)), second=tip, k=800.0, d=3.0,
             l0=1.0),
        CompressionSpring("buffer", first=(fm.ground, (0.8, 0.2, 0.0)), second=slider,
                          k=500.0, d=2.0, l0=0.33, smoothing=0.01),
        Rope("beam-rope", first=(fm.ground, (1.0, 0.6, 0.0)), second=beam["tip"],
             k=2e3, d=5.0, l0=0.55))


MODELS = {"rigid": rigid_model, "flexible": flexible_model, "stops": stops_model}


def state(asm, seed, scale=1e-2):
    rng = np.random.default_rng(seed)
    q = asm.normalize(asm.initial_q() + scale * rng.normal(size=asm.n_q))
    return q, rng.normal(size=asm.n_q)


def evaluate(asm, q, qd, c_K, c_C, kernels, monkeypatch):
    monkeypatch.setattr(flexmbs.compiled, "KERNELS", kernels)
    st = asm.constraint_rows.stacked()
    st.dense(q, 0.0)
    C, D = st.last
    pack = asm.affine_plan().springs
    r, out = np.zeros(asm.n_q), np.zeros((asm.n_q, asm.n_q))
    pack.residual(r, q, qd, C, D)
    pack.newton(out, q, qd, C, D, c_K, c_C)
    return r, out


def elements(asm, q, qd, skip=()):
    """``(-Q, -dQ/dq, -dQ/dqd)`` of the pack's elements by their own ``contribution``."""
    n = asm.n_q
    r, K, C = np.zeros(n), np.zeros((n, n)), np.zeros((n, n))
    covered = asm.affine_plan().springs
    for fb, c in asm.force_contributions(q, qd, 0.0, 2):
        if not covered.covers(fb) or fb.element.name in skip:
            continue
        i = fb.idx
        r[i] -= c.Q[:-1]
        K[np.ix_(i, i)] -= c.dQ_dx[:-1, :-1]
        C[np.ix_(i, i)] -= c.dQ_dxd[:-1, :-1]
    return r, K, C


@pytest.mark.parametrize("name", MODELS)
def test_every_element_is_covered(name):
    asm = MODELS[name]().assemble()
    plan = asm.affine_plan()
    assert len(plan.springs) == len(asm.force_blocks)
    assert AffineStep(asm, plan).native


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("seed", [1, 2])
def test_kernel_equals_reference(name, seed, monkeypatch):
    asm = MODELS[name]().assemble()
    q, qd = state(asm, seed)
    r_k, N_k = evaluate(asm, q, qd, 0.7, 1.3, "compiled", monkeypatch)
    r_r, N_r = evaluate(asm, q, qd, 0.7, 1.3, "reference", monkeypatch)
    assert np.abs(r_k).max() > 0 and np.abs(N_k).max() > 0
    np.testing.assert_allclose(r_k, r_r, rtol=1e-12, atol=1e-12 * np.abs(r_r).max())
    np.testing.assert_allclose(N_k, N_r, rtol=1e-12, atol=1e-12 * np.abs(N_r).max())


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("seed", [3, 4])
def test_kernel_equals_the_elements_own_formulation(name, seed, monkeypatch):
    """-Q and dQ/dqd in full against the elements' ``contribution`` (frame jets) at random
    states; dQ/dqd also against central differences of the residual in ``qd``."""
    asm = MODELS[name]().assemble()
    q, qd = state(asm, seed)
    r_ref, _, C_ref = elements(asm, q, qd)
    r, NC = evaluate(asm, q, qd, 0.0, 1.0, "compiled", monkeypatch)
    tol = 1e-10
    np.testing.assert_allclose(r, r_ref, rtol=tol, atol=tol * np.abs(r_ref).max())
    np.testing.assert_allclose(NC, C_ref, rtol=tol, atol=tol * np.abs(C_ref).max())
    h, n = 1e-6, asm.n_q
    fd = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        fd[:, j] = (evaluate(asm, q, qd + e, 0, 0, "compiled", monkeypatch)[0]
                    - evaluate(asm, q, qd - e, 0, 0, "compiled", monkeypatch)[0]) / (2 * h)
    np.testing.assert_allclose(NC, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


def test_stiffness_equals_finite_differences_where_the_forces_vanish(monkeypatch):
    """At the flexible model's initial configuration every deflection is zero (free
    length and unloaded bushing taken there); at rest and without the point force the
    curvature terms the kernel leaves out of dQ/dq vanish: its ``-dQ/dq`` equals the
    central differences of the residual in ``q``, and the elements' own."""
    asm = flexible_model().assemble()
    pack = asm.affine_plan().springs
    pack.sp_par[pack.sp_int[:, 0] == FORCE, 0:3] = 0.0
    q, qd = asm.initial_q(), np.zeros(asm.n_q)
    _, NK = evaluate(asm, q, qd, 1.0, 0.0, "compiled", monkeypatch)
    h, n = 1e-7, asm.n_q
    fd = np.empty((n, n))
    for j in range(n):
        dq = np.zeros(n)
        dq[j] = h
        fd[:, j] = (evaluate(asm, q + dq, qd, 0, 0, "compiled", monkeypatch)[0]
                    - evaluate(asm, q - dq, qd, 0, 0, "compiled", monkeypatch)[0]) / (2 * h)
    assert np.abs(fd).max() > 1e3
    np.testing.assert_allclose(NK, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())
    _, K_el, _ = elements(asm, q, qd, skip=("follow",))
    np.testing.assert_allclose(NK, K_el, rtol=1e-9, atol=1e-9 * np.abs(K_el).max())


def no_pack(monkeypatch):
    """The kernel given no elements: they are evaluated in Python."""
    empty = spring_pack.SpringPack
    monkeypatch.setattr(spring_pack.SpringPack, "of", classmethod(
        lambda cls, layout, stacked: empty((), (), (), (), (), layout.n_q)))


@pytest.mark.parametrize("name, t_end, dt", [("rigid", 0.1, 1e-3), ("flexible", 0.01, 1e-4),
                                             ("stops", 0.01, 1e-4)])
def test_step_equals_the_python_elements_and_the_reference_kernels(name, t_end, dt,
                                                                   monkeypatch):
    """The compiled step (the elements in the kernel, PETSc calls it directly, the
    compiled loop) against the same step with the elements in Python, and against the
    reference kernels (FLEXMBS_KERNELS=reference: no stacked frames, the whole system in
    numpy), to the Newton tolerance."""
    run = lambda: fm.simulate(MODELS[name](), t_end, dt, rho_inf=0.9,  # noqa: E731
                              output_dt=t_end / 5)
    fast = run()
    with monkeypatch.context() as mp:
        no_pack(mp)
        slow = run()
    with monkeypatch.context() as mp:
        mp.setattr(flexmbs.compiled, "KERNELS", "reference")
        ref = run()
    q_f = np.asarray(fast.q)
    assert np.abs(q_f[-1] - q_f[0]).max() > 1e-4                 # it moves
    for other in (slow, ref):
        np.testing.assert_allclose(q_f, np.asarray(other.q), rtol=0, atol=1e-7)


def stop_measures(asm, q, monkeypatch):
    """``{name: s}`` of the one-sided elements at ``q`` by the compiled kernel."""
    from flexmbs.forces import spring_kernel
    monkeypatch.setattr(flexmbs.compiled, "KERNELS", "compiled")
    st = asm.constraint_rows.stacked()
    st.dense(q, 0.0)
    C, D = st.last
    pack = asm.affine_plan().springs
    return {name: float(spring_kernel.measures(e, C, D, pack.sp_int, pack.sp_par)[0][0])
            for e, name in enumerate(pack.names)}


def test_the_stops_kinds():
    """Ropes and compression springs, stops on a revolute's angle and on a prismatic's
    displacement are compiled; a stop on a universal joint's angle stays in Python."""
    codes = {el.name: kind_code(el) for el in stops_model().forces}
    assert codes == {"pin-stop": ANGLE_STOP, "slide-stop": SLIDE_STOP, "rope": AXIAL_STOP,
                     "slack": AXIAL_STOP, "buffer": AXIAL_STOP, "beam-rope": AXIAL_STOP}
    a = fm.RigidBody.box("a", (0.1, 0.1, 0.1), 1000.0)
    uj = fm.Universal("uj", fm.ground, a, at=(0, 0, 0), axis="z")
    assert kind_code(JointStop("s", joint=uj, upper=0.1, k=1.0, coordinate="alpha")) is None


@pytest.mark.parametrize("where", ["open", "at contact", "closed"])
def test_stops_open_at_contact_and_closed(where, monkeypatch):
    """At the initial configuration, the crank's stop and the slider's stop put open
    (limits beyond the coordinates), exactly at contact (a limit equal to the kernel's
    own measure, so ``s - upper = 0`` in floating point) or closed: kernel, reference
    and the elements' own formulation agree (residual, ``dQ/dqd``); open or at contact
    (at rest) they give nothing, closed they give what a torsion spring-damper at
    ``angle0 = upper`` and a linear spring at the limit give (second formulation)."""
    probe = stops_model().assemble()
    q0 = probe.initial_q()
    s = stop_measures(probe, q0, monkeypatch)
    limits = {"open": (0.2, -0.3), "at contact": (s["pin-stop"], s["slide-stop"]),
              "closed": (-0.05, 0.02)}[where]
    model = stops_model(*limits)
    asm = model.assemble()
    for qd in (np.zeros(asm.n_q), state(asm, 5)[1]):
        r_k, N_k = evaluate(asm, q0, qd, 0.7, 1.3, "compiled", monkeypatch)
        r_r, N_r = evaluate(asm, q0, qd, 0.7, 1.3, "reference", monkeypatch)
        np.testing.assert_allclose(r_k, r_r, rtol=1e-12, atol=1e-12 * np.abs(r_r).max())
        np.testing.assert_allclose(N_k, N_r, rtol=1e-12, atol=1e-12 * np.abs(N_r).max())
        r_el, _, C_el = elements(asm, q0, qd)
        _, NC = evaluate(asm, q0, qd, 0.0, 1.0, "compiled", monkeypatch)
        np.testing.assert_allclose(r_k, r_el, rtol=1e-10, atol=1e-10 * np.abs(r_el).max())
        np.testing.assert_allclose(NC, C_el, rtol=1e-10, atol=1e-10 * np.abs(C_el).max())
    # the stops alone, against their two-sided equivalents (or nothing)
    stops = [el for el in model.forces if isinstance(el, JointStop)]
    others = [el for el in model.forces if not isinstance(el, JointStop)]
    pin = next(j for j in model.joints if j.name == "pin")
    qd = state(asm, 6)[1]
    only = lambda *els: fm.System(gravity=(0.0, -9.81, 0.0)).add(  # noqa: E731
        *model.bodies, *model.joints, *others, *els).assemble()
    base = evaluate(only(), q0, qd, 0.7, 1.3, "compiled", monkeypatch)
    got = evaluate(only(*stops), q0, qd, 0.7, 1.3, "compiled", monkeypatch)
    if where == "closed":           # (the slider's smoothed stop: by its elements above)
        want = evaluate(only(RotationalSpringDamper("t", joint=pin, k=40.0, d=0.3,
                                                    angle0=-0.05)),
                        q0, qd, 0.7, 1.3, "compiled", monkeypatch)
        slide = evaluate(only(stops[1]), q0, qd, 0.7, 1.3, "compiled", monkeypatch)
        for a, b, c, d in zip(got, want, slide, base):
            np.testing.assert_allclose(a - d, (b - d) + (c - d), rtol=1e-12,
                                       atol=1e-12 * np.abs(a - d).max())
        assert np.abs(got[0] - base[0]).max() > 1.0
    elif where == "at contact":
        np.testing.assert_array_equal(got[0], base[0])        # F = 0 exactly
    else:
        np.testing.assert_array_equal(got[0], base[0])
        np.testing.assert_array_equal(got[1], base[1])


def test_engaged_rope_is_a_linear_spring_and_slack_rope_nothing(monkeypatch):
    """A taut unsmoothed rope gives exactly the terms of a linear spring-damper of the
    same ``k``, ``d``, ``l0`` (second formulation); the slack rope none at all."""
    model = stops_model()
    asm0 = model.assemble()
    q, qd = state(asm0, 7, scale=1e-3)
    bodies, joints = model.bodies, model.joints
    rope = next(el for el in model.forces if el.name == "rope")
    slack = next(el for el in model.forces if el.name == "slack")
    sys_ = lambda *els: fm.System(gravity=(0.0, -9.81, 0.0)).add(  # noqa: E731
        *bodies, *joints, *els).assemble()
    lin = PointToPointSpringDamper("lin", first=rope.first, second=rope.second, k=rope.k,
                                   d=rope.d, l0=rope.l0)
    a = evaluate(sys_(rope), q, qd, 0.7, 1.3, "compiled", monkeypatch)
    b = evaluate(sys_(lin), q, qd, 0.7, 1.3, "compiled", monkeypatch)
    c = evaluate(sys_(slack), q, qd, 0.7, 1.3, "compiled", monkeypatch)
    assert np.abs(a[0]).max() > 1.0
    for x, y, z in zip(a, b, c):
        np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-13 * np.abs(y).max())
        assert not z.any()


def pinned_box(*forces):
    """A box on a revolute about z at its end (no gravity), with ``forces``; its far
    end held by an undamped bushing to the ground."""
    box = fm.RigidBody.box("box", (0.2, 0.05, 0.04), 1000.0, com=(0.1, 0.0, 0.0),
                           omega0=(0.0, 0.0, 2.0))
    return fm.System(gravity=(0.0, 0.0, 0.0)).add(
        box, fm.Revolute("pin", fm.ground, box, at=(0.0, 0.0, 0.0), axis="z"),
        Bushing("b", first=(fm.ground, (0.2, 0.0, 0.0)), second=box,
                K=(2e3, 3e3, 4e3, 5.0, 6.0, 7.0), D=(0.0,) * 6), *forces)


def test_time_varying_point_force_equals_the_python_element(monkeypatch):
    """A sine force (its value written per step) against the element in Python."""
    def model():
        system = pinned_box()
        return system.add(ExternalForce("f", at=(system.bodies[0], (0.2, 0.0, 0.0)),
                                        force=Sine(amplitude=(0.0, 5.0, 1.0), omega=30.0)))
    asm = model().assemble()
    assert not AffineStep(asm, asm.affine_plan()).time_free
    fast = fm.simulate(model(), 0.2, 1e-3, rho_inf=0.9, output_dt=0.05)
    no_pack(monkeypatch)
    slow = fm.simulate(model(), 0.2, 1e-3, rho_inf=0.9, output_dt=0.05)
    np.testing.assert_allclose(fast.q, slow.q, rtol=0, atol=1e-7)   # Newton tolerance


def test_mass_on_a_spring_damper_is_the_damped_oscillator():
    """A box on a linear spring-damper to the ground (no gravity), released at 0.02 m
    from the free length: x(t) = x0 e^{-zeta w t} (cos w_d t + zeta w / w_d sin w_d t)."""
    m_box, k, d, l0, x0 = 1.0, 400.0, 4.0, 0.5, 0.02
    a = (m_box / 1000.0) ** (1 / 3)
    box = fm.RigidBody.box("box", (a, a, a), 1000.0, r0=(l0 + x0, 0.0, 0.0))
    model = fm.System(gravity=(0.0, 0.0, 0.0)).add(
        box, PointToPointSpringDamper("s", first=(fm.ground, (0.0, 0.0, 0.0)), second=box,
                                      k=k, d=d, l0=l0))
    res = fm.simulate(model, 1.0, 1e-3, rho_inf=1.0, output_dt=0.01)
    w = np.sqrt(k / m_box)
    zeta = d / (2 * np.sqrt(k * m_box))
    wd = w * np.sqrt(1 - zeta ** 2)
    t = np.asarray(res.t)
    x = x0 * np.exp(-zeta * w * t) * (np.cos(wd * t) + zeta * w / wd * np.sin(wd * t))
    np.testing.assert_allclose(np.asarray(res.body_q("box"))[:, 0] - l0, x, rtol=0,
                               atol=1e-3 * x0)


def test_undamped_bushing_keeps_its_energy():
    """The pinned box turning against its undamped bushing (no gravity): kinetic plus
    bushing energy constant (trapezoidal rule, rho_inf = 1), while most of it is
    exchanged between the two."""
    res = fm.simulate(pinned_box(), 0.5, 5e-4, rho_inf=1.0, output_dt=0.01)
    total = np.asarray(res.energy["total"])
    assert np.asarray(res.energy["potential_elastic"]).max() > 0.9 * total[0] > 0
    np.testing.assert_allclose(total, total[0], rtol=1e-6)


def test_bad_inputs_are_refused_in_one_line(monkeypatch):
    asm = rigid_model().assemble()
    q, qd = state(asm, 1)
    st = asm.constraint_rows.stacked()
    st.dense(q, 0.0)
    C, D = st.last
    pack, n = asm.affine_plan().springs, asm.n_q
    with pytest.raises(ValueError, match=rf"SpringPack \('torsion', .*\): q must have "
                                         rf"shape \({n},\), got \({n - 1},\)"):
        pack.residual(np.zeros(n), q[:-1], qd, C, D)
    with pytest.raises(ValueError, match=r"SpringPack .*: C must have shape"):
        pack.residual(np.zeros(n), q, qd, C[:, :3], D)
    with pytest.raises(ValueError, match=r"r must be a C-contiguous float array"):
        pack.residual(np.zeros(n + 1), q, qd, C, D)
    with pytest.raises(ValueError, match=r"out must be square"):
        pack.newton(np.zeros((n - 1, n - 1)), q, qd, C, D, 1.0, 1.0)


def planar_cylindrical_stops():
    """A box on a planar joint with stops on x, y and the angle, a second on a cylindrical
    joint with stops on the angle and the displacement, all closed at the start (the
    random states may open the narrowest)."""
    a = fm.RigidBody.box("a", (0.1, 0.06, 0.04), 1000.0, r0=(0.1, 0.2, 0.0))
    b = fm.RigidBody.box("b", (0.1, 0.06, 0.04), 1000.0, r0=(0.5, 0.0, 0.0))
    pl = fm.Planar("pl", fm.ground, a, at=(0.1, 0.2, 0.0), axis="z")
    cy = fm.Cylindrical("cy", fm.ground, b, at=(0.5, 0.0, 0.0), axis="y")
    stop = lambda name, joint, c, lo, up: JointStop(  # noqa: E731
        name, joint=joint, lower=lo, upper=up, k=300.0, d=2.0, coordinate=c)
    return fm.System(gravity=(0.0, -9.81, 0.0)).add(
        a, b, pl, cy, stop("x", pl, "x", 0.01, 0.5), stop("y", pl, "y", -0.5, -0.01),
        stop("angle", pl, "angle", -1.0, -0.02), stop("c-angle", cy, "angle", 0.03, 1.0),
        stop("c-disp", cy, "displacement", -1.0, -0.02))


@pytest.mark.parametrize("seed", [8, 9])
def test_planar_and_cylindrical_stops_equal_their_elements(seed, monkeypatch):
    """Stops on a planar joint's x, y, angle and a cylindrical joint's angle and
    displacement: compiled, kernel = reference, = the elements' -Q and dQ/dqd."""
    asm = planar_cylindrical_stops().assemble()
    assert len(asm.affine_plan().springs) == 5
    q, qd = state(asm, seed)
    r_k, N_k = evaluate(asm, q, qd, 0.7, 1.3, "compiled", monkeypatch)
    r_r, N_r = evaluate(asm, q, qd, 0.7, 1.3, "reference", monkeypatch)
    np.testing.assert_allclose(r_k, r_r, rtol=1e-12, atol=1e-12 * np.abs(r_r).max())
    np.testing.assert_allclose(N_k, N_r, rtol=1e-12, atol=1e-12 * np.abs(N_r).max())
    r_el, _, C_el = elements(asm, q, qd)
    _, NC = evaluate(asm, q, qd, 0.0, 1.0, "compiled", monkeypatch)
    assert np.abs(r_el).max() > 1.0
    np.testing.assert_allclose(r_k, r_el, rtol=1e-10, atol=1e-10 * np.abs(r_el).max())
    np.testing.assert_allclose(NC, C_el, rtol=1e-10, atol=1e-10 * np.abs(C_el).max())


def test_a_zero_length_rope_is_reported_not_skipped():
    """A rope whose ends meet has no direction (the element raises).  The compiled
    residual must not stop on the division and leave the previous evaluation's values in
    ``F`` (a C callback swallows the exception): ``F`` is NaN, the status says "not finite",
    and the Python call names the rope."""
    import ctypes

    from petsc4py import PETSc

    from flexmbs.system.assembly import AssembledSystem
    b = fm.RigidBody.box("b", (0.05, 0.04, 0.03), 2700.0)
    model = fm.System(gravity=(0.0, -9.81, 0.0)).add(
        b, fm.Prismatic("guide", fm.ground, b, at=(0, 0, 0), axis="x"),
        Rope("rope", first=(fm.ground, (0.3, 0.0, 0.0)), second=(b, (0, 0, 0)), k=800.0,
             d=3.0, l0=1.0))
    asm = AssembledSystem(model)
    n = asm.n_q
    q = asm.initial_q().copy()
    step = AffineStep(asm, asm.affine_plan()).set(q, np.zeros(n), np.zeros(n), 37.0, 2.3e4, 0.0)
    assert step.native
    fn = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * 4)(step.c_function)
    x = np.concatenate([q, np.zeros(asm.n_lam)])
    X, F = PETSc.Vec().createWithArray(x.copy()), PETSc.Vec().createSeq(len(x))
    assert fn(None, X.handle, F.handle, step.c_context()) == 0
    assert np.isfinite(F.getArray()).all() and step.status[0] == 0
    x[0] = 0.3                                              # the block at the anchor
    X2 = PETSc.Vec().createWithArray(x.copy())
    fn(None, X2.handle, F.handle, step.c_context())
    assert step.status[0] == 1 and not np.isfinite(F.getArray()).all()
    with pytest.raises(ValueError, match="Rope 'rope': zero length"):
        step(x.copy(), np.empty_like(x))
