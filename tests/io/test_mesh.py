"""Mesh reading and validation (flexmbs.io.mesh)."""
from __future__ import annotations

import logging
from pathlib import Path

import meshio
import numpy as np
import pytest

from flexmbs.errors import MeshError
from flexmbs.io.mesh import Mesh, mesh_from_meshio, read_mesh

MESHES = Path(__file__).resolve().parents[2] / "meshes"

# one unit tetrahedron (right-handed in VTK order) and one unit hexahedron
TET_P = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
HEX_P = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                  [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1.0]])


def _write(tmp_path, name, points, cells, **kw) -> Path:
    path = tmp_path / name
    meshio.write(path, meshio.Mesh(points, cells, **kw))
    return path


@pytest.mark.parametrize("name, cell_type, groups", [
    ("beam_hex27_20x2x2.msh", "hex27", {"clamp", "tip", "volume"}),
    ("beam_tet10_20x2x2.msh", "tet10", {"clamp", "tip", "volume"}),
    ("beam_hex8_20x2x2.msh", "hex8", {"clamp", "tip", "volume"}),
    ("beam_tet4_20x2x2.msh", "tet4", {"clamp", "tip", "volume"}),
    ("beam_hex20_20x2x2.msh", "hex20", {"clamp", "tip", "volume"}),
    ("beam_wedge6_80x8x8.msh", "wedge6", {"clamp", "tip", "volume"}),
    ("pendulum_hex27_25x1x1.msh", "hex27", {"pin", "tip", "volume"}),
    ("kane_hex27_40x1x1.msh", "hex27", {"clamp", "tip", "volume"}),
    ("conrod_tet10.msh", "tet10", {"hole_A", "hole_B", "volume"}),
])
def test_shipped_meshes(name, cell_type, groups):
    """Every shipped mesh reads, has its physical groups and lies where it was drawn."""
    mesh = read_mesh(MESHES / name)
    assert mesh.cell_type == cell_type
    assert groups <= set(mesh.node_sets)
    faces = groups - {"volume"}
    assert faces <= set(mesh.facet_sets)
    for g in faces:  # facet-set nodes are exactly the node set of a 2D group
        assert np.array_equal(np.unique(mesh.facet_sets[g]), mesh.node_sets[g])
    if name.startswith(("beam", "pendulum", "kane")):
        L = mesh.points[:, 0].max()
        end = "pin" if "pin" in groups else "clamp"
        assert np.allclose(mesh.points[mesh.node_set(end), 0], 0.0)
        assert np.allclose(mesh.points[mesh.node_set("tip"), 0], L)
    else:  # conrod holes: radius 0.01 about (0, 0) and (0.4, 0)
        for g, xc in (("hole_A", 0.0), ("hole_B", 0.4)):
            p = mesh.points[mesh.node_set(g)]
            assert np.allclose(np.hypot(p[:, 0] - xc, p[:, 1]), 0.01, rtol=1e-6)
        assert mesh.n_nodes < 3000


def test_kane_section():
    """Kane et al. (1987) beam: A = 7.2968e-5 m^2 and I = 8.2189e-9 m^4 of the mesh box."""
    p = read_mesh(MESHES / "kane_hex27_40x1x1.msh").points
    L, h, b = p.max(0) - p.min(0)
    assert L == pytest.approx(8.0)
    assert b * h == pytest.approx(7.2968e-5, rel=1e-6)
    assert b * h ** 3 / 12 == pytest.approx(8.2189e-9, rel=1e-6)


def test_scale_and_formats(tmp_path):
    """The same mesh through .msh, .vtu and Abaqus .inp; scale converts mm to m."""
    ref = read_mesh(MESHES / "beam_hex8_10x1x1.msh")
    for ext in ("vtu", "inp"):
        path = tmp_path / f"beam.{ext}"
        # meshio's VTU writer moves point_sets into point_data: a fresh Mesh per format
        meshio.write(path, meshio.Mesh(ref.points * 1000.0, [("hexahedron", ref.cells)],
                                       point_sets={"clamp": ref.node_set("clamp")}))
        if ext == "inp":   # meshio writes hexahedra as C3D8RH (hybrid, refused): C3D8
            path.write_text(path.read_text().replace("C3D8RH", "C3D8"))
        got = read_mesh(path, scale=1e-3)
        assert got.scale == 1e-3
        np.testing.assert_allclose(got.points, ref.points, atol=1e-12)
        assert np.array_equal(got.cells, ref.cells)
        if ext == "inp":
            assert np.array_equal(got.node_set("clamp"), ref.node_set("clamp"))


