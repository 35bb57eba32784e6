"""Consistent mass and linear stiffness of a solid mesh, assembled in element chunks.

``M = int rho N^T N dV`` and ``K = int eps(v) : sigma(u) dV`` with
``sigma = lam tr(eps) I + 2 mu eps`` on the isoparametric Lagrange element of the mesh.

Memory: the scikit-fem ``CellBasis`` stores every shape function and gradient at every
quadrature point of every element (about 200 kB per hex27 element).  Here only the
reference values ``N(xi_g)``, ``dN/dxi(xi_g)`` are stored; Jacobians and physical
gradients are rebuilt per chunk of elements (:class:`ElementBasis`), and element
matrices are summed straight into the 3 x 3 node blocks of a fixed sparsity pattern.
The scikit-fem basis is built only on demand (``ElementBasis.skfem``), for the small
meshes of the tests and the reference path :func:`assemble_forms`.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from skfem import (BilinearForm, CellBasis, ElementHex1, ElementHex2, ElementHexS2,
                   ElementTetP1, ElementTetP2, ElementVector, ElementWedge1, asm)
from skfem.helpers import dot
from skfem.models.elasticity import linear_elasticity

from flexmbs.fe.material import Material
from flexmbs.fe.model import FEModel
from flexmbs.io.cell_types import quadrature as cell_quadrature
from flexmbs.io.mesh import Mesh, skfem_local_order

#: cell type -> (scalar element, polynomial degree per direction); hex20 is the
#: serendipity hexahedron, wedge6 the linear prism (triangle x line)
ELEMENTS = {"tet4": (ElementTetP1, 1), "tet10": (ElementTetP2, 2),
            "hex8": (ElementHex1, 1), "hex20": (ElementHexS2, 2),
            "hex27": (ElementHex2, 2), "wedge6": (ElementWedge1, 1)}
#: quadrature order of the reduced-integration stiffness: 2 x 2 x 2 Gauss points on hex20
REDUCED_ORDER = {"hex20": 3}
#: floats per chunk temporary (about 64 MB); bounds every element loop
CHUNK_FLOATS = 8_000_000


def intorder(cell_type: str) -> int:
    """Quadrature order exact for ``N_i N_j`` on affine cells: ``2 p``.

    For hexahedra scikit-fem's rule is a tensor Gauss rule exact to degree ``intorder``
    in each coordinate, so ``2 p`` integrates the (tri-)quadratic products of hex27
    and hex20 (per-direction degree 4) exactly with 3 x 3 x 3 points; for the wedge
    it is a triangle rule times a line rule, each exact to degree ``2 p``.
    """
    return 2 * ELEMENTS[cell_type][1]


def element_chunks(n_elements: int, per_element: int,
                   chunk_floats: int | None = None) -> Iterator[np.ndarray]:
    """Consecutive element index ranges whose temporaries stay below ``chunk_floats``
    (default :data:`CHUNK_FLOATS`) floats."""
    limit = CHUNK_FLOATS if chunk_floats is None else chunk_floats
    size = max(1, limit // max(per_element, 1))
    for start in range(0, n_elements, size):
        yield np.arange(start, min(start + size, n_elements))


@dataclass(frozen=True)
class ElementGeometry:
    """Quadrature data of a chunk of elements (isoparametric map).

    dx : (n_e, n_qp)            ``w_g |det J|``
    X : (n_e, n_qp, 3)          physical coordinates of the quadrature points
    G : (n_e, n_qp, n_loc, 3)   physical gradients ``dN_a / dX_i``
    """

    dx: np.ndarray
    X: np.ndarray
    G: np.ndarray


class ElementBasis:
    """Vector Lagrange basis of a mesh without per-element storage.

    Attributes: ``N`` (n_qp, n_loc) and ``dN`` (n_qp, n_loc, 3) reference values at the
    quadrature points ``Xq`` (3, n_qp) with weights ``Wq``; ``nodes`` (E, n_loc) mesh
    nodes of each element in scikit-fem local order; ``dofs`` (E, n_loc, 3) their global
    dofs (``3 b + k``, node-blocked, the numbering of scikit-fem's ``ElementVector``, or
    with ``numbering="mesh"`` ``b`` = the mesh node, as for the blocks of a mixed mesh).
    Any other attribute (``interpolate``, ``doflocs``, ...) is looked up on the
    scikit-fem ``CellBasis``, built once on first use (:attr:`skfem`).
    """

    def __init__(self, mesh: Mesh, *, quadrature: tuple[np.ndarray, np.ndarray] | None = None,
                 elements: np.ndarray | None = None, numbering: str = "skfem"):
        self.mesh = mesh
        #: the elements this basis loops over (``None``: all); a distributed run gives
        #: each rank its own part, so that element sums become partial sums
        self.elements = None if elements is None else np.asarray(elements, dtype=np.int64)
        self.cell_type = mesh.cell_type
        self.elem = _vector_element(mesh.cell_type)
        self.Xq, self.Wq = (cell_quadrature(mesh.cell_type, intorder(mesh.cell_type))
                            if quadrature is None else quadrature)
        scalar = self.elem.elem
        n_loc = scalar.doflocs.shape[0]
        vals = [scalar.lbasis(self.Xq, a) for a in range(n_loc)]
        self.N = np.stack([v[0] for v in vals], axis=1)                  # (n_qp, n_loc)
        self.dN = np.stack([v[1] for v in vals], axis=1).transpose(2, 1, 0).copy()
        self.nodes = skfem_local_order(mesh.cell_type, np.asarray(mesh.cells))
        # dof block of each mesh node: scikit-fem's numbering, or the mesh's own (``3 i +
        # k``, shared by the blocks of a mixed mesh)
        self.numbering = numbering
        block = (np.asarray(mesh.skfem_node_index()) if numbering == "skfem"
                 else np.arange(mesh.n_nodes))
        self.block = block[self.nodes]                                    # (E, n_loc)
        self.dof_of_node = 3 * block[:, None] + np.arange(3)[None, :]
        self.dof_of_node.flags.writeable = False
        self.N_dof = 3 * mesh.n_nodes
        self.points = np.asarray(mesh.points, dtype=float)

    # --- sizes
    @property
    def n_elements(self) -> int:
        return self.nodes.shape[0]

    @property
    def n_qp(self) -> int:
        return self.Xq.shape[1]

    @property
    def n_loc(self) -> int:
        return self.nodes.shape[1]

    def chunks(self, per_element: int) -> Iterator[np.ndarray]:
        """Element index arrays, chunk by chunk, over :attr:`elements` (all by default)."""
        if self.elements is None:
            yield from element_chunks(self.n_elements, per_element)
            return
        for idx in element_chunks(len(self.elements), per_element):
            yield self.elements[idx]

    def restricted(self, elements: np.ndarray) -> ElementBasis:
        """The same basis looping only over ``elements`` (shares all arrays)."""
        out = object.__new__(ElementBasis)
        out.__dict__.update({k: v for k, v in self.__dict__.items()
                             if k not in ("skfem", "_stiffness")})
        out.elements = np.asarray(elements, dtype=np.int64)
        return out

    def stiffness_basis(self) -> ElementBasis:
        """The basis whose quadrature integrates the stiffness: this one, or for the
        reduced-integration formulation (``mesh.formulation == "reduced"``, Abaqus's
        C3D20R) the same elements with the :data:`REDUCED_ORDER` rule."""
        if self.mesh.formulation != "reduced":
            return self
        if "_stiffness" not in self.__dict__:
            rule = cell_quadrature(self.cell_type, REDUCED_ORDER[self.cell_type])
            self._stiffness = ElementBasis(self.mesh, quadrature=rule,
                                           elements=self.elements, numbering=self.numbering)
        return self._stiffness

    def dofs(self, elems: np.ndarray) -> np.ndarray:
        """(n_e, n_loc, 3) global dofs of the element nodes."""
        return 3 * self.block[elems][:, :, None] + np.arange(3)

    def geometry(self, elems: np.ndarray) -> ElementGeometry:
        """Jacobians, ``dx`` and physical gradients of the elements ``elems``."""
        xe = self.points[self.nodes[elems]]                        # (n_e, n_loc, 3)
        J = np.einsum("eai,gaj->egij", xe, self.dN)                # dX_i / dxi_j
        det, Jinv = det_inv3(J)                                    # dxi_j / dX_i
        G = np.einsum("gaj,egji->egai", self.dN, Jinv)
        X = np.einsum("ga,eai->egi", self.N, xe)
        return ElementGeometry(dx=np.abs(det) * self.Wq[None, :], X=X, G=G)

    def values(self, U: np.ndarray, elems: np.ndarray) -> np.ndarray:
        """``phi`` (n_e, n_qp, 3, n_u) of the dof vectors ``U`` (n_dof, n_u)."""
        Ue = U[self.dofs(elems)]                                   # (n_e, n_loc, 3, n_u)
        return np.einsum("ga,eaiu->egiu", self.N, Ue, optimize=True)

    def grads(self, U: np.ndarray, elems: np.ndarray, geo: ElementGeometry) -> np.ndarray:
        """``grad phi`` (n_e, n_qp, 3, 3, n_u), ``[.., i, j, k] = d phi_k,i / d X_j``."""
        Ue = U[self.dofs(elems)]
        return np.einsum("egaj,eaiu->egiju", geo.G, Ue, optimize=True)

    # --- scikit-fem fallback (small meshes only)
    @cached_property
    def skfem(self) -> CellBasis:
        """The equivalent scikit-fem ``CellBasis`` (same quadrature and numbering)."""
        return CellBasis(self.mesh.skfem(), self.elem, quadrature=(self.Xq, self.Wq))

    def __getattr__(self, name):
        if name.startswith("__") or name in ("mesh", "elem", "Xq", "Wq"):
            raise AttributeError(name)
        return getattr(self.skfem, name)


def element_bases(basis) -> tuple:
    """The :class:`ElementBasis` of each element block: ``fe.basis`` itself, or the tuple
    of a mixed mesh's blocks (:func:`assemble`)."""
    return basis if isinstance(basis, tuple) else (basis,)


