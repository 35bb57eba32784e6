"""What an Abaqus ``.inp`` deck says beyond its mesh: element formulations and material.

meshio reads an Abaqus deck's nodes and elements by shape only (``C3D8``, ``C3D8R`` and
``C3D8I`` all become ``hexahedron``) and skips ``*MATERIAL``.  :func:`read_deck` reads
both from the keyword lines so that the part is analysed as Abaqus means it:

* **Elements** (Abaqus Analysis User's Guide, "Solid (continuum) elements"):

  =======  ========  ===================================================================
  Abaqus   flexmbs   formulation
  =======  ========  ===================================================================
  C3D4     tet4      linear tetrahedron, full integration
  C3D10    tet10     quadratic tetrahedron, full integration
  C3D8     hex8      selectively reduced integration: B-bar, mean dilatation (Hughes
                     1980; Abaqus Theory Manual 3.2.4), ``formulation = "bbar"``
  C3D20    hex20     serendipity hexahedron, full (3 x 3 x 3) integration
  C3D20R   hex20     reduced integration: K with 2 x 2 x 2 Gauss points, M with the
                     full rule, no hourglass control (as Abaqus/Standard, whose
                     second-order reduced elements need none), ``formulation =
                     "reduced"``
  C3D6     wedge6    linear wedge, full integration
  =======  ========  ===================================================================

  Every other solid type is refused in one line with its Abaqus name and the reason
  (:data:`REFUSED`): reduced integration with hourglass control (C3D8R),
  incompatible modes (C3D8I), hybrid u-p elements (``...H``), the modified tetrahedron
  (C3D10M), and the wedge15/pyramid shapes (C3D15, C3D5) scikit-fem does not provide.
* **Material**: ``*MATERIAL, NAME=..`` with ``*ELASTIC`` (isotropic ``E, nu``) and
  ``*DENSITY`` (``rho``), the one the ``*SOLID SECTION`` s name (one material per part).
  Abaqus has no units: the values are read in the consistent system of the mesh's
  length unit with newtons and seconds, ``E_SI = E / s^2`` and ``rho_SI = rho / s^4``
  for a length factor ``s`` [m per file unit] (``s = 1e-3``: MPa and t/mm^3).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flexmbs.errors import MeshError
from flexmbs.io.abaqus_surface import Card, keyword_cards

#: revision of how a deck is read (1: element formulations and *MATERIAL); part of the
#: case body-cache key of ``.inp`` meshes, so bodies made before are not reused
DECK_READING = 1
#: Abaqus solid element -> (flexmbs cell type, formulation)
ABAQUS_ELEMENTS = {"C3D4": ("tet4", "full"), "C3D10": ("tet10", "full"),
                   "C3D8": ("hex8", "bbar"), "C3D20": ("hex20", "full"),
                   "C3D20R": ("hex20", "reduced"), "C3D6": ("wedge6", "full")}
#: Abaqus solid elements flexmbs does not provide -> why
REFUSED = {
    "C3D8R": "reduced integration with hourglass control is not implemented",
    "C3D8I": "incompatible modes are not implemented",
    "C3D10M": "the modified tetrahedron is not implemented",
    "C3D15": "the 15-node wedge is not provided by scikit-fem",
    "C3D5": "the pyramid is not provided by scikit-fem",
    "C3D27": "the 27-node hexahedron is not read by meshio",
}
#: keywords that may follow *MATERIAL as its options (the material ends at any other)
MATERIAL_OPTIONS = {"DENSITY", "ELASTIC", "DAMPING", "EXPANSION", "PLASTIC", "CONDUCTIVITY",
                    "SPECIFIC HEAT", "DEPVAR", "USER MATERIAL", "HYPERELASTIC",
                    "VISCOELASTIC", "FAIL STRESS", "FAIL STRAIN", "RATE DEPENDENT"}


@dataclass(frozen=True)
class DeckMaterial:
    """Isotropic elastic material of a deck in SI units (``E`` [Pa], ``nu`` [-], ``rho``
    [kg/m^3]); ``name`` as in the file."""

    name: str
    E: float
    nu: float
    rho: float


@dataclass(frozen=True)
class AbaqusDeck:
    """Element types (Abaqus names, in file order), the formulation of each flexmbs cell
    type (``{"hex8": "bbar"}``) and the material."""

    element_types: tuple[str, ...]
    formulations: dict
    material: DeckMaterial | None


def element_formulation(abaqus_type: str, where: str) -> tuple[str, str]:
    """``(cell type, formulation)`` of an Abaqus element type; MeshError naming it."""
    t = abaqus_type.upper()
    if t in ABAQUS_ELEMENTS:
        return ABAQUS_ELEMENTS[t]
    why = REFUSED.get(t)
    if why is None and t.startswith("C3D") and t.endswith("H"):
        why = "hybrid (mixed displacement-pressure) elements are not implemented"
    if why is None:
        why = "not a solid element flexmbs knows"
    raise MeshError(f"{where}: element type {t} is not supported: {why}; expected one of "
                    f"{', '.join(ABAQUS_ELEMENTS)}")


def read_deck(path: str | Path, *, scale: float = 1.0) -> AbaqusDeck:
    """Element types and material of the Abaqus deck ``path`` (see the module docstring).

    Raises
    ------
    MeshError
        an element type not supported, a material without ``*ELASTIC`` or ``*DENSITY``,
        non-isotropic or temperature-dependent data, several materials in the sections.
    """
    path = Path(path)
    src = f"mesh '{path}'"
    cards = keyword_cards(path.read_text(encoding="utf-8", errors="replace"))
    types, forms, named = [], {}, {}
    for c in cards:
        if c.keyword == "ELEMENT":
            t = (c.params.get("TYPE") or "").upper()
            where = f"{src}, *ELEMENT (line {c.line})"
            if not t:
                raise MeshError(f"{where}: expected TYPE=, e.g. TYPE=C3D10")
            if not t.startswith(("C3D", "DC3D")) and t not in ABAQUS_ELEMENTS:
                continue                        # beams, shells, springs ... are meshio's
            kind, form = element_formulation(t, where)
            if forms.setdefault(kind, form) != form:
                raise MeshError(f"{where}: element type {t} and {named[kind]} are both "
                                f"{kind} with different formulations; expected one of "
                                f"them per part")
            named.setdefault(kind, t)
            types.append(t)
    materials = _materials(cards, src, scale)
    used = {c.params.get("MATERIAL", "").upper() for c in cards
            if c.keyword == "SOLID SECTION"} - {""}
    missing = sorted(used - set(materials))
    if missing:
        raise MeshError(f"{src}: *SOLID SECTION names material {missing[0]!r}, which has no "
                        f"*MATERIAL definition; defined: {sorted(materials) or 'none'}")
    if len(used) > 1:
        raise MeshError(f"{src}: the *SOLID SECTION lines name {len(used)} materials "
                        f"{sorted(used)}; expected one material per part")
    if not used and len(materials) > 1:
        raise MeshError(f"{src}: {len(materials)} materials {sorted(materials)} and no "
                        f"*SOLID SECTION choosing one; expected one material per part")
    name = next(iter(used), next(iter(materials), None))
    return AbaqusDeck(tuple(types), forms, None if name is None else materials[name])


def _materials(cards: list[Card], src: str, scale: float) -> dict[str, DeckMaterial]:
    """``{NAME: DeckMaterial}`` of every ``*MATERIAL`` (names upper case)."""
    found: dict[str, dict] = {}
    current = None
    for c in cards:
        if c.keyword == "MATERIAL":
            name = (c.params.get("NAME") or "").upper()
            if not name:
                raise MeshError(f"{src}, *MATERIAL (line {c.line}): expected NAME=")
            current = found.setdefault(name, {"line": c.line})
            continue
        if c.keyword not in MATERIAL_OPTIONS:
            current = None
            continue
        if c.keyword not in ("ELASTIC", "DENSITY"):
            continue
        where = f"{src}, *{c.keyword} (line {c.line})"
        if current is None:
            raise MeshError(f"{where}: expected it inside a *MATERIAL definition")
        kind = (c.params.get("TYPE") or "ISOTROPIC").upper()
        if c.keyword == "ELASTIC" and kind != "ISOTROPIC":
            raise MeshError(f"{where}: TYPE={kind} is not supported; expected isotropic "
                            f"elasticity (E, nu)")
        rows = [f for _, _, f in c.fields()]
        if len(rows) != 1:
            raise MeshError(f"{where}: expected one data line (no temperature or field "
                            f"dependence), found {len(rows)}")
        want = 2 if c.keyword == "ELASTIC" else 1
        try:
            values = [float(v) for v in rows[0][:want]]
        except ValueError:
            values = []
        if len(values) != want:
            raise MeshError(f"{where}: expected {'E, nu' if want == 2 else 'rho'} as "
                            f"numbers, found {', '.join(rows[0]) or 'nothing'}")
        current[c.keyword] = values
    out = {}
    for name, d in found.items():
        for key in ("ELASTIC", "DENSITY"):
            if key not in d:
                raise MeshError(f"{src}, *MATERIAL {name!r} (line {d['line']}): expected an "
                                f"*{key} option, found none")
        (E, nu), (rho,) = d["ELASTIC"], d["DENSITY"]
        out[name] = DeckMaterial(name, E / scale ** 2, nu, rho / scale ** 4)
    return out
