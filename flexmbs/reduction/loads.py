"""Face-load integrals on named facet sets, reference configuration (THEORY §2.6, ``h_p``).

For a uniform pressure-like traction ``p n`` on face set A the generalised forces follow
from three integrals, all over the isoparametric face interpolation (Lagrange faces:
tri3, tri6, quad4, quad8 (serendipity, the faces of hex20), quad9; the trace of the solid basis on a face is the face basis):

    F_n = int_A n dA (3) [m^2],   F_m = int_A R x n dA (3) [m^3],
    F_q = int_A Phi^T n dA (n_q) [m^2].

For the mean displacement of the face (a sensor) also its area, centroid and mean mode

    A = int_A dA [m^2],   X_c = int_A X dA / A (3) [m],   Phi_c = int_A Phi dA / A (3, n_q).

``n dA = (dx/dxi x dx/deta) dxi deta`` with the orientation of the face's node order
(outward for the faces of a mesh read by flexmbs.io.mesh).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FaceIntegrals:
    name: str
    F_n: np.ndarray
    F_m: np.ndarray
    F_q: np.ndarray
    A: float = float("nan")
    X_c: np.ndarray | None = None
    Phi_c: np.ndarray | None = None


def _gauss(n: int):
    x, w = np.polynomial.legendre.leggauss(n)
    return 0.5 * (x + 1.0), 0.5 * w


def _face_rule(n_nodes: int):
    """(xi, eta, weight) and shape functions N (n_pts, n_nodes), dN (2, n_pts, n_nodes)."""
    x, w = _gauss(4)
    if n_nodes in (3, 6):  # collapsed (Duffy) rule on the unit triangle, exact to degree 6
        a, b = np.meshgrid(x, x, indexing="ij")
        wa, wb = np.meshgrid(w, w, indexing="ij")
        xi, eta, wt = (a * (1 - b)).ravel(), b.ravel(), (wa * wb * (1 - b)).ravel()
        L = np.stack([1 - xi - eta, xi, eta])
        dL = np.array([[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])  # dL_i/dxi, dL_i/deta
        if n_nodes == 3:
            return wt, L.T, np.broadcast_to(dL[:, None, :], (2, len(wt), 3))
        e = ((0, 1), (1, 2), (0, 2))  # meshio triangle6: mids 01, 12, 20
        N = np.vstack([L * (2 * L - 1)] + [4 * L[i] * L[j] for i, j in e]).T
        dN = np.zeros((2, len(wt), 6))
        for d in range(2):
            dN[d, :, :3] = ((4 * L - 1) * dL[d][:, None]).T
            for c, (i, j) in enumerate(e):
                dN[d, :, 3 + c] = 4 * (dL[d, i] * L[j] + L[i] * dL[d, j])
        return wt, N, dN
    # quads on [0,1]^2: lagrange 1D functions of degree 1 (quad4) or 2 (quad9)
    a, b = np.meshgrid(x, x, indexing="ij")
    wa, wb = np.meshgrid(w, w, indexing="ij")
    s, t, wt = a.ravel(), b.ravel(), (wa * wb).ravel()
    if n_nodes == 4:
        l = [lambda u: 1 - u, lambda u: u]
        dl = [lambda u: -np.ones_like(u), lambda u: np.ones_like(u)]
        ij = [(0, 0), (1, 0), (1, 1), (0, 1)]
    elif n_nodes == 9:
        l = [lambda u: (1 - u) * (1 - 2 * u), lambda u: u * (2 * u - 1), lambda u: 4 * u * (1 - u)]
        dl = [lambda u: 4 * u - 3, lambda u: 4 * u - 1, lambda u: 4 - 8 * u]
        ij = [(0, 0), (1, 0), (1, 1), (0, 1), (2, 0), (1, 2), (2, 1), (0, 2), (2, 2)]
    elif n_nodes == 8:
        return wt, *_quad8(s, t)
    else:
        raise ValueError(f"face with {n_nodes} nodes is not supported (3, 6, 4, 8, 9)")
    N = np.stack([l[i](s) * l[j](t) for i, j in ij], axis=1)
    dN = np.stack([np.stack([dl[i](s) * l[j](t) for i, j in ij], axis=1),
                   np.stack([l[i](s) * dl[j](t) for i, j in ij], axis=1)])
    return wt, N, dN


def _quad8(s: np.ndarray, t: np.ndarray):
    """Serendipity quad8 on [0,1]^2 (meshio order: corners, then mid-sides 01 12 23 30):
    with ``xi = 2 s - 1``, ``eta = 2 t - 1``, corner ``(1 + xi xi_a)(1 + eta eta_a)
    (xi xi_a + eta eta_a - 1) / 4``, mid-side ``(1 - xi^2)(1 + eta eta_a) / 2`` or
    ``(1 + xi xi_a)(1 - eta^2) / 2``; ``N`` (n_pts, 8), ``dN/d(s, t)`` (2, n_pts, 8)."""
    xi, eta = 2 * s - 1, 2 * t - 1
    sign = [(-1, -1), (1, -1), (1, 1), (-1, 1), (0, -1), (1, 0), (0, 1), (-1, 0)]
    N, dx, de = [], [], []
    for a, b in sign:
        if a and b:
            N.append((1 + a * xi) * (1 + b * eta) * (a * xi + b * eta - 1) / 4)
            dx.append(a * (1 + b * eta) * (2 * a * xi + b * eta) / 4)
            de.append(b * (1 + a * xi) * (a * xi + 2 * b * eta) / 4)
        elif a == 0:
            N.append((1 - xi ** 2) * (1 + b * eta) / 2)
            dx.append(-xi * (1 + b * eta))
            de.append(b * (1 - xi ** 2) / 2)
        else:
            N.append((1 + a * xi) * (1 - eta ** 2) / 2)
            dx.append(a * (1 - eta ** 2) / 2)
            de.append(-eta * (1 + a * xi))
    return np.stack(N, axis=1), 2 * np.stack([np.stack(dx, axis=1), np.stack(de, axis=1)])


def face_integrals(name: str, facets: np.ndarray, points: np.ndarray,
                   modes: np.ndarray) -> FaceIntegrals:
    """``F_n``, ``F_m``, ``F_q`` of face set ``name``; ``modes`` (N, 3, n_q) nodal modes."""
    facets = np.asarray(facets)
    wt, N, dN = _face_rule(facets.shape[1])
    Xf = np.asarray(points)[facets]                     # (F, n, 3)
    X = np.einsum("pn,fni->fpi", N, Xf)
    d1 = np.einsum("pn,fni->fpi", dN[0], Xf)
    d2 = np.einsum("pn,fni->fpi", dN[1], Xf)
    ndA = np.cross(d1, d2) * wt[None, :, None]          # (F, p, 3)
    phi = np.einsum("pn,fnik->fpik", N, modes[facets])  # (F, p, 3, n_q)
    dA = np.linalg.norm(ndA, axis=2)                    # (F, p)
    A = float(dA.sum())
    return FaceIntegrals(name=name, F_n=ndA.sum(axis=(0, 1)),
                         F_m=np.cross(X, ndA).sum(axis=(0, 1)),
                         F_q=np.einsum("fpik,fpi->k", phi, ndA), A=A,
                         X_c=np.einsum("fpi,fp->i", X, dA) / A,
                         Phi_c=np.einsum("fpik,fp->ik", phi, dA) / A)
