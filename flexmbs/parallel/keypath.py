"""Key paths into a case file: ``drives[0].omega``, ``solver.dt``, ``bodies[crank].m``.

The same paths the loader names in its errors (``joints[2].axis``).  A path is a section
name followed by ``[index]`` (or ``[name]``: the item with that ``name``) for the arrays
of tables, then ``.key`` and ``[i]`` steps into tables and arrays.  :func:`with_values`
sets values on a copy of the raw TOML data; a path that does not name a key of the case
format is a :class:`~flexmbs.errors.CaseError` with a did-you-mean hint.
"""
from __future__ import annotations

import copy
import difflib
import re

from flexmbs.case import schema as S
from flexmbs.errors import CaseError

_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_-]*)|\[([^\[\]]+)\]")
#: item tables of the arrays of tables: (common keys, keys per type)
_ITEMS = {"bodies": (S.BODY_COMMON, S.BODY), "drives": (S.DRIVE_COMMON, S.DRIVE),
          "forces": (S.FORCE_COMMON, S.FORCE), "sensors": (S.SENSOR_COMMON, S.SENSOR),
          "joints": (S.JOINT, {}), "constraints": (S.CONSTRAINT_COMMON, S.CONSTRAINT)}
#: keys whose value is a free-form table (any sub-key may be set)
_FREE = ("petsc_options", "markers")


def parse_key_path(text: str) -> tuple:
    """``"drives[0].omega"`` -> ``("drives", 0, "omega")`` (names in brackets stay str)."""
    text = text.strip()
    steps, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or (pos == 0 and text[0] in ".[") or (pos > 0 and m.group(1) is not None
                                                          and text[pos] != "."):
            raise CaseError(f"key path '{text}': expected SECTION, SECTION[i] or .KEY steps "
                            f"(e.g. drives[0].omega, solver.dt), stuck at '{text[pos:]}'")
        name, index = m.group(1), m.group(2)
        if name is not None:
            steps.append(name)
        else:
            index = index.strip().strip("\"'")
            steps.append(int(index) if re.fullmatch(r"-?\d+", index) else index)
        pos = m.end()
    if not steps:
        raise CaseError("key path '': expected SECTION, SECTION[i] or .KEY steps")
    return tuple(steps)


def format_key_path(steps: tuple) -> str:
    """Inverse of :func:`parse_key_path`."""
    out = str(steps[0]) if steps else ""
    for j, s in enumerate(steps[1:], 1):
        bracket = isinstance(s, int) or (j == 1 and steps[0] in S.ARRAYS)
        out += f"[{s}]" if bracket else f".{s}"
    return out


def hint(key: str, choices) -> str:
    """``" (did you mean 'X'?)"`` for the choice ``X`` closest to ``key``, or ``""``."""
    close = difflib.get_close_matches(str(key), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _allowed_keys(section: str, item: dict | None) -> dict | None:
    """Schema keys of a section table or of one item (None: free-form)."""
    if section in _ITEMS:
        common, by_type = _ITEMS[section]
        kind = (item or {}).get("type")
        if by_type and kind in by_type:
            return {**common, **by_type[kind]}
        if by_type:
            return {**common, **{k: v for t in by_type.values() for k, v in t.items()}}
        return dict(common)
    return S.SECTIONS.get(section)


def _resolve(raw: dict, steps: tuple, text: str, where: str):
    """The container and the key/index of the last step (creating optional keys)."""
    def fail(msg: str):
        raise CaseError(f"{where}: key path '{text}': {msg}")

    section = steps[0]
    known = [k for k in S.SECTIONS if k != "sweep"]
    if section not in known:
        fail(f"unknown section '{section}'{hint(section, known)}; sections: "
             + ", ".join(known))
    if len(steps) == 1:
        fail("expected a key below the section, e.g. solver.dt or drives[0].omega")
    node, i, schema = raw, 1, None
    if section in S.ARRAYS:
        items = raw.get(section, [])
        sel = steps[1]
        if isinstance(sel, int):
            if not 0 <= sel < len(items):
                fail(f"index {sel} out of range: the case has {len(items)} {section} "
                     + (f"({section}[0] to {section}[{len(items) - 1}])" if items else ""))
            item = items[sel]
        else:
            names = [it.get("name") for it in items if isinstance(it, dict)]
            if sel not in names:
                fail(f"no item named '{sel}' in {section}{hint(sel, names)}; names: "
                     + (", ".join(map(str, names)) or "none"))
            item = items[names.index(sel)]
        if len(steps) < 3:
            fail(f"expected a key after {section}[{sel}]")
        node, i, schema = item, 2, _allowed_keys(section, item)
    else:
        if raw.get(section) is None:
            raw[section] = {}
        node, schema = raw[section], _allowed_keys(section, None)
        if not isinstance(node, dict):
            fail(f"section '{section}' is not a table")
    free = False
    for j in range(i, len(steps)):
        step, last = steps[j], j == len(steps) - 1
        if isinstance(node, dict):
            if isinstance(step, int):
                fail(f"'{format_key_path(steps[:j])}' is a table, not an array")
            if step not in node:
                if j == i and schema is not None:
                    if step not in schema:
                        fail(f"unknown key '{step}'{hint(step, schema)}; allowed here: "
                             + ", ".join(schema))
                elif not free:
                    fail(f"no key '{step}' in '{format_key_path(steps[:j])}'"
                         f"{hint(step, node)}; keys: " + (", ".join(node) or "none"))
                if not last:
                    if not (free or step in _FREE):
                        fail(f"'{format_key_path(steps[:j + 1])}' is not set in the case "
                             "file: vary the whole value instead")
                    node[step] = {}
            free = free or (j == i and step in _FREE)
        elif isinstance(node, list):
            if not isinstance(step, int) or not 0 <= step < len(node):
                fail(f"'{format_key_path(steps[:j])}' has {len(node)} entries, got [{step}]")
        else:
            fail(f"'{format_key_path(steps[:j])}' is a value, not a table or array")
        if last:
            return node, step
        node = node[step]
    raise AssertionError("unreachable")


def with_values(raw: dict, values, *, where: str = "sweep") -> dict:
    """A deep copy of ``raw`` with ``values`` (``{key path: value}`` or pairs) set."""
    out = copy.deepcopy(raw)
    items = values.items() if isinstance(values, dict) else values
    for text, v in items:
        node, key = _resolve(out, parse_key_path(text), text, where)
        node[key] = copy.deepcopy(v)
    return out


def check_key_paths(raw: dict, keys, *, where: str = "sweep") -> None:
    """Raise :class:`CaseError` for the first key path that does not fit ``raw``."""
    scratch = copy.deepcopy(raw)
    for text in keys:
        _resolve(scratch, parse_key_path(text), text, where)
