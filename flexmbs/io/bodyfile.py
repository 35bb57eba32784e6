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
    (Psi (3, n_q) [rad]); ``nodes`` (n_i,) mesh node ids, ``weights`` (n_i,)."""

    name: str
    kind: str
    R: np.ndarray
    Phi: np.ndarray
    Psi: np.ndarray
    nodes: np.ndarray
    weights: np.ndarray

    def __post_init__(self):
        for k in ("R", "Phi", "Psi", "weights"):
            object.__setattr__(self, k, _ro(getattr(self, k)))
        object.__setattr__(self, "nodes", _ro(self.nodes, np.int64))


@dataclass(frozen=True)
class Face:
    """Face-load integrals of a named facet set (reference configuration):
    ``F_n = int n dA`` (3) [m^2], ``F_m = int R x n dA`` (3) [m^3],
    ``F_q = int Phi^T n dA`` (n_q) [m^2]."""

    name: str
    F_n: np.ndarray
    F_m: np.ndarray
    F_q: np.ndarray

    def __post_init__(self):
        for k in ("F_n", "F_m", "F_q"):
            object.__setattr__(self, k, _ro(getattr(self, k)))


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

def save_body(path: str | Path, body: ReducedBody) -> None:
    """Write ``body`` to ``path`` (overwrites)."""
    path = Path(path)
    with h5py.File(path, "w") as f:
        f.attrs["format"] = FORMAT
        f.attrs["version"] = VERSION
        f.attrs["name"] = body.name
        f.attrs["frame"] = body.frame
        f.attrs["method"] = body.method
        f.attrs["n_q"] = body.n_q
        g = f.create_group("invariants")
        for k in INVARIANTS:
            g.create_dataset(k, data=np.asarray(getattr(body, k)))
        g = f.create_group("stiffness")
        for k in STIFFNESS:
            g.create_dataset(k, data=getattr(body, k), compression="gzip"
                             if getattr(body, k).size > 10000 else None)
        g = f.create_group("mesh")
        g.attrs["cell_type"] = body.cell_type
        for k in MESH:
            g.create_dataset(k, data=getattr(body, k), compression="gzip")
        g = f.create_group("markers")
        for i, mk in enumerate(body.markers):
            h = g.create_group(mk.name)
            h.attrs["kind"], h.attrs["order"] = mk.kind, i
            for k in ("R", "Phi", "Psi", "nodes", "weights"):
                h.create_dataset(k, data=getattr(mk, k))
        g = f.create_group("faces")
        for i, fc in enumerate(body.faces):
            h = g.create_group(fc.name)
            h.attrs["order"] = i
            for k in ("F_n", "F_m", "F_q"):
                h.create_dataset(k, data=getattr(fc, k))
        g = f.create_group("material")
        for k, v in body.material.items():
            g.attrs[k] = v
        f.create_group("provenance").attrs["json"] = json.dumps(body.provenance, sort_keys=True)


# ------------------------------------------------------------------------------ reading

def _read(f, path: Path, key: str) -> np.ndarray:
    if key not in f:
        raise BodyFileError(f"body file '{path}': dataset '/{key}' is missing")
    return f[key][()]


def _check_shape(path: Path, key: str, a: np.ndarray, pattern: tuple, dims: dict) -> None:
    expected = tuple(dims.get(p, p) if isinstance(p, str) else p for p in pattern)
    ok = a.ndim == len(expected) and all(
        isinstance(e, str) or e == s for e, s in zip(expected, a.shape))
    if not ok:
        raise BodyFileError(f"body file '{path}': dataset '/{key}' must have shape "
                            f"{expected}, got {a.shape}")


def load_body(path: str | Path) -> ReducedBody:
    """Read and validate a reduced-body file written by :func:`save_body`."""
    path = Path(path)
    if not path.is_file():
        raise BodyFileError(f"body file '{path}' does not exist")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise BodyFileError(f"body file '{path}': not a readable HDF5 file ({exc})") from exc
    with f:
        fmt, ver = f.attrs.get("format"), f.attrs.get("version")
        if fmt != FORMAT:
            raise BodyFileError(f"body file '{path}': attribute '/format' must be "
                                f"{FORMAT!r}, got {fmt!r}")
        if ver is None or int(ver) != VERSION:
            raise BodyFileError(f"body file '{path}': attribute '/version' must be "
                                f"{VERSION}, got {ver!r} (re-run flexmbs preprocess)")
        data: dict = {}
        for grp, table in (("invariants", INVARIANTS), ("stiffness", STIFFNESS),
                           ("mesh", MESH)):
            for k in table:
                data[k] = _read(f, path, f"{grp}/{k}")
        n_q = data["M_e"].shape[0] if data["M_e"].ndim == 2 else -1
        dims = {"q": n_q, "N": data["points"].shape[0], "E": data["cells"].shape[0]}
        for grp, table in (("invariants", INVARIANTS), ("stiffness", STIFFNESS),
                           ("mesh", MESH)):
            for k, pattern in table.items():
                if k in ("K2", "K3") and data[k].size == 0:
                    continue
                _check_shape(path, f"{grp}/{k}", data[k], pattern, dims)
        markers = []
        for name, h in sorted(f["markers"].items(), key=lambda kv: kv[1].attrs["order"]):
            mk = {k: _read(h, path, k) for k in ("R", "Phi", "Psi", "nodes", "weights")}
            for k, pat in (("R", (3,)), ("Phi", (3, "q")), ("Psi", (3, "q"))):
                _check_shape(path, f"markers/{name}/{k}", mk[k], pat, dims)
            markers.append(Marker(name=name, kind=str(h.attrs["kind"]), **mk))
        faces = []
        for name, h in sorted(f["faces"].items(), key=lambda kv: kv[1].attrs["order"]):
            fc = {k: _read(h, path, k) for k in ("F_n", "F_m", "F_q")}
            _check_shape(path, f"faces/{name}/F_q", fc["F_q"], ("q",), dims)
            faces.append(Face(name=name, **fc))
        material = {k: (v.item() if hasattr(v, "item") else v)
                    for k, v in f["material"].attrs.items()}
        provenance = json.loads(f["provenance"].attrs["json"])
        body = ReducedBody(name=str(f.attrs["name"]), frame=str(f.attrs["frame"]),
                           method=str(f.attrs["method"]),
                           cell_type=str(f["mesh"].attrs["cell_type"]), markers=tuple(markers),
                           faces=tuple(faces), material=material, provenance=provenance,
                           **{k: (float(v) if k == "m" else v) for k, v in data.items()})
    check_body(body, path)
    return body


def check_body(body: ReducedBody, path: str | Path = "<memory>") -> None:
    """Physical consistency: ``m > 0``; ``M_e`` symmetric positive definite."""
    if not body.m > 0:
        raise BodyFileError(f"body file '{path}': dataset '/invariants/m' must be > 0, "
                            f"got {body.m}")
    Me = body.M_e
    scale = max(np.abs(Me).max(), 1e-300)
    if np.abs(Me - Me.T).max() > 1e-8 * scale:
        raise BodyFileError(f"body file '{path}': dataset '/invariants/M_e' is not symmetric "
                            f"(max asymmetry {np.abs(Me - Me.T).max():.3g})")
    try:
        np.linalg.cholesky(Me)
    except np.linalg.LinAlgError:
        raise BodyFileError(f"body file '{path}': dataset '/invariants/M_e' is not positive "
                            "definite") from None


def body_fields() -> list[str]:
    """Names of the :class:`ReducedBody` fields (for docs and tests)."""
    return [f.name for f in fields(ReducedBody)]
