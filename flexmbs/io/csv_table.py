"""CSV tables of time histories (sensors, hot spots) for spreadsheets and other tools.

One header line of column names with their SI unit in brackets (``time [s]``,
``slider_position.x [m]``, ``mid_span.von_mises_max [Pa]``), then one row per output
step, comma-separated, numbers with 17 significant digits (a float64 read back is
the same number).  Written to ``<name>.csv.partial`` and moved into place when complete.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from flexmbs.errors import OutputError


def write_csv(path: str | Path, names: Sequence[str], units: Sequence[str],
              columns: Sequence[np.ndarray]) -> Path:
    """Write the columns (each (n,)) under the header ``name [unit]``; returns ``path``."""
    path = Path(path)
    if not (len(names) == len(units) == len(columns)):
        raise ValueError(f"write_csv: {len(names)} names, {len(units)} units and "
                         f"{len(columns)} columns")
    data = np.column_stack([np.asarray(c, dtype=float) for c in columns]) if columns \
        else np.zeros((0, 0))
    for name in names:
        if "," in name or "\n" in name:
            raise ValueError(f"write_csv: column name {name!r} holds a comma or a newline")
    header = ",".join(f"{n} [{u}]" if u else n for n, u in zip(names, units, strict=True))
    tmp = path.with_name(path.name + ".partial")
    try:
        np.savetxt(tmp, data, fmt="%.17g", delimiter=",", header=header, comments="")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError.from_exception(exc, path) from None
    return path
