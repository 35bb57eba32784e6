"""Abaqus ``*SURFACE`` input (flexmbs.io.abaqus_surface through read_mesh).

References: the element faces lying on a plane or cylinder, selected geometrically from
the coordinates; the analytic face area and centroid; the facet sets gmsh writes for
the same faces (``.msh`` physical groups); the face listing of the Abaqus manual,
copied here as text.
"""
from __future__ import annotations

import re
from pathlib import Path

import meshio
import numpy as np
import pytest

from flexmbs.errors import MeshError
from flexmbs.io.mesh import read_mesh
from flexmbs.reduction.interfaces import InterfaceSpec, resolve_interface
from flexmbs.reduction.loads import face_integrals

MESHES = Path(__file__).resolve().parents[2] / "meshes"
ABAQUS_TYPE = {"tetra": "C3D4", "tetra10": "C3D10", "hexahedron": "C3D8"}
#: Abaqus Analysis User's Guide, solid element library, face numbering (corner nodes)
MANUAL = {"tet": ["1-2-3", "1-4-2", "2-4-3", "3-4-1"],
          "hex": ["1-2-3-4", "5-8-7-6", "1-5-6-2", "2-6-7-3", "3-7-8-4", "4-8-5-1"]}


def _corners(mtype: str) -> int:
    return 4 if mtype.startswith("tetra") else 8


def _manual_faces(mtype: str) -> list[list[int]]:
    return [[int(i) - 1 for i in f.split("-")]
            for f in MANUAL["tet" if mtype.startswith("tetra") else "hex"]]


def _labels(n_points: int, n_cells: int, seed: int):
    """Node and element labels with gaps, in shuffled order."""
    rng = np.random.default_rng(seed)
    return 1000 + 3 * rng.permutation(n_points), 7 + 5 * rng.permutation(n_cells), \
        rng.permutation(n_points)


