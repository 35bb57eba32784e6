"""XDMF + HDF5 time series of a mesh with point fields, for ParaView.

:func:`write_time_series` writes ``<path>.xdmf`` and its heavy-data file ``<path>.h5``
with ``meshio.xdmf.TimeSeriesWriter``: the geometry and cells once, then one set of
point fields per time.  Open the ``.xdmf`` in ParaView (reader "Xdmf3ReaderT" or
"XDMF Reader") and apply "Warp By Vector" with the ``displacement`` field to see the
motion (see docs/tutorial.md).

The pair is written into a hidden folder ``.<name>.xdmf.partial`` beside it and moved into
place only when every frame is written (the old ``.xdmf`` removed first, the new one
moved last), so a series cut short by a signal or an error never looks complete: the
folder is removed, and one left by a killed process is removed by the next run.  A
failed write raises :class:`~flexmbs.errors.OutputError` naming the file.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from flexmbs.errors import OutputError
from flexmbs.io.cell_types import MESHIO_TYPE, cell_blocks  # flexmbs -> meshio/XDMF type


def partial_folder(path: str | Path) -> Path:
    """The hidden folder in which the series ``path`` (``.xdmf``) is written."""
    path = Path(path)
    return path.with_name(f".{path.name}.partial")


def heavy_data(path: str | Path) -> Path:
    """The heavy-data file ``<name>.h5`` of the series ``<name>.xdmf``."""
    path = Path(path)
    return path.with_name(path.name[:-len(".xdmf")] + ".h5")


def xdmf_path(path: str | Path) -> Path:
    """``path`` as an absolute ``.xdmf`` name (names may hold dots, e.g. sweep variants:
    the suffix is appended, not substituted)."""
    path = Path(path)
    if path.suffix != ".xdmf":
        path = path.with_name(path.name + ".xdmf")
    return path.resolve()


@contextlib.contextmanager
def written_pair(path: Path) -> Iterator[Path]:
    """Write the pair ``path`` (``.xdmf``) + :func:`heavy_data` in the folder yielded
    (:func:`partial_folder`) and move both into place when the block ends without error
    (module doc); an ``OSError`` or h5py's "errno" ``RuntimeError`` becomes
    :class:`OutputError` naming the file."""
    tmp = partial_folder(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        yield tmp
        path.unlink(missing_ok=True)
        os.replace(tmp / heavy_data(path).name, heavy_data(path))
        os.replace(tmp / path.name, path)
    except OSError as exc:
        raise OutputError.from_exception(exc, _failed_file(exc, path)) from None
    except RuntimeError as exc:            # h5py: "... errno = 28, error message = ..."
        if "errno" not in str(exc):
            raise
        raise OutputError.from_exception(exc, heavy_data(path)) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_time_series(path: str | Path, points: np.ndarray, cells: np.ndarray, cell_type: str,
                      times: Sequence[float],
                      point_data: Callable[[int], dict[str, np.ndarray]]) -> Path:
    """Write the series; ``point_data(i)`` returns ``{name: (N,) or (N, k) array}`` at
    ``times[i]`` (it may raise, e.g. ``KeyboardInterrupt``: nothing is then left).
    Returns the path of the ``.xdmf`` file; its ``.h5`` is :func:`heavy_data`."""
    import meshio
    path = xdmf_path(path)
    blocks = [(MESHIO_TYPE.get(t, t), np.asarray(c, dtype=np.int64))
              for t, c in cell_blocks(cell_type, cells)]     # several: a mixed mesh
    points = np.asarray(points, dtype=float)
    with written_pair(path) as tmp:
        # meshio's TimeSeriesWriter creates the .h5 in the working directory: write from
        # the folder so that the pair stays together (XDMF refers to the .h5 by name).
        with contextlib.chdir(tmp), meshio.xdmf.TimeSeriesWriter(path.name) as writer:
            writer.write_points_cells(points, blocks)
            for i, t in enumerate(times):
                data = {k: np.ascontiguousarray(v, dtype=float)
                        for k, v in point_data(i).items()}
                for k, v in data.items():
                    if v.shape[0] != len(points):
                        raise ValueError(f"write_time_series: field '{k}' has {v.shape[0]} "
                                         f"rows, the mesh {len(points)} points")
                writer.write_data(float(t), point_data=data)
    return path


def _failed_file(exc: OSError, path: Path) -> Path:
    """The file an ``OSError`` is about: its own file name made absolute, else ``path``."""
    name = getattr(exc, "filename", None)
    if not name:
        return path
    name = Path(os.fsdecode(name))
    return name if name.is_absolute() else partial_folder(path).parent / name.name
