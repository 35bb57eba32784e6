"""Position-level sensors as jets (``Sensor.measure_jet``): the value equals ``measure``
of the same marker states (a second formulation of the reading), the gradient and
Hessian equal central differences of the value and gradient (tests/constraints/jetcheck)."""
from __future__ import annotations

import numpy as np
import pytest
from constraints.jetcheck import Layout, check_jets, random_body

from flexmbs.bodies.ground import ground
from flexmbs.sensors import (
    AngularVelocitySensor,
    MarkerState,
    OrientationSensor,
    PositionSensor,
)


def sensors(rng):
    a, b, c = (random_body(rng, n) for n in "abc")
    m = b.marker("m", s=(0.1, -0.2, 0.3))
    f = c.marker("f", s=(0.0, 0.1, 0.0), R=np.array([[0.0, 1, 0], [0, 0, 1], [1, 0, 0]]))
    return [
        PositionSensor("p", first=a, second=m),
        PositionSensor("p1", first=a, second=m, frame="first"),
        PositionSensor("p2", first=m, second=a, frame="second"),
        PositionSensor("pf", first=a, second=m, frame=f),
        PositionSensor("abs", first=m),
        OrientationSensor("xyz", first=a, second=m, output="xyz"),
        OrientationSensor("mat", first=m, second=a, output="matrix"),
        OrientationSensor("abs_xyz", first=a, output="xyz"),
        PositionSensor("g", first=ground.marker("o", at=(0.3, 0.0, 0.1)), second=a),
    ]


def _state(F) -> MarkerState:
    z = np.zeros(3)
    R = np.column_stack([F.x.v, F.y.v, F.z.v])
    return MarkerState(np.asarray(F.p.v), R, z, z, z, z)


@pytest.mark.parametrize("k", range(9))
def test_measure_jet_is_measure_with_exact_derivatives(k):
    rng = np.random.default_rng(11 + k)
    sensor = sensors(rng)[k]
    assert sensor.position_level
    layout = Layout(sensor.resolve())
    x = layout.random_x(rng)
    frames = layout.frames(x, 1)
    np.testing.assert_allclose([float(j.v) for j in sensor.measure_jet(frames)],
                               sensor.measure(tuple(_state(F) for F in frames)), atol=1e-13)
    check_jets(lambda y, order: sensor.measure_jet(layout.frames(y, order)), x)


def test_rate_sensors_and_rotvec_have_no_jets():
    rng = np.random.default_rng(0)
    a = random_body(rng, "a")
    for s in (AngularVelocitySensor("w", first=a), OrientationSensor("r", first=a)):
        assert not s.position_level
        layout = Layout(s.resolve())
        with pytest.raises(NotImplementedError, match="not a position-level sensor"):
            s.measure_jet(layout.frames(layout.random_x(rng), 1))
