"""XDMF series of the hex20 and wedge6 meshes: the cells and the point data read back
by meshio equal what was written (XDMF Hexahedron_20 and Wedge topologies)."""
from __future__ import annotations

from pathlib import Path

import meshio
import numpy as np
import pytest

from flexmbs.io.mesh import read_mesh
from flexmbs.io.xdmf import write_time_series

MESHES = Path(__file__).resolve().parents[2] / "meshes"


@pytest.mark.parametrize("name, meshio_type", [("beam_hex20_10x1x1.msh", "hexahedron20"),
                                               ("beam_wedge6_40x4x4.msh", "wedge")])
def test_series_of_new_cell_types(tmp_path, name, meshio_type):
    mesh = read_mesh(MESHES / name)
    path = write_time_series(tmp_path / "s.xdmf", mesh.points, mesh.cells, mesh.cell_type,
                             [0.0, 0.5], lambda i: {"u": 0.1 * i * mesh.points})
    with meshio.xdmf.TimeSeriesReader(str(path)) as reader:
        points, cells = reader.read_points_cells()
        t, point_data, _ = reader.read_data(1)
    assert [c.type for c in cells] == [meshio_type]
    np.testing.assert_array_equal(cells[0].data, mesh.cells)
    np.testing.assert_array_equal(points, mesh.points)
    assert t == 0.5
    np.testing.assert_array_equal(point_data["u"], 0.1 * mesh.points)
