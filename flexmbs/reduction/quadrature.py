"""Element-quadrature loops over a reduction basis (THEORY §2.8.3).

Everything is evaluated at the quadrature points of the FE basis (the rule that is
exact for the mass matrix), chunked over elements to bound memory.  No nodal masses
are used anywhere (tet10 corner nodes have negative ``int N_i dm``; PEER_EXUDYN).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

CHUNK_FLOATS = 2_000_000  # floats per chunk array (about 16 MB)


@dataclass(frozen=True)
class ShapeIntegrals:
    """The six kinds of shape integrals of THEORY §2.8.2 (frame R = mesh coordinates).

    m : float [kg]                    ``int dm``
    s0 : (3,) [kg m]                  ``int R_P dm``
    S : (3, n_q) [kg]                 ``int phi_k dm`` (``= C_t^T``)
    J0 : (3, 3) [kg m^2]              ``int R_P R_P^T dm``
    J1 : (n_q, 3, 3) [kg m]           ``J1[k] = int R_P phi_k^T dm``
    J2 : (n_q, n_q, 3, 3) [kg]        ``J2[k, l] = int phi_k phi_l^T dm``
    """

    m: float
    s0: np.ndarray
    S: np.ndarray
    J0: np.ndarray
    J1: np.ndarray
    J2: np.ndarray


def _value(field) -> np.ndarray:
    """The values of a scikit-fem DiscreteField (an ndarray subclass in recent versions)."""
    return np.asarray(field) if isinstance(field, np.ndarray) else field.value


def element_chunks(n_elements: int, per_element: int) -> Iterator[np.ndarray]:
    size = max(1, CHUNK_FLOATS // max(per_element, 1))
    for start in range(0, n_elements, size):
        yield np.arange(start, min(start + size, n_elements))


def values_at_qp(basis, U: np.ndarray, elems: np.ndarray) -> np.ndarray:
    """``phi`` (3, n_e, n_qp, n_q): the fields with dof vectors ``U`` (n_dof, n_q)."""
    ed = basis.element_dofs[:, elems]  # (Nbfun, n_e)
    out = 0.0
    for j in range(basis.Nbfun):
        out = out + _value(basis.basis[j][0])[:, elems, :, None] * U[ed[j]][None, :, None, :]
    return out


def grads_at_qp(basis, U: np.ndarray, elems: np.ndarray) -> np.ndarray:
    """``grad phi`` (3, 3, n_e, n_qp, n_q), ``[i, j] = d phi_i / d X_j``."""
    ed = basis.element_dofs[:, elems]
    out = 0.0
    for j in range(basis.Nbfun):
        out = out + basis.basis[j][0].grad[:, :, elems, :, None] * U[ed[j]][None, None, :, None, :]
    return out


def shape_integrals(basis, rho: float, Phi: np.ndarray) -> ShapeIntegrals:
    """Shape integrals of the basis ``Phi`` (n_dof, n_q) by element quadrature."""
    n_q = Phi.shape[1]
    X_all = _value(basis.global_coordinates())  # (3, E, n_qp)
    n_el, n_qp = basis.dx.shape
    m, s0, S = 0.0, np.zeros(3), np.zeros((3, n_q))
    J0, J1, J2 = np.zeros((3, 3)), np.zeros((n_q, 3, 3)), np.zeros((n_q, n_q, 3, 3))
    for e in element_chunks(n_el, n_qp * 3 * (n_q + 1)):
        dm = rho * basis.dx[e]                                   # (n_e, n_qp)
        X = X_all[:, e]                                          # (3, n_e, n_qp)
        phi = values_at_qp(basis, Phi, e)                        # (3, n_e, n_qp, n_q)
        m += dm.sum()
        s0 += np.einsum("ieg,eg->i", X, dm)
        S += np.einsum("iegk,eg->ik", phi, dm)
        J0 += np.einsum("ieg,jeg,eg->ij", X, X, dm)
        J1 += np.einsum("ieg,jegk,eg->kij", X, phi, dm)
        w = (phi * dm[None, :, :, None]).reshape(3, -1, n_q)
        p = phi.reshape(3, -1, n_q)
        J2 += np.einsum("igk,jgl->klij", w, p, optimize=True)
    return ShapeIntegrals(m=float(m), s0=s0, S=S, J0=J0, J1=J1, J2=J2)


def voigt_strain(G: np.ndarray) -> np.ndarray:
    """Engineering Voigt strain (6, ...) of the symmetric part of ``G`` (3, 3, ...):
    ``[G00, G11, G22, G12 + G21, G02 + G20, G01 + G10]``."""
    return np.stack([G[0, 0], G[1, 1], G[2, 2], G[1, 2] + G[2, 1], G[0, 2] + G[2, 0],
                     G[0, 1] + G[1, 0]])
