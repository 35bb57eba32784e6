"""Element-quadrature loops over a reduction basis (THEORY §2.8.3).

Everything is evaluated at the quadrature points of the FE basis (the rule that is
exact for the mass matrix), chunked over elements to bound memory: the Jacobians and
shape-function gradients of a chunk are rebuilt from the reference element
(:class:`flexmbs.fe.assemble.ElementBasis`) and dropped after use.  No nodal masses
are used anywhere (tet10 corner nodes have negative ``int N_i dm``; PEER_EXUDYN).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


def shape_integrals(basis, rho: float, Phi: np.ndarray) -> ShapeIntegrals:
    """Shape integrals of the basis ``Phi`` (n_dof, n_q) by element quadrature.

    ``basis`` is a :class:`flexmbs.fe.assemble.ElementBasis` (``fe.basis``); the
    quadrature data are rebuilt chunk by chunk, so memory stays bounded.
    """
    Phi = np.asarray(Phi, dtype=float)
    n_q = Phi.shape[1]
    m, s0, S = 0.0, np.zeros(3), np.zeros((3, n_q))
    J0, J1 = np.zeros((3, 3)), np.zeros((n_q, 3, 3))
    J2 = np.zeros((3 * n_q, 3 * n_q))
    n_qp, n_loc = basis.n_qp, basis.n_loc
    for e in basis.chunks(n_qp * (9 * n_q + 40) + 3 * n_loc * n_q):
        geo = basis.geometry(e)
        dm = rho * geo.dx                                        # (n_e, n_qp)
        X = geo.X                                                # (n_e, n_qp, 3)
        phi = basis.values(Phi, e)                               # (n_e, n_qp, 3, n_q)
        m += dm.sum()
        s0 += np.einsum("egi,eg->i", X, dm)
        S += np.einsum("egik,eg->ik", phi, dm)
        J0 += np.einsum("egi,egj,eg->ij", X, X, dm)
        J1 += np.einsum("egi,egjk,eg->kij", X, phi, dm, optimize=True)
        p = phi.reshape(-1, 3 * n_q)                             # (g, (i k))
        J2 += (p * dm.reshape(-1, 1)).T @ p
    J2 = J2.reshape(3, n_q, 3, n_q).transpose(1, 3, 0, 2).copy()
    return ShapeIntegrals(m=float(m), s0=s0, S=S, J0=J0, J1=J1, J2=J2)


def voigt_strain(G: np.ndarray) -> np.ndarray:
    """Engineering Voigt strain (6, ...) of the symmetric part of ``G`` (3, 3, ...):
    ``[G00, G11, G22, G12 + G21, G02 + G20, G01 + G10]``."""
    return np.stack([G[0, 0], G[1, 1], G[2, 2], G[1, 2] + G[2, 1], G[0, 2] + G[2, 0],
                     G[0, 1] + G[1, 0]])
