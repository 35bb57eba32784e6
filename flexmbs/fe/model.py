"""The assembled finite-element model of one elastic part (shared by fe and reduction)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class FEModel:
    """Linear-elastic FE model of a part in SI units.

    Attributes
    ----------
    mesh : flexmbs.io.mesh.Mesh
        The validated mesh (points in m, named node and facet sets).
    material : flexmbs.fe.material.Material
        Isotropic material (E [Pa], nu [-], rho [kg/m^3]).
    basis : skfem.CellBasis
        Vector (3-component) basis over the mesh; quadrature exact for the mass matrix.
    M : scipy.sparse.csr_matrix, (n_dof, n_dof), or None
        Consistent mass matrix, ``M = int rho N^T N dV`` (or its row-sum lumped
        diagonal, ``assemble(..., mass="lumped")``); ``None`` in a distributed
        run, where each rank assembles its own rows (``flexmbs.reduction.distributed``).
    K : scipy.sparse.csr_matrix, (n_dof, n_dof), or None
        Linear stiffness, ``K = int B_L^T C B_L dV`` (``None`` as ``M``).
    dof_of_node : ndarray[int], (n_nodes, 3)
        Global dof index of node ``i`` in direction ``k`` (x, y, z).
    """

    mesh: Any
    material: Any
    basis: Any
    M: sp.csr_matrix | None
    K: sp.csr_matrix | None
    dof_of_node: np.ndarray

    @property
    def n_dof(self) -> int:
        return int(np.asarray(self.dof_of_node).size)