def summed_over_blocks(f, basis, *args):
    """``f(basis, *args)``, for a mixed mesh the sum over its blocks,
    ``sum_b f(basis_b, *args)``: element integrals add up over disjoint element sets.
    Results may be numbers, arrays, tuples or dataclasses of them."""
    parts = [f(b, *args) for b in element_bases(basis)]
    return parts[0] if len(parts) == 1 else _added(parts)


def _added(parts):
    first = parts[0]
    if dataclasses.is_dataclass(first):
        return dataclasses.replace(first, **{
            f.name: _added([getattr(p, f.name) for p in parts])
            for f in dataclasses.fields(first)})
    if isinstance(first, tuple):
        return tuple(_added(list(z)) for z in zip(*parts))
    return sum(parts[1:], first)


def det_inv3(J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Determinant and inverse of a stack of 3x3 matrices ``J`` (..., 3, 3) by cofactors,
    ``J^-1 = adj(J) / det J`` (10x faster than ``np.linalg.inv`` on small stacks)."""
    a, b, c = J[..., 0, 0], J[..., 0, 1], J[..., 0, 2]
    d, e, f = J[..., 1, 0], J[..., 1, 1], J[..., 1, 2]
    g, h, i = J[..., 2, 0], J[..., 2, 1], J[..., 2, 2]
    A, B, C = e * i - f * h, f * g - d * i, d * h - e * g
    det = a * A + b * B + c * C
    adj = np.empty_like(J)
    adj[..., 0, 0], adj[..., 1, 0], adj[..., 2, 0] = A, B, C
    adj[..., 0, 1], adj[..., 0, 2] = c * h - b * i, b * f - c * e
    adj[..., 1, 1], adj[..., 1, 2] = a * i - c * g, c * d - a * f
    adj[..., 2, 1], adj[..., 2, 2] = b * g - a * h, a * e - b * d
    return det, adj / det[..., None, None]


def _vector_element(cell_type: str) -> ElementVector:
    return ElementVector(ELEMENTS[cell_type][0]())


def vector_basis(mesh: Mesh) -> CellBasis:
    """3-component scikit-fem basis over ``mesh.skfem()`` with the mass-exact quadrature."""
    elem = ELEMENTS[mesh.cell_type][0]()
    return CellBasis(mesh.skfem(), ElementVector(elem),
                     quadrature=cell_quadrature(mesh.cell_type, intorder(mesh.cell_type)))


def dof_of_node(mesh: Mesh, basis: CellBasis) -> np.ndarray:
    """``(n_nodes, 3)`` global dof of node i (flexmbs numbering) in direction k, read
    off a scikit-fem vector ``basis`` (reference for :attr:`ElementBasis.dof_of_node`)."""
    local = skfem_local_order(mesh.cell_type, mesh.cells)  # (E, n_loc)
    ed = basis.element_dofs  # (3 n_loc, E)
    n_loc = local.shape[1]
    out = np.full((mesh.n_nodes, 3), -1, dtype=np.int64)
    for k in range(3):
        out[local.ravel(), k] = ed[3 * np.arange(n_loc) + k].T.ravel()
    return out


@BilinearForm
def _unit_mass(u, v, w):
    return dot(u, v)


#: mass matrices :func:`assemble` offers
MASS_KINDS = ("consistent", "lumped")
#: cell types whose row-sum lumped mass is positive (first-order elements)
LUMPABLE = ("tet4", "hex8", "wedge6")


def assemble(mesh: Mesh, material: Material, *, mass: str = "consistent") -> FEModel:
    """Assemble the mass ``M`` and the linear stiffness ``K`` (both CSR).

    ``M_e[a i, b j] = rho delta_ij int N_a N_b dV``,
    ``K_e[a i, b j] = int lam N_a,i N_b,j + mu (delta_ij N_a,k N_b,k + N_a,j N_b,i) dV``
    (B-bar: :func:`element_blocks`), element chunk by element chunk into the node-block
    pattern (:func:`block_pattern`).  The same quadrature as the scikit-fem forms of
    :func:`assemble_forms` (a test checks both agree).

    ``mass="lumped"``: the row-sum lumped mass ``M_aa = sum_b M_ab`` (diagonal), what
    Abaqus/Standard uses for first-order elements (tet4, hex8, wedge6 only: the row
    sums of quadratic elements are zero or negative at the corners).

    A :class:`~flexmbs.io.mixed_mesh.MixedMesh` is assembled block by block,
    ``M = sum_b M_b``, ``K = sum_b K_b``, in its own numbering (dof ``3 i + k`` of node
    ``i``); ``fe.basis`` is then the tuple of the blocks' :class:`ElementBasis`.
    """
    if mass not in MASS_KINDS:
        raise ValueError(f"assemble: mass must be one of {MASS_KINDS}, got {mass!r}")
    mixed = hasattr(mesh, "blocks")               # a MixedMesh
    kinds = mesh.cell_types if mixed else (mesh.cell_type,)
    if mass == "lumped" and not set(kinds) <= set(LUMPABLE):
        raise ValueError(f"mesh '{mesh.source}': a lumped (row-sum) mass needs first-order "
                         f"elements {LUMPABLE}, got {'+'.join(kinds)} (its corner row sums "
                         f"are not positive); use the consistent mass")
    if mixed:
        basis = tuple(ElementBasis(b, numbering="mesh") for b in mesh.blocks)
        parts = [assemble_blocks(b, material) for b in basis]
        M, K = sum(p[0] for p in parts), sum(p[1] for p in parts)
        dof_of_node = 3 * np.arange(mesh.n_nodes)[:, None] + np.arange(3)
    else:
        basis = ElementBasis(mesh)
        M, K = assemble_blocks(basis, material)
        dof_of_node = basis.dof_of_node
    if mass == "lumped":
        M = lumped(M)
    return FEModel(mesh=mesh, material=material, basis=basis, M=M, K=K,
                   dof_of_node=dof_of_node)


def lumped(M: sp.csr_matrix) -> sp.csr_matrix:
    """Row-sum lumped mass ``diag(M 1)`` (CSR): keeps the total mass and the first
    moments ``sum_a M_aa x_a`` of every rigid translation."""
    return sp.diags(np.asarray(M.sum(axis=1)).ravel(), format="csr")


def fe_model_unassembled(mesh: Mesh, material: Material) -> FEModel:
    """The FE model of ``mesh`` without ``M``, ``K``: a distributed reduction assembles
    them rank by rank (``flexmbs.reduction.distributed``)."""
    basis = ElementBasis(mesh)
    return FEModel(mesh=mesh, material=material, basis=basis, M=None, K=None,
                   dof_of_node=basis.dof_of_node)


def assemble_forms(mesh: Mesh, material: Material) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``(M, K)`` from scikit-fem's ``BilinearForm`` machinery and ``linear_elasticity``
    (slower, memory-hungry reference implementation of :func:`assemble`)."""
    basis = vector_basis(mesh)
    M = material.rho * asm(_unit_mass, basis)
    K = asm(linear_elasticity(material.lam, material.mu), basis)
    return sp.csr_matrix(M), sp.csr_matrix(K)


def block_pattern(block: np.ndarray, n_blocks: int):
    """Node-graph CSR pattern ``(indptr, indices)`` and the position ``pos`` (E, n, n)
    of every element node pair in it."""
    E, n = block.shape
    b = block.astype(np.int64)
    keys = (b[:, :, None] * n_blocks + b[:, None, :]).ravel()
    uniq, pos = np.unique(keys, return_inverse=True)
    del keys
    rows, cols = np.divmod(uniq, n_blocks)
    indptr = np.zeros(n_blocks + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_blocks), out=indptr[1:])
    return indptr, cols.astype(np.int32), pos.reshape(E, n, n)


