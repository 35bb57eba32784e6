"""Friction law, LuGre bristle law and the JointFriction element: closed forms, partial
derivatives against central differences, the normal force against the joint reactions,
one-line problems (flexmbs.forces.friction_law, .lugre, .joint_friction)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.forces.friction_law import FrictionLaw
from flexmbs.forces.lugre import lugre

from .statecheck import check_tangent


# -- the law ------------------------------------------------------------------------------
def test_stribeck_curve_closed_form_and_derivative():
    """mu(0) = mu_s, mu(v_s) = mu_k + (mu_s - mu_k) / e, mu -> mu_k; d mu / d|v| against
    central differences; symmetric in v."""
    law = FrictionLaw(mu_s=0.5, mu_k=0.3, v_s=0.01, c_v=2.0)
    assert law.mu(0.0)[0] == 0.5
    assert law.mu(0.01)[0] == pytest.approx(0.3 + 0.2 / math.e, rel=1e-14)
    assert law.mu(-0.01)[0] == law.mu(0.01)[0]
    assert law.mu(1.0)[0] == pytest.approx(0.3, rel=1e-12)
    for v in (0.003, 0.01, 0.02):
        h = 1e-7
        fd = (law.mu(v + h)[0] - law.mu(v - h)[0]) / (2 * h)
        assert law.mu(v)[1] == pytest.approx(fd, rel=1e-6)
    assert law.force(-0.5, 10.0) == pytest.approx(-(0.3 * 10.0 + 2.0 * 0.5), rel=1e-12)


def test_without_stribeck_curve_mu_is_kinetic_off_zero():
    law = FrictionLaw(mu_s=0.4, mu_k=0.25)
    assert law.mu(0.0) == (0.4, 0.0)
    assert law.mu(1e-12) == (0.25, 0.0)


@pytest.mark.parametrize("kw, says", [
    (dict(mu_s=-0.1, mu_k=0.1), "friction mu_s must be a finite number >= 0 [-], got -0.1"),
    (dict(mu_s=0.2, mu_k=0.3), "friction mu_k must not exceed mu_s"),
    (dict(mu_s=0.2, mu_k=0.1, v_s=float("nan")), "friction v_s must be a finite number"),
    (dict(mu_s=0.2, mu_k=0.1, c_v=-1.0), "friction c_v must be a finite number >= 0 [N s/m]"),
])
def test_law_problems_are_one_line_each(kw, says):
    out = FrictionLaw(**kw).problems("joint 'J1'")
    assert len(out) == 1 and out[0].startswith("joint 'J1': ") and says in out[0]


# -- the bristle law -------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 3])
def test_lugre_partials_against_central_differences(d):
    rng = np.random.default_rng(7)
    law = FrictionLaw(mu_s=0.4, mu_k=0.3, v_s=0.02, c_v=0.5)
    v, z = 0.03 * rng.normal(size=d), 1e-5 * rng.normal(size=d)
    args = (7.0, 3e4, 50.0, 1e-4, 0.01)
    st = lugre(law, v, z, *args)
    h = 1e-9
    for which, (dF, df, dP) in (("v", (st.F_v, st.f_v, st.P_v)), ("z", (st.F_z, st.f_z, st.P_z))):
        for k in range(d):
            e = np.zeros(d)
            e[k] = h * (1e-2 if which == "z" else 1.0)
            p = lugre(law, v + e, z, *args) if which == "v" else lugre(law, v, z + e, *args)
            m = lugre(law, v - e, z, *args) if which == "v" else lugre(law, v, z - e, *args)
            step = 2 * e[k]
            np.testing.assert_allclose(dF[:, k], (p.F - m.F) / step, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(df[:, k], (p.f - m.f) / step, rtol=1e-5, atol=1e-6)
            assert dP[k] == pytest.approx((p.P - m.P) / step, rel=1e-5, abs=1e-6)


def test_lugre_steady_sliding_is_the_coulomb_stribeck_law_and_sticking_has_no_drift():
    """Steady sliding (zd = 0): z = mu v / (sigma0 a), F = mu(a) N v / a + c_v v with
    a = |v| up to the smoothing eps, i.e. mu(|v|) N sign v + c_v v.
    At v = 0: zd = 0 for any deflection (no creep), F = N sigma0 z."""
    law = FrictionLaw(mu_s=0.4, mu_k=0.3, v_s=0.01, c_v=0.5)
    N, sigma0, v = 12.0, 4e4, -0.02
    eps = 1e-6
    a = math.sqrt(v * v + eps * eps) - eps
    z = np.array([law.mu(a)[0] * v / (sigma0 * a)])
    st = lugre(law, np.array([v]), z, N, sigma0, 10.0, eps, 0.01)
    assert abs(st.f[0]) < 1e-15
    assert st.F[0] == pytest.approx(law.mu(a)[0] * N * v / a + 0.5 * v, rel=1e-12)
    # a = |v| - O(eps): the Coulomb-Stribeck force to 1e-4 here
    assert st.F[0] == pytest.approx(law.force(v, N), rel=1e-4)
    st0 = lugre(law, np.zeros(1), np.array([7e-6]), N, sigma0, 10.0, eps, 0.01)
    assert st0.f[0] == 0.0 and st0.F[0] == pytest.approx(N * sigma0 * 7e-6, rel=1e-15)


# -- the element -----------------------------------------------------------------------------
def joint_model(kind):
    """A box on a ``kind`` joint to the ground at (0.1, 0, 0), moving, with friction."""
    box = fm.RigidBody.box("box", size=(0.2, 0.1, 0.1), rho=500.0, r0=(0.3, 0.0, 0.0),
                           v0=(0.1, 0.2, -0.1), omega0=(0.5, -0.3, 0.8))
    cls = {"revolute": fm.Revolute, "prismatic": fm.Prismatic,
           "cylindrical": fm.Cylindrical, "spherical": fm.Spherical}[kind]
    joint = cls("J", fm.ground, box, at=(0.1, 0.0, 0.0), axis=(0.0, 0.6, 0.8))
    fr = fm.JointFriction("f", joint=joint, law=FrictionLaw(0.3, 0.2, 0.05, 0.1),
                          pin_radius=None if kind == "prismatic" else 0.02, preload=20.0)
    model = fm.System(gravity=(0.0, -9.81, 0.0))
    model.add(box, joint, fr)
    return model


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "cylindrical"])
def test_tangent_against_central_differences(kind):
    """K, C, M of a system with joint friction (normal force = preload at lam = 0)."""
    check_tangent(joint_model(kind), np.random.default_rng(3), rtol=1e-5, atol=1e-6)


def test_spherical_velocity_tangent_against_central_differences():
    """The spherical slip is r omega (no joint coordinate): C = dr/dqd is exact; K
    leaves out the curvature of omega's map (documented), so only C is checked."""
    asm = joint_model("spherical").assemble()
    rng = np.random.default_rng(5)
    n = asm.n_q
    q = asm.normalize(asm.initial_q() + 1e-2 * rng.normal(size=n))
    qd, qdd, lam = rng.normal(size=n), rng.normal(size=n), np.zeros(asm.n_lam)
    C = asm.tangent(q, qd, qdd, lam, 0.2)[1].toarray()
    h = 1e-6
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        fd = (asm.residual(q, qd + e, qdd, lam, 0.2) - asm.residual(q, qd - e, qdd, lam, 0.2))
        np.testing.assert_allclose(C[:, k], fd / (2 * h), rtol=1e-5, atol=1e-5)


