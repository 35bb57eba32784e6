"""The sweep summary: one row per variant, written as CSV and as an aligned text table."""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

#: columns that come first and last, around the varied keys and the outputs
LEAD = ("variant",)
STATUS = ("status",)
TRAIL = ("result", "error")


def columns(rows: list[dict], keys: list[str]) -> list[str]:
    """Union of the rows' columns: variant, varied keys, status, outputs, result, error."""
    fixed = set(LEAD) | set(keys) | set(STATUS) | set(TRAIL)
    outs: list[str] = []
    for r in rows:
        for c in r:
            if c not in fixed and c not in outs:
                outs.append(c)
    return [*LEAD, *keys, *STATUS, *outs, *TRAIL]


def _csv_cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)      # repr: round-trips exactly
    if isinstance(v, (list, tuple, dict)):
        from flexmbs.parallel.toml_writer import value
        return value(v)
    return str(v).replace("\n", " | ")


def write_csv(path: str | Path, rows: list[dict], keys: list[str]) -> list[str]:
    """Write ``rows`` to ``path``; returns the column names."""
    cols = columns(rows, keys)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([_csv_cell(r.get(c)) for c in cols])
    Path(path).write_text(buf.getvalue())
    return cols


def _text_cell(v, width: int = 60) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.6g}"
    s = _csv_cell(v)
    return s if len(s) <= width else s[:width - 3] + "..."


def format_table(rows: list[dict], keys: list[str], *, skip=("result",),
                 max_columns: int = 10) -> str:
    """Aligned text table of ``rows`` (numbers to 6 digits, long errors cut); with more
    than ``max_columns`` columns it is transposed: one line per column, one column per
    variant."""
    cols = [c for c in columns(rows, keys) if c not in skip]
    if len(cols) > max_columns:
        head = ["variant"] + [str(r.get("variant", j)) for j, r in enumerate(rows)]
        body = [[c] + [_text_cell(r.get(c), 40) for r in rows] for c in cols[1:]]
        widths = [max(len(x[j]) for x in [head, *body]) for j in range(len(head))]
        return "\n".join("  ".join(x[j].ljust(widths[j]) if j == 0 else x[j].rjust(widths[j])
                                   for j in range(len(head))).rstrip() for x in [head, *body])
    cells = [[_text_cell(r.get(c)) for c in cols] for r in rows]
    widths = [max([len(c)] + [len(row[j]) for row in cells]) for j, c in enumerate(cols)]
    line = lambda vals: "  ".join(v.rjust(w) if j < len(cols) - 1 else v   # noqa: E731
                                  for j, (v, w) in enumerate(zip(vals, widths)))
    return "\n".join([line(cols)] + [line(row) for row in cells])
