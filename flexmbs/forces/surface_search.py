"""Nearest facet of a triangulated surface, THEORY §5.7.2 (the gap of point-surface contact).

A face (a facet set of the mesh) is split into linear triangles on its nodes
(:func:`face_triangles`): a quadratic facet into its sub-triangles through the mid-side
nodes, a quadrangle into two (eight round the centre node of a 9-node one).  For the
point ``y`` and triangles ``(x_1, x_2, x_3)`` the closest point of each triangle is

    c = x_1 + b_2 (x_2 - x_1) + b_3 (x_3 - x_1),   b_1 = 1 - b_2 - b_3,

the orthogonal projection of ``y`` on the triangle's plane when all ``b_i >= 0`` (the
face interior), else the nearest point of its three edges (clamped segment projection).
:func:`nearest_on_triangles` returns the triangle with the smallest ``|y - c|``, after a
bounding-box prefilter: a triangle whose box is farther from ``y`` than the nearest node
cannot hold the closest point.  Piecewise-linear facets place the surface within the
sagitta ``h^2 / (8 rho)`` of a surface of curvature radius ``rho`` (edge length ``h``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

#: linear sub-triangles of a facet with k nodes (gmsh / meshio node order)
SPLIT = {
    3: ((0, 1, 2),),
    4: ((0, 1, 2), (0, 2, 3)),
    6: ((0, 3, 5), (3, 1, 4), (5, 4, 2), (3, 4, 5)),
    8: ((0, 4, 7), (4, 1, 5), (5, 2, 6), (6, 3, 7), (4, 5, 6), (4, 6, 7)),
    9: ((0, 4, 8), (4, 1, 8), (1, 5, 8), (5, 2, 8), (2, 6, 8), (6, 3, 8), (3, 7, 8),
        (7, 0, 8)),
}


def face_triangles(facets: np.ndarray) -> np.ndarray:
    """(T, 3) node indices of the linear triangles of ``facets`` (F, k), k in SPLIT."""
    facets = np.asarray(facets, dtype=np.int64)
    split = SPLIT.get(facets.shape[1])
    if split is None:
        raise ValueError(f"facets with {facets.shape[1]} nodes cannot be triangulated "
                         f"(expected {sorted(SPLIT)})")
    return facets[:, np.array(split)].reshape(-1, 3)


def outward_signs(triangles: np.ndarray, points: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """+1 / -1 per triangle: the sign that turns ``(x_2 - x_1) x (x_3 - x_1)`` outward,
    away from the centroid of the volume cell that holds the triangle's three nodes."""
    n_nodes = len(points)
    cells = np.asarray(cells)

    def incidence(rows):
        r = np.repeat(np.arange(len(rows)), rows.shape[1])
        keep = rows.ravel() >= 0                      # (mixed meshes pad cells with -1)
        return sp.csr_matrix((np.ones(int(keep.sum())), (r[keep], rows.ravel()[keep])),
                             shape=(len(rows), n_nodes))

    shared = (incidence(cells) @ incidence(triangles).T).tocoo()
    owner = np.full(len(triangles), -1)
    full = shared.data >= 3
    owner[shared.col[full]] = shared.row[full]
    if np.any(owner < 0):
        raise ValueError(f"{int(np.sum(owner < 0))} facet triangles lie on no volume cell")
    x = points[triangles]
    normal = np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0])
    own = cells[owner]
    valid = own >= 0
    centre = (points[np.where(valid, own, 0)] * valid[..., None]).sum(axis=1) \
        / valid.sum(axis=1)[:, None]
    inward = centre - x.mean(axis=1)
    return np.where(np.einsum("ti,ti->t", normal, inward) > 0.0, -1.0, 1.0)


@dataclass(frozen=True)
class Nearest:
    """The closest surface point to ``y``: triangle ``k``, barycentric ``b`` (3,), point
    ``c`` (3,) and ``interior`` (all ``b_i > 0``: the projection on the facet's plane)."""

    k: int
    b: np.ndarray
    c: np.ndarray
    interior: bool


def _edge_points(y, a, e):
    """Closest points of the segments ``a + t e``, ``t`` in [0, 1], to ``y``, and ``t``."""
    t = np.clip(np.einsum("ti,ti->t", y - a, e) / np.einsum("ti,ti->t", e, e), 0.0, 1.0)
    return a + t[:, None] * e, t


def nearest_on_triangles(y: np.ndarray, x: np.ndarray) -> Nearest:
    """Closest point to ``y`` (3,) on the triangles ``x`` (T, 3, 3) (module docstring)."""
    lo, hi = x.min(axis=1), x.max(axis=1)
    lower = np.linalg.norm(np.maximum(0.0, np.maximum(lo - y, y - hi)), axis=1)
    upper = np.sqrt(((x - y) ** 2).sum(axis=2).min())
    cand = np.flatnonzero(lower <= upper * (1 + 1e-12))
    xc = x[cand]
    e1, e2 = xc[:, 1] - xc[:, 0], xc[:, 2] - xc[:, 0]
    w = y - xc[:, 0]
    g11, g12, g22 = (np.einsum("ti,ti->t", a, b) for a, b in ((e1, e1), (e1, e2), (e2, e2)))
    r1, r2 = np.einsum("ti,ti->t", w, e1), np.einsum("ti,ti->t", w, e2)
    det = g11 * g22 - g12 ** 2
    b2, b3 = (g22 * r1 - g12 * r2) / det, (g11 * r2 - g12 * r1) / det
    B = np.column_stack([1.0 - b2 - b3, b2, b3])
    C = xc[:, 0] + b2[:, None] * e1 + b3[:, None] * e2
    inside = np.all(B >= 0.0, axis=1)
    out = np.flatnonzero(~inside)
    if out.size:
        pts, ts = [], []
        for i, j in ((0, 1), (1, 2), (2, 0)):
            p, t = _edge_points(y, xc[out, i], xc[out, j] - xc[out, i])
            pts.append(p)
            ts.append(t)
        d = np.stack([((p - y) ** 2).sum(axis=1) for p in pts])      # (3, m)
        best = d.argmin(axis=0)
        r = np.arange(out.size)
        C[out] = np.stack(pts)[best, r]
        t = np.stack(ts)[best, r]
        Bo = np.zeros((out.size, 3))
        for e_, (i, j) in enumerate(((0, 1), (1, 2), (2, 0))):
            m = best == e_
            Bo[m, i], Bo[m, j] = 1.0 - t[m], t[m]
        B[out] = Bo
    k = int(np.argmin(((C - y) ** 2).sum(axis=1)))
    return Nearest(int(cand[k]), B[k].copy(), C[k].copy(), bool(np.all(B[k] > 0.0)))