def test_node_set_missing_lists_names():
    mesh = read_mesh(MESHES / "beam_hex8_10x1x1.msh")
    with pytest.raises(MeshError, match=r"no node set named 'hole_C'.*clamp.*tip"):
        mesh.node_set("hole_C")


def test_missing_and_unreadable_file(tmp_path):
    with pytest.raises(MeshError, match="does not exist"):
        read_mesh(tmp_path / "nothing.msh")
    bad = tmp_path / "garbage.msh"
    bad.write_text("this is not a mesh\n")
    with pytest.raises(MeshError, match="could not be read"):
        read_mesh(bad)


def test_inverted_element(tmp_path):
    path = _write(tmp_path, "inv.vtu", TET_P, [("tetra", np.array([[0, 2, 1, 3]]))])
    with pytest.raises(MeshError, match=r"inverted.*negative Jacobian"):
        read_mesh(path)
    path = _write(tmp_path, "invhex.vtu", HEX_P, [("hexahedron", np.array([[4, 5, 6, 7,
                                                                            0, 1, 2, 3]]))])
    with pytest.raises(MeshError, match="inverted"):
        read_mesh(path)


def test_right_handed_elements_accepted(tmp_path):
    """Sanity check of the orientation sign: VTK-ordered unit elements are valid."""
    for cells in ([("tetra", np.array([[0, 1, 2, 3]]))],):
        read_mesh(_write(tmp_path, "tet.vtu", TET_P, cells))
    read_mesh(_write(tmp_path, "hex.vtu", HEX_P, [("hexahedron", np.arange(8)[None])]))


def test_zero_volume(tmp_path):
    p = TET_P.copy()
    p[3] = [0.5, 0.5, 0.0]  # flat tetrahedron
    with pytest.raises(MeshError, match="degenerate .zero-volume"):
        read_mesh(_write(tmp_path, "flat.vtu", p, [("tetra", np.array([[0, 1, 2, 3]]))]))


def test_duplicate_node(tmp_path):
    p = np.vstack([TET_P, TET_P[1] + [0.0, 0.0, 1e-15], [[1.0, 1.0, 1.0]]])
    cells = np.array([[0, 1, 2, 3], [4, 5, 2, 3]])
    with pytest.raises(MeshError, match=r"coincident nodes.*nodes 1 and 4"):
        read_mesh(_write(tmp_path, "dup.vtu", p, [("tetra", cells)]))


WEDGE_P = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1.0]])


@pytest.mark.parametrize("meshio_type, name, k", [
    ("pyramid", "pyramid5", 5), ("wedge18", "wedge18", 18), ("tetra20", "tet20", 20)])
def test_elements_missing_in_skfem_refused(tmp_path, meshio_type, name, k):
    """Kinds scikit-fem has no element for are refused in one line naming them (meshio
    itself cannot hold wedge15 and pyramid13 cells; Abaqus's C3D15 is refused by its
    own name, tests/io/test_abaqus_deck.py)."""
    rng = np.random.default_rng(0)
    m = meshio.Mesh(rng.random((k, 3)), [(meshio_type, np.arange(k)[None])])
    with pytest.raises(MeshError) as err:
        mesh_from_meshio(m, source="part.inp")
    msg = str(err.value)
    assert "\n" not in msg
    assert f"element type {name} is not supported: not provided by scikit-fem" in msg
    assert msg.startswith("mesh 'part.inp'")


def test_unsupported_elements(tmp_path):
    wedge = read_mesh(_write(tmp_path, "wedge.vtu", WEDGE_P, [("wedge", np.arange(6)[None])]))
    assert wedge.cell_type == "wedge6"       # VTK's wedge order is converted by meshio
    with pytest.raises(MeshError, match=r"expected 3D cells.*found only \['triangle'\]"):
        read_mesh(_write(tmp_path, "tri.vtu", TET_P, [("triangle", np.array([[0, 1, 2]]))]))
    with pytest.raises(MeshError, match="single volume element type"):
        pts = np.vstack([HEX_P, [[0.5, 0.5, 2.0]]])
        read_mesh(_write(tmp_path, "mixed.vtu", pts, [("hexahedron", np.arange(8)[None]),
                                                       ("tetra", np.array([[4, 5, 6, 8]]))]))


