"""Textbook element matrices in plain numpy, written from the formulas (not from flexmbs).

* hex8 (Abaqus C3D8 node order, = VTK): trilinear ``N_a = (1 + xi xi_a)(1 + eta eta_a)
  (1 + zeta zeta_a) / 8`` on ``[-1, 1]^3``, 2 x 2 x 2 Gauss rule;
  ``K = sum_g B^T C B det J w_g`` with the 6 x 24 strain matrix ``B`` (Voigt xx, yy, zz,
  yz, xz, xy, engineering shears); the B-bar (mean dilatation) element (Hughes 1980,
  *Int. J. Numer. Meth. Eng.* 15, 1413; Abaqus Theory Manual 3.2.4) replaces the
  volumetric part: ``B_bar = B + m (b_bar - b)^T / 3``, ``m = (1, 1, 1, 0, 0, 0)``,
  ``b_{3a+i} = N_a,i``, ``b_bar = int b dV / V``.
* hex20 (C3D20 order: corners, then mid-edges 12 23 34 41 56 67 78 85 15 26 37 48):
  serendipity functions (Zienkiewicz & Taylor vol. 1, ch. 6), 3 x 3 x 3 Gauss, or for
  C3D20R ``K`` with 2 x 2 x 2 and ``M`` with 3 x 3 x 3 (Abaqus: reduced integration forms
  the stiffness only; mass and loads use full integration).
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
HEX20_EDGES = ((0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
               (0, 4), (1, 5), (2, 6), (3, 7))


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


def hex20_shape(xi: np.ndarray):
    """Serendipity shape functions (C3D20 order: corners, then mid-edges 12 23 34 41 56
    67 78 85 15 26 37 48): corner ``(1 + x)(1 + y)(1 + z)(x + y + z - 2) / 8`` and
    mid-edge ``(1 - s^2)(1 + y)(1 + z) / 4`` with ``x = xi xi_a`` ..., ``s`` the
    coordinate along the edge."""
    N, dN = np.empty(20), np.empty((20, 3))
    for a, c in enumerate(HEX_CORNERS):
        t = 1 + c * xi
        N[a] = np.prod(t) * (c @ xi - 2) / 8
        for d in range(3):
            o = [k for k in range(3) if k != d]
            dN[a, d] = c[d] * np.prod(t[o]) * (t[d] * 1 + (c @ xi - 2)) / 8
    for b, (i, j) in enumerate(HEX20_EDGES):
        mid = (HEX_CORNERS[i] + HEX_CORNERS[j]) / 2
        d_along = int(np.flatnonzero(mid == 0)[0])
        t = 1 + mid * xi
        t[d_along] = 1 - xi[d_along] ** 2
        N[8 + b] = np.prod(t) / 4
        for d in range(3):
            o = [k for k in range(3) if k != d]
            dt = -2 * xi[d] if d == d_along else mid[d]
            dN[8 + b, d] = dt * np.prod(t[o]) / 4
    return N, dN


def _gauss3(n: int):
    x, w = np.polynomial.legendre.leggauss(n)
    return [(np.array([a, b, c]), wa * wb * wc) for a, wa in zip(x, w)
            for b, wb in zip(x, w) for c, wc in zip(x, w)]


def hexahedron(X: np.ndarray, E: float, nu: float, rho: float, *, shape=hex8_shape,
               n_k: int = 2, n_m: int = 2, bbar: bool = False):
    """``(K, M)`` of an isoparametric hexahedron with nodes ``X`` (n, 3): ``K`` with the
    ``n_k``-point Gauss rule per direction (B-bar if ``bbar``), ``M`` with ``n_m``."""
    C = elasticity(E, nu)
    n = len(X)

    def at(xi):
        N, dN = shape(xi)
        J = dN.T @ X                                 # J[j, i] = dx_i / dxi_j
        return N, strain_matrix(dN @ np.linalg.inv(J).T), np.linalg.det(J)

    data = [(at(xi), w) for xi, w in _gauss3(n_k)]
    V = sum(d * w for (_, _, d), w in data)
    bmean = sum(B[:3].sum(axis=0) * d * w for (_, B, d), w in data) / V
    m = np.array([1, 1, 1, 0, 0, 0.0])
    K = np.zeros((3 * n, 3 * n))
    for (_, B, d), w in data:
        if bbar:
            B = B + np.outer(m, bmean - B[:3].sum(axis=0)) / 3
        K += B.T @ C @ B * d * w
    M = np.zeros((n, n))
    for xi, w in _gauss3(n_m):
        N, _, d = at(xi)
        M += rho * np.outer(N, N) * d * w
    return K, np.kron(M, np.eye(3))


def hex8_gradients(X: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """Physical gradients ``dN_a / dx`` (8, 3) of the hex8 with corners ``X`` at ``xi``."""
    _, dN = hex8_shape(xi)
    return dN @ np.linalg.inv(dN.T @ X).T


def hex8_bmean(X: np.ndarray) -> np.ndarray:
    """``b_bar`` (24,): the element mean of ``b_{3a+i} = N_a,i`` (2 x 2 x 2 Gauss)."""
    num, V = np.zeros(24), 0.0
    for xi, w in _gauss3(2):
        _, dN = hex8_shape(xi)
        d = np.linalg.det(dN.T @ X) * w
        num += strain_matrix(hex8_gradients(X, xi))[:3].sum(axis=0) * d
        V += d
    return num / V


def hex8(X: np.ndarray, E: float, nu: float, rho: float, bbar: bool = False):
    """``(K, M)`` (24 x 24) of the hex8 element (2 x 2 x 2 Gauss), B-bar if ``bbar``."""
    return hexahedron(X, E, nu, rho, bbar=bbar)


def hex20(X: np.ndarray, E: float, nu: float, rho: float, reduced: bool = False):
    """``(K, M)`` (60 x 60) of C3D20 (3 x 3 x 3 Gauss) or C3D20R (``K`` 2 x 2 x 2)."""
    return hexahedron(X, E, nu, rho, shape=hex20_shape, n_k=2 if reduced else 3, n_m=3)


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
