"""Abaqus ``*SURFACE`` definitions of an ``.inp`` file as named facet and node sets.

meshio reads the nodes, elements, ``*NSET`` and ``*ELSET`` of an Abaqus input file but
skips ``*SURFACE``. :func:`read_surfaces` reads the surfaces (and the sets and labels they
refer to) from the file's text; everything else comes from meshio.

* ``*SURFACE, NAME=X, TYPE=ELEMENT`` (the default type): data lines
  ``element set or element label, face identifier``. Faces of the solid elements
  (Abaqus Analysis User's Guide, "Three-dimensional solid element library", face
  numbering; corner nodes 1-based):

  ==============  =========  =========  =========  =========  =========  =========
  element         S1         S2         S3         S4         S5         S6
  ==============  =========  =========  =========  =========  =========  =========
  C3D4, C3D10     1-2-3      1-4-2      2-4-3      3-4-1
  C3D8, C3D20     1-2-3-4    5-8-7-6    1-5-6-2    2-6-7-3    3-7-8-4    4-8-5-1
  C3D6            1-2-3      4-6-5      1-4-5-2    2-5-6-3    3-6-4-1
  ==============  =========  =========  =========  =========  =========  =========

  The node order of these elements in Abaqus is meshio's (VTK) order, so a face is a
  selection of the element's meshio connectivity. The manual's corner order turns the
  right-hand normal into the element; the facets are stored in reverse, so their
  normal points out of the body as for gmsh boundary groups (the convention of
  ``flexmbs.reduction.loads``). C3D10 faces are meshio ``triangle6``: corners a, b, c,
  then the mid-side nodes of ab, bc, ca; C3D20 faces are ``quad8`` (corners, then the
  mid-side nodes of ab, bc, cd, da). ``mesh.facet_sets[X]`` holds the faces,
  ``mesh.node_sets[X]`` their nodes (corner and mid-side).
* ``*SURFACE, NAME=X, TYPE=NODE``: data lines ``node set or node label[, weight]``;
  ``mesh.node_sets[X]`` holds the nodes. The weights are not used.

Labels are mapped to meshio's numbering the way meshio numbers them: points in the
order of the ``*NODE`` lines, cells block by block (one block per ``*ELEMENT``) in line
order. The mapping is checked against meshio's block types and sizes. ``*INCLUDE`` is
not followed; a surface that refers to elements or sets of an included file gets a
:class:`~flexmbs.errors.MeshError` that says so. C3D27 is not read by meshio.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import meshio
import numpy as np

from flexmbs.errors import MeshError

logger = logging.getLogger(__name__)

#: face corners as listed in the Abaqus manual (1-based), by meshio cell type
ABAQUS_FACES = {
    "tetra": ((1, 2, 3), (1, 4, 2), (2, 4, 3), (3, 4, 1)),
    "hexahedron": ((1, 2, 3, 4), (5, 8, 7, 6), (1, 5, 6, 2), (2, 6, 7, 3), (3, 7, 8, 4),
                   (4, 8, 5, 1)),
    "wedge": ((1, 2, 3), (4, 6, 5), (1, 4, 5, 2), (2, 5, 6, 3), (3, 6, 4, 1)),
}
#: meshio tetra10: local node of the mid-side node of edge (a, b), a < b
TET10_EDGE_NODE = {(0, 1): 4, (1, 2): 5, (0, 2): 6, (0, 3): 7, (1, 3): 8, (2, 3): 9}
#: meshio hexahedron20 (= C3D20): local node of the mid-side node of edge (a, b), a < b
HEX20_EDGE_NODE = {(0, 1): 8, (1, 2): 9, (2, 3): 10, (0, 3): 11, (4, 5): 12, (5, 6): 13,
                   (6, 7): 14, (4, 7): 15, (0, 4): 16, (1, 5): 17, (2, 6): 18, (3, 7): 19}


def _outward(corners: tuple[int, ...]) -> tuple[int, ...]:
    """0-based corners in reverse order (outward right-hand normal)."""
    return tuple(c - 1 for c in reversed(corners))


def _quadratic_face(c: tuple[int, ...], edge_node: dict) -> tuple[int, ...]:
    """Corners, then the mid-side nodes of the edges c0c1, c1c2, ... (meshio's triangle6
    and quad8 layout)."""
    n = len(c)
    return c + tuple(edge_node[tuple(sorted((c[i], c[(i + 1) % n])))] for i in range(n))


#: local nodes of face S(k+1) in row k, outward order, by meshio cell type (wedge
#: faces: triangles S1, S2 and quadrangles S3..S5, as lists)
FACE_NODES = {
    "tetra": np.array([_outward(f) for f in ABAQUS_FACES["tetra"]]),
    "tetra10": np.array([_quadratic_face(_outward(f), TET10_EDGE_NODE)
                         for f in ABAQUS_FACES["tetra"]]),
    "hexahedron": np.array([_outward(f) for f in ABAQUS_FACES["hexahedron"]]),
    "hexahedron20": np.array([_quadratic_face(_outward(f), HEX20_EDGE_NODE)
                              for f in ABAQUS_FACES["hexahedron"]]),
    "wedge": [np.array(_outward(f)) for f in ABAQUS_FACES["wedge"]],
}

_HAS_SURFACE = re.compile(r"^[ \t]*\*[ \t]*surface[ \t]*(,|$)", re.IGNORECASE | re.MULTILINE)
_FACE_ID = re.compile(r"S([1-9])", re.IGNORECASE)


@dataclass(frozen=True)
class AbaqusSurfaces:
    """Surfaces of an ``.inp`` file in meshio's point numbering."""

    facet_sets: dict = field(default_factory=dict)
    node_sets: dict = field(default_factory=dict)


