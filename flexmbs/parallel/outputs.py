"""Scalar outputs of a result file for the sweep table: ``max_abs(sensors/*)`` and friends.

An output expression is either a run quantity

    t_final, steps, rejected_steps, newton_iterations, wall_time

or ``FUNC(PATH)`` / ``FUNC(PATH[COLUMN])`` with

    FUNC    final, initial, min, max, max_abs, mean, rms
    PATH    a dataset of the result file (``sensors/slider_position``,
            ``joints/A/reaction``, ``energy/total``, ``bodies/crank/q``); ``*`` and ``?``
            match any characters (``joints/*/coordinates``)
    COLUMN  a column name (``x``, ``Fx``, ``angle``) or index (``0``)

over the output steps (rows).  Without ``[COLUMN]`` every column gives one table column,
named ``FUNC(PATH[COLUMN])``.  The defaults are :data:`DEFAULT_OUTPUTS`.
"""
from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import numpy as np

from flexmbs.errors import CaseError

RUN_QUANTITIES = ("t_final", "steps", "rejected_steps", "newton_iterations", "wall_time")
FUNCS = {
    "final": lambda x: x[-1], "initial": lambda x: x[0], "min": np.min, "max": np.max,
    "max_abs": lambda x: np.max(np.abs(x)), "mean": np.mean,
    "rms": lambda x: np.sqrt(np.mean(x * x)),
}
DEFAULT_OUTPUTS = ("t_final", "steps", "wall_time", "final(sensors/*)", "max_abs(sensors/*)",
                   "final(joints/*/coordinates)", "max_abs(joints/*/coordinates)")
_EXPR = re.compile(r"^\s*([a-z_]+)\s*\(\s*([^()\[\]]+?)\s*(?:\[\s*([^\[\]]+?)\s*\])?\s*\)\s*$")


def parse_output(text: str) -> tuple:
    """``"max_abs(sensors/x[y])"`` -> ``("max_abs", "sensors/x", "y")``; run quantities ->
    ``(name, None, None)``."""
    t = text.strip()
    if t in RUN_QUANTITIES:
        return t, None, None
    m = _EXPR.match(t)
    if m is None or m.group(1) not in FUNCS:
        import difflib
        head = t.partition("(")[0]
        close = difflib.get_close_matches(head, list(FUNCS) + list(RUN_QUANTITIES), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise CaseError(f"output '{text}': expected one of {', '.join(RUN_QUANTITIES)} or "
                        f"FUNC(PATH[COLUMN]) with FUNC one of {', '.join(FUNCS)}{hint}")
    return m.group(1), m.group(2).strip("/"), m.group(3)


def _datasets(path: Path) -> dict:
    """``{name: (array (n, k), column names)}`` of every time-series dataset."""
    import h5py
    out = {}
    with h5py.File(path, "r") as f:
        n = len(f["time"]) if "time" in f else 0

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.shape[:1] == (n,) and name != "time":
                a = np.asarray(obj[()], dtype=float).reshape(n, -1)
                cols = [str(c.decode() if isinstance(c, bytes) else c)
                        for c in obj.attrs.get("columns", [])]
                if len(cols) != a.shape[1]:
                    cols = [str(j) for j in range(a.shape[1])] if a.shape[1] > 1 else [""]
                base = name.rsplit("/", 1)[-1] + "."        # sensor columns "s.x" -> "x"
                cols = [c[len(base):] if c.startswith(base) else c for c in cols]
                out[name] = (a, cols)
        f.visititems(visit)
    return out


def evaluate(exprs, result_file: str | Path, run_info: dict) -> dict:
    """``{column name: value}`` for the output expressions ``exprs`` on one result file;
    ``run_info`` holds the run quantities (``t_final``, ``steps``, ...)."""
    parsed = [(e, parse_output(e)) for e in exprs]
    data = _datasets(Path(result_file)) if any(p[1] for _, p in parsed) else {}
    out: dict = {}
    for text, (func, pattern, column) in parsed:
        if pattern is None:
            out[func] = run_info.get(func, float("nan"))
            continue
        names = sorted(n for n in data if fnmatch.fnmatchcase(n, pattern))
        if not names and not any(c in pattern for c in "*?"):
            out[text.strip()] = float("nan")       # a named dataset that is not there
        for name in names:
            a, cols = data[name]
            if len(a) == 0:
                continue
            if column is None:
                picks = list(enumerate(cols))
            elif column in cols or column.rpartition(".")[2] in cols:
                c = column if column in cols else column.rpartition(".")[2]
                picks = [(cols.index(c), c)]
            elif re.fullmatch(r"\d+", column) and int(column) < a.shape[1]:
                picks = [(int(column), cols[int(column)])]
            else:
                continue
            for j, c in picks:
                label = f"{func}({name}[{c}])" if c else f"{func}({name})"
                out[label] = float(FUNCS[func](a[:, j]))
    return out