def element_blocks(basis: ElementBasis, elems: np.ndarray, material: Material):
    """Scalar element mass ``m`` (n_e, n, n) and stiffness blocks ``k`` (n_e, n, n, 3, 3)
    (``k[e, a, b, i, j] = K_e[a i, b j]``).

    The reduced formulation (``"reduced"``, Abaqus's C3D20R) integrates ``k`` with the
    2 x 2 x 2 Gauss rule and ``m`` with the full one.
    With the B-bar formulation (``mesh.formulation == "bbar"``, Hughes 1980) the
    volumetric strain ``N_a,i`` of the B matrix is replaced by its element mean
    ``gbar_ai = int N_a,i dV / V_e``.  Since ``tr eps_bar = gbar`` and the deviatoric
    part is unchanged, ``K_bar = K + kappa (V_e gbar_ai gbar_bj - int N_a,i N_b,j dV)``
    with the bulk modulus ``kappa = lam + 2 mu / 3`` (see :func:`bbar_correction`).
    """
    geo = basis.geometry(elems)
    n_e, n = len(elems), basis.n_loc
    m = material.rho * np.einsum("ga,gb,eg->eab", basis.N, basis.N, geo.dx, optimize=True)
    kb = basis.stiffness_basis()                  # reduced integration: its own rule
    geo = geo if kb is basis else kb.geometry(elems)
    Gt = geo.G.transpose(0, 2, 3, 1).reshape(n_e, 3 * n, -1)     # (e, (a i), g)
    P = np.matmul(Gt * geo.dx[:, None, :], Gt.transpose(0, 2, 1)).reshape(n_e, n, 3, n, 3)
    k = material.lam * P.transpose(0, 1, 3, 2, 4) + material.mu * P.transpose(0, 1, 3, 4, 2)
    tr = np.einsum("eakbk->eab", P)
    for i in range(3):
        k[:, :, :, i, i] += material.mu * tr
    if basis.mesh.formulation == "bbar":
        k += bbar_correction(geo, P, material)
    return m, k


