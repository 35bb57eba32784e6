"""The recursive formalism with flexible tree members (flexmbs.relative.flexible_recursive).

References (independent of the recursive sweeps):

* the non-recursive route of the same trees, the descriptor form projected on the joint
  velocities (``Mbar = T^T M_b T``, ``Mbar betadd - k = T^T r_b``; its ``T`` a sweep of
  global Jacobians, no backward sweep, no composite bodies): on random trees mixing rigid
  and flexible bodies (every joint kind, markers on elastic interfaces) at random
  deformed states with random rates, ``Mbar``, ``k`` and ``tau`` agree to 1e-10;
* the descriptor form's multipliers (saddle point of ``M``, ``G``, ``gamma`` of the
  bodies' coordinates): the backward sweep's wrench of each tree joint equals that of the
  descriptor rows of the joint on the body, ``-G_j^T lam_j`` in twist components
  ``[1/2 G(e) Q_e; Q_r]``, at in-plane deformed states (where both forms describe the
  same joints, test_flexible_tree.py);
* the runs of the flexible pendulum and slider-crank in the non-recursive formalism.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.integrate.consistent import accelerations
from flexmbs.kinematics.rotation import G_of
from flexmbs.relative import flexible_recursive
from flexmbs.relative.dae import RelativeDAE
from flexmbs.simulate import prepare
from tests.relative.models import random_body, random_rotation
from tests.relative.test_flexible_tree import (  # noqa: F401  (fixture)
    in_plane_state,
    open_crank_chain,
    pendulum,
    rod,
)
from tests.scenarios.flexible.flexcase_models import slider_crank_model

KINDS = ("Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical", None)


def mixed_tree(rod, seed: int, n: int, gravity=(0.3, -9.81, 0.5), name: str = "mixed",
               **flexible) -> fm.System:
    """``n`` bodies, each rigid or a flexible rod (at random; undamped, or the
    ``FlexibleBody`` keywords ``flexible``), hung on the ground or an earlier body by a
    random joint kind about a random axis (or free); a joint on a rod sits at one of its
    interfaces (``hole_B`` deforms and turns elastically)."""
    flexible = flexible or {"damping": False}
    rng = np.random.default_rng(seed)
    model = fm.System(gravity=gravity, name=f"{name}{seed}")
    bodies = []
    for i in range(n):
        if rng.uniform() < 0.5:
            b = fm.FlexibleBody(f"f{i}", rod, r0=rng.normal(0, 1.0, 3),
                                R0=random_rotation(rng), **flexible)
        else:
            b = random_body(rng, f"b{i}")
        k = int(rng.integers(0, len(bodies) + 1))
        parent = fm.ground if k == 0 else bodies[k - 1]
        kind = KINDS[int(rng.integers(0, len(KINDS)))]
        model.add(b)
        bodies.append(b)
        if kind is None:
            continue
        sides = [s["hole_B" if rng.uniform() < 0.7 else "hole_A"]
                 if isinstance(s, fm.FlexibleBody) else s for s in (parent, b)]
        kw = {"axis": rng.normal(size=3)}
        if not any(isinstance(s, fm.FlexibleBody) for s in (parent, b)):
            kw["at"] = rng.normal(0, 1.0, 3)
        model.add(getattr(fm, kind)(f"J{i}", *sides, **kw))
    return model


def random_state(dae, rng):
    """Random joint coordinates and rates, random deformation (1e-4) and modal rates."""
    beta = dae.initial_q() + rng.normal(0.0, 0.5, dae.n_q)
    betad = rng.normal(0.0, 2.0, dae.n_q)
    for tj in dae.tree.joints:
        beta[tj.qe] = rng.normal(0.0, 1e-4, tj.qe.stop - tj.qe.start)
        betad[tj.qe] = rng.normal(0.0, 1e-2, tj.qe.stop - tj.qe.start)
    beta = dae.normalize(beta)
    for s in dae.tree.e_rows:
        betad[s] -= beta[s] * (beta[s] @ betad[s])
    return beta, betad


def rel_err(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize(("seed", "n"), [(0, 3), (1, 6), (2, 10)])
def test_recursive_equals_nonrecursive_on_mixed_trees(rod, seed, n):
    model = mixed_tree(rod, seed, n).validate()
    rel, rec = RelativeDAE(model, "relative"), RelativeDAE(model, "recursive")
    assert rel.tree.flexible and any(b.kind == "rigid" for b in rel.tree.bodies)
    rng = np.random.default_rng(100 + seed)
    for _ in range(2):
        beta, betad = random_state(rel, rng)
        betadd = rng.normal(size=rel.n_q)
        M_nr, k_nr = rel.mass_and_bias(beta, betad, 0.0)
        M_r, k_r = rec.mass_and_bias(beta, betad, 0.0)
        print(f"seed {seed}: Mbar {rel_err(M_r, M_nr):.1e}, k {rel_err(k_r, k_nr):.1e}")
        assert rel_err(M_r, M_nr) < 1e-10
        assert rel_err(k_r, k_nr) < 1e-10
        zl = np.zeros(rel.n_lam)
        assert rel_err(rec.residual(beta, betad, betadd, zl, 0.0),
                       rel.residual(beta, betad, betadd, zl, 0.0)) < 1e-10


@pytest.mark.parametrize("make", [pendulum, open_crank_chain])
def test_backward_sweep_wrenches_equal_the_descriptor_multipliers(rod, make):
    rng = np.random.default_rng(11)
    dae = RelativeDAE(make(rod).validate(), "recursive")
    asm = prepare(make(rod)).asm
    owners = [asm.row_owner(r) for r in range(asm.n_lam)]
    for _ in range(2):
        beta, betad = in_plane_state(dae, rng)
        betadd, _ = accelerations(dae, beta, betad, 0.0)
        q_b, qd_b, _, _ = dae.absolute_coordinates(beta, betad)
        _, lam = accelerations(asm, q_b, qd_b, 0.0)
        G = asm.constraint_jacobian(q_b, 0.0).toarray()
        st = dae.flexible_state(beta, betad)
        fP = flexible_recursive.joint_wrenches(
            dae.tree, st, betadd,
            lambda q, qd, qdd: dae.body_residual(q, qd, qdd, 0.0),
            asm.body_slices, asm.n_q)
        scale = max(np.abs(f[:6]).max() for f in fP)
        for i, tj in enumerate(dae.tree.joints):
            rows = [r for r in range(asm.n_lam) if owners[r] == f"joint '{tj.name}'"]
            Q = -G[rows].T @ lam[rows]
            s = asm.body_slices[dae.tree.bodies[i].name]
            e = q_b[s][3:7]
            expected = np.concatenate([0.5 * G_of(e) @ Q[s][3:7], Q[s][:3]])
            err = np.abs(fP[i][:6] - expected).max() / scale
            print(f"{make.__name__} joint {tj.name}: {err:.1e} of {scale:.2e}")
            assert err < 1e-8


@pytest.mark.parametrize("make", [pendulum, lambda r: slider_crank_model(
    r, stiffening=False, damping=True)])
def test_recursive_runs_equal_the_nonrecursive_ones(rod, make):
    """Newton to 1e-10: the recursive run's Newton matrix is the modified one factored
    by articulated bodies (flexmbs.relative.flexible_articulated, GMRES on the full one
    when it stalls), the non-recursive run's the full tangent, so the runs agree to the
    Newton tolerance.  (With central differences as velocity products, ~1e-10 of their
    size, the recursive route's inexact solves met the residual's round-off floor at
    1e-10 and cut steps; the complex step's are exact to round-off.)"""
    def run_tight(model, formulation):
        model.formulation = formulation
        return fm.simulate(model, 0.02, 1e-3, output_dt=0.002, rho_inf=0.9,
                           integrator_options={"newton_rtol": 1e-10})
    r = {f: run_tight(make(rod), f) for f in ("relative", "recursive")}
    q = {f: np.hstack([r[f].body_q(b.name) for b in make(rod).bodies]) for f in r}
    err = np.abs(q["recursive"] - q["relative"]).max() / np.abs(q["relative"]).max()
    print(f"recursive against relative runs: {err:.1e}")
    assert np.abs(q["relative"][-1] - q["relative"][0]).max() > 1e-3     # it moves
    assert err < 1e-10


@pytest.mark.parametrize("make", [pendulum, lambda r: slider_crank_model(
    r, stiffening=False, damping=True)])
def test_run_reactions_of_the_sweep_equal_the_descriptor_multipliers(rod, make):
    """The reactions a recursive run records (backward sweep; the cut prismatic joint and
    the drive from the relative multipliers) equal the descriptor form's at the start
    (consistent state, undeformed rod) to 1e-8 of the largest force."""
    model = make(rod)
    model.formulation = "recursive"
    r = fm.simulate(model, 2e-3, 1e-3)
    asm = prepare(make(rod)).asm
    q_b, qd_b = r.q[0], r.qd[0]
    _, lam = accelerations(asm, q_b, qd_b, 0.0)
    expected = asm.reactions(q_b, lam, 0.0)
    scale = max(max(np.abs(f).max() for f, _ in expected.values()), 1.0)
    assert set(r.reactions) == set(expected)
    for name, (f, m) in expected.items():
        err = np.abs(r.reactions[name][0] - np.concatenate([f, m])).max() / scale
        print(f"{name}: {err:.1e} of {scale:.2e}")
        assert err < 1e-8, name
