"""Flexible bodies as tree members of the relative formulation (docs/relative.md): their
modal coordinates are joint coordinates, the joints' markers move with the deformation.

References (independent of the relative code):

* the descriptor form of the same model (THEORY (2.79); the relative DAE is (2.82)):
  at states of the tree with deformed bodies and random rates, the relative
  accelerations mapped to the bodies (``T betadd + Td betad``) equal the descriptor
  form's saddle-point accelerations to 1e-8 relative, for a flexible child (pendulum
  hung at its elastic interface) and a flexible parent (the slider hung at the rod's
  elastic interface).  The elastic rotations at the joints are taken about the joint
  axes, where the descriptor form's linearised marker axes (flexmbs.kinematics.frames)
  and the relative form's rotation describe the same joint; for rotations off the axis
  they differ at O(|Psi q_e|^2) (docs/relative.md);
* the same, integrated: the flexible slider-crank (crank, flexible rod with two
  fixed-interface modes, slider, the loop closed by a prismatic cut joint, a driven
  crank) by DOP853 at rtol = atol = 1e-10 over 10 ms (its elastic modes make longer
  explicit runs too slow for a test);
* the generalized-alpha runs of both forms converge to each other at order 2;
* conservation of T + V of the undamped free flexible pendulum (rho_inf = 1).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import flexmbs as fm
from flexmbs.errors import ModelError
from flexmbs.integrate.consistent import consistent_initial_conditions
from flexmbs.relative.dae import RelativeDAE
from flexmbs.simulate import prepare
from tests.relative.test_absolute_vs_relative import saddle_accelerations
from tests.scenarios.flexible.flexcase_models import (
    slider_crank_model,
    steel_rod,
)


@pytest.fixture(scope="module")
def rod(tmp_path_factory):
    """Steel rod 0.4 x 0.01 x 0.01 m, frame at ``hole_A``, two fixed-interface modes and
    the static modes of ``hole_B`` (so that ``hole_B`` moves and turns elastically)."""
    return steel_rod(tmp_path_factory.mktemp("rod"), static_modes=True)


def pendulum(rod) -> fm.System:
    """The rod hung on the ground at its elastic interface ``hole_B`` (the pivot at
    x = 0.4 m), released horizontal under gravity; undamped."""
    body = fm.FlexibleBody("rod", rod, damping=False)
    model = fm.System(gravity=(0.0, -9.81, 0.0), name="flexible_pendulum")
    model.add(body, fm.Revolute("pin", fm.ground, body["hole_B"], axis="z"))
    return model


def open_crank_chain(rod) -> fm.System:
    """The slider-crank without its cut joint and drive: ground - crank - rod - slider,
    the slider on the rod's elastic interface ``hole_B``."""
    model = slider_crank_model(rod, stiffening=False, damping=False)
    del model.joints[3:]
    model.drives.clear()
    return model


def in_plane_state(dae, rng):
    """Random joint coordinates and rates with random deformation whose elastic
    rotations at the joints' markers are about z (the joints' axes)."""
    beta = dae.initial_q() + rng.normal(0.0, 0.5, dae.n_q)
    betad = rng.normal(0.0, 5.0, dae.n_q)
    for tj in dae.tree.joints:
        if tj.qe.stop == tj.qe.start:
            continue
        off_axis = np.vstack([m.Psi[:2] for m in (tj.P, tj.Q, *_markers_on(dae, tj))
                              if m.Psi is not None and m.body is tj.Q.body])
        null = np.linalg.svd(off_axis)[2][off_axis.shape[0]:].T
        beta[tj.qe] = null @ rng.normal(0.0, 1e-5, null.shape[1])
        betad[tj.qe] = null @ rng.normal(0.0, 1e-2, null.shape[1])
    return beta, betad


def _markers_on(dae, tj):
    """The tree markers on the body of ``tj`` (its children's P)."""
    return [c.P for c in dae.tree.joints if c.P.body is tj.Q.body]


@pytest.mark.parametrize("make", [pendulum, open_crank_chain])
def test_accelerations_equal_the_descriptor_forms(rod, make):
    rng = np.random.default_rng(7)
    dae = RelativeDAE(make(rod).validate())
    asm = prepare(make(rod)).asm
    zq, zl = np.zeros(asm.n_q), np.zeros(asm.n_lam)
    for _ in range(3):
        beta, betad = in_plane_state(dae, rng)
        q_b, qd_b, T, Tdbd = dae.absolute_coordinates(beta, betad)
        assert np.abs(asm.constraint(q_b, 0.0)).max() < 1e-12     # the joints hold
        assert np.abs(asm.constraint_jacobian(q_b, 0.0) @ qd_b).max() < 1e-10
        assert np.abs(q_b[7 + asm.body_slices["rod"].start:]).max() > 0   # deformed
        qdd_rel = T @ saddle_accelerations(dae, dae.mass_matrix, beta, betad, 0.0) + Tdbd
        qdd_abs = saddle_accelerations(
            asm, lambda q: asm.tangent(q, zq, zq, zl, 0.0)[2].toarray(), q_b, qd_b, 0.0)
        err = np.abs(qdd_rel - qdd_abs).max() / np.abs(qdd_abs).max()
        print(f"{make.__name__}: relative difference of the accelerations {err:.2e}")
        assert err < 1e-8