@dataclass
class Card:
    """One keyword line (``*KEYWORD, PARAM=value, ...``) and its data lines."""

    keyword: str
    params: dict
    line: int
    data: list = field(default_factory=list)  # (line number, stripped text)

    def fields(self):
        for ln, text in self.data:
            yield ln, text, [f.strip() for f in text.split(",") if f.strip()]


def _unquote(s: str) -> str:
    return s.strip().strip('"')


def keyword_cards(text: str) -> list[Card]:
    """Keyword cards of an input file: ``**`` comment and blank lines skipped, keyword
    lines ending in ``,`` continued on the next line, keywords and parameter names
    upper case (Abaqus is case-insensitive)."""
    lines = text.splitlines()
    cards: list[Card] = []
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        i += 1
        if not s or s.startswith("**"):
            continue
        if not s.startswith("*"):
            if cards:
                cards[-1].data.append((i, s))
            continue
        start = i
        while s.endswith(",") and i < len(lines) and not lines[i].lstrip().startswith("*"):
            s += lines[i].strip()
            i += 1
        head, *rest = s[1:].split(",")
        params = {}
        for p in rest:
            key, _, value = p.partition("=")
            if key.strip():
                params[" ".join(key.split()).upper()] = _unquote(value) if value else None
        cards.append(Card(" ".join(head.split()).upper(), params, start))
    return cards