def test_spherical_slip_is_the_relative_angular_velocity():
    """v = r omega: a box spinning at omega0 about the ground has slip r omega0 on the
    joint axes (P's axes = the joint frame)."""
    asm = joint_model("spherical").assemble()
    fb = asm.force_blocks[0]
    q, qd = asm.initial_q(), asm.initial_qd()
    ctx = asm.forces.context(fb, q, qd, 0.0, 1)
    B, _ = fb.element.slip_map(ctx)
    P = ctx.frames[0]
    R_P = np.column_stack([P.x.v, P.y.v, P.z.v])
    np.testing.assert_allclose(B @ ctx.xd, 0.02 * R_P.T @ np.array([0.5, -0.3, 0.8]),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "cylindrical", "spherical"])
def test_normal_force_is_the_reaction_transverse_to_the_axis(kind):
    """N - N_0 from the multipliers equals the transverse part (all of it for a spherical
    joint) of the reaction force that the results report (a second formulation:
    flexmbs.system.outputs.reactions, in the joint frame, z = the axis)."""
    asm = joint_model(kind).assemble()
    fb = asm.force_blocks[0]
    q, qd = asm.initial_q(), asm.initial_qd()
    lam = np.random.default_rng(11).normal(size=asm.n_lam) * 10.0
    F, _ = asm.reactions(q, lam, 0.0)["J"]
    ref = np.linalg.norm(F) if kind == "spherical" else np.hypot(F[0], F[1])
    ctx = asm.forces.context(fb, q, qd, 0.0, 1, asm.forces.joint_multipliers(lam))
    assert fb.element.normal_force(ctx) - 20.0 == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("kw, says", [
    (dict(joint="fixed"), "friction needs a revolute, prismatic, cylindrical or spherical "
                          "joint, got fixed"),
    (dict(pin_radius=None), "a revolute joint needs pin_radius > 0 [m], got None"),
    (dict(law=FrictionLaw(0.3, 0.0)), "friction mu_k must be > 0 [-], got 0.0"),
    (dict(stiction_deformation=0.0), "stiction_deformation must be > 0 [m], got 0.0"),
    (dict(from_reaction=False), "from_reaction = false needs a preload > 0 [N], got 0.0"),
    (dict(joint="prismatic"), "a prismatic joint has no rotational slip, so pin_radius is "
                              "not used; remove it (got 0.01 m)"),
])
def test_element_problems_are_one_line(kw, says):
    kw = dict(kw)
    body = fm.RigidBody.box("b", size=(0.1, 0.1, 0.1), rho=1000.0)
    cls = {"fixed": fm.Fixed, "prismatic": fm.Prismatic}.get(kw.pop("joint", None),
                                                              fm.Revolute)
    joint = cls("J", fm.ground, body, at=(0.0, 0.0, 0.0))
    args = dict(joint=joint, law=FrictionLaw(0.3, 0.2), pin_radius=0.01) | kw
    out = fm.JointFriction("JF", **args).problems()
    assert out == [f"JointFriction 'JF': {says}"]


