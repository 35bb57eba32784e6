"""The public Python API, re-exported as ``import flexmbs as fm``."""
from __future__ import annotations

from flexmbs.bodies.ground import ground
from flexmbs.bodies.point_mass import PointMass
from flexmbs.bodies.rigid import RigidBody
from flexmbs.constraints.revolute import Revolute
from flexmbs.constraints.spherical import Spherical
from flexmbs.errors import (
    BodyFileError, CaseError, ConvergenceError, FlexmbsError, MeshError, ModelError,
)
from flexmbs.simulate import Result, simulate
from flexmbs.system.model import System

__all__ = [
    "BodyFileError", "CaseError", "ConvergenceError", "FlexmbsError", "MeshError", "ModelError",
    "PointMass", "Result", "Revolute", "RigidBody", "Spherical", "System", "ground", "simulate",
]