class _Inp:
    """Sets and labels of one input file, mapped to the meshio mesh read from it."""

    def __init__(self, path: Path, cards: list[Card], m: meshio.Mesh):
        self.src, self.cards, self.m = str(path), cards, m
        self.includes = [c.line for c in cards if c.keyword == "INCLUDE"]
        self.sets = {"ELSET": {}, "NSET": {}}  # kind -> NAME -> [cards]
        for c in cards:
            for kind, owner in (("ELSET", "ELEMENT"), ("NSET", "NODE")):
                name = c.params.get(kind)
                if name and c.keyword in (kind, owner):
                    self.sets[kind].setdefault(name.upper(), []).append(c)
        self.element_cards = [c for c in cards if c.keyword == "ELEMENT"]
        self._elements = self._element_lookup = self._nodes = None

    def _hint(self) -> str:
        if not self.includes:
            return ""
        return (f" (*INCLUDE at line(s) {self.includes} is not followed when reading "
                "surfaces; define the surface's sets and elements in the main file)")

    # --- labels -> meshio indices
    def element_labels(self) -> list[np.ndarray]:
        """Element labels of each ``*ELEMENT`` card, aligned with ``m.cells``; checked
        against meshio's block sizes (an ``*INCLUDE`` with elements breaks the match)."""
        if self._elements is None:
            theirs = [(b.type, len(b.data)) for b in self.m.cells]
            labels = []
            for c, b in zip(self.element_cards, self.m.cells):
                try:
                    ints = np.array(" ".join(t for _, t in c.data).replace(",", " ").split(),
                                    dtype=np.int64)
                except (ValueError, OverflowError):   # not integers: no match below
                    break
                if np.ndim(b.data) != 2:
                    break
                width = b.data.shape[1] + 1  # label + nodes, as meshio reads them
                if ints.size != width * len(b.data):
                    break
                labels.append(ints[::width])
            if len(labels) != len(theirs) or len(self.element_cards) != len(theirs):
                mine = [(c.params.get("TYPE"), len(c.data)) for c in self.element_cards]
                raise MeshError(
                    f"mesh '{self.src}': cannot map element labels to meshio's cells: "
                    f"expected the file's *ELEMENT blocks to match meshio's blocks "
                    f"{theirs} (type, elements), found {mine} (type, data lines)"
                    f"{self._hint()}")
            self._elements = labels
        return self._elements

    def find_elements(self, labels: np.ndarray, at: str):
        """(block, row) of every element label; MeshError naming the first unknown one."""
        if self._element_lookup is None:
            per_block = self.element_labels()
            if not per_block or not sum(len(b) for b in per_block):
                raise MeshError(f"{at}: expected *ELEMENT lines for the surface's faces, "
                                f"found no elements in '{self.src}'{self._hint()}")
            all_labels = np.concatenate(per_block)
            order = np.argsort(all_labels, kind="stable")
            block = np.repeat(np.arange(len(per_block)), [len(b) for b in per_block])
            row = np.concatenate([np.arange(len(b)) for b in per_block])
            self._element_lookup = all_labels[order], block[order], row[order]
        sorted_labels, block, row = self._element_lookup
        pos = np.minimum(np.searchsorted(sorted_labels, labels), len(sorted_labels) - 1)
        missing = sorted_labels[pos] != labels
        if missing.any():
            raise MeshError(f"{at}: element label {int(labels[missing][0])} not found; "
                            f"expected a label of an *ELEMENT line ({sorted_labels[0]}.."
                            f"{sorted_labels[-1]}){self._hint()}")
        return block[pos], row[pos]

    def find_nodes(self, labels: np.ndarray, at: str) -> np.ndarray:
        """meshio point index of every node label (points in *NODE line order)."""
        if self._nodes is None:
            rows = [t for c in self.cards if c.keyword == "NODE" for _, t in c.data]
            nodes = np.array([int(t.split(",")[0]) for t in rows], dtype=np.int64)
            if len(nodes) != len(self.m.points):
                raise MeshError(f"{at}: cannot map node labels to meshio's points: "
                                f"expected {len(self.m.points)} *NODE lines (meshio's "
                                f"points), found {len(nodes)}{self._hint()}")
            order = np.argsort(nodes, kind="stable")
            self._nodes = nodes[order], order
        sorted_labels, order = self._nodes
        pos = np.minimum(np.searchsorted(sorted_labels, labels), len(order) - 1)
        missing = sorted_labels[pos] != labels
        if missing.any():
            raise MeshError(f"{at}: node label {int(labels[missing][0])} not found; "
                            f"expected a label of a *NODE line{self._hint()}")
        return order[pos]

    # --- sets -> labels
    def members(self, kind: str, name: str, at: str, _seen=()) -> np.ndarray:
        """Labels of *ELSET or *NSET ``name`` (numbers, GENERATE ranges, nested sets,
        ``*ELEMENT, ELSET=`` / ``*NODE, NSET=``)."""
        key = name.upper()
        if key not in self.sets[kind] or key in _seen:
            known = sorted(self.sets[kind])
            what = "refers to itself" if key in _seen else "not found"
            raise MeshError(f"{at}: {'element' if kind == 'ELSET' else 'node'} set "
                            f"{name!r} {what}; expected an *{kind} name or a label, known: "
                            f"{known[:20]}{' ...' if len(known) > 20 else ''}{self._hint()}")
        out = []
        for c in self.sets[kind][key]:
            if c.keyword != kind:  # *ELEMENT, ELSET= / *NODE, NSET=
                if kind == "ELSET":
                    b = next(i for i, e in enumerate(self.element_cards) if e is c)
                    out.append(self.element_labels()[b])
                else:
                    out.append(np.array([int(t.split(",")[0]) for _, t in c.data]))
                continue
            if kind == "NSET" and "ELSET" in c.params:
                raise MeshError(f"{at}: *NSET {name!r} (line {c.line}) is made from "
                                "element sets (ELSET=), which is not supported here; "
                                "expected node labels or node set names")
            for ln, text, f in c.fields():
                here = f"mesh '{self.src}', *{kind} {name!r} (line {ln})"
                if "GENERATE" in c.params:
                    try:
                        if len(f) not in (2, 3):
                            raise ValueError(text)
                        a, b, step = (int(x) for x in (f + ["1"])[:3])
                        out.append(np.arange(a, b + 1, step))
                    except ValueError as err:
                        raise MeshError(f"{here}: expected 'first, last[, step]' with "
                                        f"GENERATE, found {text!r}") from err
                    continue
                for x in f:
                    out.append(np.array([int(x)]) if x.isdigit() else
                               self.members(kind, x, here, _seen + (key,)))
        return np.concatenate(out).astype(np.int64) if out else np.zeros(0, np.int64)