def test_static_equilibrium_with_friction_is_refused_in_one_line():
    """Sticking makes the static problem indeterminate: one line naming the element."""
    with pytest.raises(fm.ModelError) as exc:
        fm.static_equilibrium(joint_model("prismatic"))
    assert str(exc.value).count("\n") == 0 and "joint friction 'f'" in str(exc.value)


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "cylindrical", "spherical"])
def test_newton_matrix_lam_block_against_central_differences(kind):
    """The upper right block of the Newton matrix is dr/dlam = G^T - dQ_f/dlam: against
    central differences of the residual in lam (the friction's normal force is linear
    in lam through the reaction, so the differences are exact up to rounding)."""
    model = joint_model(kind)
    asm = model.assemble()
    rng = np.random.default_rng(17)
    n, m = asm.n_q, asm.n_lam
    q = asm.normalize(asm.initial_q() + 1e-2 * rng.normal(size=n))
    qd, qdd = rng.normal(size=n), rng.normal(size=n)
    lam = 10.0 * rng.normal(size=m)
    A = asm.newton_matrix(q, qd, qdd, lam, 0.1, 1.0, 1.0, 1.0).toarray()[:n, n:]
    h = 1e-5
    fd = np.empty((n, m))
    for k in range(m):
        e = np.zeros(m)
        e[k] = h
        fd[:, k] = (asm.residual(q, qd, qdd, lam + e, 0.1)
                    - asm.residual(q, qd, qdd, lam - e, 0.1)) / (2 * h)
    np.testing.assert_allclose(A, fd, rtol=1e-6, atol=1e-8 * np.abs(fd).max())
    assert np.abs(fd - asm.constraint_jacobian(q, 0.1).toarray().T).max() > 1e-3  # coupled


def test_energy_summary_reports_the_friction_work():
    """The run summary line carries W_f and the balance E + W_f (docs/friction.md)."""
    from flexmbs.post.energy import energy_summary
    energy = {"total": np.array([5.0, 3.5]), "kinetic": np.array([0.0, 1.0]),
              "friction_work": np.array([0.0, 1.5])}
    line = energy_summary(energy, joint_model("prismatic"))
    assert "friction work 1.5 J; E + W_f: 5 J -> 5 J" in line
    assert "force element 'f' (joint friction" in line and "\n" not in line


def test_a_step_too_large_for_the_bristles_is_noted():
    """h > z_s / (2 v_st) = 5 ms with the defaults: the run says so in one note."""
    from flexmbs.simulate import step_notes
    res = fm.simulate(joint_model("prismatic"), t_end=0.02, dt=1e-2)
    notes = [n for n in res.extra["notes"] if n.startswith("JointFriction")]
    assert notes == ["JointFriction 'f': the time step 0.01 s is above 0.005 s, which its "
                     "bristles need (z_s / (2 v_st)); with larger steps a joint that should "
                     "stick may slide (docs/friction.md)"]
    assert step_notes(joint_model("prismatic"), 5e-3) == []
