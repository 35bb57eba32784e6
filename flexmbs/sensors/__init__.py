"""Sensors (THEORY §5.8): kinematic measurements from marker P to marker Q."""
from flexmbs.sensors.base import MarkerState, Sensor
from flexmbs.sensors.face import FaceDisplacementSensor
from flexmbs.sensors.rotation import (
    AngularAccelerationSensor,
    AngularVelocitySensor,
    OrientationSensor,
)
from flexmbs.sensors.translation import AccelerationSensor, PositionSensor, VelocitySensor

__all__ = [
    "AccelerationSensor", "AngularAccelerationSensor", "AngularVelocitySensor",
    "FaceDisplacementSensor", "MarkerState",
    "OrientationSensor", "PositionSensor", "Sensor", "VelocitySensor",
]
