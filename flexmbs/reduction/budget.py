"""Size of a reduction before it runs: the largest number of modes a mesh allows and the
memory the reduced body will need.

Checked right after assembly, so that ``modes = 100000`` on a 132-dof mesh, or a basis
whose dense arrays do not fit in memory, is one clear error instead of an eigensolver
failure or minutes of swapping.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

#: eigensolvers need ``n < N - 1`` eigenpairs of an N-dof problem (flexmbs.reduction.eigen)
_EIGEN_MARGIN = 2


@dataclass(frozen=True)
class Budget:
    """``n_q`` basis vectors (upper estimate) of an ``n_dof`` FE model, ``max_modes`` the
    most modes the mesh allows, ``bytes`` the estimated peak of the dense arrays."""

    n_dof: int
    n_q: int
    max_modes: int
    bytes: float
    parts: dict

    @property
    def large(self) -> bool:
        """A reduction worth announcing (its eigen solve may take a while)."""
        return self.n_q >= 100 or self.bytes >= 5e8 or self.n_dof >= 200_000

    def text(self) -> str:
        parts = ", ".join(f"{k} {_gb(v)}" for k, v in self.parts.items() if v > 0.01 * self.bytes)
        return (f"{self.n_q} coordinates from {self.n_dof} dofs: estimated memory "
                f"{_gb(self.bytes)} ({parts}; sparse factorization not included)")


def _gb(b: float) -> str:
    return f"{b / 1e9:.3g} GB" if b >= 1e8 else f"{b / 1e6:.3g} MB"


def available_memory() -> float:
    """Bytes of memory available to this process (MemAvailable on Linux), inf if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return float("inf")


def free_dofs(fe, interfaces) -> int:
    """Dofs left for the (fixed-interface or free-free) eigenproblem of ``fe``: all dofs
    minus those the interfaces eliminate (3 per RBE2 node, 6 per RBE3) or, without
    interfaces, the 6 rigid-body modes."""
    n_dof = int(fe.n_dof)
    if not interfaces:
        return n_dof - 6
    sets = getattr(fe.mesh, "node_sets", {}) or {}
    eliminated = 0
    for spec in interfaces:
        if spec.kind == "rbe2" and spec.name in sets:
            eliminated += 3 * len(sets[spec.name])
        else:
            eliminated += 6
    return n_dof - eliminated


def budget(fe, settings) -> Budget:
    """Estimate the basis size and memory of reducing ``fe`` with ``settings``
    (:class:`~flexmbs.reduction.reduce.ReductionSettings`)."""
    n_dof = int(fe.n_dof)
    n_nodes = int(fe.mesh.n_nodes)
    n_i = len(settings.interfaces)
    free_free = settings.method == "free_free"
    boundary = () if free_free else settings.interfaces     # interfaces as markers only
    max_modes = free_dofs(fe, boundary) - _EIGEN_MARGIN
    n_q = int(settings.n_modes) + (6 * n_i - 6 if boundary else 0) + (12 if settings.static_modes
                                                                     else 0)
    n_d = int(settings.modal_derivatives)
    n_q += n_d * (n_d + 1) // 2
    q = float(min(n_q, 10**100))         # astronomically large: no float overflow
    parts = {
        "eigenvectors and Lanczos workspace": 8.0 * n_dof * (3 * q + 1),
        "mode shapes and stress modes": 8.0 * n_nodes * 9 * q,
        "invariants": 8.0 * 40 * q * q,
    }
    if settings.residual_flexibility:
        # static responses, their loads and modal parts (n_dof x 6 n_i each), stress modes
        parts["residual flexibility"] = 8.0 * n_i * (3 * 6 * n_dof + 36 * n_nodes)
    if settings.stiffening and n_q <= settings.max_q_stiffening:
        parts["K2, K3"] = 8.0 * (q ** 3 + 2 * q ** 4)
    return Budget(n_dof=n_dof, n_q=n_q, max_modes=max_modes,
                  bytes=float(sum(parts.values())), parts=parts)


def check_budget(fe, settings, *, keys: dict | None = None,
                 memory: float | None = None) -> Budget:
    """:func:`budget`, raising ``ValueError`` if the mesh has fewer free dofs than modes
    requested, more modal derivatives are asked for than there are basis vectors, or the
    estimate exceeds the available ``memory`` (default :func:`available_memory`).

    ``keys`` names the settings in messages: ``{"modes": "bodies[0].modes",
    "modal_derivatives": "bodies[0].modal_derivatives"}`` (default: the setting names).
    """
    keys = {"modes": "modes", "modal_derivatives": "modal_derivatives", **(keys or {})}
    b = budget(fe, settings)
    if settings.n_modes > b.max_modes:
        how = ("minus those fixed by the interfaces" if settings.interfaces else
               "minus the 6 rigid-body modes")
        raise ValueError(f"{keys['modes']} = {settings.n_modes}: expected at most "
                         f"{max(b.max_modes, 0)} for this mesh ({b.n_dof} dofs {how}); "
                         "use fewer modes or a finer mesh")
    n_d = int(settings.modal_derivatives)
    n_basis = b.n_q - n_d * (n_d + 1) // 2
    if n_d > n_basis:
        raise ValueError(f"{keys['modal_derivatives']} = {n_d}: expected at most {n_basis}, "
                         f"the number of basis vectors they are taken of")
    mem = available_memory() if memory is None else memory
    if np.isfinite(mem) and b.bytes > mem:
        raise ValueError(f"{keys['modes']} = {settings.n_modes}"
                         + (f", {keys['modal_derivatives']} = {n_d}" if n_d else "")
                         + f": the reduction needs about {_gb(b.bytes)}, more than the "
                         f"{_gb(mem)} of memory available ({b.text()})")
    return b
