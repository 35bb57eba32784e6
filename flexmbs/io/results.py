"""Incremental HDF5 result files.

Layout (all SI units, stated in each dataset's ``unit`` attribute):

    /time                              (n,)            s
    /bodies/<body>/q, qd               (n, n_b)        body coordinates and rates
    /joints/<joint>/reaction           (n, 6)          force [N] and torque [N m] on the
                                                       second body, in the joint frame
    /joints/<joint>/coordinates        (n, k)          joint angles [rad] / displacements [m]
    /sensors/<sensor>                  (n, k)          sensor outputs (``columns`` attribute)
    /energy/<kind>                     (n,)            J
    /solver/<counter>                  (n,)            Newton iterations, Jacobian evaluations

Every dataset is chunked and resizable; rows are appended as steps are accepted and the
file is flushed every ``flush_every`` rows, so a run that fails or is interrupted leaves
a readable file holding every step computed up to that point (``/status`` attribute
``complete`` tells whether the run finished).
"""
from __future__ import annotations

import os

import h5py
import numpy as np


class ResultWriter:
    """Append-only writer of one result file (a context manager)."""

    def __init__(self, path: str | os.PathLike, *, flush_every: int = 50, attrs: dict | None = None):
        self.path = os.fspath(path)
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        self.file = h5py.File(self.path, "w")
        self.file.attrs["format"] = "flexmbs-result"
        self.file.attrs["version"] = 1
        self.file.attrs["status"] = "running"
        for k, v in (attrs or {}).items():
            self.file.attrs[k] = v
        self.n = 0
        self.flush_every = flush_every
        self._sets: dict[str, h5py.Dataset] = {}

    def _dataset(self, key: str, row: np.ndarray, unit: str, columns) -> h5py.Dataset:
        ds = self._sets.get(key)
        if ds is None:
            shape = (0,) + row.shape
            ds = self.file.create_dataset(key, shape=shape, maxshape=(None,) + row.shape,
                                          chunks=(256,) + row.shape, dtype="f8")
            ds.attrs["unit"] = unit
            if columns is not None:
                ds.attrs["columns"] = [str(c) for c in columns]
            self._sets[key] = ds
        return ds

    def append(self, rows: dict[str, tuple]) -> None:
        """Append one output step: ``{path: (value, unit[, columns])}``."""
        for key, spec in rows.items():
            value, unit = np.asarray(spec[0], dtype=float), spec[1]
            columns = spec[2] if len(spec) > 2 else None
            ds = self._dataset(key, value, unit, columns)
            ds.resize(self.n + 1, axis=0)
            ds[self.n] = value
        self.n += 1
        if self.n % self.flush_every == 0:
            self.file.flush()

    def close(self, status: str = "complete", message: str = "") -> None:
        if self.file.id.valid:
            self.file.attrs["status"] = status
            if message:
                self.file.attrs["message"] = message
            self.file.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close("complete")
        else:
            self.close("failed" if exc_type is not KeyboardInterrupt else "interrupted", str(exc))
        return False


def read_results(path: str | os.PathLike) -> dict:
    """Read a result file into nested dicts of numpy arrays (plus ``attrs``)."""
    out: dict = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                node = out
                parts = name.split("/")
                for p in parts[:-1]:
                    node = node.setdefault(p, {})
                node[parts[-1]] = obj[()]
        f.visititems(visit)
        out["attrs"] = dict(f.attrs)
    return out
