"""Read and validate a TOML case file (format: :mod:`flexmbs.case.schema`).

:func:`load_case` returns a :class:`CaseSpec`: every section with defaults filled in,
values converted (vectors to tuples, paths made absolute relative to the case file) and
cross references checked (bodies, markers, joints).  Every problem is a
:class:`~flexmbs.errors.CaseError` naming the file, the key path (``joints[2].axis``),
what was expected and what was found; all problems of a file are reported at once.
"""
from __future__ import annotations

import difflib
import logging
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from flexmbs.case import schema as S
from flexmbs.errors import CaseError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CaseSpec:
    """A validated case: plain data, one dict per item (``path`` = its key path)."""

    path: Path
    name: str
    model: dict
    bodies: tuple
    joints: tuple
    drives: tuple
    forces: tuple
    sensors: tuple
    solver: dict
    output: dict
    analysis: dict | None = None
    hotspots: tuple = ()
    constraints: tuple = ()     # [[constraints]]: velocity (nonholonomic) constraints
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def where(self, key_path: str) -> str:
        return f"{self.path.name}: {key_path}"


class _Bad(Exception):
    """A value that does not fit: ``expected`` and the offending value."""

    def __init__(self, expected: str, found=None, show_found: bool = True,
                 message: str | None = None):
        self.expected, self.found, self.show_found = expected, found, show_found
        self.message = message          # the whole message, instead of "expected ..., got ..."


def _show(v) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "[" + ", ".join(_show(x) for x in v[:6]) + (", ..." if len(v) > 6 else "") + "]"
    return repr(v)


def _found(v) -> str:
    """What was found: ``string "x"``, ``integer 3``, ``a table``."""
    if isinstance(v, dict):
        return "a table"
    return f"{_type_name(v)} {_show(v)}"


def _type_name(v) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "table"}.get(type(v), type(v).__name__)