def _inp(points, cells, mtype, tail: list[str], seed: int = 0):
    """.inp text with shuffled node order, labels with gaps, two *ELEMENT blocks and
    element lines continued after 8 entries; returns (text, node_label, elem_label)."""
    node_label, elem_label, order = _labels(len(points), len(cells), seed)
    lines = ["*Heading", "flexmbs test mesh", "** nodes shuffled", "*node"]
    lines += [f"{node_label[i]}, " + ", ".join(f"{x:.17g}" for x in points[i])
              for i in order]
    half = max(1, len(cells) // 2)
    for part, rows in enumerate((range(half), range(half, len(cells)))):
        if not len(rows):
            continue
        lines.append(f"*Element, type={ABAQUS_TYPE[mtype]}, ELSET=PART{part}")
        for e in rows:
            ids = [str(elem_label[e])] + [str(node_label[n]) for n in cells[e]]
            lines.append(", ".join(ids[:8]) + ("," if len(ids) > 8 else ""))
            if len(ids) > 8:
                lines.append(", ".join(ids[8:]))
    return "\n".join(lines + tail) + "\n", node_label, elem_label


def _select(points, cells, mtype, on) -> dict[int, list[int]]:
    """Element faces with all corners on a surface (``on(x) -> bool``): face id k (from
    the manual's listing) -> element indices."""
    by_face: dict[int, list[int]] = {}
    for e, cell in enumerate(cells):
        corners = cell[:_corners(mtype)]
        hit = set(np.flatnonzero(on(points[corners])))
        if len(hit) < (3 if mtype.startswith("tetra") else 4):
            continue
        k = next(k for k, f in enumerate(_manual_faces(mtype)) if set(f) == hit)
        by_face.setdefault(k + 1, []).append(e)
    return by_face


def _surface_text(name, by_face, elem_label) -> list[str]:
    """*ELSET per face id and an element-based *SURFACE; the first face by label."""
    lines, data = [], []
    for k, elems in sorted(by_face.items()):
        labels = [str(elem_label[e]) for e in elems]
        if not data:  # one face given by its element label
            data.append(f"{labels.pop(0)}, S{k}")
        if labels:
            lines.append(f"*ELSET, ELSET={name}_S{k}")
            lines += [", ".join(labels[i:i + 8]) + "," for i in range(0, len(labels), 8)]
            data.append(f"{name.lower()}_s{k}, s{k}")  # names are case-insensitive
    return lines + ["*Surface, type=ELEMENT,", f"  name={name}",
                    "** comment inside the surface block"] + data


def _canonical(points, faces) -> list[tuple]:
    """Faces as coordinate tuples, rotated to start at the smallest corner (the mid-side
    nodes of triangle6 rotated with their edges)."""
    out = []
    for f in faces:
        nc = 4 if len(f) == 4 else 3
        xyz = [tuple(points[i]) for i in f]
        r = min(range(nc), key=lambda i: xyz[i])
        c = xyz[:nc][r:] + xyz[:nc][:r]
        m = xyz[nc:][r:] + xyz[nc:][:r]
        out.append(tuple(c + m))
    return sorted(out)


def _gmsh_box(path: Path, order: int, origin, size) -> None:
    """Unstructured gmsh box with the physical surface "tip" at x = x_max."""
    gmsh = pytest.importorskip("gmsh")
    gmsh.initialize(["-noenv"], readConfigFiles=False)
    try:
        for k, v in (("General.Terminal", 0), ("General.NumThreads", 1),
                     ("Mesh.RandomSeed", 1.0), ("Mesh.MeshSizeMax", 0.045),
                     ("Mesh.ElementOrder", order), ("Mesh.MshFileVersion", 4.1)):
            gmsh.option.setNumber(k, v)
        vol = gmsh.model.occ.addBox(*origin, *size)
        gmsh.model.occ.synchronize()
        xmax = origin[0] + size[0]
        tip = [s for _, s in gmsh.model.getEntities(2)
               if abs(gmsh.model.occ.getCenterOfMass(2, s)[0] - xmax) < 1e-9]
        gmsh.model.addPhysicalGroup(2, tip, name="tip")
        gmsh.model.addPhysicalGroup(3, [vol], name="volume")
        gmsh.model.mesh.generate(3)
        gmsh.write(str(path))
    finally:
        gmsh.finalize()


def _volume(m: meshio.Mesh):
    block = next(c for c in m.cells if c.type in ABAQUS_TYPE)
    return block.type, block.data


BOX = ((0.1, -0.1, 0.02), (0.5, 0.2, 0.1))  # origin, size [m]
CASES = {  # name -> (group, surface test on the corner coordinates)
    "box_tet4": ("tip", lambda x: np.isclose(x[:, 0], 0.6, atol=1e-9)),
    "box_tet10": ("tip", lambda x: np.isclose(x[:, 0], 0.6, atol=1e-9)),
    "beam_hex8_20x2x2": ("tip", lambda x: np.isclose(x[:, 0], 1.0, atol=1e-9)),
    "conrod_tet10": ("hole_A", lambda x: np.isclose(np.hypot(x[:, 0], x[:, 1]), 0.01,
                                                    rtol=1e-6)),
}


@pytest.fixture(scope="module", params=list(CASES))
def pair(request, tmp_path_factory):
    """(mesh from .msh, the same mesh from .inp with ``*SURFACE, NAME=<GROUP>``, group,
    surface name, surface test, selected elements by face id, raw meshio mesh)."""
    name = request.param
    tmp = tmp_path_factory.mktemp(name)
    if name.startswith("box"):
        msh = tmp / f"{name}.msh"
        _gmsh_box(msh, 2 if name.endswith("10") else 1, *BOX)
    else:
        msh = MESHES / f"{name}.msh"
    group, on = CASES[name]
    raw = meshio.read(msh)
    mtype, cells = _volume(raw)
    by_face = _select(raw.points, cells, mtype, on)
    surface = group.upper()
    _, elem_label, _ = _labels(len(raw.points), len(cells), seed=len(name))
    text, _, _ = _inp(raw.points, cells, mtype, _surface_text(surface, by_face, elem_label),
                      seed=len(name))
    inp = tmp / f"{name}.inp"
    inp.write_text(text)
    return read_mesh(msh), read_mesh(inp), group, surface, on, by_face, raw


def test_facets_are_the_faces_on_the_surface(pair):
    """Every facet is an element face with all nodes on the selected plane/cylinder, and
    the facet corners are exactly the geometric selection."""
    gm, am, group, surface, on, by_face, raw = pair
    mtype, cells = _volume(raw)
    facets = am.facet_sets[surface]
    assert len(facets) == sum(len(v) for v in by_face.values())
    nc = 3 if mtype.startswith("tetra") else 4
    got = sorted(tuple(sorted(map(tuple, am.points[f[:nc]]))) for f in facets)
    ref = []
    for e in (e for es in by_face.values() for e in es):
        x = raw.points[cells[e, :_corners(mtype)]]
        ref.append(tuple(sorted(map(tuple, x[on(x)]))))
    assert got == sorted(ref)
    assert on(am.points[facets.ravel()]).all()  # mid-side nodes too
    # node set: every node of those faces (corners and mid-side) = every node on it
    assert np.array_equal(am.node_sets[surface], np.unique(facets))
    assert np.array_equal(am.node_sets[surface], np.flatnonzero(on(am.points)))


def test_same_facets_layout_and_orientation_as_gmsh(pair):
    """The facet set from .inp equals gmsh's physical group: same faces, same node
    layout (triangle6 mid-side order), same (outward) orientation, same node set."""
    gm, am, group, surface, *_ = pair
    assert am.facet_sets[surface].shape[1] == gm.facet_sets[group].shape[1]
    assert _canonical(am.points, am.facet_sets[surface]) == \
        _canonical(gm.points, gm.facet_sets[group])
    assert sorted(map(tuple, am.points[am.node_sets[surface]])) == \
        sorted(map(tuple, gm.points[gm.node_sets[group]]))


def test_area_normal_and_rbe3_reference_point(pair):
    """Plane faces: int n dA = A e_x with A = b h (analytic); RBE3 with area weights has
    its reference point at the face centroid; weights equal those on the gmsh mesh."""
    gm, am, group, surface, *_ = pair
    dofs = np.arange(3 * am.n_nodes).reshape(-1, 3)
    itf = resolve_interface(InterfaceSpec(surface, kind="rbe3"), am, dofs)
    ref = resolve_interface(InterfaceSpec(group, kind="rbe3"), gm,
                            np.arange(3 * gm.n_nodes).reshape(-1, 3))
    np.testing.assert_allclose(itf.R, ref.R, rtol=0, atol=1e-14)
    w_ref = dict(zip(map(tuple, gm.points[ref.nodes]), ref.weights))
    np.testing.assert_allclose(itf.weights, [w_ref[tuple(x)] for x in am.points[itf.nodes]],
                               rtol=1e-12)
    if group == "hole_A":  # pin hole: reference point on the axis within the mesh's chord
        assert np.hypot(*itf.R[:2]) < 1e-4 and itf.R[2] == pytest.approx(0.005, abs=1e-4)
        return
    p = am.points
    (x0, y0, z0), (lx, ly, lz) = ((0, 0, 0), (1.0, 0.1, 0.1)) if "beam" in gm.source \
        else BOX
    F = face_integrals(surface, am.facet_sets[surface], p, np.zeros((len(p), 3, 0)))
    np.testing.assert_allclose(F.F_n, [ly * lz, 0.0, 0.0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(itf.R, [x0 + lx, y0 + ly / 2, z0 + lz / 2], atol=1e-14)


@pytest.mark.parametrize("mtype", ["tetra", "tetra10", "hexahedron"])
def test_single_element_faces_follow_the_manual(tmp_path, mtype):
    """Unit element, every face: corners as listed in the Abaqus manual, normal out of
    the element (int n dA points away from the centre; the closed surface sums to 0),
    area 1/2 or sqrt(3)/2 (tet) and 1 (hex), tet10 mid-side nodes on edges ab, bc, ca."""
    if mtype.startswith("tetra"):
        P = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
        edges = [(0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)]
        if mtype == "tetra10":
            P = np.vstack([P] + [(P[a] + P[b]) / 2 for a, b in edges])
    else:
        P = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                      [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1.0]])
    n_faces = len(_manual_faces(mtype))
    tail = []
    for k in range(1, n_faces + 1):
        tail += [f"*SURFACE, NAME=F{k}", f"7, S{k}"]
    text, _, _ = _inp(P, np.arange(len(P))[None], mtype, tail)
    path = tmp_path / "one.inp"
    path.write_text(text)
    mesh = read_mesh(path)
    idx = {tuple(x): i for i, x in enumerate(P)}
    total = np.zeros(3)
    for k, corners in enumerate(_manual_faces(mtype), start=1):
        f = mesh.facet_sets[f"F{k}"]
        assert f.shape == (1, {"tetra": 3, "tetra10": 6, "hexahedron": 4}[mtype])
        nodes = [idx[tuple(mesh.points[i])] for i in f[0]]
        nc = 4 if mtype == "hexahedron" else 3
        assert set(nodes[:nc]) == set(corners)
        for j in range(nc, len(nodes)):  # mid-side node of corner edge (j, j+1)
            a, b = nodes[j - nc], nodes[(j - nc + 1) % nc]
            np.testing.assert_allclose(P[nodes[j]], (P[a] + P[b]) / 2)
        F_n = face_integrals("f", f, mesh.points, np.zeros((len(P), 3, 0))).F_n
        out = mesh.points[f[0]].mean(0) - P[:_corners(mtype)].mean(0)
        assert F_n @ out > 0
        area = np.linalg.norm(F_n)
        assert area == pytest.approx(1.0 if nc == 4 else
                                     (np.sqrt(3) / 2 if set(corners) == {1, 2, 3} else 0.5))
        total += F_n
    np.testing.assert_allclose(total, 0.0, atol=1e-14)


CAE = """*Heading
** Abaqus/CAE layout: one part, one instance, surface sets in the assembly
*Part, name=Part-1
*Node
      1,           1.,           1.,           1.
      2,           1.,           0.,           1.
      3,           1.,           1.,           0.
      4,           1.,           0.,           0.
      5,           0.,           1.,           1.
      6,           0.,           0.,           1.
      7,           0.,           1.,           0.
      8,           0.,           0.,           0.
*Element, type=C3D8
1, 5, 6, 8, 7, 1, 2, 4, 3
*End Part
*Assembly, name=Assembly
*Instance, name=Part-1-1, part=Part-1
*End Instance
*Elset, elset=_Surf-1_S2, internal, instance=Part-1-1
 1,
*Elset, elset=_Surf-1_S1, internal, instance=Part-1-1, generate
 1, 1, 1
*Surface, type=ELEMENT, name=Surf-1
_Surf-1_S2, S2
_Surf-1_S1, S1
*End Assembly
"""


def test_abaqus_cae_layout(tmp_path):
    """A one-instance Abaqus/CAE file: S2 (nodes 5-8 = file nodes 1, 2, 4, 3) is the face
    x = 1, S1 (file nodes 5, 6, 8, 7) the face x = 0, both with outward normal."""
    path = tmp_path / "cae.inp"
    path.write_text(CAE)
    mesh = read_mesh(path)
    f = mesh.facet_sets["Surf-1"]
    assert f.shape == (2, 4)
    for face, x, n in ((f[:1], 1.0, [1.0, 0, 0]), (f[1:], 0.0, [-1.0, 0, 0])):
        np.testing.assert_array_equal(mesh.points[face[0], 0], x)
        F = face_integrals("f", face, mesh.points, np.zeros((8, 3, 0)))
        np.testing.assert_allclose(F.F_n, n, atol=1e-15)


def _one_tet(tmp_path, tail: list[str], name="bad.inp") -> Path:
    P = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    text, _, _ = _inp(P, np.array([[0, 1, 2, 3]]), "tetra", tail)
    path = tmp_path / name
    path.write_text(text)
    return path


def test_node_surface_and_shared_names(tmp_path, caplog):
    """TYPE=NODE: NSET (with GENERATE and nested sets) and labels give the node set;
    a surface named like an *ELSET keeps the cell set and owns the node set."""
    P = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    text, node_label, elem_label = _inp(P, np.array([[0, 1, 2, 3]]), "tetra", [])
    a, b = sorted(node_label[[0, 1]])
    text += "\n".join([
        "*NSET, NSET=BASE, GENERATE", f"{a}, {b}, {b - a}",
        "*Nset, nset=more", "base", f"{node_label[2]}",
        "*SURFACE, NAME=PTS, TYPE=NODE", "MORE, 1.0", f"{node_label[3]}, 2.5",
        "*ELSET, ELSET=HOLE", f"{elem_label[0]}",
        "*SURFACE, NAME=HOLE", "HOLE, S1"]) + "\n"
    path = tmp_path / "nodes.inp"
    path.write_text(text)
    with caplog.at_level("WARNING", logger="flexmbs.io.abaqus_surface"):
        mesh = read_mesh(path)
    assert "*SURFACE 'HOLE': an *NSET or *ELSET has the same name" in caplog.text
    assert sorted(map(tuple, mesh.points[mesh.node_sets["PTS"]])) == sorted(map(tuple, P))
    assert "PTS" not in mesh.facet_sets
    np.testing.assert_array_equal(mesh.cell_sets["HOLE"], [0])
    hole = mesh.points[mesh.node_sets["HOLE"]]
    np.testing.assert_array_equal(np.sort(hole[:, 2]), [0, 0, 0])  # S1 = nodes 1-2-3: z = 0


def _line(path: Path, pattern: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1)
                if re.fullmatch(pattern, t))


