"""The compiled joint friction of the whole step (flexmbs.forces.friction_kernel) against
its numpy reference, against the JointFriction element's own formulation (frame jets,
flexmbs.forces.joint_friction) and, over a simulation, against the step that evaluates
the elements in Python; bad inputs refused in one line."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
import flexmbs.compiled
from flexmbs.integrate.affine_step import AffineStep
from flexmbs.system import friction_pack

from .test_joint_friction import joint_model

KINDS = ["revolute", "prismatic", "cylindrical", "spherical"]


def slider_crank():
    """A rigid slider-crank with friction in its four joints (three revolutes between
    bodies and to the ground, one prismatic), driven by a 0.5 N m torque."""
    a, L = 0.1, 0.4
    crank = fm.RigidBody.box("crank", (a, 0.01, 0.01), 7850.0, com=(a / 2, 0, 0))
    rod = fm.RigidBody.box("rod", (L, 0.01, 0.01), 7850.0, com=(L / 2, 0, 0), r0=(a, 0, 0))
    slider = fm.RigidBody.box("slider", (0.02, 0.02, 0.02), 9450.0, r0=(a + L, 0, 0))
    joints = (fm.Revolute("J1", fm.ground, crank, at=(0.0, 0.0, 0.0), axis="z"),
              fm.Revolute("J2", crank, rod, at=(a, 0.0, 0.0), axis="z"),
              fm.Revolute("J3", rod, slider, at=(a + L, 0.0, 0.0), axis="z"),
              fm.Prismatic("J4", fm.ground, slider, at=(a + L, 0.0, 0.0), axis="x"))
    law = fm.FrictionLaw(mu_s=0.15, mu_k=0.1)
    model = fm.System(gravity=(0.0, -9.81, 0.0))
    model.add(crank, rod, slider, *joints,
              fm.ExternalTorque("drive", at=crank, torque=(0.0, 0.0, 0.5)),
              *(fm.JointFriction(f"{j.name}-f", joint=j, law=law,
                                 pin_radius=None if j.kind == "prismatic" else 0.005)
                for j in joints))
    return model


def state(asm, seed):
    """A perturbed state off the constraint manifold, bristles deflected, multipliers."""
    rng = np.random.default_rng(seed)
    n, m = asm.n_q, asm.n_lam
    q = asm.normalize(asm.initial_q() + 1e-2 * rng.normal(size=n))
    q[asm.state_indices] = 1e-5 * rng.normal(size=asm.state_indices.size)
    qd = rng.normal(size=n)
    lam = 10.0 * rng.normal(size=m)
    return q, qd, lam


def frames(asm, q, lam):
    """``(pack, lam_all, lam_pos, C, D, G)`` of the system at ``q``."""
    st = asm.constraint_rows.stacked()
    _, G = st.dense(q, 0.1)
    C, D = st.last
    pack = asm.affine_plan().friction
    lam_all = np.zeros(asm.n_rows_all)
    lam_all[asm.active] = lam
    lam_pos = np.full(asm.n_rows_all, -1)
    lam_pos[asm.active] = np.arange(asm.n_lam)
    return pack, lam_all, lam_pos, C, D, G


def evaluate(asm, q, qd, lam, c_K, c_C, kernels, monkeypatch):
    monkeypatch.setattr(flexmbs.compiled, "KERNELS", kernels)
    pack, lam_all, lam_pos, C, D, G = frames(asm, q, lam)
    n, m = asm.n_q, asm.n_lam
    r, out = np.zeros(n), np.zeros((n + m, n + m))
    pack.residual(r, q, qd, lam_all, C, D, G)
    pack.newton(out, q, qd, lam_all, lam_pos, C, D, G, c_K, c_C)
    return r, out


@pytest.mark.parametrize("model", [*KINDS, "slider_crank"])
def test_kernel_equals_reference(model, monkeypatch):
    asm = (slider_crank() if model == "slider_crank" else joint_model(model)).assemble()
    q, qd, lam = state(asm, 3)
    r_k, N_k = evaluate(asm, q, qd, lam, 0.7, 1.3, "compiled", monkeypatch)
    r_r, N_r = evaluate(asm, q, qd, lam, 0.7, 1.3, "reference", monkeypatch)
    assert np.abs(r_k).max() > 0 and np.abs(N_k).max() > 0
    np.testing.assert_allclose(r_k, r_r, rtol=1e-12, atol=1e-12 * np.abs(r_r).max())
    np.testing.assert_allclose(N_k, N_r, rtol=1e-12, atol=1e-12 * np.abs(N_r).max())


@pytest.mark.parametrize("model", [*KINDS, "slider_crank"])
def test_kernel_equals_the_elements_own_formulation(model, monkeypatch):
    """Against JointFriction.contribution on its local vector (frame jets, the joint's
    own equations for N): -Q, dQ/dqd and dQ/dlam in full, dQ/dq in the state columns
    (the kernel leaves out the curvature of the slip measures in the other columns)."""
    asm = (slider_crank() if model == "slider_crank" else joint_model(model)).assemble()
    q, qd, lam = state(asm, 5)
    n, m = asm.n_q, asm.n_lam
    r_ref, C_ref, K_ref = np.zeros(n), np.zeros((n, n)), np.zeros((n, n))
    L_ref = np.zeros((n, m))
    for fb, c in asm.force_contributions(q, qd, 0.1, 2, lam=lam):
        if not isinstance(fb.element, fm.JointFriction):
            continue
        i = fb.idx
        r_ref[i] -= c.Q[:-1]
        C_ref[np.ix_(i, i)] -= c.dQ_dxd[:-1, :-1]
        K_ref[np.ix_(i, i)] -= c.dQ_dx[:-1, :-1]
        if c.dQ_dlam is not None:
            act = asm.active[asm.forces.reaction_rows[id(fb)]]
            pos = (np.cumsum(asm.active) - 1)[asm.forces.reaction_rows[id(fb)]][act]
            L_ref[np.ix_(i, pos)] -= c.dQ_dlam[:-1][:, act]
    r, NC = evaluate(asm, q, qd, lam, 0.0, 1.0, "compiled", monkeypatch)
    _, NK = evaluate(asm, q, qd, lam, 1.0, 0.0, "compiled", monkeypatch)
    z = asm.state_indices
    tol = 1e-10
    np.testing.assert_allclose(r, r_ref, rtol=tol, atol=tol * np.abs(r_ref).max())
    np.testing.assert_allclose(NC[:n, :n], C_ref, rtol=tol, atol=tol * np.abs(C_ref).max())
    np.testing.assert_allclose(NK[:n, z], K_ref[:, z], rtol=tol,
                               atol=tol * np.abs(K_ref[:, z]).max())
    np.testing.assert_allclose(NC[:n, n:], L_ref, rtol=tol, atol=tol * np.abs(L_ref).max())
    assert np.abs(L_ref).max() > 0


def test_step_equals_the_python_elements_and_runs_natively(monkeypatch):
    """The slider-crank with friction in every joint: the compiled step (friction in the
    kernel, PETSc calls it directly) against the same step with the elements evaluated
    in Python (the kernel given no friction elements), to the Newton tolerance."""
    model = slider_crank()
    asm = model.assemble()
    plan = asm.affine_plan()
    assert len(plan.friction) == 4 and AffineStep(asm, plan).native
    fast = fm.simulate(model, 0.1, 1e-3, rho_inf=0.9, output_dt=0.01)
    empty = friction_pack.FrictionPack
    monkeypatch.setattr(friction_pack.FrictionPack, "of", classmethod(
        lambda cls, layout, stacked: empty((), (), (), layout.n_q, 0)))
    slow = fm.simulate(model, 0.1, 1e-3, rho_inf=0.9, output_dt=0.01)
    q_f, q_s = np.asarray(fast.q), np.asarray(slow.q)
    assert np.abs(q_s[-1] - q_s[0]).max() > 1e-2                 # it moves
    np.testing.assert_allclose(q_f, q_s, rtol=0, atol=1e-7)
    assert fast.stats.newton_iterations == slow.stats.newton_iterations


def test_bad_inputs_are_refused_in_one_line(monkeypatch):
    asm = joint_model("revolute").assemble()
    q, qd, lam = state(asm, 1)
    pack, lam_all, lam_pos, C, D, G = frames(asm, q, lam)
    n = asm.n_q
    with pytest.raises(ValueError, match=rf"FrictionPack \('f',\): q must have shape "
                                         rf"\({n},\), got \({n - 1},\)"):
        pack.residual(np.zeros(n), q[:-1], qd, lam_all, C, D, G)
    with pytest.raises(ValueError, match=r"FrictionPack \('f',\): C must have shape"):
        pack.residual(np.zeros(n), q, qd, lam_all, C[:, :3], D, G)
    with pytest.raises(ValueError, match=r"r must be a C-contiguous float array"):
        pack.residual(np.zeros(n + 1), q, qd, lam_all, C, D, G)
    with pytest.raises(ValueError, match=r"out be square"):
        pack.newton(np.zeros((n, n)), q, qd, lam_all, lam_pos, C, D, G, 1.0, 1.0)