def dop853(dae, q0, qd0, mass, t_out) -> np.ndarray:
    n = dae.n_q

    def rhs(t, y):
        return np.concatenate([y[n:], saddle_accelerations(dae, mass, y[:n], y[n:], t)])

    sol = solve_ivp(rhs, (0.0, t_out[-1]), np.concatenate([q0, qd0]), method="DOP853",
                    rtol=1e-10, atol=1e-10, t_eval=t_out)
    assert sol.success
    return sol.y[:n].T


@pytest.fixture(scope="module")
def soft_rod(tmp_path_factory):
    """The rod with its two fixed-interface modes only (its interfaces do not deform:
    the static modes' stiffness would make the explicit reference too slow)."""
    return steel_rod(tmp_path_factory.mktemp("rod"))


@pytest.mark.slow
def test_flexible_slider_crank_agrees_with_the_descriptor_form(soft_rod):
    """Rod node (the rod's elastic coordinates and frame) and slider position to 1e-8."""
    rod = soft_rod
    t_out = np.linspace(0.0, 0.01, 6)
    make = lambda: slider_crank_model(rod, stiffening=False, damping=False)  # noqa: E731
    absolute = prepare(make())
    asm = absolute.asm
    zq, zl = np.zeros(asm.n_q), np.zeros(asm.n_lam)
    q_abs = dop853(asm, absolute.initial.q, absolute.initial.qd,
                   lambda q: asm.tangent(q, zq, zq, zl, 0.0)[2].toarray(), t_out)
    dae = RelativeDAE(make().validate())
    dae.drop_redundant(dae.initial_q())
    init = consistent_initial_conditions(dae, dae.initial_q(), dae.initial_qd())
    beta = dop853(dae, init.q, init.qd, dae.mass_matrix, t_out)
    q_rel = np.array([dae.absolute_coordinates(b)[0] for b in beta])
    s_rod, s_slider = asm.body_slices["rod"], asm.body_slices["slider"]
    node = np.asarray(rod.modes[len(rod.modes) // 2])      # a rod node's elastic motion
    u_abs, u_rel = (q[:, s_rod][:, 7:] @ node.T for q in (q_abs, q_rel))
    assert np.abs(u_abs).max() > 1e-7                      # the rod deforms
    print(f"slider-crank: rod node {np.abs(u_rel - u_abs).max():.2e} m, slider "
          f"{np.abs(q_rel[:, s_slider][:, 0] - q_abs[:, s_slider][:, 0]).max():.2e} m")
    assert np.abs(u_rel - u_abs).max() < 1e-8
    assert np.abs(q_rel[:, s_rod][:, :3] - q_abs[:, s_rod][:, :3]).max() < 1e-8
    assert np.abs(q_rel[:, s_slider][:, 0] - q_abs[:, s_slider][:, 0]).max() < 1e-8


def run(model, formulation, h, t_end=1.0, rho_inf=0.9):
    model.formulation = formulation
    return fm.simulate(model, t_end, h, output_dt=t_end / 10, rho_inf=rho_inf)


def test_generalized_alpha_runs_of_the_pendulum_converge_to_each_other(rod):
    d = []
    for h in (4e-3, 2e-3):
        r = {f: run(pendulum(rod), f, h, t_end=0.5) for f in ("absolute", "relative")}
        d.append(np.abs(r["relative"].body_q("rod")[:, :3]
                        - r["absolute"].body_q("rod")[:, :3]).max())
    print("pendulum, generalized-alpha differences", d)
    assert 3.4 < d[0] / d[1] < 4.6, d


def test_the_undamped_flexible_pendulum_conserves_energy(rod):
    res = run(pendulum(rod), "relative", 2e-3, rho_inf=1.0)
    E, T = res.energy["total"], res.energy["kinetic"]
    assert T.max() > 0.1
    assert np.abs(res.body_q("rod")[:, 7:]).max() > 0      # it deforms
    print(f"energy drift {np.abs(E - E[0]).max() / T.max():.2e} of max T")
    assert np.abs(E - E[0]).max() < 1e-4 * T.max()


def test_the_recursive_formalism_takes_a_flexible_body_and_refuses_a_point_mass(rod):
    model = pendulum(rod)
    model.formulation = "recursive"
    model.validate()
    model.add(fm.PointMass("mass", 1.0, r0=(0.0, -2.0, 0.0)))
    with pytest.raises(ModelError) as exc:
        model.validate()
    line = str(exc.value)
    assert line.startswith("body 'mass': formulation 'recursive' takes rigid and flexible "
                           "bodies only, got a PointMass")
    assert "'absolute'" in line and "\n" not in line
