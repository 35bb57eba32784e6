"""Textbook element matrices in plain numpy, written from the formulas (not from flexmbs).

* hex8 (Abaqus C3D8 node order, = VTK): trilinear ``N_a = (1 + xi xi_a)(1 + eta eta_a)
  (1 + zeta zeta_a) / 8`` on ``[-1, 1]^3``, 2 x 2 x 2 Gauss rule;
  ``K = sum_g B^T C B det J w_g`` with the 6 x 24 strain matrix ``B`` (Voigt xx, yy, zz,
  yz, xz, xy, engineering shears); the B-bar (mean dilatation) element (Hughes 1980,
  *Int. J. Numer. Meth. Eng.* 15, 1413; Abaqus Theory Manual 3.2.4) replaces the
  volumetric part: ``B_bar = B + m (b_bar - b)^T / 3``, ``m = (1, 1, 1, 0, 0, 0)``,
  ``b_{3a+i} = N_a,i``, ``b_bar = int b dV / V``.
* tet4: constant-strain tetrahedron, ``K = V B^T C B``, ``M_ab = rho V (1 + delta_ab) / 20``
  (Zienkiewicz & Taylor vol. 1, 6th ed., ch. 6).
* tet10 (Abaqus C3D10 order: corners, then mid-edges 12 23 31 14 24 34): ``N = L(2L - 1)``
  at corners, ``4 L_i L_j`` at mid-edges, integrated with a collapsed (Duffy) Gauss rule
  of 5^3 points (exact for the degree-4 mass integrand on a straight-sided element).
* Mass ``M = rho int N^T N dV (x) I_3``; dofs ``3 a + i``.
"""
from __future__ import annotations

import numpy as np

HEX_CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                        [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], float)
TET10_EDGES = ((0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3))


def elasticity(E: float, nu: float) -> np.ndarray:
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    C = np.zeros((6, 6))
    C[:3, :3] = lam
    C[:3, :3] += 2 * mu * np.eye(3)
    C[3:, 3:] = mu * np.eye(3)
    return C


def strain_matrix(dNdx: np.ndarray) -> np.ndarray:
    """6 x 3n strain matrix of the physical gradients ``dNdx`` (n, 3)."""
    n = dNdx.shape[0]
    B = np.zeros((6, 3 * n))
    for a in range(n):
        gx, gy, gz = dNdx[a]
        B[:, 3 * a:3 * a + 3] = [[gx, 0, 0], [0, gy, 0], [0, 0, gz],
                                 [0, gz, gy], [gz, 0, gx], [gy, gx, 0]]
    return B


def hex8_shape(xi: np.ndarray):
    N = np.prod(1 + HEX_CORNERS * xi, axis=1) / 8
    dN = np.empty((8, 3))
    for d in range(3):
        f = 1 + HEX_CORNERS * xi
        f[:, d] = HEX_CORNERS[:, d]
        dN[:, d] = np.prod(f, axis=1) / 8
    return N, dN


def hex8(X: np.ndarray, E: float, nu: float, rho: float, bbar: bool = False):
    """``(K, M)`` (24 x 24) of the hex8 element with corner coordinates ``X`` (8, 3)."""
    C = elasticity(E, nu)
    g = np.array([-1, 1]) / np.sqrt(3)
    points = [np.array([a, b, c]) for a in g for b in g for c in g]
    data = []
    for xi in points:
        N, dN = hex8_shape(xi)
        J = dN.T @ X                                 # dX/dxi (3, 3): J[j, i] = dx_i/dxi_j
        dNdx = dN @ np.linalg.inv(J).T
        data.append((N, strain_matrix(dNdx), np.linalg.det(J)))
    V = sum(d for _, _, d in data)
    bmean = sum(B[:3].sum(axis=0) * d for _, B, d in data) / V
    K, M = np.zeros((24, 24)), np.zeros((8, 8))
    m = np.array([1, 1, 1, 0, 0, 0.0])
    for N, B, d in data:
        if bbar:
            B = B + np.outer(m, bmean - B[:3].sum(axis=0)) / 3
        K += B.T @ C @ B * d
        M += rho * np.outer(N, N) * d
    return K, np.kron(M, np.eye(3))


def tet4(X: np.ndarray, E: float, nu: float, rho: float):
    """``(K, M)`` (12 x 12) of the constant-strain tetrahedron with corners ``X`` (4, 3)."""
    A = np.hstack([np.ones((4, 1)), X])             # L = A^-T [1, x]
    grads = np.linalg.inv(A)[1:].T                  # (4, 3) dL_a / dx
    V = abs(np.linalg.det(A)) / 6
    B = strain_matrix(grads)
    M = rho * V / 20 * (np.ones((4, 4)) + np.eye(4))
    return V * B.T @ elasticity(E, nu) @ B, np.kron(M, np.eye(3))


def _tet_rule(n: int = 5):
    """Collapsed Gauss rule on the unit tetrahedron: barycentric points (4, p), weights
    summing to 1/6."""
    x, w = np.polynomial.legendre.leggauss(n)
    x, w = (x + 1) / 2, w / 2
    P, W = [], []
    for a, wa in zip(x, w):
        for b, wb in zip(x, w):
            for c, wc in zip(x, w):
                u = a * (1 - b) * (1 - c)
                v = b * (1 - c)
                t = c
                P.append((1 - u - v - t, u, v, t))
                W.append(wa * wb * wc * (1 - b) * (1 - c) ** 2)
    return np.array(P).T, np.array(W)


def tet10(X: np.ndarray, E: float, nu: float, rho: float):
    """``(K, M)`` (30 x 30) of the straight-sided quadratic tetrahedron, nodes ``X``
    (10, 3) in C3D10 order (mid-edge nodes at the edge midpoints)."""
    C = elasticity(E, nu)
    A = np.hstack([np.ones((4, 1)), X[:4]])
    dL = np.linalg.inv(A)[1:].T                     # (4, 3) constant gradients
    V6 = abs(np.linalg.det(A))                      # 6 V: the map's Jacobian
    L, W = _tet_rule()
    K, M = np.zeros((30, 30)), np.zeros((10, 10))
    for q in range(len(W)):
        l = L[:, q]
        N = np.concatenate([l * (2 * l - 1), [4 * l[i] * l[j] for i, j in TET10_EDGES]])
        dN = np.vstack([(4 * l[:, None] - 1) * dL,
                        [4 * (l[i] * dL[j] + l[j] * dL[i]) for i, j in TET10_EDGES]])
        B = strain_matrix(dN)
        K += B.T @ C @ B * W[q] * V6
        M += rho * np.outer(N, N) * W[q] * V6
    return K, np.kron(M, np.eye(3))