@pytest.mark.parametrize("tail, bad, message", [
    (["*SURFACE, NAME=HOLE_A", "NOPE_S1, S1"], "NOPE_S1, S1",
     r"element set 'NOPE_S1' not found; expected an \*ELSET name or a label, known: "
     r"\['PART0'\]"),
    (["*SURFACE, NAME=HOLE_A", "12345, S1"], "12345, S1",
     r"element label 12345 not found; expected a label of an \*ELEMENT line"),
    (["*SURFACE, NAME=HOLE_A", "PART0, S5"], "PART0, S5",
     r"face identifier 'S5' is not valid for C3D4 elements .element 7.; "
     r"expected one of S1..S4"),
    (["*SURFACE, NAME=HOLE_A", "PART0, SPOS"], "PART0, SPOS",
     r"face identifier 'SPOS' is not valid for C3D4"),
    (["*SURFACE, NAME=HOLE_A", "PART0"], "PART0",
     r"expected 'element set or label, face identifier'.*found 'PART0'.*without"),
    (["*SURFACE, NAME=HOLE_A, TYPE=SEGMENTS", "START, 0., 0."],
     r"\*SURFACE, NAME=HOLE_A, TYPE=SEGMENTS",
     r"unsupported surface TYPE=SEGMENTS; expected TYPE=ELEMENT .element faces. or "
     r"TYPE=NODE"),
    (["*SURFACE, NAME=HOLE_A, TYPE=NODE", "NOPE"], "NOPE",
     r"node set 'NOPE' not found; expected an \*NSET name"),
    (["*SURFACE, NAME=HOLE_A, TYPE=NODE", "99, 1.0"], "99, 1.0",
     r"node label 99 not found"),
    (["*INCLUDE, INPUT=sets.inp", "*SURFACE, NAME=HOLE_A", "HOLE_A_S2, S2"],
     "HOLE_A_S2, S2", r"not found.*\*INCLUDE at line\(s\) \[\d+\] is not followed"),
])
def test_errors_name_file_surface_line(tmp_path, tail, bad, message):
    if any("INCLUDE" in t for t in tail):
        (tmp_path / "sets.inp").write_text("*ELSET, ELSET=HOLE_A_S2\n7\n")
    path = _one_tet(tmp_path, tail)
    line = _line(path, bad)
    with pytest.raises(MeshError) as err:
        read_mesh(path)
    text = str(err.value)
    assert text.startswith(f"mesh '{path}', *SURFACE 'HOLE_A' (line {line}): "), text
    assert re.search(message, text), text


