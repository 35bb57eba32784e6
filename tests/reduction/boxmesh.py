"""Structured box meshes (tet4, tet10, hex8, hex27) with named end faces, for the tests.

Node sets and facet sets ``x0`` (face x = x_min) and ``x1`` (face x = x_max), facets
oriented outward; built on a lattice so every node is exact.
"""
from __future__ import annotations

import itertools

import meshio
import numpy as np

from flexmbs.io.mesh import mesh_from_meshio

HEX27 = [(0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0), (0, 0, 2), (2, 0, 2), (2, 2, 2), (0, 2, 2),
         (1, 0, 0), (2, 1, 0), (1, 2, 0), (0, 1, 0), (1, 0, 2), (2, 1, 2), (1, 2, 2), (0, 1, 2),
         (0, 0, 1), (2, 0, 1), (2, 2, 1), (0, 2, 1),
         (0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2), (1, 1, 1)]
TET_EDGES = [(0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)]


def box_meshio(cell_type: str, n=(4, 2, 2), size=(1.0, 0.1, 0.1), origin=(0.0, 0.0, 0.0)):
    quad = cell_type in ("tet10", "hex27")
    s = 2  # lattice step per element (linear elements use corners only; unused dropped)
    nx, ny, nz = n
    shape = (s * nx + 1, s * ny + 1, s * nz + 1)
    idx = np.arange(np.prod(shape)).reshape(shape)
    g = [np.linspace(o, o + L, k) for o, L, k in zip(origin, size, shape)]
    X, Y, Z = np.meshgrid(*g, indexing="ij")
    points = np.column_stack([X.ravel(), Y.ravel(), Z.ravel()])
    cells = []
    for i, j, k in itertools.product(range(nx), range(ny), range(nz)):
        b = np.array([s * i, s * j, s * k])
        if cell_type.startswith("hex"):
            loc = HEX27 if quad else HEX27[:8]
            cells.append([idx[tuple(b + np.array(c))] for c in loc])
            continue
        for perm in itertools.permutations(range(3)):
            c = [np.zeros(3, int)]
            for p in perm:
                c.append(c[-1] + np.eye(3, dtype=int)[p] * 2)
            if np.linalg.det(np.array([c[1] - c[0], c[2] - c[0], c[3] - c[0]])) < 0:
                c[1], c[2] = c[2], c[1]
            nodes = [tuple(b + ci) for ci in c]
            if quad:
                nodes += [tuple(b + (c[a] + c[e]) // 2) for a, e in TET_EDGES]
            cells.append([idx[t] for t in nodes])
    mtype = {"tet4": "tetra", "tet10": "tetra10", "hex8": "hexahedron",
             "hex27": "hexahedron27"}[cell_type]
    cell_blocks = [(mtype, np.array(cells))]
    cell_sets = {}
    for name, ix in (("x0", 0), ("x1", shape[0] - 1)):
        faces = _end_faces(idx[ix], quad, cell_type.startswith("hex"), flip=(ix == 0))
        ftype = ("quad9" if quad else "quad") if cell_type.startswith("hex") else \
            ("triangle6" if quad else "triangle")
        cell_blocks.append((ftype, np.array(faces)))
        sel = [np.zeros(0, int)] * len(cell_blocks)
        cell_sets[name] = sel
    # cell_sets: one selection array per block
    for bi, name in ((1, "x0"), (2, "x1")):
        cell_sets[name] = [np.arange(len(b[1])) if i == bi else np.zeros(0, int)
                           for i, b in enumerate(cell_blocks)]
    return meshio.Mesh(points, cell_blocks, cell_sets=cell_sets)


def _end_faces(grid: np.ndarray, quad: bool, hexa: bool, flip: bool):
    """Faces of one end (grid indexed [y, z] on the lattice); outward normal -x if flip."""
    ny, nz = (grid.shape[0] - 1) // 2, (grid.shape[1] - 1) // 2
    faces = []
    for j, k in itertools.product(range(ny), range(nz)):
        b = np.array([2 * j, 2 * k])

        def at(c):
            return grid[tuple(b + np.asarray(c))]

        if hexa:
            cor = [(0, 0), (2, 0), (2, 2), (0, 2)]  # normal +x (y then z)
            if flip:
                cor = [(0, 0), (0, 2), (2, 2), (2, 0)]
            f = [at(c) for c in cor]
            if quad:
                f += [at((np.array(cor[a]) + np.array(cor[(a + 1) % 4])) // 2) for a in range(4)]
                f.append(at((1, 1)))
            faces.append(f)
        else:
            for tri in ([(0, 0), (2, 0), (2, 2)], [(0, 0), (2, 2), (0, 2)]):
                if flip:
                    tri = [tri[0], tri[2], tri[1]]
                f = [at(c) for c in tri]
                if quad:
                    f += [at((np.array(tri[a]) + np.array(tri[e])) // 2)
                          for a, e in ((0, 1), (1, 2), (0, 2))]
                faces.append(f)
    return faces


def box_mesh(cell_type: str, n=(4, 2, 2), size=(1.0, 0.1, 0.1), origin=(0.0, 0.0, 0.0)):
    """flexmbs :class:`~flexmbs.io.mesh.Mesh` of a box with sets ``x0``, ``x1``."""
    return mesh_from_meshio(box_meshio(cell_type, n, size, origin), source=f"box-{cell_type}")
