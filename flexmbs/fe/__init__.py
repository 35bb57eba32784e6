"""flexmbs.fe: materials, mass and stiffness assembly, stress recovery (scikit-fem)."""
from flexmbs.fe.assemble import assemble, rigid_modes
from flexmbs.fe.material import MATERIALS, Material, material_from_name
from flexmbs.fe.model import FEModel
from flexmbs.fe.stress import (green_lagrange_internal_force, green_lagrange_tangent,
                               nodal_stress_operator, von_mises)

__all__ = ["MATERIALS", "FEModel", "Material", "assemble", "green_lagrange_internal_force",
           "green_lagrange_tangent", "material_from_name", "nodal_stress_operator",
           "rigid_modes", "von_mises"]