# -- value checks: each returns the converted value or raises _Bad ----------------------------
def _num(v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Bad("a number", _found(v))
    return float(v)


#: largest magnitude of a number in a case file (SI units): beyond it products of a few
#: values overflow (an inertia of a 1e300 m box) and nothing physical is that large
MAX_MAGNITUDE = 1e30


def _finite(v) -> float:
    x = _num(v)
    if not math.isfinite(x):
        raise _Bad("a finite number", x)
    if abs(x) > MAX_MAGNITUDE:
        raise _Bad(f"a number of magnitude at most {MAX_MAGNITUDE:g} (SI units)", _show(v))
    return x


def _vec(n: int):
    def check(v):
        if not isinstance(v, list) or len(v) != n:
            what = _found(v) if not isinstance(v, list) else \
                f"{len(v)} entries {_show(v)}"
            raise _Bad(f"an array of {n} numbers", what)
        try:
            return tuple(_finite(x) for x in v)
        except _Bad:
            raise _Bad(f"an array of {n} finite numbers", _show(v)) from None
    return check


def _str(v):
    if not isinstance(v, str):
        raise _Bad("a string", _found(v))
    return v


#: names of bodies, joints, drives, forces, sensors and markers: they become file names,
#: HDF5 groups and the BODY.MARKER references of the case file
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
#: the model name (file names of the results): also dots (not first) and the characters
#: of ``flexmbs sweep``'s variant names ``<case>__<key>=<value>`` (``= [ ] +``)
FILE_NAME_PATTERN = re.compile(r"[A-Za-z0-9_=\[\]+-][A-Za-z0-9_.=\[\]+-]{0,199}")


def _name(v):
    v = _str(v)
    if v == "ground" or not NAME_PATTERN.fullmatch(v):
        raise _Bad("a name of letters, digits, _ and - (not starting with -, not 'ground')",
                   _show(v))
    return v


def _file_name(v):
    v = _str(v)
    if not FILE_NAME_PATTERN.fullmatch(v):
        raise _Bad("a name of at most 200 letters, digits and _ - . = [ ] +, not starting "
                   "with '.' (it names the result files)", _show(v))
    return v


def _int(v):
    if isinstance(v, bool) or not isinstance(v, int):
        raise _Bad("an integer", _found(v))
    if abs(v) > 2**63 - 1:                # TOML integers are 64-bit; Python's tomllib not
        raise _Bad("a 64-bit integer", _show(v))
    return v


def _bool(v):
    if not isinstance(v, bool):
        raise _Bad("true or false", _found(v))
    return v


def _mat3(v):
    if not (isinstance(v, list) and len(v) == 3 and all(isinstance(r, list) and len(r) == 3
                                                        for r in v)):
        raise _Bad("a 3x3 array of numbers", _show(v))
    return tuple(tuple(_finite(x) for x in r) for r in v)


def _grid(v):
    if not (isinstance(v, list) and v and all(isinstance(r, list) and len(r) == len(v[0])
                                              and r for r in v)):
        raise _Bad("a rectangular array of arrays of numbers (rows of equal length)", _show(v))
    return tuple(tuple(_finite(x) for x in r) for r in v)


def _axis(v):
    if isinstance(v, str):
        if v.strip().lower().lstrip("+-") not in ("x", "y", "z"):
            raise _Bad("'x', 'y', 'z' (optionally signed) or an array of 3 numbers", _show(v))
        return v
    a = _vec(3)(v)
    if math.hypot(*a) < 1e-12:
        raise _Bad("a non-zero direction", _show(v))
    return a


def _orientation(v):
    if isinstance(v, dict):
        _no_unknown(v, {"axis": None, "angle": None})
        if "axis" not in v or "angle" not in v:
            raise _Bad("a table {axis = ..., angle = rad} with both keys", _show(sorted(v)))
        return {"axis": _axis(v["axis"]), "angle": _finite(v["angle"])}
    if isinstance(v, list):
        return _rotation(_mat3(v))
    raise _Bad("a 3x3 rotation matrix or {axis = ..., angle = rad}", _found(v))


#: how far from orthonormal a given rotation matrix may be: entries rounded to 5 digits
#: (0.70711) are 1e-5 off; within this the nearest rotation is used
ROTATION_TOLERANCE = 1e-4


def _rotation(R):
    """A 3x3 matrix R with R^T R = I within :data:`ROTATION_TOLERANCE` and det R = +1:
    as given when orthonormal to 1e-12, else the nearest rotation U V^T (R = U S V^T)."""
    import numpy as np
    A = np.array(R)
    off = float(np.abs(A.T @ A - np.eye(3)).max())
    det = float(np.linalg.det(A))
    if off > ROTATION_TOLERANCE or det < 0:
        lengths = ", ".join(f"{x:.6g}" for x in np.linalg.norm(A, axis=0))
        raise _Bad(f"a rotation matrix (body axes as orthonormal columns to "
                   f"{ROTATION_TOLERANCE:g}, det +1)",
                   f"columns of lengths [{lengths}], max |R^T R - I| = {off:.3g}, "
                   f"det = {det:.6g}")
    if off <= 1e-12:
        return R
    U, _, Vt = np.linalg.svd(A)
    return tuple(tuple(float(x) for x in row) for row in U @ Vt)


def _note_rotation(col, where: str, name, given, R) -> None:
    """One warning line when :func:`_rotation` replaced the ``given`` matrix (not
    orthonormal to 1e-12) by its nearest rotation ``R``: the key, the object's name, how
    far the given one is from orthonormal and how far its entries moved."""
    import numpy as np
    A, R = np.array(given, dtype=float), np.array(R, dtype=float)
    moved = float(np.abs(A - R).max())
    if moved == 0.0:
        return
    off = float(np.abs(A.T @ A - np.eye(3)).max())
    who = f" ('{name}')" if isinstance(name, str) else ""
    log.warning("%s: %s%s: the rotation matrix is %.2g from orthonormal (max |R^T R - I|, "
                "tolerance %g); replaced by the nearest rotation, entries moved by up to "
                "%.2g", col.path, where, who, off, ROTATION_TOLERANCE, moved)


def _inertia(v):
    if isinstance(v, list) and v and isinstance(v[0], list):
        return _mat3(v)
    if isinstance(v, list) and len(v) in (3, 6):
        return _vec(len(v))(v)
    raise _Bad("[Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] or a 3x3 array", _show(v))


def _ref(v):
    v = _str(v)
    parts = v.split(".")
    if len(parts) > 2 or not all(parts) or (parts[0] == "ground" and len(parts) == 2):
        raise _Bad("\"ground\", \"BODY\" or \"BODY.MARKER\"", _show(v))
    return v


def _markers(v):
    if not isinstance(v, dict):
        raise _Bad("a table of markers {name = {at = [x, y, z], axis = ...}}", _show(v))
    out = {}
    for name, spec in v.items():
        if name == "ground" or not NAME_PATTERN.fullmatch(name):
            raise _Bad("marker names of letters, digits, _ and - (not starting with -)",
                       _show(name))
        if not isinstance(spec, dict):
            raise _Bad(f"marker '{name}' as a table {{at = [x, y, z], axis = ...}}", _show(spec))
        _no_unknown(spec, {"at": None, "axis": None}, f"markers.{name}")
        out[name] = {"at": _vec(3)(spec.get("at", [0.0, 0.0, 0.0])),
                     "axis": None if spec.get("axis") is None else _axis(spec["axis"])}
    return out


def _interfaces(v):
    from flexmbs.reduction.interfaces import interface_problem
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        found = _found(v)
        if isinstance(v, str):
            found += f" (write [{_show(v)}])"
        raise _Bad("an array of strings \"NAME\" or \"NAME:rbe2|rbe3\"", found)
    names = []
    for s in v:
        problem = interface_problem(s)
        if problem:
            raise _Bad("a valid interface", message=problem)
        name = s.partition(":")[0]
        if "." in name:
            raise _Bad("an interface name without '.' (markers are referenced as "
                       "BODY.NAME)", _show(s))
        if name in names:
            raise _Bad("distinct interface names", f"\"{name}\" twice")
        names.append(name)
    return tuple(v)


def _material(v):
    from flexmbs.fe.material import Material, material_from_name
    if isinstance(v, str):
        try:
            return material_from_name(v)
        except ValueError as exc:
            raise _Bad("a known material", str(exc).replace("unknown material ", ""),
                       show_found=True) from None
    if isinstance(v, dict):
        _no_unknown(v, {"E": None, "nu": None, "rho": None, "name": None})
        for k in ("E", "nu", "rho"):
            if k not in v:
                raise _Bad(f"a material table with E [Pa], nu, rho [kg/m^3] (missing {k})",
                           _show(sorted(v)))
        try:
            return Material(E=_finite(v["E"]), nu=_finite(v["nu"]), rho=_finite(v["rho"]),
                            name=str(v.get("name", "custom")))
        except ValueError as exc:
            raise _Bad("a valid material", str(exc)) from None
    raise _Bad("a material name or {E, nu, rho}", _found(v))


def _function_keys(table) -> list[str]:
    """The keys of a schema table whose values are time functions (key type ``function``)."""
    return [k.name for k in table.values() if k.kind == "function"]


def _floats(v):
    if not isinstance(v, list) or not v:
        raise _Bad("a non-empty array of numbers", _show(v))
    return tuple(_finite(x) for x in v)


def _ints(v):
    if not isinstance(v, list) or not v:
        raise _Bad("a non-empty array of integers", _show(v))
    return tuple(_int(x) for x in v)


def _matrix(v):
    """A matrix: an array of rows of numbers, all of one length (``[]`` for no states)."""
    if not isinstance(v, list) or not all(isinstance(r, list) for r in v) \
            or len({len(r) for r in v}) > 1:
        raise _Bad("an array of equally long rows of numbers, e.g. [[0.0, 1.0], [-4.0, 0.0]]",
                   _show(v))
    return tuple(tuple(_finite(x) for x in r) for r in v)


def _feeds(v):
    """Sensor components fed to a controller: ``["SENSOR.COMPONENT", ...]`` (the columns
    of the sensor's output, e.g. "angle.z")."""
    if not isinstance(v, list) or not v or not all(isinstance(x, str) and "." in x for x in v):
        raise _Bad("a non-empty array of \"SENSOR.COMPONENT\" strings, e.g. [\"angle.z\"]",
                   _show(v))
    return tuple(v)


def _value(v):
    """A scalar or a vector (loads)."""
    if isinstance(v, list):
        return _floats(v)
    return _finite(v)


def _coordinate(v):
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise _Bad("a coordinate name or index", _show(v))
    return v


def _options(v):
    if not isinstance(v, dict):
        raise _Bad("a table of PETSc options", _show(v))
    out = {}
    for k, x in v.items():
        name = k.lstrip("-")
        if not name or not all(c.isalnum() or c == "_" for c in name):
            raise _Bad("option names of letters, digits and _ (e.g. pc_type)", _show(k))
        if isinstance(x, dict | list):
            raise _Bad(f"option '{k}' as a string, number or boolean", _show(x))
        if isinstance(x, float) and not math.isfinite(x):
            raise _Bad(f"option '{k}' as a finite number", _show(x))
        out[name] = x
    if any(k.endswith("_type") for k in out):
        from flexmbs.integrate.options import check_option_values
        try:
            check_option_values(out, where="option")
        except ValueError as exc:
            raise _Bad("PETSc type names known to this PETSc build", str(exc)) from None
    from flexmbs.integrate.options import (OptionValueError, check_option_combinations,
                                           unused_option_names)
    try:
        check_option_combinations(out, "option", method=None)
    except ValueError as exc:            # (names the key, what is expected and found)
        raise _Bad("PETSc options that work together", message=str(exc)) from None
    try:
        unused = unused_option_names(out) if out else []
    except OptionValueError as exc:
        raise _Bad(f"option '{exc.key}' as {exc.expected}", _show(exc.value)) from None
    if unused:
        raise _Bad("options (without prefix) that PETSc's SNES, KSP, PC or TS reads "
                   "(e.g. snes_max_it, ksp_type)",
                   f"'{unused[0]}', which none of them reads: PETSc would ignore it")
    return out


def _sn_curve(v):
    keys = ("S_ref", "N_ref", "m")
    if not isinstance(v, dict) or set(v) != set(keys):
        raise _Bad("a table {S_ref = Pa, N_ref = cycles, m = -} (Basquin N = N_ref "
                   "(S / S_ref)^-m)", _show(v))
    out = {k: _finite(v[k]) for k in keys}
    if min(out.values()) <= 0:
        raise _Bad("S_ref > 0 [Pa], N_ref > 0 and m > 0", _show(v))
    return out


def _friction(v):
    """A joint's friction table (:data:`flexmbs.case.schema.FRICTION_KEYS`)."""
    keys = S.FRICTION_KEYS
    shape = "a table {mu_s = -, mu_k = -, ...} (keys: " + ", ".join(keys) + ")"
    if not isinstance(v, dict):
        raise _Bad(shape, _show(v))
    unknown = [k for k in v if k not in keys]
    if unknown:
        raise _Bad(_unknown_msg(unknown[0], keys, "friction"), None)
    missing = [k for k, (_, req) in keys.items() if req and k not in v]
    if missing:
        raise _Bad(f"{shape}, missing {', '.join(missing)}", _show(v))
    out = {}
    for k, x in v.items():
        try:
            out[k] = _CHECKS[keys[k][0]](x)
        except _Bad as exc:
            raise _Bad(f"friction.{k} as {exc.expected}", _show(x)) from None
    return out


def _law_table(keys: dict, required: tuple, what: str):
    """A check of an inline table ``{key = number, ...}`` with the ``keys``
    (``{key: unit}``), of which ``required`` must be given."""
    def check(v):
        shown = "{" + ", ".join(f"{k} = {u}" for k, u in keys.items()) + "}"
        if not isinstance(v, dict) or not set(required) <= set(v) or not set(v) <= set(keys):
            raise _Bad(f"a {what} table {shown} with at least {', '.join(required)}",
                       _show(v))
        return {k: _finite(x) for k, x in v.items()}
    return check


_CHECKS = {
    "str": _str, "name": _name, "float": _finite, "int": _int, "bool": _bool, "vec3": _vec(3),
    "vec6": _vec(6), "axis": _axis, "orientation": _orientation, "inertia": _inertia,
    "ref": _ref, "markers": _markers, "interfaces": _interfaces, "material": _material,
    "floats": _floats, "ints": _ints, "grid": _grid, "value": _value, "coordinate": _coordinate,
    "options": _options, "path": _str, "path_out": _str, "function": lambda v: v,   # checked in _function
    "sn_curve": _sn_curve, "matrix": _matrix, "feeds": _feeds, "friction": _friction,
    "contact_law": _law_table({"K": "N/m^n", "n": "-", "e": "-", "v_min": "m/s"}, ("K",),
                              "contact law"),
    "friction_law": _law_table({"mu_s": "-", "mu_k": "-", "v_s": "m/s", "c_v": "s/m"},
                               ("mu_s", "mu_k"), "friction law"),
}


class _Collector:
    """Collects problems of one file; ``where`` strings are key paths."""

    def __init__(self, path: Path):
        self.path, self.problems = path, []

    def add(self, where: str, msg: str) -> None:
        self.problems.append(f"{where}: {msg}")

    def bad(self, where: str, exc: _Bad) -> None:
        msg = f"expected {exc.expected}"
        if exc.show_found and exc.found is not None:
            msg += f", got {exc.found}"
        self.add(where, exc.message or msg)

    def raise_if_any(self) -> None:
        if not self.problems:
            return
        if len(self.problems) == 1:
            raise CaseError(f"{self.path}: {self.problems[0]}")
        raise CaseError(f"{self.path}: {len(self.problems)} problems:\n"
                        + "\n".join(f"  - {p}" for p in self.problems))


def _no_unknown(table: dict, allowed: dict, where: str = "") -> None:
    for k in table:
        if k not in allowed:
            raise _Bad(_unknown_msg(k, allowed, where), None)


def _unknown_msg(key: str, allowed, where: str = "") -> str:
    close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'? " if close else ""
    at = f"{where}." if where else ""
    return (f"a known key instead of unknown key '{at}{key}' ({hint}allowed: "
            + ", ".join(allowed) + ")")


def _section(col: _Collector, table, keys: dict, where: str, also: dict | None = None,
             elsewhere: dict | None = None) -> dict:
    """Check one table against ``keys``; unknown keys get a did-you-mean hint."""
    out: dict = {}
    if not isinstance(table, dict):
        col.add(where, f"expected a table, got {_found(table)}")
        return out
    for k, v in table.items():
        if k not in keys:
            close = difflib.get_close_matches(k, list(keys), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            if not hint and elsewhere and k in elsewhere:
                hint = f" (only valid for {elsewhere[k]})"
            col.add(f"{where}.{k}", f"unknown key{hint}; allowed here: " + ", ".join(keys))
            continue
        key = keys[k]
        try:
            val = _CHECKS[key.kind](v)
            _extra_check(key, val)
            if key.choices and val not in key.choices:
                close = difflib.get_close_matches(str(val), key.choices, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise _Bad("one of " + ", ".join(c or '""' for c in key.choices),
                           f"{_show(val)}{hint}")
        except _Bad as exc:
            col.bad(f"{where}.{k}", exc)
            continue
        if key.kind == "orientation" and isinstance(v, list):
            _note_rotation(col, f"{where}.{k}", table.get("name"), v, val)
        out[k] = val
    for key in keys.values():
        if key.name not in out and key.name not in table:
            if key.required:
                col.add(f"{where}.{key.name}", f"missing required key ({key.doc}"
                        + (f" [{key.unit}]" if key.unit != "-" else "") + ")")
            else:
                out[key.name] = key.default
    return out


def _extra_check(key: S.Key, val) -> None:
    vals = val if isinstance(val, tuple) else (val,)
    if key.check == "positive" and any(x <= 0 for x in vals):
        raise _Bad(f"a positive value [{key.unit}]", _show(list(vals) if len(vals) > 1 else val))
    if key.check == "nonneg" and any(x < 0 for x in vals):
        raise _Bad(f"a value >= 0 [{key.unit}]", _show(val))
    if key.check == "unit_interval" and not 0.0 <= val <= 1.0:
        raise _Bad("a value in [0, 1]", _show(val))


def _function(col: _Collector, v, where: str, vector: bool):
    """A drive value or load: number, [x, y, z] or a time-function table."""
    if isinstance(v, dict):
        kind = v.get("type")
        if kind not in S.FUNCTION_TYPES:
            close = difflib.get_close_matches(str(kind), S.FUNCTION_TYPES, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            col.add(f"{where}.type", "expected a time function type, one of "
                    + ", ".join(S.FUNCTION_TYPES) + f", got {_show(kind)}{hint}")
            return None
        body = {k: x for k, x in v.items() if k != "type"}
        spec = _section(col, body, S.FUNCTION[kind], where)
        spec["type"] = kind
        return spec
    try:
        return _vec(3)(v) if vector else _finite(v)
    except _Bad as exc:
        exc.expected += " or a time-function table {type = ...}"
        col.bad(where, exc)
        return None


def _item(col: _Collector, table, where: str, common: dict, by_type: dict) -> dict | None:
    if not isinstance(table, dict):
        col.add(where, f"expected a table, got {_type_name(table)}")
        return None
    kind = table.get("type")
    types = tuple(by_type)
    if not isinstance(kind, str) or kind not in by_type:
        if "type" not in table:
            col.add(f"{where}.type", "missing required key (one of " + ", ".join(types) + ")")
        else:
            close = difflib.get_close_matches(kind, types, n=1) if isinstance(kind, str) \
                else []
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            col.add(f"{where}.type", f"expected one of {', '.join(types)}, got "
                    f"{_found(kind)}{hint}")
        return None
    keys = {**common, **by_type[kind]}
    elsewhere = {}
    for t, ks in by_type.items():
        for k in ks:
            elsewhere.setdefault(k, f"type = \"{t}\"")
    spec = _section(col, table, keys, where, elsewhere=elsewhere)
    spec["path"] = where
    return spec


def read_raw(path: str | Path) -> dict:
    """The raw TOML data of a case file (:class:`CaseError` if missing or unreadable)."""
    path = Path(path)
    try:
        is_dir, is_file = path.is_dir(), path.is_file()
    except OSError as exc:                           # a name too long
        raise CaseError(f"{str(path)[:100]}: expected a case file, got a path the system "
                        f"refuses ({exc.strerror or exc})") from None
    if is_dir:
        raise CaseError(f"{path}: expected a case file (TOML), found a folder")
    if not is_file:
        raise CaseError(f"{path}: case file not found")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CaseError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")       # a byte-order mark (Windows editors) is fine
    except UnicodeDecodeError as exc:
        raise CaseError(f"{path}: expected UTF-8 text (TOML), found byte "
                        f"0x{data[exc.start]:02x} at offset {exc.start} that is not UTF-8"
                        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise CaseError(f"{path}: not valid TOML: arrays or tables nested too deeply"
                        ) from None


def load_case(path: str | Path) -> CaseSpec:
    """Read, check and normalise a case file; raises :class:`CaseError` on any problem."""
    return spec_from_raw(read_raw(path), path)


def _span(solver: dict) -> float:
    """``t_end - t0`` [s] with the round-off of its subtraction allowed (0.3 - 0.1 is
    0.19999999999999998: an interval of 0.2 s is not longer than that run)."""
    span = solver["t_end"] - solver.get("t0", 0.0)
    return span * (1.0 + 1e-9)


def spec_from_raw(raw: dict, path: str | Path) -> CaseSpec:
    """Check and normalise the data of a case (what :func:`read_raw` returns: the TOML
    data model of dicts, lists, strings, numbers, booleans and dates) as if read from the
    file ``path``, exactly as :func:`load_case` does: relative paths in it are relative
    to the folder of ``path``, errors name ``path``, the model is named after it unless
    ``[model] name`` is given.  ``path`` need not exist.  Raises :class:`CaseError`."""
    path = Path(path)
    col = _Collector(path)
    for k in raw:
        if k not in S.SECTIONS:
            close = difflib.get_close_matches(k, list(S.SECTIONS), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            col.add(k, f"unknown section{hint}; sections: " + ", ".join(S.SECTIONS))
    model = _section(col, raw.get("model", {}), S.MODEL, "model")
    if model.get("name") is not None:
        try:
            _file_name(model["name"])
        except _Bad as exc:
            col.bad("model.name", exc)
    lists = {}
    for sec in S.ARRAYS:
        val = raw.get(sec, [])
        if not isinstance(val, list):
            col.add(sec, f"expected an array of tables [[{sec}]], got {_type_name(val)}")
            val = []
        lists[sec] = val
    bodies = [_item(col, b, f"bodies[{i}]", S.BODY_COMMON, S.BODY)
              for i, b in enumerate(lists["bodies"])]
    joints = [_section(col, j, S.JOINT, f"joints[{i}]") | {"path": f"joints[{i}]"}
              for i, j in enumerate(lists["joints"])]
    drives = [_item(col, d, f"drives[{i}]", S.DRIVE_COMMON, S.DRIVE)
              for i, d in enumerate(lists["drives"])]
    constraints = [_item(col, c, f"constraints[{i}]", S.CONSTRAINT_COMMON, S.CONSTRAINT)
                   for i, c in enumerate(lists["constraints"])]
    constraints = [c for c in constraints if c is not None]
    forces = [_item(col, f, f"forces[{i}]", S.FORCE_COMMON, S.FORCE)
              for i, f in enumerate(lists["forces"])]
    sensors = [_item(col, s, f"sensors[{i}]", S.SENSOR_COMMON, S.SENSOR)
               for i, s in enumerate(lists["sensors"])]
    hotspots = [_section(col, h, S.HOTSPOT, f"hotspots[{i}]") | {"path": f"hotspots[{i}]"}
                for i, h in enumerate(lists["hotspots"])]
    if "solver" not in raw and "analysis" not in raw and not col.problems:
        col.add("solver", "missing section [solver] (needs at least t_end [s] and dt [s])")
        solver = {}
    else:
        solver = _section(col, raw.get("solver", {"t_end": 1.0, "dt": 1.0}) if "solver" in raw
                          else {"t_end": 1.0, "dt": 1.0}, S.SOLVER, "solver")
    output = _section(col, raw.get("output", {}), S.OUTPUT, "output")
    analysis = _section(col, raw["analysis"], S.ANALYSIS, "analysis") if "analysis" in raw \
        else None
    bodies = [b for b in bodies if b is not None]
    drives = [d for d in drives if d is not None]
    forces = [f for f in forces if f is not None]
    sensors = [s for s in sensors if s is not None]
    # the keys the schema types as time functions: vectors in loads (force, torque),
    # scalars elsewhere (drives, actuator commands, valve openings, references)
    for items, tables in ((drives, S.DRIVE), (forces, S.FORCE)):
        for it in items:
            vector = tables is S.FORCE and it.get("type") in ("force", "torque")
            for key in _function_keys(tables.get(it.get("type"), {})):
                if key in it and it[key] is not None:
                    it[key] = _function(col, it[key], f"{it['path']}.{key}", vector=vector)
    if solver and "t_end" in solver and "t0" in solver and solver["t_end"] <= solver["t0"]:
        col.add("solver.t_end", f"expected t_end > t0 = {solver['t0']} s, got {solver['t_end']}")
    elif solver.get("dt") and solver.get("t_end") and solver["dt"] > _span(solver):
        col.add("solver.dt", f"expected dt <= t_end - t0, got dt = {solver['dt']} s")
    elif "solver" in raw and output.get("dt") and solver.get("t_end") and \
            output["dt"] > _span(solver):
        span = solver["t_end"] - solver.get("t0", 0.0)
        col.add("output.dt", f"expected an output interval <= t_end - t0 = {span:g} s, got "
                f"{output['dt']:g} s (the results would hold only the start and the end; "
                f"check the unit, or set dt = {span:g} for those two)")
    _check_bodies(col, bodies, path.parent)
    raw_names = {sec: {t["name"] for t in lists[sec] if isinstance(t, dict)
                       and isinstance(t.get("name"), str)} for sec in ("bodies", "joints")}
    _check_references(col, bodies, joints, drives, forces, sensors, raw_names, constraints)
    _check_hotspots(col, hotspots, bodies, raw_names)
    col.raise_if_any()
    name = model.get("name") or default_name(path)
    return CaseSpec(path=path.resolve(), name=name, model=model, bodies=tuple(bodies),
                    joints=tuple(joints), drives=tuple(drives), forces=tuple(forces),
                    sensors=tuple(sensors), solver=solver, output=output, analysis=analysis,
                    hotspots=tuple(hotspots), constraints=tuple(constraints), raw=raw)


def default_name(path: Path) -> str:
    """The model name of a case file without ``[model] name``: the name of the folder
    of a ``case.toml`` (also when given as a relative ``case.toml``), else the file's
    stem (``flexmbs sweep`` names its variants' results by it).  Both are names of
    existing files, so they cannot reach into other folders."""
    path = Path(path).absolute()
    return (path.parent.name if path.name == "case.toml" else path.stem) or "case"


def _check_bodies(col: _Collector, bodies: list, folder: Path) -> None:
    for b in bodies:
        w = b["path"]
        if any(p.startswith((f"{w}.", f"{w}:")) for p in col.problems):
            continue              # a misspelt key would only cause follow-up errors here
        if b["type"] == "rigid":
            has_shape, has_mass = b.get("shape") is not None, b.get("m") is not None
            if has_shape and (has_mass or b.get("inertia") is not None):
                col.add(w, "give either `shape` + `density` or `m` + `inertia`, not both")
            elif has_shape:
                need = {"box": ("size",), "cylinder": ("radius", "length"),
                        "sphere": ("radius",)}[b["shape"]] + ("density",)
                for k in need:
                    if b.get(k) is None:
                        col.add(f"{w}.{k}", f"missing required key for shape = "
                                f"\"{b['shape']}\" ({S.BODY['rigid'][k].doc} "
                                f"[{S.BODY['rigid'][k].unit}])")
            elif not has_mass or b.get("inertia") is None:
                miss = "m" if not has_mass else "inertia"
                col.add(f"{w}.{miss}", "missing required key: a rigid body needs `m` [kg] and "
                        "`inertia` [kg m^2], or `shape` + `density` [kg/m^3]")
        if b["type"] == "flexible":
            mesh, bfile = b.get("mesh"), b.get("body_file")
            if (mesh is None) == (bfile is None):
                col.add(w, "a flexible body needs exactly one of `mesh` (with `material` and "
                        "`modes`) or `body_file`")
                continue
            key = "mesh" if mesh is not None else "body_file"
            given = mesh if mesh is not None else bfile
            if not given.strip() or "\0" in given:
                col.add(f"{w}.{key}", f"expected a file path, got {_show(given)}")
                continue
            try:
                p = (folder / given).resolve()
                is_dir, is_file = p.is_dir(), p.is_file()
            except (OSError, RuntimeError) as exc:      # name too long, symlink loop
                col.add(f"{w}.{key}", f"expected a usable file path, got {_show(given)[:80]}"
                        f" ({getattr(exc, 'strerror', None) or exc})")
                continue
            if is_dir:
                col.add(f"{w}.{key}", f"expected a file, found a folder: {p}")
            elif not is_file:
                rel = "" if Path(str(given)).is_absolute() else (
                    f" ({_show(given)} is relative to the case file's folder "
                    f"{folder.resolve()}; a case copied elsewhere needs the path changed "
                    f"or made absolute)")
                col.add(f"{w}.{key}", f"file not found: {p}{rel}")
            b[key] = p
            if b.get("damping", 0.0) >= 1.0:
                col.add(f"{w}.damping", f"expected a modal damping ratio in [0, 1), got "
                        f"{b['damping']}")
            if b.get("damping_ratios") is not None and (
                    b.get("rayleigh_alpha") is not None or b.get("rayleigh_beta") is not None):
                col.add(f"{w}.damping_ratios", "expected either per-mode `damping_ratios` or "
                        "Rayleigh `rayleigh_alpha`/`rayleigh_beta`, got both")
            if mesh is not None:
                own = Path(str(p)).suffix.lower() == ".inp" and _deck_material(p, b) is not None
                for k in ("material", "modes"):
                    if b.get(k) is None and not (k == "material" and own):
                        col.add(f"{w}.{k}", f"missing required key with `mesh` "
                                f"({S.BODY['flexible'][k].doc.split(';')[0]})")
            if b["frame"] != "mean_axis":
                itf = b["frame"].partition(":")[2]
                names = [s.partition(":")[0] for s in b["interfaces"]]
                if not b["frame"].startswith("interface:") or (mesh and itf not in names):
                    col.add(f"{w}.frame", f"expected mean_axis or interface:NAME with NAME in "
                            f"interfaces {names}, got \"{b['frame']}\"")


def _deck_material(path, b: dict):
    """The *MATERIAL of the Abaqus deck ``path`` (in the body's unit), or None (none, or a
    deck that does not read: the mesh reading names the problem later)."""
    from flexmbs.errors import MeshError
    from flexmbs.io.abaqus_deck import read_deck
    try:
        return read_deck(path, scale=1e-3 if b.get("unit") == "mm" else 1.0).material
    except (MeshError, OSError, ValueError):
        return None


def body_markers(b: dict) -> list[str] | None:
    """Marker names known from the case (None: only known after loading the body file)."""
    if b["type"] == "rigid":
        return list(b.get("markers") or {})
    if b["type"] == "point_mass":
        return []
    if b.get("mesh") is not None:
        if not isinstance(b.get("interfaces"), tuple):
            return None       # invalid interfaces: reported already
        return [s.partition(":")[0] for s in b["interfaces"]]
    return None


def _check_references(col, bodies, joints, drives, forces, sensors, raw_names=None,
                      constraints=()) -> None:
    """Names unique; every body, marker and joint referenced exists.  ``raw_names``:
    the names written in the file for bodies and joints, including those of items
    rejected already (a reference to one of them is not reported again)."""
    raw_names = raw_names or {"bodies": set(), "joints": set()}
    names: dict[str, str] = {}
    for group, items in (("body", bodies), ("joint", joints), ("drive", drives),
                         ("force element", forces), ("sensor", sensors),
                         ("velocity constraint", constraints)):
        for it in items:
            nm = it.get("name")
            if nm is None:
                continue
            if nm in names:
                col.add(f"{it['path']}.name", f"name \"{nm}\" already used by a {names[nm]}")
            names[nm] = group
    by_name = {b["name"]: b for b in bodies if "name" in b and "type" in b}
    joint_names = [j["name"] for j in joints if "name" in j]

    def ref(it, key):
        v = it.get(key)
        if v is None:
            return
        body, _, marker = v.partition(".")
        if body == "ground":
            return
        if body not in by_name:
            if body in raw_names["bodies"]:
                return                      # the body itself is invalid: reported already
            close = difflib.get_close_matches(body, list(by_name), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            col.add(f"{it['path']}.{key}", f"unknown body \"{body}\"{hint}; bodies: "
                    + (", ".join(by_name) or "none") + ", ground")
            return
        if marker:
            known = body_markers(by_name[body])
            if known is not None and marker not in known:
                close = difflib.get_close_matches(marker, known, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                col.add(f"{it['path']}.{key}", f"body \"{body}\" has no marker \"{marker}\""
                        f"{hint}; markers: " + (", ".join(known) or "none"))

    for c in constraints:
        for key in ("plane", "disc", "wheel", "edge", "first", "second"):
            ref(c, key)
    for j in joints:
        ref(j, "first")
        ref(j, "second")
        if j.get("type") == "helical" and j.get("pitch") == 0.0:
            col.add(f"{j['path']}.pitch", "expected a non-zero advance per turn [m/turn] for "
                    "a helical joint, got 0")
        elif j.get("type") == "helical" and j.get("pitch") is None and \
                f"{j['path']}.pitch" not in {p.split(":")[0] for p in col.problems}:
            col.add(f"{j['path']}.pitch", "missing required key for a helical joint (advance "
                    "per turn [m/turn], non-zero)")
        elif j.get("type") not in (None, "helical") and j.get("pitch") is not None:
            col.add(f"{j['path']}.pitch", "only valid for type = \"helical\"")
        if j.get("type") == "clearance_revolute" and isinstance(j.get("friction"), dict):
            for k in j["friction"]:
                if k not in S.LAW_FRICTION_KEYS:
                    col.add(f"{j['path']}.friction.{k}", "a clearance_revolute's friction "
                            "takes " + ", ".join(S.LAW_FRICTION_KEYS) + " only")
        for key, types in S.JOINT_ONLY.items():
            if j.get("type") not in (None, *types) and j.get(key) is not None \
                    and j.get(key) != S.JOINT[key].default:
                col.add(f"{j['path']}.{key}", "only valid for type = "
                        + " | ".join(f'"{t}"' for t in types))
        if j.get("first") is not None and j.get("first") == j.get("second"):
            col.add(f"{j['path']}.second", f"expected a side other than first, got "
                    f"\"{j['second']}\"")
    for s in sensors:
        ref(s, "first")
        ref(s, "second")
    for f in forces:
        if f.get("type") in ("force", "torque") and f.get("at") == "ground":
            col.add(f"{f['path']}.at", f"expected a body (\"BODY\" or \"BODY.MARKER\"), "
                    f"got \"ground\": a {f['type']} on the ground does nothing")
        if f.get("type") in ("spring_damper", "bushing", "linear_actuator",
                             "hydraulic_cylinder", "servo_cylinder") and f.get("first") is not None and \
                f.get("first") == f.get("second"):
            col.add(f"{f['path']}.second", f"expected a side other than first, got "
                    f"\"{f['second']}\"")
        for key in ("first", "second", "at"):
            ref(f, key)
            v = f.get(key)
            if f["type"] == "torque" and key == "at" and v:
                b = by_name.get(v.partition(".")[0])
                if b is not None and b["type"] == "point_mass":
                    col.add(f"{f['path']}.at", f"a torque needs a body with rotations, "
                            f"\"{b['name']}\" is a point mass")
    for it in [*drives, *forces]:
        jn = it.get("joint")
        if jn is not None and jn not in joint_names and jn not in raw_names["joints"]:
            close = difflib.get_close_matches(jn, joint_names, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            col.add(f"{it['path']}.joint", f"unknown joint \"{jn}\"{hint}; joints: "
                    + (", ".join(joint_names) or "none"))


def _check_hotspots(col: _Collector, hotspots: list, bodies: list, raw_names: dict) -> None:
    """Each hot spot names a flexible body and exactly one of `node_set` or `point`;
    names are unique among hot spots."""
    kinds_of = {b["name"]: b["type"] for b in bodies if "name" in b and "type" in b}
    seen: set = set()
    for h in hotspots:
        w = h["path"]
        name = h.get("name")            # (a missing name is reported by the schema)
        if name is not None and name in seen:
            col.add(f"{w}.name", f"name \"{name}\" already used by a hot spot")
        seen.add(name)
        body = h.get("body")
        if body is not None and kinds_of.get(body) != "flexible" and \
                body not in raw_names["bodies"] - set(kinds_of):
            flexible = [n for n, k in kinds_of.items() if k == "flexible"]
            found = f"a {kinds_of[body]} body" if body in kinds_of else "no such body"
            col.add(f"{w}.body", f"expected a flexible body ({', '.join(flexible) or 'none'}"
                    f"), got \"{body}\" ({found})")
        if (h.get("node_set") is None) == (h.get("point") is None) and \
                not any(p.startswith(f"{w}.") for p in col.problems):
            col.add(w, "expected exactly one of `node_set` (a named node set) or `point` "
                    "[m] (snapped to the nearest node)")
