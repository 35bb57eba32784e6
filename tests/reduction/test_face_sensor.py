"""The mean displacement of a face (FaceDisplacementSensor): the tip face of a clamped
steel beam sagging under gravity.

References: the RBE3 tip marker (a second formulation of the face's mean motion, its
weighted nodal average) and Euler-Bernoulli ``q L^4 / (8 E I) = 5.501e-5 m`` (within 2 %).
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model

from .conftest import beam_fe


@pytest.fixture(scope="module")
def sagged():
    fe = beam_fe("hex27", (20, 2, 2))
    body = reduce_model(fe, ReductionSettings(
        n_modes=6, interfaces=(InterfaceSpec("clamp"), InterfaceSpec("tip", "rbe3")),
        frame="interface:clamp", static_modes=True, stiffening=False))
    q_e = np.linalg.solve(body.K_e, body.C_t @ np.array([0.0, -9.81, 0.0]))
    beam = FlexibleBody("beam", body)
    model = fm.System(name="sag")
    model.add(beam, fm.Fixed("clamp", fm.ground, beam["clamp"]))
    sensor = fm.FaceDisplacementSensor("tip_mean", beam, face="tip")
    model.add(sensor)
    asm = model.assemble()
    q = np.concatenate([[0, 0, 0, 1, 0, 0, 0], q_e])
    states = [asm.marker_kinematics(m, q, np.zeros_like(q), np.zeros_like(q))
              for m in asm.sensor_markers["tip_mean"]]
    return body, q_e, sensor.measure(states)


def test_mean_of_the_tip_face_against_rbe3_and_euler_bernoulli(sagged):
    body, q_e, u = sagged
    rbe3 = body.marker("tip").Phi @ q_e
    assert u[1] < 0
    assert u == pytest.approx(rbe3, rel=1e-3, abs=1e-9)
    E, I, w = 210e9, 0.1**4 / 12, 7850 * 0.01 * 9.81
    assert -u[1] == pytest.approx(w / (8 * E * I), rel=0.02)


def test_face_of_a_rigid_motion_moves_with_it(sagged):
    """A rigid translation of the frame does not change the *elastic* mean displacement:
    the sensor gives Phi_c q_e whatever the frame does."""
    body, q_e, u = sagged
    fc = {f.name: f for f in body.faces}["tip"]
    assert fc.Phi_c @ q_e == pytest.approx(u, rel=1e-12, abs=1e-15)
    assert fc.A == pytest.approx(0.1 * 0.1, rel=1e-12)
    assert fc.X_c == pytest.approx([1.0, 0.05, 0.05], abs=1e-12)


def test_unknown_face_is_one_clear_problem(sagged):
    body = sagged[0]
    beam = FlexibleBody("beam", body)
    problems = fm.FaceDisplacementSensor("s", beam, face="nope").problems()
    assert len(problems) == 1 and "no face 'nope'" in problems[0] and "tip" in problems[0]


def test_face_reading_as_jets_is_measure_with_exact_derivatives(sagged):
    """``measure_jet`` (what a drive fed by the sensor reads) equals ``measure`` at a
    random state and its gradient and Hessian equal central differences."""
    from constraints.jetcheck import check_jets

    from flexmbs.kinematics.frames import frame_jet
    from flexmbs.sensors import MarkerState
    body = sagged[0]
    beam = FlexibleBody("beam", body)
    sensor = fm.FaceDisplacementSensor("tip_mean", beam, face="tip")
    markers = sensor.resolve()
    rng = np.random.default_rng(3)
    e = rng.normal(size=4)
    x = np.concatenate([rng.normal(size=3), e / np.linalg.norm(e),
                        1e-3 * rng.normal(size=beam.n_coords - 7), [0.2]])
    n = len(x)

    def frames(y, order):
        return [frame_jet(m, y[:-1], n, 0, order) for m in markers]
    z = np.zeros(3)
    states = [MarkerState(F.p.v, np.column_stack([F.x.v, F.y.v, F.z.v]), z, z, z, z)
              for F in frames(x, 1)]
    assert sensor.position_level
    np.testing.assert_allclose([float(j.v) for j in sensor.measure_jet(frames(x, 1))],
                               sensor.measure(states), atol=1e-13)
    check_jets(lambda y, order: sensor.measure_jet(frames(y, order)), x)
