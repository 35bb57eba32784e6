"""The public Python API, re-exported as ``import flexmbs as fm``."""
from __future__ import annotations

from flexmbs.bodies.ground import ground
from flexmbs.bodies.point_mass import PointMass
from flexmbs.bodies.rigid import RigidBody
from flexmbs.constraints.cylindrical import Cylindrical
from flexmbs.constraints.drives import (
    AngleDrive, AngularVelocityDrive, DisplacementDrive, VelocityDrive,
)
from flexmbs.constraints.fixed import Fixed
from flexmbs.constraints.helical import Helical
from flexmbs.constraints.planar import Planar
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.constraints.revolute import Revolute
from flexmbs.constraints.spherical import Spherical
from flexmbs.constraints.universal import Universal
from flexmbs.forces.bushing import Bushing
from flexmbs.forces.external import ExternalForce, ExternalTorque
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.forces.stops import JointStop
from flexmbs.kinematics.time_functions import (
    Constant, FromCallables, Polynomial, Ramp, Sine, SpinUp, TimeFunction,
)
from flexmbs.sensors.rotation import (
    AngularAccelerationSensor, AngularVelocitySensor, OrientationSensor,
)
from flexmbs.sensors.face import FaceDisplacementSensor
from flexmbs.sensors.translation import AccelerationSensor, PositionSensor, VelocitySensor
from flexmbs.errors import (
    BodyFileError, CaseError, ConvergenceError, FlexmbsError, MeshError, ModelError,
)
from flexmbs.simulate import Equilibrium, Result, simulate, static_equilibrium
from flexmbs.system.model import System

__all__ = [
    "AccelerationSensor", "AngleDrive", "AngularAccelerationSensor", "AngularVelocityDrive",
    "AngularVelocitySensor", "Bushing", "Constant", "Cylindrical", "DisplacementDrive",
    "ExternalForce", "ExternalTorque", "FaceDisplacementSensor", "Fixed", "FromCallables",
    "Helical", "JointStop",
    "OrientationSensor", "Planar", "PointToPointSpringDamper", "Polynomial", "PositionSensor",
    "Prismatic", "Ramp", "RotationalSpringDamper", "Sine", "SpinUp", "TimeFunction",
    "Universal", "VelocityDrive", "VelocitySensor",
    "BodyFileError", "CaseError", "ConvergenceError", "FlexmbsError", "MeshError", "ModelError",
    "Equilibrium", "PointMass", "Result", "Revolute", "RigidBody", "Spherical", "System", "ground",
    "simulate", "static_equilibrium",
]

from flexmbs.bodies.flexible import FlexibleBody  # noqa: E402
from flexmbs.forces.pressure import FacePressure  # noqa: E402

__all__ += ["FacePressure", "FlexibleBody"]
