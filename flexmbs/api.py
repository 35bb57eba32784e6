"""The public Python API, re-exported as ``import flexmbs as fm``.

Every joint, drive, force element, sensor and time function of the case format is
exported under its class name from the registry of kinds (:mod:`flexmbs.case.kinds`):
``fm.Revolute``, ``fm.AngleDrive``, ``fm.Bushing``, ``fm.PositionSensor``, ``fm.SpinUp``,
...; the rest of the API (bodies, the classes without a case-file kind, ``System``,
``simulate``, errors) is imported here by name.
"""
from __future__ import annotations

from flexmbs.bodies.damping import ModalDamping, RayleighDamping
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.bodies.ground import ground
from flexmbs.bodies.point_mass import PointMass
from flexmbs.bodies.rigid import RigidBody
from flexmbs.case import kinds as _kinds
from flexmbs.constraints.gear import MeshForces, mesh_forces
from flexmbs.constraints.user_velocity import UserVelocityConstraint
from flexmbs.errors import (
    BodyFileError,
    CaseError,
    ConvergenceError,
    FlexmbsError,
    MeshError,
    ModelError,
)
from flexmbs.forces.contact_law import ContactLaw
from flexmbs.forces.controllers import pid
from flexmbs.forces.friction_law import FrictionLaw
from flexmbs.forces.joint_friction import JointFriction
from flexmbs.forces.pressure import FacePressure
from flexmbs.forces.sampled import CallbackController
from flexmbs.forces.states import StatefulForceElement, StateLaw, scalar_state_law
from flexmbs.kinematics.time_functions import FromCallables, TimeFunction
from flexmbs.simulate import Equilibrium, Result, simulate, static_equilibrium
from flexmbs.system.model import System

__all__ = [
    "BodyFileError", "CallbackController", "CaseError", "ContactLaw", "ConvergenceError",
    "Equilibrium", "FacePressure", "FlexibleBody", "FlexmbsError", "FrictionLaw",
    "FromCallables", "JointFriction", "MeshError",
    "MeshForces", "ModalDamping", "ModelError", "PointMass", "RayleighDamping", "Result",
    "RigidBody", "StateLaw", "StatefulForceElement", "System", "TimeFunction",
    "UserVelocityConstraint", "ground",
    "mesh_forces", "pid", "scalar_state_law", "simulate", "static_equilibrium",
]

#: the registered classes by class name (``fm.Revolute``, ...)
_REGISTERED = {cls.__name__: cls for cls in _kinds.classes()}
globals().update(_REGISTERED)
__all__ += list(_REGISTERED)
