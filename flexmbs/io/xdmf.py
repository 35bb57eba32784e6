"""XDMF + HDF5 time series of a mesh with point fields, for ParaView.

:func:`write_time_series` writes ``<path>.xdmf`` and its heavy-data file ``<path>.h5``
with ``meshio.xdmf.TimeSeriesWriter``: the geometry and cells once, then one set of
point fields per time.  Open the ``.xdmf`` in ParaView (reader "Xdmf3ReaderT" or
"XDMF Reader") and apply "Warp By Vector" with the ``displacement`` field to see the
motion (see docs/tutorial.md).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

#: flexmbs cell type -> meshio/XDMF cell type
MESHIO_TYPE = {"tet4": "tetra", "tet10": "tetra10", "hex8": "hexahedron",
               "hex27": "hexahedron27"}


def write_time_series(path: str | Path, points: np.ndarray, cells: np.ndarray, cell_type: str,
                      times: Sequence[float],
                      point_data: Callable[[int], dict[str, np.ndarray]]) -> Path:
    """Write the series; ``point_data(i)`` returns ``{name: (N,) or (N, k) array}`` at
    ``times[i]``.  Returns the path of the ``.xdmf`` file."""
    import meshio
    path = Path(path)
    if path.suffix != ".xdmf":             # names may hold dots (sweep variants): append
        path = path.with_name(path.name + ".xdmf")
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    ctype = MESHIO_TYPE.get(cell_type, cell_type)
    points = np.asarray(points, dtype=float)
    # meshio's TimeSeriesWriter creates the .h5 in the working directory: write from the
    # output folder so that the pair stays together (XDMF refers to the .h5 by name).
    with contextlib.chdir(path.parent), meshio.xdmf.TimeSeriesWriter(path.name) as writer:
        writer.write_points_cells(points, [(ctype, np.asarray(cells, dtype=np.int64))])
        for i, t in enumerate(times):
            data = {k: np.ascontiguousarray(v, dtype=float) for k, v in point_data(i).items()}
            for k, v in data.items():
                if v.shape[0] != len(points):
                    raise ValueError(f"write_time_series: field '{k}' has {v.shape[0]} rows, "
                                     f"the mesh {len(points)} points")
            writer.write_data(float(t), point_data=data)
    return path
