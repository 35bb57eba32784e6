"""The derivatives of the sensor values a controller reads (flexmbs.system.feed_jacobian):
the chain rule through the markers' kinematics against central differences of the whole
measurement in every coordinate (the reference), for markers of a flexible body, a rigid
body, a point mass and the ground, and for position, orientation, velocity and angular
velocity sensors."""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.system.assembly import AssembledSystem
from flexmbs.system.feed_jacobian import feed_jacobians, feed_jacobians_reference

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bodies"))
from flexcases import beam_cb  # noqa: E402


def _model():
    beam = fm.FlexibleBody("beam", beam_cb(3))     # frame at "clamp": "tip" moves elastically
    link = fm.RigidBody("link", m=2.0, I_S=np.diag([0.1, 0.2, 0.3]), r0=(1.0, 0.2, 0.0))
    mass = fm.PointMass("mass", 1.0, r0=(0.3, -0.4, 0.1))
    c, s_ = np.cos(0.4), np.sin(0.4)
    marker = link.marker("m", s=(0.2, 0.1, -0.05), R=np.array([[c, 0, s_], [0, 1, 0],
                                                                [-s_, 0, c]]))
    sensors = [
        fm.OrientationSensor("rel", first=beam["tip"], second=marker, output="xyz"),
        fm.OrientationSensor("abs", first=beam["tip"], output="rotvec"),
        fm.PositionSensor("pos", first=mass, second=beam["tip"], frame="second"),
        fm.VelocitySensor("vel", first=marker, second=beam["tip"], frame="first"),
        fm.AngularVelocitySensor("omega", first=beam["tip"], second=marker),
        fm.PositionSensor("ground", first=fm.ground.marker("o", (0.1, 0.0, 0.0)),
                          second=marker),
    ]
    model = fm.System(gravity=(0, -9.81, 0)).add(beam, link, mass, *sensors)
    return model, sensors


@pytest.mark.parametrize("seed", [0, 1])
def test_chain_rule_equals_central_differences(seed):
    model, sensors = _model()
    asm = AssembledSystem(model)
    rng = np.random.default_rng(seed)
    q = asm.normalize(asm.initial_q() + 0.1 * rng.normal(size=asm.n_q))
    qd = rng.normal(size=asm.n_q)
    feeds = tuple((s, k) for s in sensors for k in range(len(s.columns)))
    idx = np.arange(asm.n_q)
    y, y_x, y_xd = feed_jacobians(asm.layout, feeds, q, qd, idx)
    y0, r_x, r_xd = feed_jacobians_reference(asm.layout, feeds, q, qd, idx)
    np.testing.assert_array_equal(y, y0)
    scale = max(1.0, np.abs(r_x).max())
    np.testing.assert_allclose(y_x, r_x, rtol=1e-6, atol=1e-6 * scale)
    np.testing.assert_allclose(y_xd, r_xd, rtol=1e-6, atol=1e-6 * scale)
    assert np.abs(r_x[:, :-1]).max() > 0.1 and np.abs(r_xd).max() > 0.1   # not all zero
