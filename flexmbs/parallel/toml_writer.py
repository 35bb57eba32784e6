"""A minimal TOML writer for case data (what :mod:`tomllib` reads back unchanged).

Top-level tables become ``[section]``, top-level arrays of tables ``[[section]]``;
anything nested below them is written inline (``{...}``, ``[...]``).  Enough for the
plain data of a case file (strings, numbers, booleans, arrays, tables, dates); used to
write the exact case of every sweep variant next to its result file.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import re

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _string(v: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but characters outside the Basic
    Multilingual Plane must stay literal (JSON writes UTF-16 surrogate pairs, which TOML
    rejects) and DEL must be escaped (TOML forbids it raw)."""
    return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")


def _key(k: str) -> str:
    return k if _BARE.match(k) else _string(k)


def value(v) -> str:
    """One TOML value, inline."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"toml_writer: cannot write a value of type {type(v).__name__}: {v!r}")


def _is_table_array(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def dumps(data: dict) -> str:
    """``data`` as TOML text; ``tomllib.loads(dumps(data)) == data``."""
    lines = [f"{_key(k)} = {value(v)}" for k, v in data.items()
             if not isinstance(v, dict) and not _is_table_array(v)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines += ["", f"[{_key(k)}]"] + [f"{_key(a)} = {value(b)}" for a, b in v.items()]
        elif _is_table_array(v):
            for item in v:
                lines += ["", f"[[{_key(k)}]]"]
                lines += [f"{_key(a)} = {value(b)}" for a, b in item.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


def as_read(data):
    """``data`` as :mod:`tomllib` reads it back from :func:`dumps`, without the text: a
    copy in which tuples are lists (the TOML data model of a case,
    :func:`flexmbs.case.loader.spec_from_raw`)."""
    if isinstance(data, dict):
        return {k: as_read(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [as_read(v) for v in data]
    return data