def bbar_correction(geo: ElementGeometry, P: np.ndarray, material: Material) -> np.ndarray:
    """``kappa (V_e gbar_ai gbar_bj - P_aibj)`` as blocks (n_e, n, n, 3, 3): the change
    of the element stiffness from the full to the mean-dilatation volumetric strain;
    ``P_aibj = int N_a,i N_b,j dV`` (n_e, n, 3, n, 3), ``V_e = sum dx``,
    ``gbar_ai = int N_a,i dV / V_e``."""
    kappa = material.lam + 2.0 * material.mu / 3.0
    V = geo.dx.sum(axis=1)                                          # (n_e,)
    gbar = np.einsum("egai,eg->eai", geo.G, geo.dx) / V[:, None, None]
    mean = V[:, None, None, None, None] * np.einsum("eai,ebj->eabij", gbar, gbar)
    return kappa * (mean - P.transpose(0, 1, 3, 2, 4))


def assemble_blocks(basis: ElementBasis, material: Material
                    ) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``(M, K)`` CSR in the node-blocked dof numbering of ``basis``, summed over the
    elements of ``basis`` (all of them, or ``basis.elements``)."""
    nb = basis.mesh.n_nodes
    elems = (np.arange(basis.n_elements) if basis.elements is None else basis.elements)
    where = np.full(basis.n_elements, -1, dtype=np.int64)
    where[elems] = np.arange(len(elems))
    indptr, indices, pos = block_pattern(basis.block[elems], nb)
    nnz = len(indices)
    m_data = np.zeros(nnz)
    k_data = np.zeros((9, nnz))
    n = basis.n_loc
    for e in basis.chunks(4 * 9 * n * n + 3 * n * basis.n_qp):
        m, k = element_blocks(basis, e, material)
        p = pos[where[e]].ravel()
        np.add.at(m_data, p, m.ravel())
        k = k.reshape(-1, 9)
        for c in range(9):
            np.add.at(k_data[c], p, k[:, c])
    del pos
    k_data = np.ascontiguousarray(k_data.T).reshape(nnz, 3, 3)
    K = sp.bsr_matrix((k_data, indices, indptr), shape=(3 * nb, 3 * nb)).tocsr()
    del k_data
    K = _symmetrized(K)
    M = _kron_eye3(indptr, indices, m_data, nb)
    return M, K


def _symmetrized(A: sp.csr_matrix) -> sp.csr_matrix:
    """``(A + A^T) / 2`` in place on the (structurally symmetric) pattern of ``A``."""
    A.sort_indices()
    At = A.T.tocsr()
    At.sort_indices()
    if not (np.array_equal(A.indptr, At.indptr) and np.array_equal(A.indices, At.indices)):
        return sp.csr_matrix(0.5 * (A + At))
    A.data += At.data
    A.data *= 0.5
    return A


def _kron_eye3(indptr, indices, data, nb) -> sp.csr_matrix:
    """``m_hat (x) E_3`` as CSR (the mass has no coupling between directions): row
    ``3 b + k`` holds the entries ``3 c + k`` of row ``b`` of ``m_hat``."""
    m = sp.csr_matrix((data, indices, indptr), shape=(nb, nb))
    m = _symmetrized(m)
    counts = np.diff(m.indptr)
    indptr3 = np.zeros(3 * nb + 1, dtype=np.int64)
    np.cumsum(np.repeat(counts, 3), out=indptr3[1:])
    rows = np.repeat(np.arange(nb), counts)
    offset = np.arange(m.nnz) - m.indptr[rows]
    idx = np.empty(3 * m.nnz, dtype=np.int32)
    vals = np.empty(3 * m.nnz)
    for k in range(3):
        at = 3 * m.indptr[rows] + k * counts[rows] + offset
        idx[at] = 3 * m.indices + k
        vals[at] = m.data
    return sp.csr_matrix((vals, idx, indptr3), shape=(3 * nb, 3 * nb))


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
