"""Shared FE models for the reduction tests (built once per session)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import material_from_name
from flexmbs.io.mesh import read_mesh

from .boxmesh import box_mesh

MESHES = Path(__file__).resolve().parents[2] / "meshes"
STEEL = material_from_name("steel")


@lru_cache(maxsize=None)
def box_fe(cell_type: str, n=(4, 2, 2), size=(1.0, 0.1, 0.1), origin=(0.0, 0.0, 0.0)):
    """FE model of a steel box with end node/facet sets ``x0``, ``x1``."""
    return assemble(box_mesh(cell_type, n, size, origin), STEEL)


@lru_cache(maxsize=None)
def beam_fe(cell_type: str = "hex27", n=(20, 2, 2)):
    """The cantilever 1.0 x 0.1 x 0.1 m steel beam with sets ``clamp``/``tip``: the shipped
    mesh ``meshes/beam_<type>_<nx>x<ny>x<nz>.msh`` if present, else a lattice box."""
    path = MESHES / f"beam_{cell_type}_{n[0]}x{n[1]}x{n[2]}.msh"
    if path.is_file():
        return assemble(read_mesh(path), STEEL)
    from .boxmesh import box_meshio
    from flexmbs.io.mesh import mesh_from_meshio
    m = box_meshio(cell_type, n)
    m.cell_sets = {{"x0": "clamp", "x1": "tip"}[k]: v for k, v in m.cell_sets.items()}
    return assemble(mesh_from_meshio(m, source=str(path)), STEEL)
