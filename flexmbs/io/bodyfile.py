"""The reduced-body HDF5 file (``format = "flexmbs-body"``, ``version = 1``).

Layout and every dataset (shape, unit, THEORY symbol, SID name) are documented in
``docs/body_file.md``.  :func:`save_body` writes a :class:`ReducedBody`;
:func:`load_body` reads one back and checks format, version and consistency, raising
:class:`~flexmbs.errors.BodyFileError` that names the file and the dataset.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

import h5py
import numpy as np

from flexmbs.errors import BodyFileError
from flexmbs.io.cell_types import NODES, cell_blocks

FORMAT = "flexmbs-body"
VERSION = 1

#: invariant datasets: name -> shape pattern ('q' = n_q, 'N' = nodes, 'E' = cells, 'k')
INVARIANTS = {
    "m": (), "s0": (3,), "C_t": ("q", 3), "J0": (3, 3), "J1": ("q", 3, 3),
    "J2": ("q", "q", 3, 3), "M_e": ("q", "q"), "I0": (3, 3), "I1": ("q", 3, 3),
    "I2": ("q", "q", 3, 3), "C_r0": ("q", 3), "C_r1": ("q", "q", 3),
    "O_e0": ("q", 3, 3), "O_e1": ("q", "q", 3, 3),
}
STIFFNESS = {"K_e": ("q", "q"), "D_e": ("q", "q"), "K2": ("q", "q", "q"),
             "K3": ("q", "q", "q", "q"), "omega": ("q",), "zeta": ("q",)}
MESH = {"points": ("N", 3), "cells": ("E", "k"), "modes": ("N", 3, "q"),
        "stress_modes": ("N", 6, "q")}


def _ro(a, dtype=float) -> np.ndarray:
    a = np.array(a, dtype=dtype, copy=True)
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Marker:
    """Interface marker: ``kind`` 'rbe2'/'rbe3', reference point ``R`` (3,) [m] in the body
    frame, elastic translation ``Phi q`` (Phi (3, n_q) [m]) and rotation ``Psi q``
    (Psi (3, n_q) [rad]); ``nodes`` (n_i,) mesh node ids, ``weights`` (n_i,);
    ``stress_residual`` (N, 6, 6) [Pa/N, Pa/(N m)]: nodal stress of the residual
    flexibility per unit wrench ``[F; M]`` at the marker (body frame), or None
    (``flexmbs.reduction.residual``)."""

    name: str
    kind: str
    R: np.ndarray
    Phi: np.ndarray
    Psi: np.ndarray
    nodes: np.ndarray
    weights: np.ndarray
    stress_residual: np.ndarray | None = None

    def __post_init__(self):
        for k in ("R", "Phi", "Psi", "weights"):
            object.__setattr__(self, k, _ro(getattr(self, k)))
        if self.stress_residual is not None:
            object.__setattr__(self, "stress_residual", _ro(self.stress_residual))
        object.__setattr__(self, "nodes", _ro(self.nodes, np.int64))


@dataclass(frozen=True)
class Face:
    """Face-load integrals of a named facet set (reference configuration):
    ``F_n = int n dA`` (3) [m^2], ``F_m = int R x n dA`` (3) [m^3],
    ``F_q = int Phi^T n dA`` (n_q) [m^2]; for its mean displacement the area ``A`` [m^2],
    centroid ``X_c`` (3) [m] and mean mode ``Phi_c = int Phi dA / A`` (3, n_q) (None in
    body files written before they were stored); ``facets`` (F, k) the node indices of
    its facets (None in older body files), for contact with the deformed face."""

    name: str
    F_n: np.ndarray
    F_m: np.ndarray
    F_q: np.ndarray
    A: float = float("nan")
    X_c: np.ndarray | None = None
    Phi_c: np.ndarray | None = None
    facets: np.ndarray | None = None

    def __post_init__(self):
        for k in ("F_n", "F_m", "F_q", "X_c", "Phi_c"):
            if getattr(self, k) is not None:
                object.__setattr__(self, k, _ro(getattr(self, k)))
        if self.facets is not None:
            object.__setattr__(self, "facets", _ro(self.facets, np.int64))
        object.__setattr__(self, "A", float(self.A))


@dataclass(frozen=True)
class ReducedBody:
    """A reduced flexible body (floating frame of reference, frame R = mesh axes).

    Invariants (THEORY §2.3, §2.8.2): ``m`` [kg], ``s0`` (3), ``C_t`` (n_q,3), ``J0`` (3,3),
    ``J1`` (n_q,3,3), ``J2`` (n_q,n_q,3,3), ``M_e`` (n_q,n_q), ``I0``, ``I1``, ``I2``,
    ``C_r0`` (n_q,3), ``C_r1`` (n_q,n_q,3), ``O_e0`` (n_q,3,3), ``O_e1`` (n_q,n_q,3,3).
    Stiffness: ``K_e`` (n_q,n_q) [N/m], ``D_e`` (n_q,n_q), ``K2`` (n_q,)*3, ``K3`` (n_q,)*4
    (both empty (0,...) if not computed), ``omega`` (n_q,) [rad/s], ``zeta`` (n_q,).
    Mesh: ``points`` (N,3) [m], ``cells`` (E,k), ``cell_type``, ``modes`` (N,3,n_q),
    ``stress_modes`` (N,6,n_q) [Pa] (Voigt xx,yy,zz,yz,xz,xy).
    ``frame``: 'mean_axis' or 'interface:NAME'; ``method``; ``markers``; ``faces``;
    ``material`` dict (E, nu, rho, name); ``provenance`` dict; ``name``.
    """

    name: str
    m: float
    s0: np.ndarray
    C_t: np.ndarray
    J0: np.ndarray
    J1: np.ndarray
    J2: np.ndarray
    M_e: np.ndarray
    I0: np.ndarray
    I1: np.ndarray
    I2: np.ndarray
    C_r0: np.ndarray
    C_r1: np.ndarray
    O_e0: np.ndarray
    O_e1: np.ndarray
    K_e: np.ndarray
    D_e: np.ndarray
    K2: np.ndarray
    K3: np.ndarray
    omega: np.ndarray
    zeta: np.ndarray
    points: np.ndarray
    cells: np.ndarray
    cell_type: str
    modes: np.ndarray
    stress_modes: np.ndarray
    frame: str
    method: str
    markers: tuple[Marker, ...] = ()
    faces: tuple[Face, ...] = ()
    material: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "m", float(self.m))
        for k in (*INVARIANTS, *STIFFNESS, "points", "modes", "stress_modes"):
            if k != "m":
                object.__setattr__(self, k, _ro(getattr(self, k)))
        object.__setattr__(self, "cells", _ro(self.cells, np.int64))
        object.__setattr__(self, "markers", tuple(self.markers))
        object.__setattr__(self, "faces", tuple(self.faces))

    @property
    def n_q(self) -> int:
        return self.M_e.shape[0]

    @property
    def frequencies(self) -> np.ndarray:
        """``omega / 2 pi`` [Hz]."""
        return self.omega / (2 * np.pi)

    @property
    def has_stiffening(self) -> bool:
        return self.K2.size > 0

    def marker(self, name: str) -> Marker:
        for mk in self.markers:
            if mk.name == name:
                return mk
        raise KeyError(f"body '{self.name}': no marker {name!r}; "
                       f"available: {[mk.name for mk in self.markers]}")


# ------------------------------------------------------------------------------ writing

def _dataset(group, name: str, data, compression: str | None = None) -> None:
    """A dataset with a Fletcher-32 checksum (damaged files fail to read, not read
    garbage); scalars and empty arrays cannot carry one."""
    data = np.asarray(data)
    if data.ndim == 0 or data.size == 0:
        group.create_dataset(name, data=data)
    else:
        group.create_dataset(name, data=data, compression=compression, fletcher32=True)


def save_body(path: str | Path, body: ReducedBody) -> None:
    """Write ``body`` to ``path`` (overwrites)."""
    path = Path(path)
    # no chunk cache: HDF5 crashes closing a file whose cached chunks could not be
    # written (a full disk); every dataset is written once anyway
    with h5py.File(path, "w", libver=("v108", "latest"), rdcc_nbytes=0) as f:
        f.attrs["format"] = FORMAT
        f.attrs["version"] = VERSION
        f.attrs["name"] = body.name
        f.attrs["frame"] = body.frame
        f.attrs["method"] = body.method
        f.attrs["n_q"] = body.n_q
        g = f.create_group("invariants")
        for k in INVARIANTS:
            _dataset(g, k, getattr(body, k))
        g = f.create_group("stiffness")
        for k in STIFFNESS:
            _dataset(g, k, getattr(body, k), compression="gzip"
                     if getattr(body, k).size > 10000 else None)
        g = f.create_group("mesh")
        g.attrs["cell_type"] = body.cell_type
        for k in MESH:
            _dataset(g, k, getattr(body, k), compression="gzip")
        g = f.create_group("markers")
        for i, mk in enumerate(body.markers):
            h = g.create_group(mk.name)
            h.attrs["kind"], h.attrs["order"] = mk.kind, i
            for k in ("R", "Phi", "Psi", "nodes", "weights"):
                _dataset(h, k, getattr(mk, k))
            if mk.stress_residual is not None:
                _dataset(h, "stress_residual", mk.stress_residual, compression="gzip")
        g = f.create_group("faces")
        for i, fc in enumerate(body.faces):
            h = g.create_group(fc.name)
            h.attrs["order"] = i
            for k in ("F_n", "F_m", "F_q", "X_c", "Phi_c", "facets"):
                if getattr(fc, k) is not None:
                    _dataset(h, k, getattr(fc, k))
            h.attrs["A"] = fc.A
        g = f.create_group("material")
        for k, v in body.material.items():
            g.attrs[k] = v
        f.create_group("provenance").attrs["json"] = json.dumps(body.provenance, sort_keys=True)


# ------------------------------------------------------------------------------ reading

def _read(f, path: Path, key: str) -> np.ndarray:
    full = f"{f.name.rstrip('/')}/{key}"
    if key not in f:
        raise BodyFileError(f"body file '{path}': dataset '{full}' is missing")
    item = f[key]
    if not isinstance(item, h5py.Dataset):
        raise BodyFileError(f"body file '{path}': '{full}' must be a dataset, got a group")
    key = full.lstrip("/")
    try:
        a = np.asarray(item[()])
    except (OSError, ValueError, TypeError) as exc:
        raise BodyFileError(f"body file '{path}': dataset '/{key}' cannot be read "
                            f"({exc})") from None
    if a.dtype.kind not in "biuf":
        raise BodyFileError(f"body file '{path}': dataset '/{key}' must hold numbers, got "
                            f"dtype {a.dtype}")
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))[0].tolist() if a.ndim else []
        raise BodyFileError(f"body file '{path}': dataset '/{key}' must be finite, found "
                            f"{a[tuple(bad)] if a.ndim else a.item()} at index {bad}")
    return a


def _group(f, path: Path, key: str):
    if key not in f or not isinstance(f[key], h5py.Group):
        raise BodyFileError(f"body file '{path}': group '/{key}' is missing")
    return f[key]


def _attr(obj, path: Path, where: str, key: str, default=None):
    """A string attribute (``default`` if absent and a default is given)."""
    if key not in obj.attrs:
        if default is not None:
            return default
        raise BodyFileError(f"body file '{path}': attribute '{where}{key}' is missing")
    v = obj.attrs[key]
    if isinstance(v, bytes):
        try:
            v = v.decode()
        except UnicodeDecodeError:
            raise BodyFileError(f"body file '{path}': attribute '{where}{key}' must be text, "
                                f"got bytes {v[:20]!r}") from None
    if isinstance(v, np.ndarray) and v.shape == ():
        v = v.item()
    if isinstance(v, str) and not _is_text(v):
        raise BodyFileError(f"body file '{path}': attribute '{where}{key}' must be UTF-8 "
                            f"text, got {v.encode('utf-8', 'backslashreplace')[:40]!r}")
    return v


def _is_text(v: str) -> bool:
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return v.isprintable() or not v


def _int_attr(obj, path: Path, where: str, key: str) -> int:
    v = _attr(obj, path, where, key)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise BodyFileError(f"body file '{path}': attribute '{where}{key}' must be an "
                            f"integer, got {v!r}")
    return int(v)


def _check_shape(path: Path, key: str, a: np.ndarray, pattern: tuple, dims: dict) -> None:
    expected = tuple(dims.get(p, p) if isinstance(p, str) else p for p in pattern)
    ok = a.ndim == len(expected) and all(
        isinstance(e, str) or e == s for e, s in zip(expected, a.shape))
    if not ok:
        raise BodyFileError(f"body file '{path}': dataset '/{key}' must have shape "
                            f"{expected}, got {a.shape}")


def _check_facets(path: Path, name: str, facets: np.ndarray, dims: dict) -> None:
    """The node indices ``/faces/NAME/facets`` (F, k): integers within the points."""
    if facets.ndim != 2 or facets.dtype.kind not in "iu" or (
            facets.size and (facets.min() < 0 or facets.max() >= dims["N"])):
        raise BodyFileError(f"body file '{path}': dataset '/faces/{name}/facets' must be "
                            f"(F, k) integers indexing the {dims['N']} points, got shape "
                            f"{facets.shape}, dtype {facets.dtype}")


def load_body(path: str | Path) -> ReducedBody:
    """Read and validate a reduced-body file written by :func:`save_body`.

    Every problem is a :class:`BodyFileError` naming the file and the dataset or
    attribute: not HDF5, wrong format or version, a missing or misshapen dataset, a value
    that is not finite (NaN, inf), node indices out of range, inconsistent invariants.
    """
    path = Path(path)
    try:
        is_dir, is_file = path.is_dir(), path.is_file()
    except OSError as exc:                           # a name too long
        raise BodyFileError(f"body file '{str(path)[:100]}': {exc.strerror or exc}") from None
    if is_dir:
        raise BodyFileError(f"body file '{path}': expected a file, found a folder")
    if not is_file:
        raise BodyFileError(f"body file '{path}' does not exist")
    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as exc:
        raise BodyFileError(f"body file '{path}': not a readable HDF5 file ({exc})") from None
    try:
        with f:
            body = _read_body(f, path)
    except BodyFileError:
        raise
    except (OSError, KeyError, ValueError, TypeError, AttributeError, IndexError,
            RuntimeError) as exc:   # h5py raises all of these on damaged files
        raise BodyFileError(f"body file '{path}': damaged or not written by flexmbs "
                            f"preprocess ({type(exc).__name__}: {exc})") from None
    check_body(body, path)
    return body


def _read_body(f, path: Path) -> ReducedBody:
    fmt = _attr(f, path, "/", "format", default="<missing>")
    if fmt != FORMAT:
        raise BodyFileError(f"body file '{path}': attribute '/format' must be "
                            f"{FORMAT!r}, got {fmt!r}")
    ver = _attr(f, path, "/", "version", default="<missing>")
    if isinstance(ver, (bool, np.bool_)) or not isinstance(ver, (int, np.integer)) \
            or int(ver) != VERSION:
        raise BodyFileError(f"body file '{path}': attribute '/version' must be the integer "
                            f"{VERSION}, got {ver!r} (re-run flexmbs preprocess)")
    data: dict = {}
    for grp, table in (("invariants", INVARIANTS), ("stiffness", STIFFNESS), ("mesh", MESH)):
        _group(f, path, grp)
        for k in table:
            data[k] = _read(f, path, f"{grp}/{k}")
    n_q = data["M_e"].shape[0] if data["M_e"].ndim == 2 else -1
    n_points = data["points"].shape[0] if data["points"].ndim >= 1 else -1
    dims = {"q": n_q, "N": n_points,
            "E": data["cells"].shape[0] if data["cells"].ndim >= 1 else -1}
    for grp, table in (("invariants", INVARIANTS), ("stiffness", STIFFNESS), ("mesh", MESH)):
        for k, pattern in table.items():
            if k in ("K2", "K3") and data[k].size == 0:
                continue
            _check_shape(path, f"{grp}/{k}", data[k], pattern, dims)
    if n_q < 1:
        raise BodyFileError(f"body file '{path}': dataset '/invariants/M_e' must have at "
                            f"least one coordinate, got shape {data['M_e'].shape}")
    cells = data["cells"]
    if cells.dtype.kind not in "iu":
        raise BodyFileError(f"body file '{path}': dataset '/mesh/cells' must hold integers, "
                            f"got dtype {cells.dtype}")
    cell_type = str(_attr(_group(f, path, "mesh"), path, "/mesh/", "cell_type"))
    mixed = "+" in cell_type                  # blocks padded with -1 (cell_types)
    low = -1 if mixed else 0
    if cells.size and (cells.min() < low or cells.max() >= n_points):
        raise BodyFileError(f"body file '{path}': dataset '/mesh/cells' must index the "
                            f"{n_points} points, found node ids {cells.min()}..{cells.max()}")
    k_nodes = NODES
    if mixed:
        try:
            cell_blocks(cell_type, cells)
        except ValueError as exc:
            raise BodyFileError(f"body file '{path}': attribute '/mesh/cell_type' "
                                f"{cell_type!r} must match the blocks of '/mesh/cells': "
                                f"{exc}") from None
    elif k_nodes.get(cell_type) != cells.shape[1]:
        raise BodyFileError(f"body file '{path}': attribute '/mesh/cell_type' must be one of "
                            f"{sorted(k_nodes)} matching the {cells.shape[1]} nodes per cell "
                            f"of '/mesh/cells', got {cell_type!r}")
    markers = []
    items = sorted(_group(f, path, "markers").items(),
                   key=lambda kv: _int_attr(kv[1], path, f"/markers/{kv[0]}/", "order"))
    for name, h in items:
        where = f"markers/{name}"
        if not _is_text(name) or not name:
            raise BodyFileError(f"body file '{path}': group '/markers/...' must have a "
                                f"printable name, got {name!r}")
        mk = {k: _read(h, path, k) for k in ("R", "Phi", "Psi", "nodes", "weights")}
        for k, pat in (("R", (3,)), ("Phi", (3, "q")), ("Psi", (3, "q"))):
            _check_shape(path, f"{where}/{k}", mk[k], pat, dims)
        nodes = mk["nodes"]
        if nodes.ndim != 1 or nodes.dtype.kind not in "iu" or (
                nodes.size and (nodes.min() < 0 or nodes.max() >= n_points)):
            raise BodyFileError(f"body file '{path}': dataset '/{where}/nodes' must be node "
                                f"ids 0..{n_points - 1}, got {nodes.dtype} of shape "
                                f"{nodes.shape}")
        if mk["weights"].shape != nodes.shape:
            raise BodyFileError(f"body file '{path}': dataset '/{where}/weights' must have "
                                f"shape {nodes.shape}, got {mk['weights'].shape}")
        if "stress_residual" in h:
            mk["stress_residual"] = _read(h, path, "stress_residual")
            _check_shape(path, f"{where}/stress_residual", mk["stress_residual"],
                         ("N", 6, 6), dims)
        kind = str(_attr(h, path, f"/{where}/", "kind"))
        if kind not in ("rbe2", "rbe3"):
            raise BodyFileError(f"body file '{path}': attribute '/{where}/kind' must be "
                                f"'rbe2' or 'rbe3', got {kind!r}")
        markers.append(Marker(name=name, kind=kind, **mk))
    faces = []
    items = sorted(_group(f, path, "faces").items(),
                   key=lambda kv: _int_attr(kv[1], path, f"/faces/{kv[0]}/", "order"))
    for name, h in items:
        fc = {k: _read(h, path, k) for k in ("F_n", "F_m", "F_q")}
        for k, pat in (("F_n", (3,)), ("F_m", (3,)), ("F_q", ("q",))):
            _check_shape(path, f"faces/{name}/{k}", fc[k], pat, dims)
        if "Phi_c" in h and "X_c" in h:            # (older body files have neither)
            fc["X_c"], fc["Phi_c"] = _read(h, path, "X_c"), _read(h, path, "Phi_c")
            for k, pat in (("X_c", (3,)), ("Phi_c", (3, "q"))):
                _check_shape(path, f"faces/{name}/{k}", fc[k], pat, dims)
            fc["A"] = float(_attr(h, path, f"/faces/{name}/", "A", float("nan")))
        if "facets" in h:                           # (nor facets)
            fc["facets"] = _read(h, path, "facets")
            _check_facets(path, name, fc["facets"], dims)
        faces.append(Face(name=name, **fc))
    grp = _group(f, path, "material")
    material = {k: _attr(grp, path, "/material/", k) for k in grp.attrs}
    if not isinstance(material.get("name", ""), str):
        raise BodyFileError(f"body file '{path}': attribute '/material/name' must be text, "
                            f"got {material['name']!r}")
    for k in ("E", "nu", "rho"):
        v = material.get(k)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
            raise BodyFileError(f"body file '{path}': attribute '/material/{k}' must be a "
                                f"finite number, got {v!r}")
    prov_text = _attr(_group(f, path, "provenance"), path, "/provenance/", "json", "{}")
    try:
        provenance = json.loads(prov_text)
    except (TypeError, ValueError) as exc:
        raise BodyFileError(f"body file '{path}': attribute '/provenance/json' must be JSON "
                            f"({exc})") from None
    if not isinstance(provenance, dict):
        raise BodyFileError(f"body file '{path}': attribute '/provenance/json' must be a "
                            f"JSON object, got {type(provenance).__name__}")
    frame = str(_attr(f, path, "/", "frame"))
    if frame != "mean_axis" and not frame.startswith("interface:"):
        raise BodyFileError(f"body file '{path}': attribute '/frame' must be 'mean_axis' or "
                            f"'interface:NAME', got {frame!r}")
    if data["m"].ndim != 0:
        raise BodyFileError(f"body file '{path}': dataset '/invariants/m' must be a "
                            f"scalar, got shape {data['m'].shape}")
    return ReducedBody(name=str(_attr(f, path, "/", "name")), frame=frame,
                       method=str(_attr(f, path, "/", "method")),
                       cell_type=cell_type, markers=tuple(markers),
                       faces=tuple(faces), material=material, provenance=provenance,
                       **{k: (float(v) if k == "m" else v) for k, v in data.items()})


def check_body(body: ReducedBody, path: str | Path = "<memory>") -> None:
    """Physical consistency: every array finite; ``m > 0``; ``M_e`` symmetric positive
    definite; ``K_e`` symmetric.  ``path``: the file the body was read from (the default
    names a body just reduced, not yet written: its material or mesh is at fault)."""
    what = (f"reduced body '{body.name}' (check the material and mesh)"
            if str(path) == "<memory>" else f"body file '{path}'")
    for k in (*INVARIANTS, *STIFFNESS, "points", "modes", "stress_modes"):
        a = np.asarray(getattr(body, k), dtype=float)
        if not np.isfinite(a).all():
            grp = ("invariants" if k in INVARIANTS else "stiffness" if k in STIFFNESS
                   else "mesh")
            raise BodyFileError(f"{what}: dataset '/{grp}/{k}' must be finite, found "
                                f"{int((~np.isfinite(a)).sum())} NaN or inf value(s)")
    if not body.m > 0:
        raise BodyFileError(f"{what}: dataset '/invariants/m' must be > 0, got {body.m}")
    Me = body.M_e
    scale = max(np.abs(Me).max(), 1e-300)
    if np.abs(Me - Me.T).max() > 1e-8 * scale:
        raise BodyFileError(f"{what}: dataset '/invariants/M_e' is not symmetric "
                            f"(max asymmetry {np.abs(Me - Me.T).max():.3g})")
    try:
        np.linalg.cholesky(Me)
    except np.linalg.LinAlgError:
        raise BodyFileError(f"{what}: dataset '/invariants/M_e' is not positive "
                            "definite") from None
    Ke = body.K_e
    kscale = max(np.abs(Ke).max(), 1e-300)
    if np.abs(Ke - Ke.T).max() > 1e-6 * kscale:
        raise BodyFileError(f"{what}: dataset '/stiffness/K_e' is not symmetric "
                            f"(max asymmetry {np.abs(Ke - Ke.T).max():.3g})")


def body_fields() -> list[str]:
    """Names of the :class:`ReducedBody` fields (for docs and tests)."""
    return [f.name for f in fields(ReducedBody)]
