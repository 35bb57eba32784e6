"""Sweep variants: ``--vary KEY=v1,v2,...`` and the ``[sweep]`` table of a case file.

Every ``--vary`` (or every key of ``[sweep] vary``) gives one axis; the variants are the
Cartesian product of the axes, the first axis varying slowest.  A variant is named
``<case>__<key>=<value>[__<key>=<value>...]``; that name is the stem of its result file,
its case file and its log.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from flexmbs.errors import CaseError
from flexmbs.parallel import keypath
from flexmbs.parallel.toml_writer import value as toml_value

#: keys of the ``[sweep]`` table
SWEEP_KEYS = ("vary", "outputs")


@dataclass(frozen=True)
class Variant:
    """One point of a sweep: ``values`` = ((key path, value), ...) in axis order."""

    index: int
    values: tuple
    stem: str

    def value_dict(self) -> dict:
        return dict(self.values)


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside brackets, braces, parentheses and quotes."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def parse_value(text: str):
    """A TOML value (``150``, ``1e-4``, ``true``, ``[0, 0, 1]``, ``"steel"``) or, if the
    text is not valid TOML, the text itself as a string (``steel``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_vary(text: str) -> tuple[str, tuple]:
    """``"drives[0].omega=100,150,200"`` -> ``("drives[0].omega", (100, 150, 200))``."""
    key, eq, vals = text.partition("=")
    key = key.strip()
    if not eq or not key or not vals.strip():
        raise CaseError(f"--vary '{text}': expected KEY=v1,v2,... (e.g. "
                        "drives[0].omega=100,150,200)")
    keypath.parse_key_path(key)
    values = tuple(parse_value(v) for v in split_top_level(vals))
    if any(v == "" for v in values):
        raise CaseError(f"--vary '{text}': empty value in the list")
    return key, values


def sweep_table(raw: dict, where: str) -> tuple[list[tuple[str, tuple]], list[str] | None]:
    """``(axes, outputs)`` of the ``[sweep]`` table of a raw case (``([], None)`` if none).

    ``vary`` maps key paths to arrays of values; TOML dotted keys (``solver.dt = [...]``)
    and quoted keys (``"drives[0].omega" = [...]``) both work."""
    table = raw.get("sweep")
    if table is None:
        return [], None
    if not isinstance(table, dict):
        raise CaseError(f"{where}: sweep: expected a table [sweep]")
    for k in table:
        if k not in SWEEP_KEYS:
            raise CaseError(f"{where}: sweep.{k}: unknown key{keypath.hint(k, SWEEP_KEYS)}; "
                            "allowed here: " + ", ".join(SWEEP_KEYS))
    vary = table.get("vary", {})
    if not isinstance(vary, dict):
        raise CaseError(f"{where}: sweep.vary: expected a table {{KEY = [v1, v2, ...]}}")
    axes = []
    for key, vals in _flatten(vary):
        if not isinstance(vals, list) or not vals:
            raise CaseError(f"{where}: sweep.vary.\"{key}\": expected a non-empty array of "
                            f"values, got {vals!r}")
        axes.append((key, tuple(vals)))
    outputs = table.get("outputs")
    if outputs is not None and not (isinstance(outputs, list)
                                    and all(isinstance(o, str) for o in outputs)):
        raise CaseError(f"{where}: sweep.outputs: expected an array of strings")
    return axes, outputs


def _flatten(table: dict, prefix: str = ""):
    for k, v in table.items():
        key = f"{prefix}.{k}" if prefix and not k.startswith("[") else f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _flatten(v, key)
        else:
            yield key, v


def _show(v) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return repr(v)
    if isinstance(v, str):
        return v
    return toml_value(v).replace(" ", "")


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=\[\]+-]", "_", text)


def variant_stem(case_name: str, values) -> str:
    """``<case>__<key>=<value>...``; over-long names end in a hash of the values."""
    stem = case_name + "".join(f"__{k}={_show(v)}" for k, v in values)
    stem = _safe(stem)
    if len(stem) > 200:
        digest = hashlib.sha256(stem.encode()).hexdigest()[:12]
        stem = stem[:180] + "__" + digest
    return stem


def expand(axes, case_name: str) -> list[Variant]:
    """The Cartesian product of ``axes`` = [(key, values), ...]: the variants in order."""
    seen = set()
    for key, _ in axes:
        if key in seen:
            raise CaseError(f"sweep: key '{key}' is varied twice")
        seen.add(key)
    if not axes:
        raise CaseError("sweep: nothing to vary: give --vary KEY=v1,v2,... or a [sweep] "
                        "table with vary = {\"KEY\" = [v1, v2, ...]}")
    keys = [k for k, _ in axes]
    out, stems = [], set()
    for i, combo in enumerate(itertools.product(*(vals for _, vals in axes))):
        values = tuple(zip(keys, combo))
        stem = variant_stem(case_name, values)
        if stem in stems:                          # e.g. 0.1 and "0.1": keep files apart
            stem = f"{stem}__{i}"
        stems.add(stem)
        out.append(Variant(i, values, stem))
    return out


def case_name(raw: dict, path: Path) -> str:
    """The case name as :func:`flexmbs.case.load_case` derives it."""
    name = (raw.get("model") or {}).get("name")
    if isinstance(name, str) and name:
        return name
    return path.parent.name if path.name == "case.toml" else path.stem


def variant_case(raw: dict, path: Path, variant: Variant, *, overrides: dict | None = None
                 ) -> dict:
    """The raw case of ``variant``: ``[sweep]`` removed, ``overrides`` (``{key path:
    value}``, e.g. ``{"solver.t_end": 0.1}``) and the variant's values set, relative file
    paths made absolute (the variant's case file lives in the output folder) and
    ``model.name`` set to the variant's stem (so ``flexmbs run`` writes
    ``DIR/<stem>.h5``)."""
    from flexmbs.case import schema as S
    base = {k: v for k, v in raw.items() if k != "sweep"}
    where = str(path)
    out = keypath.with_values(base, list((overrides or {}).items()) + list(variant.values),
                              where=where)
    path_keys = {k.name for t in S.BODY.values() for k in t.values() if k.kind == "path"}
    for b in out.get("bodies", []):
        for k in path_keys & set(b):
            if isinstance(b[k], str) and not Path(b[k]).is_absolute():
                b[k] = str((path.parent / b[k]).resolve())
    out.setdefault("model", {})["name"] = variant.stem
    return out


def case_digest(raw_variant: dict, extra=()) -> str:
    """SHA-256 of a variant's case data (and ``extra``, e.g. PETSc options): a result
    file is reused only if it was computed from exactly this."""
    def default(o):
        return o.isoformat() if hasattr(o, "isoformat") else str(o)
    payload = json.dumps([raw_variant, list(extra)], sort_keys=True, default=default)
    return hashlib.sha256(payload.encode()).hexdigest()
