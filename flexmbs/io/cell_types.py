"""Solid element kinds: names, node counts, scikit-fem local node order and meshes.

flexmbs names a cell kind by its shape and node count (``tet4``, ``tet10``, ``hex8``,
``hex20``, ``hex27``, ``wedge6``); connectivity is stored in meshio (VTK) node order.
scikit-fem numbers the nodes of an element in its own local order, the order of its
element's ``doflocs`` (reference coordinates ``X`` in ``[0, 1]^3``).  The permutation
from one to the other is found by matching reference coordinates: a meshio node ``j``
sits at ``X_j`` of the reference cell, and scikit-fem's local node ``i`` at
``doflocs[i]``; ``local[:, i] = cells[:, j]`` where ``X_j = doflocs[i]``.

scikit-fem 12 provides the isoparametric Lagrange elements of tet4, tet10, hex8, hex27,
the serendipity hex20 (``ElementHexS2``) and the linear wedge6 (``ElementWedge1``); it
has no 15- or 18-node wedge and no pyramid, so those kinds are refused
(:data:`NOT_IN_SKFEM`).  meshio's ``wedge`` keeps gmsh's prism order (triangle
``0 1 2`` turning towards ``3 4 5``, as Abaqus's C3D6 and scikit-fem's ``ElementWedge1``),
so wedges need no reordering.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: flexmbs cell type -> meshio cell type
MESHIO_TYPE = {"tet4": "tetra", "tet10": "tetra10", "hex8": "hexahedron",
               "hex20": "hexahedron20", "hex27": "hexahedron27", "wedge6": "wedge"}
CELL_TYPE = {v: k for k, v in MESHIO_TYPE.items()}
#: nodes per cell of each flexmbs cell type
NODES = {"tet4": 4, "tet10": 10, "hex8": 8, "hex20": 20, "hex27": 27, "wedge6": 6}
#: meshio volume types scikit-fem has no element for -> the name used in messages
NOT_IN_SKFEM = {"wedge12": "wedge12", "wedge15": "wedge15", "wedge18": "wedge18",
                "wedge40": "wedge40", "pyramid": "pyramid5", "pyramid13": "pyramid13",
                "pyramid14": "pyramid14", "hexahedron24": "hex24", "hexahedron64": "hex64",
                "hexahedron125": "hex125", "tetra20": "tet20", "tetra35": "tet35",
                "tetra56": "tet56", "polyhedron": "polyhedron"}
#: edges of the VTK hexahedron20 mid-side nodes 8..19 (corner pairs)
VTK_HEX20_EDGES = ((0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
                   (0, 4), (1, 5), (2, 6), (3, 7))


def unsupported_message(meshio_type: str) -> str:
    """Why ``meshio_type`` cannot be used, naming the element (one line, no source)."""
    name = NOT_IN_SKFEM.get(meshio_type, meshio_type)
    return (f"element type {name} is not supported: not provided by scikit-fem "
            f"(supported: {', '.join(sorted(MESHIO_TYPE))})")


def _skfem_hex_corner_order() -> list[int]:
    from skfem.io.meshio import INV_HEX_MAPPING
    return list(INV_HEX_MAPPING[:8])


@lru_cache(maxsize=None)
def local_order_permutation(cell_type: str) -> np.ndarray | None:
    """``perm`` with ``local = cells[:, perm]`` (scikit-fem local order), or ``None``
    when both orders agree (tetrahedra, wedge6)."""
    from skfem.io.meshio import INV_HEX_MAPPING

    if cell_type == "hex8":
        return np.asarray(INV_HEX_MAPPING[:8])
    if cell_type == "hex27":
        return np.asarray(INV_HEX_MAPPING)
    if cell_type == "hex20":
        from skfem import ElementHex1, ElementHexS2

        corner = np.empty((8, 3))
        corner[_skfem_hex_corner_order()] = ElementHex1.doflocs   # X of meshio corner c
        X = np.vstack([corner] + [0.5 * (corner[a] + corner[b])
                                  for a, b in VTK_HEX20_EDGES])
        target = ElementHexS2.doflocs
        perm = np.array([int(np.flatnonzero(np.all(X == t, axis=1))[0]) for t in target])
        assert sorted(perm.tolist()) == list(range(20))
        return perm
    return None


def skfem_local_order(cell_type: str, cells: np.ndarray) -> np.ndarray:
    """Cells reordered from meshio node order to scikit-fem local node order."""
    perm = local_order_permutation(cell_type)
    return cells if perm is None else cells[:, perm]


@lru_cache(maxsize=1)
def _mesh_hex_s2():
    """The scikit-fem mesh class of serendipity hexahedra: ``MeshHex2`` with the 20-node
    element (vertex and edge dofs; the geometry is mapped isoparametrically)."""
    from skfem import ElementHexS2, MeshHex2

    @dataclass(repr=False)
    class MeshHexS2(MeshHex2):
        elem: type = ElementHexS2

    return MeshHexS2


def skfem_mesh(cell_type: str, points: np.ndarray, cells: np.ndarray):
    """The scikit-fem mesh of ``cells`` (meshio order) over ``points`` (N, 3).

    tet4, tet10, hex8 and hex27 go through scikit-fem's meshio adapter; hex20 and
    wedge6, which the adapter does not read, are built from the cells in scikit-fem
    local order (for hex20 scikit-fem moves the edge nodes behind the vertices).
    """
    import meshio

    if cell_type in ("hex20", "wedge6"):
        from skfem import MeshWedge1

        local = skfem_local_order(cell_type, np.asarray(cells))
        kind = _mesh_hex_s2() if cell_type == "hex20" else MeshWedge1
        return kind(np.ascontiguousarray(np.asarray(points, float).T),
                         np.ascontiguousarray(local.T))
    from skfem.io.meshio import from_meshio
    return from_meshio(meshio.Mesh(np.array(points),
                                   [(MESHIO_TYPE[cell_type], np.array(cells))]))


@lru_cache(maxsize=None)
def orientation_sign(cell_type: str) -> float:
    """+1 or -1: sign of scikit-fem's ``detDF`` for a right-handed meshio (VTK) element.

    scikit-fem's reference hexahedron is left-handed, its tetrahedron and wedge
    right-handed; found by converting scikit-fem's own unit meshes to meshio and
    comparing with the corner triple product ``((x1-x0) x (x_a-x0)) . (x_b-x0)``.
    """
    import skfem
    from skfem.io.meshio import to_meshio

    base = {"tet4": skfem.MeshTet1, "tet10": skfem.MeshTet2, "hex8": skfem.MeshHex1,
            "hex20": skfem.MeshHex1, "hex27": skfem.MeshHex2,
            "wedge6": skfem.MeshWedge1}[cell_type]
    m = base()
    mio = to_meshio(m)
    c, p = mio.cells[0].data[0], mio.points
    a, b = corner_triple(cell_type)
    triple = np.dot(np.cross(p[c[1]] - p[c[0]], p[c[a]] - p[c[0]]), p[c[b]] - p[c[0]])
    det = m.mapping().detDF(m.elem.doflocs.T)[0, 0]
    return float(np.sign(det * triple))


def corner_triple(cell_type: str) -> tuple[int, int]:
    """Corners ``(a, b)`` whose triple product with corner 1 gives the handedness."""
    return (3, 4) if cell_type.startswith("hex") else (2, 3)


def quadrature(cell_type: str, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Points ``X`` (3, n_qp) and weights ``W`` (n_qp,) on the reference cell, exact for
    polynomials of degree ``order`` (per direction on hexahedra).

    The wedge ``{x, y >= 0, x + y <= 1} x [0, 1]`` gets the product of scikit-fem's
    triangle rule in ``(x, y)`` and its Gauss line rule in ``z``: ``sum W = 1/2``.
    (scikit-fem 12's own wedge rule, ``get_quadrature(RefWedge, n)``, is not this product:
    its weights sum to 1/4 and some points lie outside the wedge.)
    """
    from skfem import ElementHex1, ElementTetP1
    from skfem.quadrature import get_quadrature, get_quadrature_line, get_quadrature_tri

    if cell_type == "wedge6":
        Xt, Wt = get_quadrature_tri(order)
        Xl, Wl = get_quadrature_line(order)
        X = np.vstack([np.tile(Xt, (1, Xl.shape[1])), np.repeat(Xl, Xt.shape[1], axis=1)])
        return X, np.tile(Wt, Xl.shape[1]) * np.repeat(Wl, Xt.shape[1])
    refdom = (ElementTetP1 if cell_type.startswith("tet") else ElementHex1).refdom
    return get_quadrature(refdom, order)