def test_unused_nodes_dropped_and_sets_remapped(tmp_path, caplog):
    p = np.vstack([[[5.0, 5.0, 5.0]], TET_P])  # node 0 unused
    path = tmp_path / "unused.inp"
    meshio.write(path, meshio.Mesh(p, [("tetra", np.array([[1, 2, 3, 4]]))],
                                   point_sets={"top": np.array([0, 4])}))
    with caplog.at_level(logging.WARNING, logger="flexmbs.io.mesh"):
        mesh = read_mesh(path)
    assert "dropping 1 node" in caplog.text
    assert mesh.n_nodes == 4
    np.testing.assert_array_equal(mesh.points, TET_P)
    np.testing.assert_array_equal(mesh.node_set("top"), [3])


def test_mesh_is_frozen_and_moves_rigidly():
    mesh = read_mesh(MESHES / "beam_tet4_10x1x1.msh")
    with pytest.raises(ValueError):
        mesh.points[0, 0] = 1.0
    c, s = np.cos(0.3), np.sin(0.3)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    moved = mesh.translated_rotated(R, [1.0, 2.0, 3.0])
    assert isinstance(moved, Mesh)
    np.testing.assert_allclose(moved.points, mesh.points @ R.T + [1, 2, 3])
    assert moved.node_sets.keys() == mesh.node_sets.keys()
    with pytest.raises(ValueError, match="rotation"):
        mesh.translated_rotated(np.diag([1.0, 1.0, -1.0]), np.zeros(3))


@pytest.mark.parametrize("name", ["beam_tet10_10x1x1.msh", "beam_hex27_5x1x1.msh",
                                  "conrod_tet10.msh", "beam_hex20_10x1x1.msh"])
def test_quadratic_node_order(name):
    """gmsh -> meshio -> scikit-fem keeps every node where it belongs: on straight-sided
    elements each mid-edge node is the mean of its edge's two vertices (hex27 also:
    mid-face node = mean of the face's 4 vertices, centre node = mean of all 8)."""
    mesh = read_mesh(MESHES / name)
    sk = mesh.skfem()
    assert np.allclose(sk.doflocs[:, mesh.skfem_node_index()].T, mesh.points)
    ed = sk.dofs.element_dofs
    nv = sk.t.shape[0]
    # mid-edge nodes follow the vertices in scikit-fem's local order
    for i, (a, b) in enumerate(sk.elem.refdom.edges):
        mid = 0.5 * (sk.p[:, sk.t[a]] + sk.p[:, sk.t[b]])
        err = np.abs(sk.doflocs[:, ed[nv + i]] - mid).max(axis=0)
        if name.startswith("conrod"):  # edges on the holes are curved: most are straight
            assert np.median(err) < 1e-12
        else:
            assert err.max() < 1e-12
    if mesh.cell_type == "hex27":
        n_e = len(sk.elem.refdom.edges)
        for i, face in enumerate(sk.elem.refdom.facets):
            mid = sk.p[:, sk.t[list(face)]].mean(axis=1)
            assert np.abs(sk.doflocs[:, ed[nv + n_e + i]] - mid).max() < 1e-12
        assert np.abs(sk.doflocs[:, ed[-1]] - sk.p[:, sk.t].mean(axis=1)).max() < 1e-12


def test_mixed_quadratic_kinds_refused():
    """Quadratic kinds cannot be joined without wedge15/pyramid13: one line, by name."""
    rng = np.random.default_rng(0)
    m = meshio.Mesh(rng.random((30, 3)), [("hexahedron20", np.arange(20)[None]),
                                          ("tetra10", np.arange(20, 30)[None])])
    with pytest.raises(MeshError) as err:
        mesh_from_meshio(m, source="part.msh", mixed=True)
    msg = str(err.value)
    assert "\n" not in msg
    assert ("mesh 'part.msh': a mixed-element mesh of hex20 + tet10 is not supported: "
            "hex20, tet10 would need a 15-node wedge or 13-node pyramid") in msg