def _element_surface(inp: _Inp, card: Card, where: str) -> np.ndarray:
    """Faces (F, n_face_nodes) of an element-based surface, meshio point indices."""
    faces = []
    for ln, text, f in card.fields():
        at = f"{where} (line {ln})"
        if len(f) != 2:
            raise MeshError(f"{at}: expected 'element set or label, face identifier' "
                            f"(e.g. 'HOLE_A_S1, S1'), found {text!r}"
                            + (" (faces without identifier are not supported)"
                               if len(f) == 1 else ""))
        target, face = f
        labels = (np.array([int(target)]) if target.isdigit()
                  else np.unique(inp.members("ELSET", target, at)))
        if labels.size == 0:
            raise MeshError(f"{at}: element set {target!r} is empty; expected elements")
        block, row = inp.find_elements(labels, at)
        k = _FACE_ID.fullmatch(face)
        for b in np.unique(block):
            cells = inp.m.cells[b]
            etype = inp.element_cards[b].params.get("TYPE")
            sel = block == b
            if cells.type not in FACE_NODES:
                raise MeshError(f"{at}: element {int(labels[sel][0])} is a {etype} "
                                f"(meshio {cells.type!r}); expected C3D4, C3D10, C3D8, "
                                f"C3D20 or C3D6 elements for a surface")
            table = FACE_NODES[cells.type]
            if k is None or int(k.group(1)) > len(table):
                raise MeshError(f"{at}: face identifier {face!r} is not valid for "
                                f"{etype} elements (element {int(labels[sel][0])}); "
                                f"expected one of S1..S{len(table)}")
            faces.append(cells.data[row[sel]][:, table[int(k.group(1)) - 1]])
    if not faces:
        raise MeshError(f"{where} (line {card.line}): no data lines; expected "
                        "'element set or label, face identifier' lines")
    if len({f.shape[1] for f in faces}) > 1:
        raise MeshError(f"{where}: mixes faces with {sorted({f.shape[1] for f in faces})} "
                        "nodes; expected one element type")
    faces = np.concatenate(faces).astype(np.int64)
    _, first = np.unique(np.sort(faces, axis=1), axis=0, return_index=True)
    return faces[np.sort(first)]  # a face listed twice counts once