def joined_blocks(blocks) -> tuple[str, np.ndarray]:
    """``(cell_type, cells)`` of several ``(kind, cells)`` blocks in one array: the kinds
    joined by ``+`` (``"hex8+wedge6"``) and the cells one block after the other, padded
    with -1 to the widest kind (the body-file and XDMF layout of a mixed mesh)."""
    blocks = [(t, np.asarray(c, dtype=np.int64)) for t, c in blocks]
    if len(blocks) == 1:
        return blocks[0]
    width = max(NODES[t] for t, _ in blocks)
    rows = [np.hstack([c, np.full((len(c), width - c.shape[1]), -1, np.int64)])
            for _, c in blocks]
    return "+".join(t for t, _ in blocks), np.vstack(rows)


def cell_blocks(cell_type: str, cells: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The ``(kind, cells)`` blocks of :func:`joined_blocks`'s layout (one block for a
    single kind); ValueError if the rows do not form one block per kind, in order."""
    kinds = cell_type.split("+")
    cells = np.asarray(cells)
    if len(kinds) == 1:
        return [(cell_type, cells)]
    unknown = [k for k in kinds if k not in NODES]
    if unknown:
        raise ValueError(f"unknown cell type(s) {unknown} in {cell_type!r}")
    count = (cells >= 0).sum(axis=1)
    out, start = [], 0
    for kind in kinds:
        k = NODES[kind]
        stop = start
        while stop < len(cells) and count[stop] == k:
            stop += 1
        block = cells[start:stop]
        if stop == start or (block[:, :k] < 0).any():
            raise ValueError(f"cells of {cell_type!r}: expected a block of {kind} cells "
                             f"({k} node ids, then -1) at row {start}")
        out.append((kind, block[:, :k]))
        start = stop
    if start != len(cells):
        raise ValueError(f"cells of {cell_type!r}: row {start} has {count[start]} node ids, "
                         f"expected one block per kind {kinds}")
    return out

