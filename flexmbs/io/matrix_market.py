"""An external model as Matrix Market files (NIST ``.mtx``) and a TOML manifest.

A folder holds ``model.toml`` and one ``.mtx`` file per piece (docs/external_bodies.md)::

    format = "flexmbs-external"
    version = 1
    name = "beam"
    frame = "interface:clamp"          # optional
    cell_type = "hex8"                 # optional, with cells
    [files]                            # piece -> file (relative to the folder)
    points = "points.mtx"              # (N, 3) array [m]
    M = "M.mtx"                        # (3N, 3N) coordinate [kg], dof 3 (i - 1) + k
    K = "K.mtx"                        # (3N, 3N) [N/m], or (n_q, n_q) = Phi^T K Phi
    Phi = "Phi.mtx"                    # (3N, n_q) array, optional
    # any matrix may instead be "FILE.op4:NAME", a Nastran OUTPUT4 matrix; with
    # dofs_per_node = 6 (top level) M, K, Phi on a g-set keep dofs 1-3 of each GRID
    stress_modes = "stress_modes.mtx"  # (6N, n_q) array [Pa], optional
    cells = "cells.mtx"                # (E, k) integer array, node numbers from 1
    [material]                         # optional: E [Pa], nu, rho [kg/m^3], name
    [interfaces.clamp]
    kind = "rbe2"
    nodes = "clamp_nodes.mtx"          # (n, 1) integer array, node numbers from 1
    weights = "clamp_weights.mtx"      # optional (n, 1) array

Values are written with 17 significant digits, so a written model reads back bit for bit.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
import tomllib

from flexmbs.io.external import ExternalInterface, ExternalModel, ExternalModelError
from flexmbs.io.op4 import read_op4_matrix, translational, write_op4

MANIFEST = "model.toml"
FORMAT = "flexmbs-external"
VERSION = 1
CELL_NODES = {"tet4": 4, "tet10": 10, "hex8": 8, "hex27": 27}
PIECES = ("points", "M", "K", "Phi", "stress_modes", "cells")


def read_mtx(path: Path):
    """One Matrix Market file: a sparse matrix (coordinate) or an array."""
    if not path.is_file():
        raise ExternalModelError(f"Matrix Market file '{path}' not found")
    try:
        return scipy.io.mmread(str(path))
    except (ValueError, OSError, IndexError) as exc:
        raise ExternalModelError(f"Matrix Market file '{path}': expected a '%%MatrixMarket' "
                                 f"matrix, could not read it ({exc})") from None


def write_mtx(path: Path, A, comment: str) -> None:
    """``A`` to ``path``: sparse as coordinate (lower triangle when symmetric), arrays
    dense, 17 significant digits (exact round trip of doubles)."""
    kw = {"field": "integer"} if np.asarray(A if not sp.issparse(A) else A.data
                                             ).dtype.kind in "iu" else {"precision": 17}
    scipy.io.mmwrite(str(path), sp.coo_matrix(A) if sp.issparse(A) else np.asarray(A),
                     comment=comment, **kw)


def _toml_value(v) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return repr(float(v))


def read_piece(base: Path, ref: str):
    """The matrix a manifest names: ``FILE.mtx`` or ``FILE.op4:NAME`` (Nastran OUTPUT4
    matrix NAME, :mod:`flexmbs.io.op4`), relative to ``base``."""
    file, sep, name = ref.rpartition(":")
    if sep and file.lower().endswith(".op4"):
        return read_op4_matrix(base / file, name)
    return read_mtx(base / ref)


def write_model(folder: str | Path, model: ExternalModel, *, matrices: str = "mtx"
                ) -> list[Path]:
    """Write ``model`` to ``folder`` (created); returns the files written.  ``matrices``:
    'mtx', or 'op4' to put ``M``, ``K``, ``Phi`` in one ASCII OP4 file ``model.op4``
    (matrices ``M``, ``K``, ``PHI``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"format = {_toml_value(FORMAT)}", f"version = {VERSION}",
             f"name = {_toml_value(model.name)}"]
    if model.frame:
        lines.append(f"frame = {_toml_value(model.frame)}")
    written, files = [], {}
    pieces = {"points": model.points, "M": model.M, "K": model.K, "Phi": model.Phi,
              "stress_modes": None if model.stress_modes is None
              else np.asarray(model.stress_modes).reshape(-1, np.shape(model.stress_modes)[2]),
              "cells": np.asarray(model.cells) + 1 if len(model.cells) else None}
    op4 = {}
    for key, A in pieces.items():
        if A is None:
            continue
        if matrices == "op4" and key in ("M", "K", "Phi"):
            op4[key.upper()] = A
            files[key] = f"model.op4:{key.upper()}"
            continue
        files[key] = f"{key}.mtx"
        write_mtx(folder / files[key], A, f"flexmbs export of '{model.name}': {key}")
        written.append(folder / files[key])
    if op4:
        write_op4(folder / "model.op4", op4)
        written.append(folder / "model.op4")
    if "cells" in files:
        lines.append(f"cell_type = {_toml_value(model.cell_type)}")
    lines += ["", "[files]"] + [f"{k} = {_toml_value(v)}" for k, v in files.items()]
    if model.material:
        lines += ["", "[material]"] + [f"{k} = {_toml_value(v)}"
                                       for k, v in model.material.items()]
    for itf in model.interfaces:
        lines += ["", f"[interfaces.{json.dumps(itf.name)}]", f"kind = {_toml_value(itf.kind)}",
                  f"nodes = {_toml_value(itf.name + '_nodes.mtx')}"]
        write_mtx(folder / f"{itf.name}_nodes.mtx",
                  np.asarray(itf.nodes, dtype=np.int64).reshape(-1, 1) + 1,
                  f"interface '{itf.name}': node numbers (from 1)")
        written.append(folder / f"{itf.name}_nodes.mtx")
        if itf.weights is not None:
            lines.append(f"weights = {_toml_value(itf.name + '_weights.mtx')}")
            write_mtx(folder / f"{itf.name}_weights.mtx",
                      np.asarray(itf.weights, dtype=float).reshape(-1, 1),
                      f"interface '{itf.name}': nodal weights")
            written.append(folder / f"{itf.name}_weights.mtx")
    (folder / MANIFEST).write_text("\n".join(lines) + "\n")
    return [folder / MANIFEST, *written]


