"""Volume meshes with named node and facet sets, read through meshio.

A :class:`Mesh` holds one kind of solid element (``tet4``, ``tet10``, ``hex8``, ``hex20``,
``hex27`` or ``wedge6``; :mod:`flexmbs.io.cell_types`) in the node ordering of meshio (VTK), points in metres, and the named
groups of the file:

* gmsh ``.msh``: every physical group becomes a node set; 2D groups also a facet set
  (node-index arrays of their faces), 3D groups a cell set;
* Abaqus ``.inp``: ``*NSET`` become node sets, ``*ELSET`` of solid elements cell sets;
  each ``*SURFACE`` (element faces ``S1``..``S6`` of C3D4, C3D10, C3D8) a facet set and
  a node set of its name, laid out and oriented as gmsh's (read by
  :mod:`flexmbs.io.abaqus_surface`, as meshio skips surfaces); the element names give
  the formulation (C3D8: B-bar) or are refused by name, and ``*MATERIAL`` becomes
  :attr:`Mesh.material` (:mod:`flexmbs.io.abaqus_deck`);
* ``.vtu``: no groups.

:func:`read_mesh` validates the mesh and raises :class:`~flexmbs.errors.MeshError`
with one clear message naming the file, what was expected and what was found.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import meshio
import numpy as np
from scipy.spatial import cKDTree

from flexmbs.errors import MeshError
from flexmbs.io.abaqus_deck import AbaqusDeck, DeckMaterial, read_deck
from flexmbs.io.abaqus_surface import AbaqusSurfaces, read_surfaces
from flexmbs.io.cell_types import (CELL_TYPE, MESHIO_TYPE, NODES, NOT_IN_SKFEM,
                                   orientation_sign, quadrature, skfem_local_order, skfem_mesh,
                                   unsupported_message)

logger = logging.getLogger(__name__)

__all__ = ["CELL_TYPE", "MESHIO_TYPE", "Mesh", "check_jacobians", "mesh_from_meshio",
           "read_mesh", "skfem_local_order", "unit_warning"]
#: meshio types of 3D cells (any other volume type is unsupported)
VOLUME_TYPES = {"tetra", "tetra10", "hexahedron", "hexahedron27", "hexahedron20",
                "hexahedron24", "wedge", "wedge12", "wedge15", "wedge18", "pyramid",
                "pyramid13", "pyramid14", "tetra4", "tetra20", "tetra35", "tetra56",
                "hexahedron64", "hexahedron125", "wedge40", "polyhedron"}
#: meshio types of 2D cells (faces of named boundary groups)
FACE_TYPES = {"triangle", "triangle6", "triangle7", "quad", "quad8", "quad9"}
#: element formulations each cell type offers ("full": displacement, full integration)
FORMULATIONS = {t: {"hex8": ("full", "bbar"), "hex20": ("full", "reduced")}.get(t, ("full",))
                for t in MESHIO_TYPE}
#: relative tolerances: coincident nodes, zero Jacobian
DUPLICATE_TOL = 1e-12
DEGENERATE_TOL = 1e-10
#: largest node coordinate [m] (beyond it distances overflow)
MAX_COORDINATE = 1e12


def _frozen(a: np.ndarray, dtype=None) -> np.ndarray:
    a = np.array(a, dtype=dtype, copy=True)
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Mesh:
    """A validated solid mesh of one element type.

    Attributes
    ----------
    points : ndarray, (N, 3)
        Node coordinates [m].
    cells : ndarray[int], (E, k)
        Element connectivity in meshio (VTK) node order, k = 4, 10, 8, 20, 27 or 6.
    cell_type : str
        ``"tet4"``, ``"tet10"``, ``"hex8"``, ``"hex20"``, ``"hex27"`` or ``"wedge6"``.
    node_sets : dict[str, ndarray[int]]
        Named node sets (sorted node indices).
    facet_sets : dict[str, ndarray[int]]
        Named boundary faces, each an (F, n_face_nodes) array of node indices.
    source : str
        The file the mesh was read from ("" if built in code).
    scale : float
        Length factor applied to the file's coordinates (0.001 for mm).
    cell_sets : dict[str, ndarray[int]]
        Named element sets (indices into ``cells``).
    formulation : str
        ``"full"`` (displacement element, full integration), ``"bbar"`` (hex8 with the
        mean-dilatation B-bar, Abaqus's C3D8) or ``"reduced"`` (hex20 with a 2 x 2 x 2
        stiffness rule, Abaqus's C3D20R; :mod:`flexmbs.io.abaqus_deck`).
    material : DeckMaterial or None
        The material the file defines (Abaqus ``*MATERIAL``), in SI units.
    """

    points: np.ndarray
    cells: np.ndarray
    cell_type: str
    node_sets: dict = field(default_factory=dict)
    facet_sets: dict = field(default_factory=dict)
    source: str = ""
    scale: float = 1.0
    cell_sets: dict = field(default_factory=dict)
    formulation: str = "full"
    material: DeckMaterial | None = None

    def __post_init__(self):
        if self.cell_type not in MESHIO_TYPE:
            raise MeshError(f"mesh '{self.source}': cell_type must be one of "
                            f"{sorted(MESHIO_TYPE)}, got {self.cell_type!r}")
        if self.formulation not in FORMULATIONS[self.cell_type]:
            raise MeshError(f"mesh '{self.source}': formulation must be one of "
                            f"{FORMULATIONS[self.cell_type]} for {self.cell_type} elements, "
                            f"got {self.formulation!r}")
        object.__setattr__(self, "points", _frozen(self.points, float))
        object.__setattr__(self, "cells", _frozen(self.cells, np.int64))
        for name in ("node_sets", "facet_sets", "cell_sets"):
            sets = {k: _frozen(v, np.int64) for k, v in getattr(self, name).items()}
            object.__setattr__(self, name, sets)

    @property
    def n_nodes(self) -> int:
        return self.points.shape[0]

    @property
    def n_cells(self) -> int:
        return self.cells.shape[0]

    def node_set(self, name: str) -> np.ndarray:
        """Node indices of the named set; MeshError listing the available names if missing."""
        if name not in self.node_sets:
            raise MeshError(f"mesh '{self.source}': no node set named {name!r}; "
                            f"available: {sorted(self.node_sets)}")
        return self.node_sets[name]

    def facet_set(self, name: str) -> np.ndarray:
        """Faces (F, n_face_nodes) of the named set; MeshError if missing."""
        if name not in self.facet_sets:
            raise MeshError(f"mesh '{self.source}': no facet set named {name!r}; "
                            f"available: {sorted(self.facet_sets)}")
        return self.facet_sets[name]

    def translated_rotated(self, R: np.ndarray, t: np.ndarray) -> Mesh:
        """Rigidly moved copy, ``x' = R x + t`` (R a proper rotation)."""
        R = np.asarray(R, float)
        if R.shape != (3, 3) or not np.allclose(R.T @ R, np.eye(3), atol=1e-12) \
                or np.linalg.det(R) < 0:
            raise ValueError(f"translated_rotated: R must be a proper 3x3 rotation, got {R}")
        points = self.points @ R.T + np.asarray(t, float).reshape(1, 3)
        return dataclasses.replace(self, points=points, node_sets=dict(self.node_sets),
                                   facet_sets=dict(self.facet_sets),
                                   cell_sets=dict(self.cell_sets))

    def to_meshio(self) -> meshio.Mesh:
        """The mesh as a ``meshio.Mesh`` (volume cells only)."""
        return meshio.Mesh(np.array(self.points),
                           [(MESHIO_TYPE[self.cell_type], np.array(self.cells))])

    @cached_property
    def _skfem_and_map(self):
        m = skfem_mesh(self.cell_type, self.points, self.cells)
        # skfem renumbers the nodes (vertices first); local node a of element e
        # is skfem node m.dofs.element_dofs[a, e] and flexmbs node cells_skfem[e, a].
        # The adapter places the input's higher-order nodes in that same local order,
        # so the correspondence is read off element by element.
        local = skfem_local_order(self.cell_type, self.cells)
        skfem_node = np.full(self.n_nodes, -1, dtype=np.int64)
        skfem_node[local.ravel()] = m.dofs.element_dofs.T.ravel()
        return m, skfem_node

    def skfem(self):
        """The matching scikit-fem mesh (MeshTet1, MeshTet2, MeshHex1, MeshHex2, MeshWedge1,
        or for hex20 a MeshHex2 carrying the serendipity element)."""
        return self._skfem_and_map[0]

    def skfem_node_index(self) -> np.ndarray:
        """``idx[i]`` = column of ``self.skfem().doflocs`` holding flexmbs node i."""
        return self._skfem_and_map[1]


# ----------------------------------------------------------------------------- reading

def read_mesh(path: str | Path, *, scale: float = 1.0, mixed: bool = False) -> Mesh:
    """Read and validate a solid mesh (gmsh ``.msh``, ``.vtu``, Abaqus ``.inp``, ...).

    Parameters
    ----------
    path : file readable by meshio
    scale : length factor from file units to metres (0.001 for a mesh in mm)
    mixed : accept several first-order element types (a
        :class:`~flexmbs.io.mixed_mesh.MixedMesh`); the command line and case files do

    Raises
    ------
    MeshError
        missing/unreadable file, unsupported or mixed element types, inverted,
        degenerate or duplicate nodes.
    """
    path = Path(path)
    src = str(path)
    try:
        is_dir, is_file = path.is_dir(), path.is_file()
    except OSError as exc:                           # a name too long
        raise MeshError(f"mesh file '{src[:100]}' could not be read: {exc.strerror or exc}"
                        ) from None
    if is_dir:
        raise MeshError(f"mesh file '{src}' could not be read: expected a file, found a "
                        "folder")
    if not is_file:
        raise MeshError(f"mesh file '{src}' does not exist")
    if not scale > 0:
        raise ValueError(f"read_mesh('{src}'): scale must be > 0, got {scale}")
    deck = None
    if path.suffix.lower() == ".inp":
        deck = read_deck(path, scale=scale)             # refuses C3D8R ... by name
    m = _read_meshio(path)
    surfaces = None
    if deck is not None:
        try:
            surfaces = read_surfaces(path, m)
        except MeshError:
            raise
        except (ValueError, IndexError, KeyError, TypeError, OverflowError) as exc:
            raise MeshError(f"mesh '{src}': expected *SURFACE definitions referring to the "
                            f"file's elements and nodes, reading them failed with "
                            f"{type(exc).__name__}: {exc}") from None
    try:
        return mesh_from_meshio(m, source=src, scale=scale, surfaces=surfaces, deck=deck,
                                mixed=mixed)
    except (ValueError, IndexError, KeyError, TypeError) as exc:   # a structure not foreseen
        raise MeshError(f"mesh '{src}': expected a solid mesh of one element type, reading "
                        f"its content failed with {type(exc).__name__}: {exc}") from None


#: gmsh MSH versions meshio reads
MSH_VERSIONS = ("2.2", "4.0", "4.1")


def _unreadable(src: str, msg: str) -> MeshError:
    return MeshError(f"mesh file '{src}' could not be read: {msg}")


def _check_gmsh_header(path: Path) -> None:
    """MeshError unless ``path`` starts like a gmsh MSH 2.2/4.0/4.1 file."""
    src = str(path)
    with open(path, "rb") as f:
        head = f.read(256)
    if not head.strip():
        raise _unreadable(src, "expected a gmsh mesh, found an empty file")
    lines = head.lstrip().split(b"\n")
    first = lines[0].strip()[:40]
    if first != b"$MeshFormat":
        text = first.decode("ascii", "replace")
        shown = repr(text) if first.isascii() and text.isprintable() else "binary data"
        raise _unreadable(src, f"expected a gmsh MSH file starting with '$MeshFormat', "
                               f"found {shown}")
    words = lines[1].split() if len(lines) > 1 else []
    version = words[0].decode("ascii", "replace") if words else ""
    if version not in MSH_VERSIONS:
        raise _unreadable(src, f"expected gmsh MSH version {', '.join(MSH_VERSIONS)}, found "
                               f"version {version[:20]!r} (re-export from gmsh with "
                               "Mesh.MshFileVersion = 4.1)")
    if len(words) > 1 and words[1] == b"0":
        _check_gmsh_node_tags(path, version)
    elif len(words) > 2 and words[1] == b"1":
        _check_binary_node_tags(path, version, words[2])


#: largest gmsh node tag accepted: meshio allocates an array of the largest tag's size
MAX_NODE_TAG = 10**8


def _check_gmsh_node_tags(path: Path, version: str) -> None:
    """MeshError if a node tag of an ASCII gmsh file is not a positive integer below
    :data:`MAX_NODE_TAG` (a damaged file would make meshio allocate gigabytes)."""
    data = path.read_bytes()
    start, end = data.find(b"$Nodes"), data.find(b"$EndNodes")
    if start < 0 or end < start:
        return                                    # meshio reports the missing section
    lines = data[start:end].split(b"\n")[1:]
    if version == "2.2":
        tags = (ln.split(None, 1)[0] for ln in lines[1:] if ln.strip())
        what = "the first number of a node line"
    else:
        tags = (w[0] for w in (ln.split() for ln in lines[1:]) if len(w) == 1)
        what = "a node tag"
    for i, tag in enumerate(tags):
        if not tag.isdigit() or not 0 < int(tag) <= MAX_NODE_TAG:
            shown = tag[:20].decode("ascii", "replace")
            raise _unreadable(str(path), f"expected node tags 1..{MAX_NODE_TAG} in the "
                                         f"$Nodes section, found {shown!r} as {what} (node "
                                         f"{i + 1} of the section)")


def _check_binary_node_tags(path: Path, version: str, data_size: bytes) -> None:
    """MeshError if the largest node tag of a binary gmsh file exceeds
    :data:`MAX_NODE_TAG`: MSH 4.1 states it in the ``$Nodes`` header (``numEntityBlocks
    numNodes minNodeTag maxNodeTag``, ``size_t`` each); MSH 2.2 stores each node as an
    ``int`` tag and three doubles after the node count."""
    if version not in ("4.1", "2.2") or data_size != b"8":
        return
    data = path.read_bytes()
    start = data.find(b"$Nodes\n")
    if start < 0:
        return                                    # meshio reports the missing section
    body = data[start + 7:]
    if version == "4.1":
        if len(body) < 32:
            return
        largest = int(np.frombuffer(body[:32], dtype="<u8")[3])
    else:
        eol = body.find(b"\n")
        count = body[:eol].strip() if eol > 0 else b""
        if not count.isdigit():
            return
        n = min(int(count), (len(body) - eol - 1) // 28)
        rec = np.frombuffer(body[eol + 1:eol + 1 + 28 * n], dtype=np.dtype(
            [("tag", "<i4"), ("x", "<f8", 3)]))
        largest = int(np.abs(rec["tag"]).max(initial=0))
    if largest > MAX_NODE_TAG:
        raise _unreadable(str(path), f"expected node tags 1..{MAX_NODE_TAG} in the binary "
                                     f"$Nodes section, found the node tag {largest} (a "
                                     f"damaged file?)")


def _read_meshio(path: Path) -> meshio.Mesh:
    """Read ``path`` with meshio's reader for its format, without meshio's printing or
    ``sys.exit``: every failure is one MeshError naming the file."""
    from meshio._exceptions import ReadError
    from meshio._helpers import _filetypes_from_path, reader_map
    src = str(path)
    if path.suffix.lower() == ".msh":
        # name the format of .msh: meshio otherwise tries ANSYS first
        _check_gmsh_header(path)
        formats = ["gmsh"]
    else:
        try:
            formats = _filetypes_from_path(path)
        except ReadError:
            raise _unreadable(src, f"expected a mesh format meshio reads (.msh, .vtu, .inp, "
                                   f"...), got the extension {path.suffix!r}") from None
        if path.stat().st_size == 0:
            raise _unreadable(src, f"expected a {formats[0]} mesh, found an empty file")
    errors = []
    for fmt in formats:
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")     # numpy's about damaged files
                return reader_map[fmt](str(path))
        except MemoryError:
            errors.append(f"meshio's {fmt} reader: sizes in the file too large for memory")
        except (Exception, SystemExit) as err:  # meshio's readers raise many types
            msg = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
            errors.append(f"meshio's {fmt} reader: {type(err).__name__}"
                          + (f": {msg}" if msg else ""))
    what = "truncated or damaged" if path.suffix.lower() == ".msh" else "unreadable"
    raise _unreadable(src, f"{what} {' or '.join(formats)} file ({'; '.join(errors)})")


def mesh_from_meshio(m: meshio.Mesh, *, source: str = "", scale: float = 1.0,
                     surfaces: AbaqusSurfaces | None = None,
                     deck: AbaqusDeck | None = None, mixed: bool = False) -> Mesh:
    """Build and validate a :class:`Mesh` from a ``meshio.Mesh`` (see :func:`read_mesh`);
    ``surfaces`` (Abaqus, in the point numbering of ``m``) add or replace named sets;
    ``deck`` (Abaqus) gives the element formulation and the file's material.

    ``mixed=True``: several volume element types are allowed and give a
    :class:`~flexmbs.io.mixed_mesh.MixedMesh` (one :class:`Mesh` block per type over the
    shared nodes); a facet set mixing face kinds (quadrangles and triangles) is then
    kept as a node set only."""
    found = [c.type for c in m.cells]
    volume = sorted({t for t in found if t in VOLUME_TYPES})
    supported = sorted(CELL_TYPE)
    if not volume:
        raise MeshError(f"mesh '{source}': expected 3D cells of one of the types "
                        f"{supported}, found only {sorted(set(found))}")
    missing = [t for t in volume if t in NOT_IN_SKFEM]
    if missing:
        raise MeshError(f"mesh '{source}': {unsupported_message(missing[0])}")
    bad = [t for t in volume if t not in CELL_TYPE]
    if bad:
        raise MeshError(f"mesh '{source}': unsupported element type(s) {bad}; "
                        f"supported: {supported} (found cell types {sorted(set(found))})")
    if len(volume) > 1 and not mixed:
        raise MeshError(f"mesh '{source}': expected a single volume element type, "
                        f"found {volume} (a mixed-element mesh is read with "
                        f"read_mesh(..., mixed=True))")
    if len(volume) > 1:
        from flexmbs.io.mixed_mesh import check_kinds
        check_kinds([CELL_TYPE[t] for t in volume], source)
    cells_of, offsets = {}, {}
    for vtype in volume:
        cells_of[vtype] = _volume_cells(m, vtype, source)
        n = 0       # cell offsets of every block of the volume type, to map cell sets
        for ib, c in enumerate(m.cells):
            if c.type == vtype:
                offsets[ib] = (vtype, n)
                n += len(c.data)

    try:
        points = np.asarray(m.points, float)
    except (ValueError, TypeError) as exc:
        raise MeshError(f"mesh '{source}': expected numeric node coordinates ({exc})"
                        ) from None
    if points.ndim != 2 or points.shape[1] not in (2, 3):
        raise MeshError(f"mesh '{source}': expected points of shape (N, 3), "
                        f"got {points.shape}")
    if points.shape[1] == 2:
        points = np.column_stack([points, np.zeros(len(points))])
    bad = np.flatnonzero(~np.isfinite(points).all(axis=1))
    if bad.size:
        raise MeshError(f"mesh '{source}': expected finite node coordinates, found "
                        f"{bad.size} node(s) with NaN or inf, e.g. node {bad[0]} at "
                        f"{points[bad[0]].tolist()}")
    for vtype, cells in cells_of.items():
        _check_connectivity(cells, vtype, len(points), source)
    big = float(np.abs(points).max(initial=0.0)) * float(scale)
    if big > MAX_COORDINATE:
        i = int(np.abs(points).max(axis=1).argmax())
        raise MeshError(f"mesh '{source}': expected node coordinates below "
                        f"{MAX_COORDINATE:g} m, found node {i} at {points[i].tolist()}")
    points = points * float(scale)

    node_sets: dict[str, np.ndarray] = {}
    facet_sets: dict[str, np.ndarray] = {}
    cell_sets: dict[str, dict[str, np.ndarray]] = {t: {} for t in volume}
    for name, idx in (m.point_sets or {}).items():
        idx = np.unique(np.asarray(idx, np.int64))
        if idx.size and (idx[0] < 0 or idx[-1] >= len(points)):
            raise MeshError(f"mesh '{source}': node set {name!r} has node ids outside "
                            f"0..{len(points) - 1}")
        node_sets[name] = idx
    cell_sets_in = {k: v for k, v in (m.cell_sets or {}).items()
                    if isinstance(k, str) and not k.startswith("gmsh:")}
    if not cell_sets_in:
        cell_sets_in = _gmsh_physical_sets(m, source)
    for name, blocks in cell_sets_in.items():
        nodes, faces = [], []
        vcells = {t: [] for t in volume}
        if len(blocks) > len(m.cells):
            raise MeshError(f"mesh '{source}': set {name!r} refers to {len(blocks)} cell "
                            f"blocks, the file has {len(m.cells)}")
        for ib, sel in enumerate(blocks):
            if sel is None or len(sel) == 0:
                continue
            block = m.cells[ib]
            sel = np.asarray(sel, np.int64)
            if sel.min() < 0 or sel.max() >= len(block.data):
                raise MeshError(f"mesh '{source}': set {name!r} refers to cells outside "
                                f"the {len(block.data)} {block.type} cells of block {ib}")
            conn = np.asarray(block.data)[sel]
            if conn.size and (conn.min() < 0 or conn.max() >= len(points)):
                raise MeshError(f"mesh '{source}': {block.type} cells of set {name!r} have "
                                f"node ids outside 0..{len(points) - 1}")
            nodes.append(conn.ravel())
            if block.type in FACE_TYPES:
                faces.append(conn)
            elif ib in offsets:
                vtype, start = offsets[ib]
                vcells[vtype].append(start + np.asarray(sel, np.int64))
        if nodes:
            node_sets[name] = np.unique(np.concatenate(nodes)).astype(np.int64)
        if faces:
            if len({f.shape[1] for f in faces}) > 1:
                if not mixed:
                    raise MeshError(f"mesh '{source}': facet set {name!r} mixes face "
                                    f"types with {sorted({f.shape[1] for f in faces})} "
                                    "nodes")
                logger.warning("mesh '%s': facet set %r mixes face kinds; kept as a node "
                               "set only", source, name)
            else:
                facet_sets[name] = np.concatenate(faces).astype(np.int64)
        for vtype, parts in vcells.items():
            if parts:
                cell_sets[vtype][name] = np.concatenate(parts)
    if surfaces is not None:
        node_sets.update(surfaces.node_sets)
        facet_sets.update(surfaces.facet_sets)

    points, new_cells, node_sets, facet_sets = _drop_unused(
        points, list(cells_of.values()), node_sets, facet_sets, source)
    _check_duplicates(points, source)
    forms = {} if deck is None else deck.formulations
    blocks = [Mesh(points, cells, CELL_TYPE[vtype], node_sets, facet_sets, source,
                   float(scale), cell_sets[vtype],
                   formulation=forms.get(CELL_TYPE[vtype], "full"),
                   material=None if deck is None else deck.material)
              for vtype, cells in zip(cells_of, new_cells)]
    for mesh in blocks:
        try:
            check_jacobians(mesh)
        except MeshError:
            raise
        except Exception as exc:  # scikit-fem: bare Exception, IndexError on bad connectivity
            raise MeshError(f"mesh '{source}': expected {mesh.cell_type} elements with valid "
                            f"connectivity and non-zero volume, scikit-fem reports "
                            f"{type(exc).__name__}: {exc}") from None
    if len(blocks) == 1:
        return blocks[0]
    from flexmbs.io.mixed_mesh import MixedMesh
    return MixedMesh.of(blocks)


def _volume_cells(m: meshio.Mesh, vtype: str, source: str) -> np.ndarray:
    """All cells of meshio type ``vtype`` (E, k), in block order."""
    try:
        cells = np.concatenate([np.asarray(c.data) for c in m.cells if c.type == vtype]
                               ).astype(np.int64)
    except (ValueError, TypeError) as exc:
        raise MeshError(f"mesh '{source}': {vtype} cells of inconsistent sizes ({exc})"
                        ) from None
    k = NODES[CELL_TYPE[vtype]]
    if cells.ndim != 2 or cells.shape[1] != k or cells.shape[0] == 0:
        raise MeshError(f"mesh '{source}': expected {vtype} cells of shape (E, {k}), got "
                        f"{cells.shape}")
    return cells


def _check_connectivity(cells: np.ndarray, vtype: str, n_points: int, source: str) -> None:
    """Node ids in range and distinct within each element."""
    if cells.min() < 0 or cells.max() >= n_points:
        raise MeshError(f"mesh '{source}': expected node ids 0..{n_points - 1} in the "
                        f"{vtype} cells, found {cells.min()}..{cells.max()}")
    srt = np.sort(cells, axis=1)
    rep = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
    if rep.size:
        e = int(rep[0])
        raise MeshError(f"mesh '{source}': expected distinct nodes in each element, found "
                        f"{rep.size} element(s) naming a node twice, e.g. element {e} with "
                        f"nodes {cells[e].tolist()}")


#: topological dimension of the meshio cell types gmsh writes
_DIM = {"vertex": 0, "line": 1, "line3": 1, "line4": 1, **{t: 2 for t in FACE_TYPES},
        **{t: 3 for t in VOLUME_TYPES}}


def _gmsh_physical_sets(m: meshio.Mesh, source: str) -> dict[str, list]:
    """Named cell sets from ``gmsh:physical`` cell data and ``field_data`` (meshio reads
    the physical groups of MSH 2.2 files only that way): ``{name: [indices per block]}``."""
    tags = (m.cell_data or {}).get("gmsh:physical")
    if not tags or not m.field_data or len(tags) != len(m.cells):
        return {}
    out = {}
    for name, val in m.field_data.items():
        val = np.asarray(val).ravel()
        if len(val) != 2:
            continue
        tag, dim = int(val[0]), int(val[1])
        blocks, found = [], False
        for block, t in zip(m.cells, tags):
            t = np.asarray(t).ravel()
            if _DIM.get(block.type) != dim or len(t) != len(block.data):
                blocks.append(np.zeros(0, np.int64))
                continue
            sel = np.flatnonzero(t == tag)
            found |= sel.size > 0
            blocks.append(sel)
        if found:
            out[name] = blocks
        else:
            logger.warning("mesh '%s': physical group %r (dimension %d, tag %d) has no "
                           "elements", source, name, dim, tag)
    return out


def _drop_unused(points, cells: list[np.ndarray], node_sets, facet_sets, source):
    """Points used by no cell (of any block) removed, and every index renumbered."""
    used = np.zeros(len(points), bool)
    for c in cells:
        used[c.ravel()] = True
    if used.all():
        return points, cells, node_sets, facet_sets
    n_unused = int((~used).sum())
    logger.warning("mesh '%s': dropping %d node(s) not used by any element",
                   source, n_unused)
    new = np.full(len(points), -1, np.int64)
    new[used] = np.arange(used.sum())
    node_sets = {k: new[v][new[v] >= 0] for k, v in node_sets.items()}
    for k, f in facet_sets.items():
        if (new[f] < 0).any():
            raise MeshError(f"mesh '{source}': facet set {k!r} has nodes that belong "
                            f"to no volume element")
    facet_sets = {k: new[f] for k, f in facet_sets.items()}
    return points[used], [new[c] for c in cells], node_sets, facet_sets


def _check_duplicates(points: np.ndarray, source: str) -> None:
    size = float(np.linalg.norm(points.max(0) - points.min(0)))
    if not size > 0:
        raise MeshError(f"mesh '{source}': expected nodes spanning a volume, found all "
                        f"{len(points)} node(s) at {points[0].tolist()}")
    pairs = cKDTree(points).query_pairs(DUPLICATE_TOL * size, output_type="ndarray")
    if len(pairs):
        i, j = pairs[0]
        raise MeshError(f"mesh '{source}': expected distinct nodes, found {len(pairs)} "
                        f"pair(s) of coincident nodes (within {DUPLICATE_TOL:g} x mesh "
                        f"size), e.g. nodes {i} and {j} at {points[i].tolist()}")


def check_jacobians(mesh: Mesh) -> None:
    """MeshError if any element is degenerate (zero volume) or inverted.

    The Jacobian determinant ``det(dx/dX)`` is evaluated at the element's nodes and at
    the quadrature points of the assembly rule; degenerate means
    ``|det| <= DEGENERATE_TOL * h_e^3`` at any of these points (h_e the element's
    bounding-box diagonal), inverted means ``det < 0`` somewhere.
    """
    m = mesh.skfem()
    X_nodes = m.elem.doflocs.T
    X_quad, _ = quadrature(mesh.cell_type, 4)
    X = np.hstack([X_nodes, X_quad])
    with np.errstate(all="ignore"):  # degenerate cells make skfem's inverse mapping warn
        det = orientation_sign(mesh.cell_type) * m.mapping().detDF(X)  # (E, n_points)
    xe = mesh.points[mesh.cells]  # (E, k, 3)
    h = np.linalg.norm(xe.max(1) - xe.min(1), axis=1)
    small = np.abs(det) <= DEGENERATE_TOL * h[:, None] ** 3
    degen = np.flatnonzero(small.any(axis=1))
    if degen.size:
        e = int(degen[0])
        raise MeshError(f"mesh '{mesh.source}': {degen.size} degenerate (zero-volume) "
                        f"element(s), e.g. element {e} with nodes "
                        f"{mesh.cells[e].tolist()}: Jacobian determinant "
                        f"{det[e].min():.3g} (expected > 0)")
    inv = np.flatnonzero((det < 0).any(axis=1))
    if inv.size:
        e = int(inv[0])
        raise MeshError(f"mesh '{mesh.source}': {inv.size} inverted element(s) "
                        f"(negative Jacobian determinant), e.g. element {e} with nodes "
                        f"{mesh.cells[e].tolist()}: det = {det[e].min():.3g}; "
                        f"expected det > 0 at every node and quadrature point")


# ----------------------------------------------------------------------- plausibility

#: a mesh declared in mm smaller than this [m], or in metres larger, gets a warning
UNIT_SMALL_MM, UNIT_LARGE_M = 5e-3, 20.0


def unit_warning(points: np.ndarray, unit: str, mass: float | None = None, *,
                 source: str = "", hint: str = 'unit = "{unit}"') -> str:
    """'' if a mesh's size fits its declared length ``unit``, else a one-line warning.

    ``points`` (N, 3) are the node coordinates in metres (after the unit's scale).  A
    mesh declared in ``"mm"`` whose largest extent is below 5 mm (a metre mesh read as
    millimetres: a 1 m steel beam of 3e-9 kg), or declared in ``"m"`` and larger than
    20 m (a millimetre mesh read as metres), is probably in the other unit.  ``mass``
    [kg] is quoted; ``hint`` is how to declare the other unit (``'unit = "{unit}"'`` in
    a case file, ``"--unit {unit}"`` for ``flexmbs preprocess``).
    """
    points = np.asarray(points, float)
    other = {"mm": "m", "m": "mm"}.get(unit)
    if other is None or points.size == 0:
        return ""
    ext = points.max(0) - points.min(0)
    size = float(ext.max())
    if unit == "mm" and size < UNIT_SMALL_MM:
        why = "metres"
    elif unit == "m" and size > UNIT_LARGE_M:
        why = "millimetres"
    else:
        return ""
    k = 1e3 if unit == "mm" else 1.0
    dims = " x ".join(f"{x * k:.4g}" for x in ext)
    m = "" if mass is None else f", mass {mass:.3g} kg"
    return (f"mesh '{source}' is declared in {unit} and spans {dims} {unit}{m}: if its "
            f"coordinates are in {why}, set {hint.format(unit=other)}")
