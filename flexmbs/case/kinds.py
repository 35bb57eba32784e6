"""The registry of case-file kinds: which class a ``type = "..."`` of a case file makes.

Every joint, drive, force element, sensor and time function class states its kind (the
``type`` string of ``[[joints]]``, ``[[constraints]]``, ``[[drives]]``, ``[[forces]]``, ``[[sensors]]`` and
of the time-function tables ``{type = ...}``) as its class attribute ``kind``.  This
module lists those classes once, section by section in the order of the format's
documentation, and maps each kind to its class:

    kinds.JOINTS["revolute"] is Revolute,    tuple(kinds.FORCES) == ("spring_damper", ...)

The schema (:mod:`flexmbs.case.schema`: allowed types, docs), the builder
(:mod:`flexmbs.case.builder`: the constructor of an item) and the public API
(:mod:`flexmbs.api`) read it, so a new kind is one class with a ``kind`` and one line
here (plus its table of keys in the schema).
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.bodies.point_mass import PointMass
from flexmbs.bodies.rigid import RigidBody
from flexmbs.constraints.cam import PointOnCurve
from flexmbs.constraints.curve_contact import CurveOnCurve
from flexmbs.constraints.cylinder_on_plane import CylinderOnPlane
from flexmbs.constraints.cylindrical import Cylindrical
from flexmbs.constraints.distance import Distance
from flexmbs.constraints.double_prismatic import DoublePrismatic
from flexmbs.constraints.drives import (
    AngleDrive,
    AngularVelocityDrive,
    DisplacementDrive,
    VelocityDrive,
)
from flexmbs.constraints.fixed import Fixed
from flexmbs.constraints.gear import GearPair
from flexmbs.constraints.helical import Helical
from flexmbs.constraints.planar import Planar
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.constraints.rack_pinion import RackPinion
from flexmbs.constraints.revolute import Revolute
from flexmbs.constraints.sphere_in_tube import SphereInTube
from flexmbs.constraints.sphere_on_plane import SphereOnPlane
from flexmbs.constraints.spherical import Spherical
from flexmbs.constraints.surface import PointOnSurface
from flexmbs.constraints.universal import Universal
from flexmbs.constraints.knife_edge import KnifeEdge
from flexmbs.constraints.rim_rolling import RimRolling
from flexmbs.constraints.rolling import Rolling
from flexmbs.constraints.velocity_ratio import VelocityRatio
from flexmbs.forces.actuator import LinearActuator
from flexmbs.forces.bushing import Bushing
from flexmbs.forces.contact import PinInHoleContact, SpherePlaneContact, SphereSphereContact
from flexmbs.forces.controllers import LinearController, PIDController
from flexmbs.forces.external import ExternalForce, ExternalTorque
from flexmbs.forces.deformed_face_contact import DeformedFaceContact
from flexmbs.forces.face_contact import FaceContact
from flexmbs.forces.nonlinear_spring import NonlinearRotationalSpring, NonlinearSpring
from flexmbs.forces.one_sided import CompressionSpring, Rope
from flexmbs.forces.hydraulics import HydraulicCylinder
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.servo import ServoCylinder
from flexmbs.forces.sampled import DiscreteStateSpaceController
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.forces.stops import JointStop
from flexmbs.kinematics.time_functions import Constant, Polynomial, Ramp, Sine, SpinUp
from flexmbs.sensors.face import FaceDisplacementSensor
from flexmbs.sensors.rotation import (
    AngularAccelerationSensor,
    AngularVelocitySensor,
    OrientationSensor,
)
from flexmbs.sensors.translation import AccelerationSensor, PositionSensor, VelocitySensor
from flexmbs.system.clearance import ClearanceRevolute


def registry(*classes: type) -> Mapping[str, type]:
    """Read-only ``{cls.kind: cls}`` in the given order.

    Each class must declare ``kind`` itself (a subclass does not inherit its parent's
    place in the case format); a kind given twice is an error.
    """
    out: dict[str, type] = {}
    for cls in classes:
        kind = cls.__dict__.get("kind")
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"{cls.__name__}: a case-file kind must be declared as the class "
                            f"attribute 'kind' (a non-empty string), got {kind!r}")
        if kind in out:
            raise ValueError(f"{cls.__name__}: kind '{kind}' is already that of "
                             f"{out[kind].__name__}")
        out[kind] = cls
    return MappingProxyType(out)


#: ``[[bodies]]``: made by the builder's maker of each class (their keys describe a shape,
#: a mesh and its reduction, not constructor arguments), so not among :data:`SECTIONS`
BODIES = registry(RigidBody, PointMass, FlexibleBody)
JOINTS = registry(Revolute, Spherical, Fixed, Prismatic, Cylindrical, Universal, Planar,
                  Helical, DoublePrismatic, SphereOnPlane, CylinderOnPlane, SphereInTube,
                  Distance, GearPair, RackPinion, PointOnCurve, CurveOnCurve,
                  PointOnSurface, ClearanceRevolute)
#: ``[[constraints]]``: velocity (nonholonomic) constraints
CONSTRAINTS = registry(Rolling, RimRolling, KnifeEdge, VelocityRatio)
DRIVES = registry(AngleDrive, AngularVelocityDrive, DisplacementDrive, VelocityDrive)
FORCES = registry(PointToPointSpringDamper, RotationalSpringDamper, Bushing, ExternalForce,
                  ExternalTorque, JointStop, Rope, CompressionSpring, NonlinearSpring,
                  NonlinearRotationalSpring, LinearActuator, HydraulicCylinder, ServoCylinder,
                  PIDController, LinearController, DiscreteStateSpaceController,
                  SpherePlaneContact, SphereSphereContact, PinInHoleContact, FaceContact,
                  DeformedFaceContact)
SENSORS = registry(PositionSensor, VelocitySensor, AccelerationSensor, OrientationSensor,
                   AngularVelocitySensor, AngularAccelerationSensor, FaceDisplacementSensor)
#: the time-function tables ``{type = ...}`` of drive values and loads
FUNCTIONS = registry(Constant, Ramp, Polynomial, Sine, SpinUp)

#: case-file section -> its registry (``"functions"``: the time-function tables)
SECTIONS: Mapping[str, Mapping[str, type]] = MappingProxyType({
    "joints": JOINTS, "constraints": CONSTRAINTS, "drives": DRIVES, "forces": FORCES,
    "sensors": SENSORS, "functions": FUNCTIONS,
})


def classes() -> tuple[type, ...]:
    """Every registered class, section by section."""
    return tuple(cls for reg in SECTIONS.values() for cls in reg.values())