def _node_surface(inp: _Inp, card: Card, where: str) -> np.ndarray:
    """Sorted meshio point indices of a node-based surface."""
    nodes = []
    for ln, text, f in card.fields():
        at = f"{where} (line {ln})"
        if len(f) not in (1, 2):
            raise MeshError(f"{at}: expected 'node set or label[, weight]', found {text!r}")
        if len(f) == 2:
            try:
                float(f[1])
            except ValueError as err:
                raise MeshError(f"{at}: expected a number as weight, found {f[1]!r}") \
                    from err
        labels = (np.array([int(f[0])]) if f[0].isdigit()
                  else inp.members("NSET", f[0], at))
        nodes.append(inp.find_nodes(labels, at))
    if not nodes or not sum(len(n) for n in nodes):
        raise MeshError(f"{where} (line {card.line}): no nodes; expected "
                        "'node set or label[, weight]' lines")
    return np.unique(np.concatenate(nodes)).astype(np.int64)


def read_surfaces(path: str | Path, m: meshio.Mesh) -> AbaqusSurfaces:
    """Element- and node-based ``*SURFACE`` s of ``path`` as facet and node sets in the
    point numbering of ``m`` (the meshio mesh read from the same file).

    Raises
    ------
    MeshError
        naming the file, surface and line: unknown element/node set or label, face
        identifier not valid for the element type, unsupported surface type.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    if not _HAS_SURFACE.search(text):
        return AbaqusSurfaces()
    inp = _Inp(path, keyword_cards(text), m)
    facet_sets, node_sets, lines = {}, {}, {}
    for card in inp.cards:
        if card.keyword != "SURFACE":
            continue
        name = card.params.get("NAME")
        if not name:
            raise MeshError(f"mesh '{path}': *SURFACE at line {card.line} has no NAME; "
                            "expected *SURFACE, NAME=..., TYPE=ELEMENT or NODE")
        where = f"mesh '{path}', *SURFACE {name!r}"
        if name.upper() in lines:
            raise MeshError(f"{where} (line {card.line}): defined twice; expected one "
                            f"definition, the first at line {lines[name.upper()]}")
        lines[name.upper()] = card.line
        kind = (card.params.get("TYPE") or "ELEMENT").upper()
        unsupported = [p for p in ("COMBINE",) if p in card.params]
        if kind not in ("ELEMENT", "NODE") or unsupported:
            found = f"{unsupported[0]}=" if unsupported else f"TYPE={kind}"
            raise MeshError(f"{where} (line {card.line}): unsupported surface {found}; "
                            "expected TYPE=ELEMENT (element faces) or TYPE=NODE")
        if kind == "ELEMENT":
            facet_sets[name] = _element_surface(inp, card, where)
            node_sets[name] = np.unique(facet_sets[name])
        else:
            node_sets[name] = _node_surface(inp, card, where)
        nset = (m.point_sets or {}).get(name)
        if name in (m.cell_sets or {}) or (
                nset is not None and not np.array_equal(np.unique(nset), node_sets[name])):
            logger.warning("%s: an *NSET or *ELSET has the same name; node_sets[%r] "
                           "holds the surface's nodes", where, name)
    return AbaqusSurfaces(facet_sets, node_sets)


def node_labels(path: str | Path) -> np.ndarray:
    """The node labels of the ``*NODE`` lines of an input file, in file order (the order
    of meshio's points)."""
    cards = keyword_cards(Path(path).read_text(encoding="utf-8", errors="replace"))
    rows = [t for c in cards if c.keyword == "NODE" for _, t in c.data]
    try:
        return np.array([int(t.split(",")[0]) for t in rows], dtype=np.int64)
    except ValueError as exc:
        raise MeshError(f"mesh '{path}': expected integer node labels on the *NODE lines "
                        f"({exc})") from None
