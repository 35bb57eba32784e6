"""Velocity constraints on a floating-frame elastic body (an interface marker with mode
rows Phi, Psi): the marker motion they read equals the system's marker kinematics (a
second formulation, through jets), and a knife edge at the tip of a free elastic beam
sliding on the floor holds its row and conserves T + V (the drift is the integrator's:
order 2 in dt)."""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.constraints.velocity import marker_motion

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bodies"))
from flexcases import beam_free  # noqa: E402


@pytest.fixture(scope="module")
def beam_body():
    return beam_free(3)


def beam_model(reduced):
    # the tip (x = 1 m) has no sideways velocity at the start: v_y + 1.5 rad/s x 1 m = 0
    # (a start that violates it is projected by a minimum-norm change of all
    # coordinates, elastic ones too, which starts unresolved elastic vibrations)
    beam = fm.FlexibleBody("beam", reduced, v0=(0.3, -1.5, 0.0), omega0=(0.0, 0.0, 1.5))
    model = fm.System(gravity=(0.0, 0.0, -9.81), name="flexible_sleigh")
    model.add(beam, fm.Planar("on_floor", fm.ground, beam, at=(0.0, 0.0, 0.0), axis="z"),
              fm.KnifeEdge("runner", plane=fm.ground.marker("floor"), edge=beam["tip"]))
    return model


def test_marker_motion_equals_marker_kinematics(beam_body):
    asm = beam_model(beam_body).assemble()
    marker = asm.bodies[0]["tip"]
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = asm.normalize(asm.initial_q() + 0.05 * rng.standard_normal(asm.n_q))
        qd = rng.standard_normal(asm.n_q)
        qd[3:7] -= q[3:7] * (q[3:7] @ qd[3:7])       # on the normalisation: e . ed = 0
        ours = marker_motion(marker, q, qd)
        ref = asm.marker_kinematics(marker, q, qd, np.zeros_like(q))
        for a, b in ((ours.p, ref.p), (ours.R, ref.R), (ours.v, ref.v),
                     (ours.omega, ref.omega)):
            assert np.abs(a - b).max() < 1e-12


def test_knife_edge_on_elastic_beam(beam_body):
    model = beam_model(beam_body)
    asm = model.assemble()
    drift = []
    for dt in (2e-4, 1e-4):
        res = fm.simulate(model, t_end=0.02, dt=dt, rho_inf=1.0)
        c = [asm.velocity_constraint(q, qd, t) for t, q, qd in zip(res.t, res.q, res.qd)]
        assert np.abs(c).max() < 1e-10
        E, T = res.energy["total"], res.energy["kinetic"]
        drift.append(np.abs(E - E[0]).max() / T.max())
    assert drift[1] < 1e-9
    assert drift[0] / drift[1] > 3.0


@pytest.mark.slow
def test_wheel_rolling_at_the_tip_of_an_elastic_beam(beam_body):
    """A wheel (radius 0.1 m, axis along the tip marker's z, massless: the beam carries
    the inertia) at the tip interface of a free elastic beam, rolling on the floor while
    the beam falls about it under gravity: the contact point has no velocity and the
    rolling does no work: T + V drifts by 9.3e-8, 3.1e-8 of T at h = 0.2, 0.1 ms, falling
    with dt (a constraint doing work would leave a drift that does not)."""
    R0 = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])   # body z -> -y
    r_tip = R0 @ fm.FlexibleBody("beam", beam_body)["tip"].s    # tip from the body origin
    drift = []
    for dt in (2e-4, 1e-4):
        beam = fm.FlexibleBody("beam", beam_body, r0=(0.0, 0.0, 0.1 - r_tip[2]), R0=R0)
        model = fm.System(gravity=(0.0, 0.0, -9.81), name="wheelbarrow")
        model.add(beam, fm.Rolling("wheel", plane=fm.ground.marker("floor"),
                                   disc=beam["tip"], radius=0.1))
        res = fm.simulate(model, t_end=0.03, dt=dt, rho_inf=1.0)
        asm = model.assemble()
        c = [asm.velocity_constraint(q, qd, t) for t, q, qd in zip(res.t, res.q, res.qd)]
        assert np.abs(c).max() < 1e-10
        E, T = res.energy["total"], res.energy["kinetic"]
        assert T.max() > 0.1                         # it does fall
        drift.append(np.abs(E - E[0]).max() / T.max())
    assert drift[1] < 1e-7
    assert drift[0] / drift[1] > 2.0