def test_errors_of_the_file_structure(tmp_path):
    """No NAME, a surface defined twice, and a comment inside *ELEMENT data (meshio
    stops reading the block there, so labels cannot be mapped)."""
    with pytest.raises(MeshError, match=r"bad.inp': \*SURFACE at line \d+ has no NAME"):
        read_mesh(_one_tet(tmp_path, ["*SURFACE, TYPE=ELEMENT", "PART0, S1"]))
    path = _one_tet(tmp_path, ["*SURFACE, NAME=A", "PART0, S1", "*surface, name=a",
                               "PART0, S2"], "twice.inp")
    with pytest.raises(MeshError, match=r"\*SURFACE 'a' \(line \d+\): defined twice.*"
                                        r"first at line \d+"):
        read_mesh(path)
    P = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0], [1, 1, 1.0]])
    cells = np.array([[0, 1, 2, 3], [1, 2, 3, 4], [0, 1, 2, 4]])  # all right-handed
    text, _, _ = _inp(P, cells, "tetra", ["*SURFACE, NAME=A", "PART1, S1"])
    first = text.index("\n", text.index("ELSET=PART1")) + 1
    second = text.index("\n", first) + 1
    path = tmp_path / "comment.inp"
    path.write_text(text[:second] + "** a comment inside the element data\n" + text[second:])
    if len(meshio.read(path).cells[1].data) == 2:
        pytest.skip("this meshio reads past comments inside *ELEMENT data")
    with pytest.raises(MeshError, match=r"cannot map element labels to meshio's cells: "
                                        r"expected .*\('tetra', 1\)\].*found"):
        read_mesh(path)


