"""Isotropic linear-elastic materials (SI units) and a small library of named ones."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Material:
    """Isotropic material.

    Parameters
    ----------
    E : Young's modulus [Pa], > 0
    nu : Poisson's ratio [-], -1 < nu < 0.5
    rho : density [kg/m^3], > 0
    name : label used in messages
    """

    E: float
    nu: float
    rho: float
    name: str = ""

    def __post_init__(self):
        label = f"Material '{self.name}'" if self.name else "Material"
        for key, ok, expected in (("E", self.E > 0, "> 0"),
                                  ("nu", -1.0 < self.nu < 0.5, "in (-1, 0.5)"),
                                  ("rho", self.rho > 0, "> 0")):
            if not ok:
                raise ValueError(f"{label}: {key} must be {expected}, "
                                 f"got {getattr(self, key)!r}")

    @property
    def lam(self) -> float:
        """First Lamé parameter ``lam = E nu / ((1 + nu)(1 - 2 nu))`` [Pa]."""
        return self.E * self.nu / ((1.0 + self.nu) * (1.0 - 2.0 * self.nu))

    @property
    def mu(self) -> float:
        """Shear modulus ``mu = G = E / (2 (1 + nu))`` [Pa]."""
        return self.E / (2.0 * (1.0 + self.nu))

    @property
    def C(self) -> np.ndarray:
        """6x6 Voigt elasticity ``sigma = C eps``.

        Voigt order xx, yy, zz, yz, xz, xy; engineering shear strains
        (``eps_yz = 2 E_yz``), so the shear block is ``mu I``.
        """
        C = np.zeros((6, 6))
        C[:3, :3] = self.lam
        C[:3, :3] += 2.0 * self.mu * np.eye(3)
        C[3:, 3:] = self.mu * np.eye(3)
        C.flags.writeable = False
        return C


MATERIALS: dict[str, Material] = {
    "steel": Material(E=210e9, nu=0.3, rho=7850.0, name="steel"),
    "aluminium": Material(E=70e9, nu=0.33, rho=2700.0, name="aluminium"),
    # Kane, Ryan & Banerjee (1987) spin-up beam
    "aluminium_kane": Material(E=6.8952e10, nu=0.3, rho=2766.67, name="aluminium_kane"),
}


def material_from_name(name: str) -> Material:
    """The named material of :data:`MATERIALS`; ValueError with a suggestion if unknown."""
    if name in MATERIALS:
        return MATERIALS[name]
    close = difflib.get_close_matches(name, list(MATERIALS), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"unknown material {name!r}{hint} (known: {sorted(MATERIALS)})")


#: relative tolerance within which a given material equals the mesh file's
SAME_MATERIAL_RTOL = 1e-6


def resolve_material(given: Material | None, from_file, source: str = "",
                     option: str = "--material") -> Material:
    """The material of a part: the mesh file's own (``from_file``, an Abaqus
    ``*MATERIAL`` with ``name``, ``E`` [Pa], ``nu``, ``rho`` [kg/m^3]) or ``given``.

    ValueError (one line, naming ``option`` and the file) when neither is there, when the
    file's values are not a valid material, or when both are there and ``E``, ``nu`` or
    ``rho`` differ by more than :data:`SAME_MATERIAL_RTOL` (a silent choice between the
    two would change the results without a word).
    """
    if from_file is None:
        if given is None:
            raise ValueError(f"{option}: expected a material; the mesh '{source}' defines "
                             "none (no *MATERIAL)")
        return given
    try:
        own = Material(E=float(from_file.E), nu=float(from_file.nu), rho=float(from_file.rho),
                       name=str(from_file.name))
    except ValueError as exc:
        raise ValueError(f"mesh '{source}', *MATERIAL {from_file.name!r}: {exc}") from None
    if given is None:
        return own
    diff = [k for k in ("E", "nu", "rho")
            if not np.isclose(getattr(given, k), getattr(own, k), rtol=SAME_MATERIAL_RTOL,
                              atol=0.0)]
    if diff:
        def show(m):
            return f"E={m.E:.6g} Pa, nu={m.nu:.6g}, rho={m.rho:.6g} kg/m^3"
        raise ValueError(f"{option}: {given.name or 'the given material'} ({show(given)}) "
                         f"conflicts with *MATERIAL {own.name!r} of the mesh '{source}' "
                         f"({show(own)}, {', '.join(diff)} differ); expected the same "
                         f"values, or no {option} to use the file's")
    return own
