"""Consistent mass and linear stiffness of a solid mesh (scikit-fem).

``M = int rho N^T N dV`` and ``K = int eps(v) : sigma(u) dV`` with
``sigma = lam tr(eps) I + 2 mu eps`` on the isoparametric Lagrange element of the mesh.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from skfem import (BilinearForm, CellBasis, ElementHex1, ElementHex2, ElementTetP1,
                   ElementTetP2, ElementVector, asm)
from skfem.helpers import dot
from skfem.models.elasticity import linear_elasticity

from flexmbs.fe.material import Material
from flexmbs.fe.model import FEModel
from flexmbs.io.mesh import Mesh, _skfem_local_order

#: cell type -> (scalar element, polynomial degree per direction)
ELEMENTS = {"tet4": (ElementTetP1, 1), "tet10": (ElementTetP2, 2),
            "hex8": (ElementHex1, 1), "hex27": (ElementHex2, 2)}


def intorder(cell_type: str) -> int:
    """Quadrature order exact for ``N_i N_j`` on affine cells: ``2 p``.

    For hexahedra scikit-fem's rule is a tensor Gauss rule exact to degree ``intorder``
    in each coordinate, so ``2 p`` integrates the (tri-)quadratic products of hex27
    (per-direction degree 4) exactly with 3 x 3 x 3 points.
    """
    return 2 * ELEMENTS[cell_type][1]


def vector_basis(mesh: Mesh) -> CellBasis:
    """3-component Lagrange basis over ``mesh.skfem()`` with the mass-exact quadrature."""
    elem = ELEMENTS[mesh.cell_type][0]()
    return CellBasis(mesh.skfem(), ElementVector(elem), intorder=intorder(mesh.cell_type))


def dof_of_node(mesh: Mesh, basis: CellBasis) -> np.ndarray:
    """``(n_nodes, 3)`` global dof of node i (flexmbs numbering) in direction k.

    Local scalar node ``a`` of element ``e`` carries the vector dofs
    ``basis.element_dofs[3 a + k, e]`` (scikit-fem's ``ElementVector`` interleaves the
    components), and is flexmbs node ``local[e, a]`` (cells in scikit-fem local order).
    This covers vertex, mid-edge, mid-face and interior nodes alike.
    """
    local = _skfem_local_order(mesh.cell_type, mesh.cells)  # (E, n_loc)
    ed = basis.element_dofs  # (3 n_loc, E)
    n_loc = local.shape[1]
    out = np.full((mesh.n_nodes, 3), -1, dtype=np.int64)
    for k in range(3):
        out[local.ravel(), k] = ed[3 * np.arange(n_loc) + k].T.ravel()
    if (out < 0).any():
        raise RuntimeError(f"mesh '{mesh.source}': {int((out < 0).sum())} node dofs "
                           "not found in the basis")
    out.flags.writeable = False
    return out


@BilinearForm
def _unit_mass(u, v, w):
    return dot(u, v)


def assemble(mesh: Mesh, material: Material) -> FEModel:
    """Assemble the consistent mass ``M`` and the linear stiffness ``K`` (both CSR).

    ``M = rho int N^T N dV``, ``K = int eps(N)^T C eps(N) dV``, element by element with
    batched dense products (:func:`element_matrices`), the same quadrature as the
    scikit-fem forms :func:`assemble_forms` (a test checks both agree).
    """
    basis = vector_basis(mesh)
    M, K = _scatter(basis, *element_matrices(basis, material))
    return FEModel(mesh=mesh, material=material, basis=basis, M=M, K=K,
                   dof_of_node=dof_of_node(mesh, basis))


def assemble_forms(mesh: Mesh, material: Material) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``(M, K)`` from scikit-fem's ``BilinearForm`` machinery and ``linear_elasticity``
    (slower reference implementation of :func:`assemble`)."""
    basis = vector_basis(mesh)
    M = material.rho * asm(_unit_mass, basis)
    K = asm(linear_elasticity(material.lam, material.mu), basis)
    return sp.csr_matrix(M), sp.csr_matrix(K)


def element_matrices(basis: CellBasis, material: Material):
    """Element mass and stiffness ``(E, 3n, 3n)``, local dof ``3 a + i`` (node a, dir i).

    With scalar shape functions ``N_a`` and ``dV = w_q det J``:
    ``M_e[a i, b j] = rho delta_ij int N_a N_b dV`` and
    ``K_e[a i, b j] = int lam N_a,i N_b,j + mu (delta_ij N_a,k N_b,k + N_a,j N_b,i) dV``.
    """
    scalar = CellBasis(basis.mesh, basis.elem.elem, quadrature=(basis.X, basis.W))
    n = scalar.Nbfun
    N = np.stack([np.asarray(scalar.basis[a][0]) for a in range(n)])  # (n, E, q)
    G = np.stack([scalar.basis[a][0].grad for a in range(n)])  # (n, 3, E, q)
    dx = scalar.dx  # (E, q)
    n_cells = dx.shape[0]
    Ms = np.einsum("aeq,beq->eab", N * dx[None], N)  # (E, n, n)
    Gt = np.ascontiguousarray(G.transpose(2, 0, 1, 3).reshape(n_cells, 3 * n, -1))
    P = np.matmul(Gt * dx[:, None, :], Gt.transpose(0, 2, 1))  # (E, 3n, 3n): [a i, b j]
    P = P.reshape(n_cells, n, 3, n, 3)
    lam, mu = material.lam, material.mu
    K = lam * P + mu * P.transpose(0, 1, 4, 3, 2)
    K += mu * np.einsum("eakbk->eab", P)[:, :, None, :, None] * np.eye(3)[None, None, :,
                                                                            None, :]
    M = material.rho * Ms[:, :, None, :, None] * np.eye(3)[None, None, :, None, :]
    shape = (n_cells, 3 * n, 3 * n)
    return M.reshape(shape), K.reshape(shape)


def _scatter(basis: CellBasis, *element_mats):
    """Global CSR matrices from element matrices over ``basis.element_dofs``."""
    ed = basis.element_dofs.T  # (E, 3n)
    rows = np.broadcast_to(ed[:, :, None], element_mats[0].shape).ravel()
    cols = np.broadcast_to(ed[:, None, :], element_mats[0].shape).ravel()
    out = []
    for A in element_mats:
        A = sp.csr_matrix((A.ravel(), (rows, cols)), shape=(basis.N, basis.N))
        out.append(sp.csr_matrix(0.5 * (A + A.T)))  # exactly symmetric despite round-off
    return out


def rigid_modes(fe: FEModel, about: np.ndarray | None = None) -> np.ndarray:
    """``(n_dof, 6)`` rigid-body fields: 3 translations, 3 rotations ``e_k x (x - about)``."""
    x = fe.mesh.points - (np.zeros(3) if about is None else np.asarray(about))
    R = np.zeros((fe.n_dof, 6))
    for k in range(3):
        R[fe.dof_of_node[:, k], k] = 1.0
        e = np.zeros(3)
        e[k] = 1.0
        rot = np.cross(e, x)
        for j in range(3):
            R[fe.dof_of_node[:, j], 3 + k] = rot[:, j]
    return R
