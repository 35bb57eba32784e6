"""Stress recovery and the geometrically nonlinear (St. Venant-Kirchhoff) internal force.

Voigt order xx, yy, zz, yz, xz, xy throughout; strains with engineering shears.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from skfem import BilinearForm, CellBasis, Functional, LinearForm, asm
from skfem.helpers import ddot, eye, grad, mul, trace, transpose

from flexmbs.fe.model import FEModel
from flexmbs.io.mesh import _skfem_local_order

#: (i, j) tensor index of each Voigt component
VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))


def nodal_stress_operator(fe: FEModel) -> sp.csr_matrix:
    """``S`` (6 N, n_dof): nodal-averaged small-strain Cauchy stress, ``s = S u``.

    Row ``6 i + c`` is Voigt component ``c`` at node ``i``: the mean over the elements
    touching node ``i`` of ``C eps(u_h)`` evaluated at that node,
    ``eps = [u_x,x, u_y,y, u_z,z, u_y,z + u_z,y, u_x,z + u_z,x, u_x,y + u_y,x]``.
    """
    mesh = fe.mesh
    elem = fe.basis.elem
    X = elem.elem.doflocs.T  # reference nodes of the scalar element, local order
    nb = CellBasis(mesh.skfem(), elem, quadrature=(X, np.ones(X.shape[1])))
    local = _skfem_local_order(mesh.cell_type, mesh.cells)  # (E, n_loc)
    n_cells, n_loc = local.shape
    count = np.bincount(local.ravel(), minlength=mesh.n_nodes).astype(float)
    C = np.asarray(fe.material.C)
    rows, cols, vals = [], [], []
    row_base = 6 * local  # (E, n_loc)
    for j in range(nb.Nbfun):
        g = nb.basis[j][0].grad  # (3, 3, E, n_loc): d phi_j,i / d x_k
        eps = np.stack([g[i, k] + (g[k, i] if i != k else 0.0) for i, k in VOIGT])
        sig = np.einsum("cd,deq->ceq", C, eps) / count[local][None]  # (6, E, n_loc)
        col = np.broadcast_to(nb.element_dofs[j][:, None], (n_cells, n_loc))
        for c in range(6):
            rows.append((row_base + c).ravel())
            cols.append(col.ravel())
            vals.append(sig[c].ravel())
    S = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(6 * mesh.n_nodes, fe.n_dof))
    S = S.tocsr()
    S.eliminate_zeros()
    return S


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
    H = fe.basis.interpolate(u).grad
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
    return asm(_force, fe.basis, F=F, S=S)


def green_lagrange_tangent(fe: FEModel, u: np.ndarray) -> sp.csr_matrix:
    """Tangent ``df/du`` (CSR): material part ``F C sym(F^T dH) : grad v`` plus the
    initial-stress part ``dH S : grad v``."""
    F, _, S = _kinematics(fe, _check_u(fe, u))
    lam, mu = fe.material.lam, fe.material.mu
    return sp.csr_matrix(asm(_tangent, fe.basis, F=F, S=S, lam=lam, mu=mu))


def green_lagrange_energy(fe: FEModel, u: np.ndarray) -> float:
    """Strain energy ``int E : C : E / 2 dV`` of the St. Venant-Kirchhoff material."""
    _, E, S = _kinematics(fe, _check_u(fe, u))
    return float(asm(_energy, fe.basis, E=E, S=S))


def _check_u(fe: FEModel, u: np.ndarray) -> np.ndarray:
    u = np.asarray(u, float)
    if u.shape != (fe.n_dof,):
        raise ValueError(f"displacement must have shape ({fe.n_dof},), got {u.shape}")
    return u
