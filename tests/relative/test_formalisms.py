"""Recursive = non-recursive = absolute on random trees (THEORY §3.8, §3.9, §3.11).

References: the descriptor form of the same model (``flexmbs.system``), a second
formulation of the same physics, and central differences of the forward kinematics.

* ``Mbar`` and ``k`` of the recursive formalism (Newton-Euler + composite bodies) equal
  those of the non-recursive one (``sum J_i^T M_i J_i``) to 1e-10 on trees of up to 20
  bodies with every joint kind.
* Both equal the descriptor form projected onto the joint velocities,
  ``T^T M_b T`` and ``T^T (f_b - M_b Td betad)`` with ``qd_b = T betad``.
* The map ``T`` is the derivative of the forward kinematics, and ``Td betad`` the
  derivative of ``T betad`` along the motion (central differences).
* The accelerations of the relative form, mapped to the bodies, equal those of the
  descriptor form with its joints (saddle point of ``M``, ``G``, ``gamma``: an
  independent acceleration term), and the joint wrenches of the backward sweep equal
  the reactions of the descriptor multipliers (``-G^T lam``).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.integrate.consistent import accelerations
from flexmbs.relative import nonrecursive, recursive
from flexmbs.relative.dae import RelativeDAE
from flexmbs.relative.kinematics import forward
from flexmbs.simulate import prepare
from tests.relative.models import driven_chain, four_bar, pendulum_chain, random_tree

CASES = [(0, 3), (1, 8), (2, 12), (3, 20), (4, 20)]


def random_state(dae, seed):
    """A random configuration and joint velocity (Euler-parameter rates tangent)."""
    rng = np.random.default_rng(seed)
    beta = dae.normalize(dae.initial_q() + rng.normal(size=dae.n_q))
    betad = rng.normal(size=dae.n_q)
    for s in dae.tree.e_rows:
        betad[s] -= beta[s] * (beta[s] @ betad[s])
    return beta, betad


def rel_err(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize(("seed", "n"), CASES)
def test_recursive_equals_nonrecursive_equals_absolute(seed, n):
    model = random_tree(seed, n).validate()
    dae = RelativeDAE(model)
    if n == 20:
        assert {tj.motion.kind for tj in dae.tree.joints} >= {
            "revolute", "prismatic", "cylindrical", "universal", "spherical", "free"}
    beta, betad = random_state(dae, 100 + seed)
    kin = forward(dae.tree, beta, betad)
    M_nr, k_nr = nonrecursive.mass_and_bias(dae.tree, kin, dae.gravity)
    M_r, k_r = recursive.mass_and_bias(dae.tree, kin, dae.gravity)
    assert rel_err(M_r, M_nr) < 1e-10
    assert rel_err(k_r, k_nr) < 1e-10
    free = fm.System(gravity=model.gravity, bodies=list(model.bodies)).assemble()
    q_b, qd_b, T, Tdbd = dae.absolute_coordinates(beta, betad)
    zero_q, zero_lam = np.zeros(free.n_q), np.zeros(free.n_lam)
    M_b = free.tangent(q_b, qd_b, zero_q, zero_lam, 0.0)[2].toarray()
    f_b = -free.residual(q_b, qd_b, zero_q, zero_lam, 0.0)
    assert rel_err(T.T @ M_b @ T, M_nr) < 1e-10
    assert rel_err(T.T @ (f_b - M_b @ Tdbd), k_nr) < 1e-10


@pytest.mark.parametrize(("seed", "n"), CASES[:3])
def test_velocity_map_is_the_derivative_of_the_kinematics(seed, n):
    dae = RelativeDAE(random_tree(seed, n).validate())
    beta, betad = random_state(dae, 200 + seed)
    h = 1e-5

    def along(s):       # q_b and T betad on the curve normalize(beta + s betad)
        q_b, qd_b, _, _ = dae.absolute_coordinates(dae.normalize(beta + s * betad), betad)
        return q_b, qd_b

    (qp, vp), (qm, vm) = along(h), along(-h)
    _, qd_b, _, Tdbd = dae.absolute_coordinates(beta, betad)
    assert rel_err((qp - qm) / (2 * h), qd_b) < 1e-8
    # d/ds T(beta(s)) betad = (dT/dbeta betad) betad = Td betad, beta'(0) = betad
    assert rel_err((vp - vm) / (2 * h), Tdbd) < 1e-7


@pytest.mark.parametrize(("seed", "n"), CASES)
def test_accelerations_and_reactions_equal_the_descriptor_form(seed, n):
    model = random_tree(seed, n).validate()
    dae = RelativeDAE(model, "recursive")
    beta, betad = random_state(dae, 300 + seed)
    betadd, _ = accelerations(dae, beta, betad, 0.0)
    q_b, qd_b, T, Tdbd = dae.absolute_coordinates(beta, betad)
    asm = model.assemble()
    qdd_abs, lam = accelerations(asm, q_b, qd_b, 0.0)
    assert rel_err(T @ betadd + Tdbd, qdd_abs) < 1e-9
    kin = forward(dae.tree, beta, betad)
    fP = recursive.joint_wrenches(dae.tree, kin, betadd, dae.gravity)
    reactions = asm.reactions(q_b, lam, 0.0)
    for i, tj in enumerate(dae.tree.joints):
        if tj.joint is None:                     # a free body: no joint, no reaction
            assert np.abs(fP[i]).max() < 1e-9 * max(np.abs(fP).max(), 1.0)
            continue
        R_Q = kin.A[i] @ tj.Q.R
        r_Q = kin.r[i] + kin.A[i] @ tj.Q.s
        M_O, F = fP[i][:3], fP[i][3:]
        force, torque = reactions[tj.name]
        scale = max(np.abs(force).max(), 1.0)
        assert np.abs(R_Q.T @ F - force).max() < 1e-9 * scale
        assert np.abs(R_Q.T @ (M_O - np.cross(r_Q - kin.r[i], F)) - torque).max() < 1e-9 * scale


@pytest.mark.parametrize("make", [four_bar, lambda: random_tree(6, 10),
                                  lambda: pendulum_chain(child_first=True), driven_chain])
def test_run_reactions_of_the_sweep_equal_the_descriptor_multipliers(make):
    """The reactions a relative run records (backward sweep, cut joints from the
    relative multipliers) equal the descriptor form's at the same state: at the start
    (consistent state) to 1e-8 of the largest force."""
    model = make()
    model.formulation = "recursive"
    r = fm.simulate(model, 2e-3, 1e-3)
    ref = make()
    asm = prepare(ref).asm
    q_b, qd_b = r.q[0], r.qd[0]
    _, lam = accelerations(asm, q_b, qd_b, 0.0)
    expected = asm.reactions(q_b, lam, 0.0)
    scale = max(max(np.abs(f).max() for f, _ in expected.values()), 1.0)
    assert set(r.reactions) == set(expected)
    for name, (f, m) in expected.items():
        assert np.abs(r.reactions[name][0] - np.concatenate([f, m])).max() < 1e-8 * scale, name
