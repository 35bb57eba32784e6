"""The XDMF of a whole mechanism, read back with VTK's own XDMF reader (``vtk`` from
PyPI, an optional test dependency: skipped where it is not installed).  Reference: the
geometry and fields written (time steps, point counts, coordinates, field ranges)."""
import numpy as np
import pytest

from flexmbs.io.xdmf_collection import Grid, write_collection

def test_moving_and_fixed_grids_read_back_with_vtk(tmp_path, read_xdmf):
    cube = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    times = [0.0, 0.25, 0.5]
    grids = [
        Grid("box", "hexahedron", [np.arange(8)], lambda i: cube + [i, 0.0, 0.0],
             fields={"temperature": lambda i: np.full(8, 10.0 * i)},
             static={"peak": np.arange(8.0)}),
        Grid("points", "vertex", [[0], [1], [2]], lambda i: np.eye(3) * (1 + i),
             fields={"v": lambda i: np.tile([i, 2.0 * i, 0.0], (3, 1))}),
        Grid("axes", "line", [[0, 1], [0, 2], [0, 3]], np.vstack([np.zeros(3), np.eye(3)])),
    ]
    path = write_collection(tmp_path / "m", times, grids)
    assert path.name == "m.xdmf" and (tmp_path / "m.h5").is_file()
    steps, (blocks,) = read_xdmf(path, [0.5])
    assert list(steps) == times
    assert set(blocks) == {"box", "points", "axes"}
    P, n_cells, f = blocks["box"]
    assert n_cells == 1 and P == pytest.approx(cube + [2.0, 0.0, 0.0], abs=0)
    assert f["temperature"].min() == f["temperature"].max() == 20.0
    assert np.array_equal(f["peak"], np.arange(8.0))
    P, n_cells, f = blocks["points"]
    assert n_cells == 3 and P == pytest.approx(3 * np.eye(3), abs=0)
    assert f["v"].shape == (3, 3) and f["v"][:, 1] == pytest.approx([4.0] * 3)
    assert blocks["axes"][1] == 3 and len(blocks["axes"][0]) == 4


def test_second_order_and_mixed_grids_read_back_with_vtk(tmp_path, read_xdmf):
    """A hex8 and a wedge6 sharing a face (one grid, XDMF ``Mixed``), and a hex20: VTK
    reads the cell count, each cell's VTK type and the points written."""
    vtk = pytest.importorskip("vtk")
    cube = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    roof = np.array([[0.5, 0, 2], [0.5, 1, 2]])            # wedge on the top face
    P = np.vstack([cube, roof])
    cells = [[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 8, 7, 6, 9, -1, -1]]
    hex20 = np.vstack([cube, (cube[[0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]] +
                              cube[[1, 2, 3, 0, 5, 6, 7, 4, 4, 5, 6, 7]]) / 2])
    grids = [Grid("mixed", "hex8+wedge6", cells, P, fields={"s": lambda i: P[:, 2]}),
             Grid("h20", "hex20", [np.arange(20)], hex20)]
    path = write_collection(tmp_path / "m", [0.0, 1.0], grids)
    _, (blocks,) = read_xdmf(path, [1.0])
    pts, n_cells, f = blocks["mixed"]
    assert n_cells == 2 and pts == pytest.approx(P, abs=0)
    assert f["s"] == pytest.approx(P[:, 2], abs=0)
    assert blocks["h20"][1] == 1 and blocks["h20"][0] == pytest.approx(hex20, abs=0)
    r = vtk.vtkXdmfReader()
    r.SetFileName(str(path))
    r.Update()
    out = r.GetOutputDataObject(0)
    types = {out.GetMetaData(b).Get(vtk.vtkCompositeDataSet.NAME()).split("[")[0]:
             [out.GetBlock(b).GetCellType(c) for c in range(out.GetBlock(b).GetNumberOfCells())]
             for b in range(out.GetNumberOfBlocks())}
    assert types["mixed"] == [vtk.VTK_HEXAHEDRON, vtk.VTK_WEDGE]
    assert types["h20"] == [vtk.VTK_QUADRATIC_HEXAHEDRON]


def test_a_field_of_the_wrong_length_leaves_no_file(tmp_path):
    g = Grid("p", "vertex", [[0]], np.zeros((1, 3)), fields={"f": lambda i: np.zeros(2)})
    with pytest.raises(ValueError, match="grid 'p': field 'f' has"):
        write_collection(tmp_path / "m", [0.0], [g])
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_unknown_cell_type_is_refused():
    with pytest.raises(ValueError, match="grid 'g': cell type must be one of"):
        Grid("g", "pentagon", [[0]], np.zeros((1, 3)))
