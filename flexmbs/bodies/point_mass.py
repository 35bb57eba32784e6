"""Point mass: a body with translational coordinates ``q_b = r`` only (3 DOF).

Equation of motion: ``m rdd - m g = (applied and constraint forces)``.  Its markers all
sit at the mass point; their axes are fixed in the inertial frame.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexmbs.bodies.marker import Marker


def _ro(a):
    arr = np.array(a, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class PointMass:
    """A point mass ``m`` [kg] starting at ``r0`` [m] with velocity ``v0`` [m/s]."""

    kind = "point_mass"          # its case-file type (flexmbs.case.kinds)

    name: str
    m: float
    r0: np.ndarray = field(default_factory=lambda: _ro(np.zeros(3)))
    v0: np.ndarray = field(default_factory=lambda: _ro(np.zeros(3)))

    is_ground = False
    n_coords = 3

    def __post_init__(self):
        object.__setattr__(self, "r0", _ro(self.r0))
        object.__setattr__(self, "v0", _ro(self.v0))
        object.__setattr__(self, "m", float(self.m))

    def marker(self, name: str, s=(0.0, 0.0, 0.0), R=None) -> Marker:
        return Marker(name, self, np.zeros(3), np.eye(3) if R is None else R)

    def problems(self) -> list[str]:
        out = []
        if not np.isfinite(self.m) or self.m <= 0:
            out.append(f"PointMass '{self.name}': mass must be positive, got {self.m}")
        for key in ("r0", "v0"):
            if getattr(self, key).shape != (3,):
                out.append(f"PointMass '{self.name}': {key} must have shape (3,), "
                           f"got {getattr(self, key).shape}")
        return out

    def initial_q(self):
        return np.array(self.r0)

    def initial_qd(self):
        return np.array(self.v0)

    def residual(self, q, qd, qdd, gravity):
        return self.m * (qdd - gravity)

    def kernel_args(self) -> tuple:
        """Its entry in a :class:`~flexmbs.bodies.pack.BodyPack` (which the compiled
        residual reads as a point mass, ``n_q = n_coords - 7 = -4``): the mass and empty
        floating-frame arrays."""
        z = np.zeros
        return (float(self.m), z(0), z((0, 12)), z((0, 0)), z((0, 3)), z((0, 3)),
                z((0, 3)), z((0, 0)), z((0, 0)), z((0, 0)), False)

    def tangent_args(self) -> tuple:
        """No tangent arrays (its tangent is ``M = m I``)."""
        return tuple(np.zeros(0) for _ in range(12))

    def tangent(self, q, qd, qdd, gravity):
        z = np.zeros((3, 3))
        return z, z, self.m * np.eye(3)

    def omega(self, q, qd):
        return np.zeros(3)

    def kinetic_energy(self, q, qd):
        return 0.5 * self.m * qd @ qd

    def potential_energy(self, q, gravity):
        return -self.m * gravity @ q

    def __repr__(self):
        return f"PointMass('{self.name}', m={self.m:g} kg)"
