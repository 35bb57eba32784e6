"""One XDMF file for a whole mechanism: every body, marker and sensor over time.

:func:`write_collection` writes ``<path>.xdmf`` and its heavy data ``<path>.h5``: a
temporal collection whose every time step is a spatial collection of named grids
(:class:`Grid`: flexible meshes, rigid-body solids, point masses, joint markers,
sensors), so that ParaView (*File > Open*, reader "XDMF Reader") or VTK's
``vtkXdmfReader`` opens the whole run in one step as a multiblock data set (XDMF 2,
the format that reader implements).

Heavy-data layout (SI units): ``/<grid>/cells`` (E, k) (a mixed grid: XDMF's flat ``Mixed``
list), ``/<grid>/points`` (N, 3) [m]
when the grid does not move, else ``/<grid>/points/<step>``; each field
``/<grid>/<field>`` (static) or ``/<grid>/<field>/<step>``.  Static arrays are stored
once and referenced from every step.  The pair is written atomically
(:func:`flexmbs.io.xdmf.written_pair`).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from flexmbs.io.cell_types import cell_blocks
from flexmbs.io.xdmf import heavy_data, written_pair, xdmf_path

#: cell type (meshio names, or flexmbs's ``tet10`` ...) -> (XDMF topology, nodes per cell)
TOPOLOGY = {"vertex": ("Polyvertex", 1), "line": ("Polyline", 2),
            "triangle": ("Triangle", 3), "tetra": ("Tetrahedron", 4), "tet4": ("Tetrahedron", 4),
            "wedge": ("Wedge", 6), "hexahedron": ("Hexahedron", 8), "hex8": ("Hexahedron", 8),
            "tetra10": ("Tetrahedron_10", 10), "tet10": ("Tetrahedron_10", 10),
            "wedge6": ("Wedge", 6), "hexahedron20": ("Hexahedron_20", 20),
            "hex20": ("Hexahedron_20", 20),
            "hexahedron27": ("Hexahedron_27", 27), "hex27": ("Hexahedron_27", 27)}
#: XDMF's number of each topology, in a ``Mixed`` topology (XDMF 2, ``XdmfTopology.h``)
MIXED_CODE = {"Polyvertex": 1, "Polyline": 2, "Triangle": 4, "Tetrahedron": 6, "Wedge": 8,
              "Hexahedron": 9, "Tetrahedron_10": 38, "Hexahedron_20": 48,
              "Hexahedron_27": 50}


@dataclass(frozen=True)
class Grid:
    """One named grid of the collection.

    ``points`` (N, 3) [m] fixed, or ``points(i)`` -> (N, 3) at step ``i``; ``cells``
    (E, k) node ids of ``cell_type`` (a key of :data:`TOPOLOGY`, or several joined by
    ``+`` for a mixed mesh: one block per kind in that order, rows padded with -1,
    :func:`flexmbs.io.cell_types.joined_blocks`); ``fields`` ``{name:
    fn(i) -> (N,) or (N, c)}`` per step; ``static`` ``{name: (N,) or (N, c)}`` the same at
    every step (e.g. the maximum over time)."""

    name: str
    cell_type: str
    cells: np.ndarray
    points: np.ndarray | Callable[[int], np.ndarray]
    fields: dict = field(default_factory=dict)
    static: dict = field(default_factory=dict)

    def __post_init__(self):
        kinds = self.cell_type.split("+")
        if any(k not in TOPOLOGY for k in kinds):
            raise ValueError(f"grid '{self.name}': cell type must be one of "
                             f"{sorted(TOPOLOGY)} (or several joined by '+'), got "
                             f"{self.cell_type!r}")
        cells = np.asarray(self.cells, dtype=np.int64)
        if len(kinds) == 1:
            cells = cells.reshape(-1, TOPOLOGY[self.cell_type][1])
        object.__setattr__(self, "cells", cells)

    @cached_property
    def topology(self) -> tuple[str, np.ndarray]:
        """XDMF topology type and its connectivity: the cells (E, k), or for several
        kinds ``Mixed`` with each cell as its :data:`MIXED_CODE` and node ids, flat."""
        if "+" not in self.cell_type:
            return TOPOLOGY[self.cell_type][0], self.cells
        flat = []
        for kind, block in cell_blocks(self.cell_type, self.cells):
            topo, k = TOPOLOGY[kind]
            flat.append(np.hstack([np.full((len(block), 1), MIXED_CODE[topo]),
                                   block[:, :k]]).ravel())
        return "Mixed", np.concatenate(flat)


def _item(parent: ET.Element, h5name: str, key: str, shape: tuple, dtype) -> ET.Element:
    kind, prec = ("Int", "8") if np.issubdtype(dtype, np.integer) else ("Float", "8")
    item = ET.SubElement(parent, "DataItem", Dimensions=" ".join(str(d) for d in shape),
                         NumberType=kind, Precision=prec, Format="HDF")
    item.text = f"{h5name}:/{key}"
    return item


def _attribute(grid_el: ET.Element, name: str, h5name: str, key: str, shape) -> None:
    kind = "Scalar" if len(shape) == 1 else "Vector" if shape[1] == 3 else "Matrix"
    at = ET.SubElement(grid_el, "Attribute", Name=name, AttributeType=kind, Center="Node")
    _item(at, h5name, key, shape, float)


def _points(grid: Grid, i: int) -> np.ndarray:
    pts = grid.points(i) if callable(grid.points) else grid.points
    pts = np.asarray(pts, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise ValueError(f"grid '{grid.name}': points must have shape (N, 3), got {pts.shape}")
    return pts


def _check_rows(grid: Grid, name: str, v: np.ndarray, n: int) -> np.ndarray:
    v = np.ascontiguousarray(v, dtype=float)
    if v.shape[:1] != (n,):
        raise ValueError(f"grid '{grid.name}': field '{name}' has {v.shape[:1]} rows, the "
                         f"grid {n} points")
    return v


def write_collection(path: str | Path, times: Sequence[float], grids: Sequence[Grid],
                     check: Callable[[], None] | None = None) -> Path:
    """Write the collection of ``grids`` at ``times`` [s] (module doc); ``check()`` is
    called before each step (it may raise ``KeyboardInterrupt``: nothing is then left).
    Returns the path of the ``.xdmf``; its ``.h5`` is :func:`~flexmbs.io.xdmf.heavy_data`."""
    import h5py
    path = xdmf_path(path)
    h5name = heavy_data(path).name
    root = ET.Element("Xdmf", Version="2.0")
    domain = ET.SubElement(root, "Domain")
    series = ET.SubElement(domain, "Grid", Name=path.stem, GridType="Collection",
                           CollectionType="Temporal")
    with written_pair(path) as tmp, h5py.File(tmp / h5name, "w") as h5:
        for g in grids:
            h5.create_dataset(f"{g.name}/cells", data=g.topology[1])
            if not callable(g.points):
                h5.create_dataset(f"{g.name}/points", data=_points(g, 0))
            for k, v in g.static.items():
                n = len(_points(g, 0))
                h5.create_dataset(f"{g.name}/{k}", data=_check_rows(g, k, v, n))
        for i, t in enumerate(times):
            if check is not None:
                check()
            step = ET.SubElement(series, "Grid", Name=f"step {i}", GridType="Collection",
                                 CollectionType="Spatial")
            ET.SubElement(step, "Time", Value=repr(float(t)))
            for g in grids:
                _grid_step(step, h5, h5name, g, i)
        ET.indent(root)
        ET.ElementTree(root).write(tmp / path.name, encoding="utf-8", xml_declaration=True)
    return path


def _grid_step(step: ET.Element, h5, h5name: str, g: Grid, i: int) -> None:
    """The grid ``g`` at step ``i``: its XML under ``step``, its moving data into ``h5``."""
    el = ET.SubElement(step, "Grid", Name=g.name, GridType="Uniform")
    topo, cells = g.topology
    top = ET.SubElement(el, "Topology", TopologyType=topo, NumberOfElements=str(len(g.cells)))
    if topo in ("Polyline", "Polyvertex"):
        top.set("NodesPerElement", str(TOPOLOGY[g.cell_type][1]))
    _item(top, h5name, f"{g.name}/cells", cells.shape, np.int64)
    pts = _points(g, i)
    key = f"{g.name}/points"
    if callable(g.points):
        key = f"{key}/{i}"
        h5.create_dataset(key, data=pts)
    geo = ET.SubElement(el, "Geometry", GeometryType="XYZ")
    _item(geo, h5name, key, pts.shape, float)
    for name, fn in g.fields.items():
        v = _check_rows(g, name, fn(i), len(pts))
        h5.create_dataset(f"{g.name}/{name}/{i}", data=v)
        _attribute(el, name, h5name, f"{g.name}/{name}/{i}", v.shape)
    for name, v in g.static.items():
        _attribute(el, name, h5name, f"{g.name}/{name}", np.shape(v))
