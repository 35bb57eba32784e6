"""Cache of reduced-body files for flexible bodies given by a mesh.

The cache key is the SHA-256 of the mesh file's content, the material, the reduction
settings, the mesh unit and the body-file version; the file is
``<body_dir>/<body>-<key[:16]>.h5``.  Editing the mesh, the material or any setting
changes the key, so a stale file is never reused; a cached file that cannot be read is
rebuilt.  Files are written to a temporary name and renamed, so an interrupted
preprocessing never leaves a half-written cache entry.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path

import numpy as np

from flexmbs.case.folders import body_cache_label
from flexmbs.errors import BodyFileError, CaseError, MeshError, OutputError

log = logging.getLogger(__name__)


def reduction_settings(b: dict):
    """The :class:`ReductionSettings` of body spec ``b``; :class:`CaseError` naming the
    body's key path if they are inconsistent."""
    from flexmbs.reduction import InterfaceSpec, ReductionSettings
    try:
        return ReductionSettings(
            n_modes=b["modes"],
            interfaces=tuple(InterfaceSpec.parse(s) for s in b["interfaces"]),
            frame=b["frame"], static_modes=b["static_modes"], damping=b["damping"],
            eigensolver=b["eigensolver"], stiffening=b["stiffening"],
            modal_derivatives=b.get("modal_derivatives", 0),
            method=b.get("method", "auto"),
            residual_flexibility=b.get("residual_flexibility", False),
            derivative_axis={"": None, "x": 0, "y": 1, "z": 2}[b.get("derivative_axis", "")])
    except ValueError as exc:
        raise CaseError(f"{b['path']}: {exc}") from None


def _deck_material(b: dict):
    """The *MATERIAL of the body's Abaqus deck (SI), when the case gives none."""
    from flexmbs.io.abaqus_deck import read_deck
    try:
        return read_deck(b["mesh"], scale=1e-3 if b["unit"] == "mm" else 1.0).material
    except MeshError as exc:
        raise CaseError(f"{b['path']}.mesh: {exc}") from None


def cache_key(b: dict) -> str:
    """Hex SHA-256 over mesh content, material, settings, unit, body-file version and the
    flexmbs version (the cache is shared by every case and checkout of a user)."""
    from flexmbs._version import __version__
    from flexmbs.io.bodyfile import VERSION
    from flexmbs.reduction.reduce import file_sha256
    settings = reduction_settings(b).as_dict()
    settings.pop("eigensolver", None)            # does not change the result
    mat = b["material"] or _deck_material(b)
    payload = {"mesh_sha256": file_sha256(b["mesh"]), "unit": b["unit"],
               "material": {"E": mat.E, "nu": mat.nu, "rho": mat.rho},
               "settings": settings, "body_file_version": VERSION,
               "flexmbs": __version__}
    if Path(b["mesh"]).suffix.lower() == ".inp":   # how decks are read (C3D8: B-bar)
        from flexmbs.io.abaqus_deck import DECK_READING
        payload["abaqus_deck_reading"] = DECK_READING
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def reduced_body_file(b: dict, body_dir: Path, *, progress=None) -> tuple[Path, str]:
    """Path of the (possibly new) reduced-body file of body spec ``b`` and ``"cached"`` or
    ``"new"``.  Preprocesses when the file is missing or unreadable."""
    from flexmbs.fe.assemble import assemble
    from flexmbs.fe.material import resolve_material
    from flexmbs.io.bodyfile import load_body, save_body
    from flexmbs.io.mesh import read_mesh
    from flexmbs.io.paths import writable_dir
    from flexmbs.reduction import reduce_model
    from flexmbs.reduction.budget import check_budget

    where = f"{b['path']}"
    try:
        key = cache_key(b)
    except OSError as exc:
        raise CaseError(f"{where}.mesh: cannot read {b['mesh']}: {exc.strerror or exc}"
                        ) from None
    path = Path(body_dir) / f"{b['name']}-{key[:16]}.h5"
    try:
        cached = path.is_file()
    except OSError as exc:                       # a body folder name too long
        raise CaseError(f"{body_cache_label(body_dir)} '{str(body_dir)[:100]}': "
                        f"{exc.strerror or exc}"
                        ) from None
    if cached:
        try:
            load_body(path)
            return path, "cached"
        except BodyFileError as exc:
            log.warning("rebuilding unreadable cached body file %s: %s", path, exc)
    writable_dir(body_dir, body_cache_label(body_dir))   # before the expensive part
    settings = reduction_settings(b)
    t = time.perf_counter()
    try:
        mesh = read_mesh(b["mesh"], scale=1e-3 if b["unit"] == "mm" else 1.0, mixed=True)
    except MeshError as exc:
        raise CaseError(f"{where}.mesh: {exc}") from None
    if progress:
        progress(f"{b['name']}: read mesh ({mesh.cell_type}, {mesh.n_nodes} nodes)",
                 time.perf_counter() - t)
    try:   # an Abaqus *MATERIAL must agree with the case's material (or stands for it)
        material = resolve_material(b["material"], mesh.material, mesh.source,
                                    f"{where}.material")
    except ValueError as exc:
        raise CaseError(str(exc)) from None
    missing = [i.name for i in settings.interfaces if i.name not in mesh.node_sets]
    if missing:
        raise CaseError(f"{where}.interfaces: expected node sets (physical groups) of the mesh "
                        f"{b['mesh'].name}, found no {', '.join(map(repr, missing))}; "
                        f"available: {', '.join(sorted(mesh.node_sets)) or 'none'}")
    t = time.perf_counter()
    try:
        fe = assemble(mesh, material)
    except (ValueError, ArithmeticError, MeshError) as exc:
        raise CaseError(f"{where}: assembling the FE model failed: {exc}") from None
    if progress:
        progress(f"{b['name']}: assemble M, K ({fe.n_dof} dofs)", time.perf_counter() - t)
    try:
        size = check_budget(fe, settings, keys={
            "modes": f"{where}.modes", "modal_derivatives": f"{where}.modal_derivatives"})
    except ValueError as exc:
        raise CaseError(str(exc)) from None
    if progress and size.large:
        progress(f"{b['name']}: reducing, {size.text()}", 0.0)
    try:
        body = reduce_model(fe, settings, name=b["name"],
                            progress=(lambda m, s: progress(f"{b['name']}: {m}", s))
                            if progress else None,
                            provenance={"cache_key": key})
    except (ValueError, KeyError, MeshError, BodyFileError) as exc:
        raise CaseError(f"{where}: preprocessing failed: {exc}") from None
    except (ArithmeticError, RuntimeError, np.linalg.LinAlgError) as exc:
        # RuntimeError: ARPACK and PETSc/SLEPc failures (an extreme material, say)
        raise CaseError(f"{where}: preprocessing failed: {type(exc).__name__}: {exc}"
                        ) from None
    tmp = path.with_suffix(f".tmp{os.getpid()}.h5")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_body(tmp, body)
        os.replace(tmp, path)
    except (OSError, RuntimeError) as exc:       # (h5py: RuntimeError with the errno)
        raise OutputError.from_exception(exc, path).keeping(
            f"the body file was not written ({body_cache_label(body_dir)} '{body_dir}'); nothing else is "
            f"changed") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return path, "new"