def _text(manifest: Path, table: dict, key: str, where: str = "") -> str:
    v = table.get(key)
    if not isinstance(v, str) or not v:
        raise ExternalModelError(f"manifest '{manifest}': key '{where}{key}' must be a "
                                 f"file name (text), got {v!r}")
    return v


def _column(A, manifest: Path, key: str) -> np.ndarray:
    a = np.asarray(A.toarray() if sp.issparse(A) else A)
    if a.ndim != 2 or a.shape[1] != 1:
        raise ExternalModelError(f"manifest '{manifest}': '{key}' must be an (n, 1) array, "
                                 f"got shape {a.shape}")
    return a[:, 0]


def read_model(folder: str | Path) -> ExternalModel:
    """The :class:`ExternalModel` of a folder written by :func:`write_model` or by hand."""
    folder = Path(folder)
    manifest = folder / MANIFEST if folder.is_dir() else folder
    if not manifest.is_file():
        raise ExternalModelError(f"Matrix Market import: expected a folder with '{MANIFEST}'"
                                 f" (or the manifest itself), got '{folder}'")
    try:
        doc = tomllib.loads(manifest.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ExternalModelError(f"manifest '{manifest}': not valid TOML ({exc})") from None
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise ExternalModelError(f"manifest '{manifest}': expected format = {FORMAT!r} and "
                                 f"version = {VERSION}, got {doc.get('format')!r} and "
                                 f"{doc.get('version')!r}")
    unknown = sorted(set(doc.get("files", {})) - set(PIECES))
    if unknown:
        raise ExternalModelError(f"manifest '{manifest}': unknown key(s) {unknown} in "
                                 f"[files]; expected some of {list(PIECES)}")
    base = manifest.parent
    got = {k: read_piece(base, _text(manifest, doc["files"], k, "files."))
           for k in doc.get("files", {})}
    dpn = doc.get("dofs_per_node", 3)
    if dpn not in (3, 6):
        raise ExternalModelError(f"manifest '{manifest}': key 'dofs_per_node' must be 3 or "
                                 f"6 (Nastran g-set), got {dpn!r}")
    for k in ("M", "K", "Phi"):
        if k in got and "points" in got and got[k].shape[0] == dpn * len(got["points"]):
            got[k] = translational(got[k], dpn)
    for k in ("points", "Phi", "stress_modes", "cells"):
        if k in got and sp.issparse(got[k]):
            got[k] = got[k].toarray()
    if "stress_modes" in got:
        S = got["stress_modes"]
        if S.shape[0] % 6:
            raise ExternalModelError(f"manifest '{manifest}': stress_modes must have 6N rows"
                                     f", got shape {S.shape}")
        got["stress_modes"] = S.reshape(-1, 6, S.shape[1])
    cells = got.pop("cells", None)
    extra = {}
    if cells is not None:
        cell_type = doc.get("cell_type")
        if cell_type not in CELL_NODES or np.shape(cells)[1:] != (CELL_NODES[cell_type],):
            raise ExternalModelError(f"manifest '{manifest}': key 'cell_type' must be one of "
                                     f"{sorted(CELL_NODES)} matching the cells' "
                                     f"{np.shape(cells)[1:]} nodes per cell, got {cell_type!r}")
        extra = {"cells": np.asarray(cells, dtype=np.int64) - 1, "cell_type": cell_type}
    itfs = []
    for name, t in doc.get("interfaces", {}).items():
        where = f"interfaces.{name}."
        nodes = _column(read_mtx(base / _text(manifest, t, "nodes", where)), manifest,
                        where + "nodes")
        weights = None
        if "weights" in t:
            weights = _column(read_mtx(base / _text(manifest, t, "weights", where)),
                              manifest, where + "weights")
        kind = t.get("kind", "rbe2")
        if kind not in ("rbe2", "rbe3"):
            raise ExternalModelError(f"manifest '{manifest}': key '{where}kind' must be "
                                     f"'rbe2' or 'rbe3', got {kind!r}")
        itfs.append(ExternalInterface(name=name, nodes=np.asarray(nodes, np.int64) - 1,
                                      kind=kind, weights=weights))
    return ExternalModel(name=str(doc.get("name", folder.stem)), source=str(manifest),
                         interfaces=tuple(itfs), frame=doc.get("frame"),
                         material=dict(doc.get("material", {})), **got, **extra)
