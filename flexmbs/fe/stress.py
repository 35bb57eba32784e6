"""Stress recovery and the geometrically nonlinear (St. Venant-Kirchhoff) internal force.

Voigt order xx, yy, zz, yz, xz, xy throughout; strains with engineering shears.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from skfem import BilinearForm, Functional, LinearForm, asm
from skfem.helpers import ddot, eye, grad, mul, trace, transpose

from flexmbs.fe.model import FEModel

#: (i, j) tensor index of each Voigt component
VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))


def _nodal_B(fe: FEModel, elements: np.ndarray | None = None):
    """Yield ``(elems, nodes, B)`` per element chunk: ``B`` (n_e, n_loc, 6, n_loc, 3) maps
    the element dofs ``(a, k)`` to the engineering Voigt strain at element node ``q``
    (``nodes`` (n_e, n_loc), the mesh node of each ``q``).

    The gradients at the element nodes come from the reference element evaluated at its
    own nodes (an :class:`~flexmbs.fe.assemble.ElementBasis` with that "quadrature"), so
    no second per-element basis is stored.  B-bar elements (Abaqus C3D8) take the strain
    of their stiffness, ``B_bar = B + m (gbar - g)^T / 3`` with the element-mean
    ``gbar = int g dV / V_e``.
    """
    from flexmbs.fe.assemble import ElementBasis, element_bases
    for basis in element_bases(fe.basis):     # the blocks of a mixed mesh one by one
        X = basis.elem.elem.doflocs.T         # reference nodes, scikit-fem local order
        nb = ElementBasis(basis.mesh, quadrature=(X, np.ones(X.shape[1])),
                          elements=elements, numbering=basis.numbering)
        n = nb.n_loc
        bbar = basis.mesh.formulation == "bbar"
        for e in nb.chunks(n * n * 18 * 3):
            G = nb.geometry(e).G               # (n_e, q, a, 3): dN_a / dX_j at node q
            B = np.zeros((len(e), n, 6, n, 3))
            for c, (i, j) in enumerate(VOIGT):
                B[:, :, c, :, i] += G[..., j]
                if i != j:
                    B[:, :, c, :, j] += G[..., i]
            if bbar:                           # B-bar: volumetric strain = element mean
                geo = basis.geometry(e)
                gbar = np.einsum("egai,eg->eai", geo.G, geo.dx) / geo.dx.sum(1)[:, None, None]
                for c in range(3):
                    B[:, :, c] += (gbar[:, None] - G) / 3.0
            yield e, nb.nodes[e], B, nb.dofs(e)


def nodal_stress_operator(fe: FEModel) -> sp.csr_matrix:
    """``S`` (6 N, n_dof): nodal-averaged small-strain Cauchy stress, ``s = S u``.

    Row ``6 i + c`` is Voigt component ``c`` at node ``i``: the mean over the elements
    touching node ``i`` of ``C eps(u_h)`` evaluated at that node,
    ``eps = [u_x,x, u_y,y, u_z,z, u_y,z + u_z,y, u_x,z + u_z,x, u_x,y + u_y,x]``.
    Memory grows like ``36 n_loc^2`` entries per element; for stress *modes* of a large
    mesh use :func:`nodal_stress_modes`.
    """
    mesh = fe.mesh
    count = node_count(fe)
    C = np.asarray(fe.material.C)
    S = sp.csr_matrix((6 * mesh.n_nodes, fe.n_dof))
    for _, nodes, B, dofs in _nodal_B(fe):
        sig = np.einsum("cd,eqdak->eqcak", C, B) / count[nodes][:, :, None, None, None]
        rows = np.broadcast_to((6 * nodes)[:, :, None, None, None]
                               + np.arange(6)[None, None, :, None, None], sig.shape)
        cols = np.broadcast_to(dofs[:, None, None, :, :], sig.shape)
        S = S + sp.csr_matrix((sig.ravel(), (rows.ravel(), cols.ravel())), shape=S.shape)
    S.eliminate_zeros()
    return S


def nodal_stress_modes(fe: FEModel, Phi: np.ndarray, *, elements: np.ndarray | None = None,
                       averaged: bool = True) -> np.ndarray:
    """``nodal_stress_operator(fe) @ Phi`` reshaped (N, 6, n_q), computed element chunk
    by element chunk without forming the operator (memory ``6 N n_q``).

    ``elements``: sum only over these elements; ``averaged=False``: return the sum over
    the elements touching each node before the division by their number
    (:func:`node_count`), so that partial sums of a distributed run can be added."""
    Phi = np.asarray(Phi, dtype=float)
    n_q = Phi.shape[1]
    C = np.asarray(fe.material.C)
    N = fe.mesh.n_nodes
    out = np.zeros((N, 6 * n_q))
    for _, nodes, B, dofs in _nodal_B(fe, elements):
        CB = np.einsum("cd,eqdak->eqcak", C, B)
        sig = np.einsum("eqcak,eaku->eqcu", CB, Phi[dofs], optimize=True)
        A = sp.csr_matrix((np.ones(nodes.size), (nodes.ravel(), np.arange(nodes.size))),
                          shape=(N, nodes.size))
        out += A @ sig.reshape(nodes.size, 6 * n_q)
    if averaged:
        out /= node_count(fe)[:, None]
    return out.reshape(N, 6, n_q)


def node_count(fe: FEModel) -> np.ndarray:
    """Number of elements touching each node (of every block of a mixed mesh)."""
    blocks = getattr(fe.mesh, "blocks", (fe.mesh,))
    return sum(np.bincount(np.asarray(b.cells).ravel(), minlength=fe.mesh.n_nodes)
               for b in blocks).astype(float)


def von_mises(s: np.ndarray) -> np.ndarray:
    """Von Mises stress of Voigt stresses ``s`` (..., 6).

    ``sqrt(0.5((sxx-syy)^2 + (syy-szz)^2 + (szz-sxx)^2) + 3(syz^2 + sxz^2 + sxy^2))``.
    """
    s = np.asarray(s, float)
    if s.shape[-1] != 6:
        raise ValueError(f"von_mises: expected stresses of shape (..., 6), got {s.shape}")
    xx, yy, zz, yz, xz, xy = np.moveaxis(s, -1, 0)
    return np.sqrt(0.5 * ((xx - yy) ** 2 + (yy - zz) ** 2 + (zz - xx) ** 2)
                   + 3.0 * (yz ** 2 + xz ** 2 + xy ** 2))


# ------------------------------------------------------- St. Venant-Kirchhoff (Green-Lagrange)

def _kinematics(fe: FEModel, u: np.ndarray):
    """``F = I + H``, ``E`` and ``S = C E`` at the quadrature points, (3, 3, E, n_q)."""
    lam, mu = fe.material.lam, fe.material.mu
    H = _skfem_basis(fe).interpolate(u).grad
    I = np.eye(3)[:, :, None, None] * np.ones(H.shape[2:])
    Ht = np.swapaxes(H, 0, 1)
    E = 0.5 * (H + Ht + np.einsum("ki...,kj...->ij...", H, H))  # H^T H
    S = lam * np.einsum("ii...->...", E)[None, None] * I + 2.0 * mu * E
    return I + H, E, S


@LinearForm
def _force(v, w):
    return ddot(mul(w["F"], w["S"]), grad(v))  # S : dE = (F S) : grad(v)


@BilinearForm
def _tangent(du, v, w):
    F, S, lam, mu = w["F"], w["S"], w["lam"], w["mu"]
    dH = grad(du)
    dE = 0.5 * (mul(transpose(F), dH) + mul(transpose(dH), F))
    dS = lam * eye(trace(dE), 3) + 2.0 * mu * dE
    return ddot(mul(F, dS) + mul(dH, S), grad(v))  # material + initial stress


@Functional
def _energy(w):
    return 0.5 * ddot(w["S"], w["E"])


def green_lagrange_internal_force(fe: FEModel, u: np.ndarray) -> np.ndarray:
    """Internal force ``f(u) = int (dE/du)^T : S dV`` (n_dof,), St. Venant-Kirchhoff.

    ``H = grad u``, ``E = (H + H^T + H^T H) / 2``, ``S = lam tr(E) I + 2 mu E``;
    ``f . v = int (I + H) S : grad v dV``.
    """
    F, _, S = _kinematics(fe, _check_u(fe, u))
    return asm(_force, _skfem_basis(fe), F=F, S=S)


def green_lagrange_tangent(fe: FEModel, u: np.ndarray) -> sp.csr_matrix:
    """Tangent ``df/du`` (CSR): material part ``F C sym(F^T dH) : grad v`` plus the
    initial-stress part ``dH S : grad v``."""
    F, _, S = _kinematics(fe, _check_u(fe, u))
    lam, mu = fe.material.lam, fe.material.mu
    return sp.csr_matrix(asm(_tangent, _skfem_basis(fe), F=F, S=S, lam=lam, mu=mu))


def green_lagrange_energy(fe: FEModel, u: np.ndarray) -> float:
    """Strain energy ``int E : C : E / 2 dV`` of the St. Venant-Kirchhoff material."""
    _, E, S = _kinematics(fe, _check_u(fe, u))
    return float(asm(_energy, _skfem_basis(fe), E=E, S=S))


def _skfem_basis(fe: FEModel):
    """The scikit-fem ``CellBasis`` of ``fe`` (built on first use for an ElementBasis)."""
    return getattr(fe.basis, "skfem", fe.basis)


def _check_u(fe: FEModel, u: np.ndarray) -> np.ndarray:
    u = np.asarray(u, float)
    if u.shape != (fe.n_dof,):
        raise ValueError(f"displacement must have shape ({fe.n_dof},), got {u.shape}")
    return u