C3D20_EDGES = ((0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
               (0, 4), (1, 5), (2, 6), (3, 7))   # mid-side nodes 9..20 of the manual
UNIT_HEX = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1.0]])
UNIT_WEDGE = UNIT_HEX[[0, 1, 3, 4, 5, 7]]           # half cube below the plane x + y = 1


@pytest.mark.parametrize("abaqus_type", ["C3D20", "C3D6"])
def test_c3d20_and_c3d6_faces(tmp_path, abaqus_type):
    """Each face S1..S6 (C3D20) or S1..S5 (C3D6) of one element (unit cube; half cube
    below x + y = 1): int n dA equals the vector area of its corner polygon (Newell's
    formula) and points away from the element's centre; the faces close (sum 0); C3D20
    faces are quad8 with their mid-side nodes at the edge midpoints."""
    if abaqus_type == "C3D20":
        X = np.vstack([UNIT_HEX] + [0.5 * (UNIT_HEX[a] + UNIT_HEX[b]) for a, b in C3D20_EDGES])
        centre = np.full(3, 0.5)
        n_faces = 6
    else:
        X, centre, n_faces = UNIT_WEDGE, np.array([1 / 3, 1 / 3, 0.5]), 5
    lines = ["*NODE"] + [f"{i + 1}, {x}, {y}, {z}" for i, (x, y, z) in enumerate(X)]
    lines += [f"*ELEMENT, TYPE={abaqus_type}, ELSET=ALL",
              "1, " + ", ".join(str(i + 1) for i in range(len(X)))]
    for k in range(1, n_faces + 1):
        lines += [f"*SURFACE, NAME=F{k}, TYPE=ELEMENT", f"ALL, S{k}"]
    path = tmp_path / "one.inp"
    path.write_text("\n".join(lines) + "\n")
    mesh = read_mesh(path)
    total = np.zeros(3)
    for k in range(1, n_faces + 1):
        f = mesh.facet_set(f"F{k}")
        x = mesh.points[f[0]]
        fi = face_integrals(f"F{k}", f, mesh.points, np.zeros((len(mesh.points), 3, 1)))
        c = x[:3] if f.shape[1] == 3 else x[:4]                    # corners, in order
        newell = 0.5 * sum(np.cross(c[i], c[(i + 1) % len(c)]) for i in range(len(c)))
        np.testing.assert_allclose(fi.F_n, newell, atol=1e-14)     # vector area
        assert fi.F_n @ (fi.X_c - centre) > 0                      # points out
        if abaqus_type == "C3D20":
            assert f.shape[1] == 8
            np.testing.assert_allclose(x[4:], 0.5 * (x[:4] + np.roll(x[:4], -1, axis=0)))
        total += fi.F_n
    np.testing.assert_allclose(total, 0.0, atol=1e-14)          # closed surface
