"""A finite-element model or reduced basis made by another code, as read from its files.

The readers (``flexmbs.io.matrix_market``, ``flexmbs.io.abaqus_mtx``, ``flexmbs.io.op4``)
return an :class:`ExternalModel`; ``flexmbs.reduction.external`` turns it into a reduced
body (docs/external_bodies.md states what each invariant needs).

Dofs are node-major with three translations per node: dof ``3 i + k`` is node ``i`` (0-based,
in the order of ``points``) in direction ``k`` (x, y, z), the numbering of Abaqus/Nastran
translational dofs 1, 2, 3.  Units are SI: m, kg, N/m.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from flexmbs.errors import ExternalModelError

__all__ = ["ExternalInterface", "ExternalModel", "ExternalModelError"]


@dataclass(frozen=True)
class ExternalInterface:
    """An interface node set: ``nodes`` (0-based indices into ``points``), ``kind``
    ('rbe2' or 'rbe3') and optional nodal ``weights`` (equal weights if ``None``)."""

    name: str
    nodes: np.ndarray
    kind: str = "rbe2"
    weights: np.ndarray | None = None


@dataclass(frozen=True)
class ExternalModel:
    """What another code gives for one elastic part.

    points : (N, 3) [m] or None           node coordinates ``R_P`` in the body frame
    M : (3N, 3N) sparse [kg] or None      mass matrix (consistent or lumped)
    K : sparse/dense [N/m] or None        stiffness: (3N, 3N), or (n_q, n_q) = ``Phi^T K Phi``
    Phi : (3N, n_q) or None               recovery modes (displacement per unit ``q``)
    stress_modes : (N, 6, n_q) [Pa] or None   nodal stress per unit ``q`` (Voigt)
    cells, cell_type : connectivity for visualisation (empty if not given)
    interfaces : the interface node sets
    frame : 'mean_axis' or 'interface:NAME' as written by the exporting code, or None
    material : dict (E, nu, rho, name) if known
    source : the file(s) read, for messages and provenance
    """

    name: str
    source: str
    points: np.ndarray | None = None
    M: sp.spmatrix | None = None
    K: sp.spmatrix | np.ndarray | None = None
    Phi: np.ndarray | None = None
    stress_modes: np.ndarray | None = None
    cells: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), dtype=np.int64))
    cell_type: str = "tet4"
    interfaces: tuple[ExternalInterface, ...] = ()
    frame: str | None = None
    material: dict = field(default_factory=dict)

    @property
    def n_dof(self) -> int | None:
        return None if self.points is None else 3 * len(self.points)
