"""Abaqus matrices in the ``*MATRIX INPUT`` text format (``.mtx`` of ``*MATRIX GENERATE``
/ ``*MATRIX OUTPUT, FORMAT=MATRIX INPUT``, ``*SUBSTRUCTURE MATRIX OUTPUT``).

Each data line is ``row node, row dof, column node, column dof, value``; lines starting
with ``**`` are comments.  A symmetric matrix may be given as its lower or upper triangle
or in full (Abaqus Keywords Reference, ``*MATRIX INPUT``).  Node numbers are the labels
of the input file's ``*NODE`` lines; dofs 1, 2, 3 are the translations x, y, z.

flexmbs imports solid models: dofs 4--6 (rotations of beams and shells) and the
generalized dofs of a ``*SUBSTRUCTURE GENERATE`` (nodes that are not in the input file)
are refused in one line, since the invariants need the mass distribution over the
nodes, which a reduced substructure matrix no longer holds (docs/external_bodies.md).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from flexmbs.errors import MeshError
from flexmbs.io.abaqus_surface import node_labels
from flexmbs.io.external import ExternalInterface, ExternalModel, ExternalModelError
from flexmbs.io.mesh import read_mesh


def read_entries(path: str | Path) -> np.ndarray:
    """The ``(row node, row dof, column node, column dof, value)`` lines, shape (n, 5)."""
    path = Path(path)
    if not path.is_file():
        raise ExternalModelError(f"Abaqus matrix file '{path}' not found")
    rows = []
    for ln, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("**"):
            continue
        f = s.replace(",", " ").split()
        try:
            if len(f) != 5:
                raise ValueError(s)
            rows.append([int(f[0]), int(f[1]), int(f[2]), int(f[3]), float(f[4])])
        except ValueError:
            raise ExternalModelError(
                f"Abaqus matrix file '{path}', line {ln}: expected 'row node, row dof, "
                f"column node, column dof, value', found {s[:80]!r}") from None
    if not rows:
        raise ExternalModelError(f"Abaqus matrix file '{path}': expected matrix entries, "
                                 "found none")
    return np.array(rows, dtype=float)


def read_matrix(path: str | Path, labels: np.ndarray) -> sp.csr_matrix:
    """The (3N, 3N) matrix of ``path`` on node-major dofs ``3 i + k``, ``i`` the position
    of the node's label in ``labels``; a triangle is mirrored."""
    e = read_entries(path)
    nodes, dofs = e[:, [0, 2]].astype(np.int64), e[:, [1, 3]].astype(np.int64)
    bad = (dofs < 1) | (dofs > 3)
    if bad.any():
        raise ExternalModelError(
            f"Abaqus matrix file '{path}': dof {int(dofs[bad][0])} found; expected the "
            "translations 1, 2, 3 of solid elements (rotational dofs of beams and shells "
            "are not supported)")
    order = np.argsort(labels)
    pos = np.minimum(np.searchsorted(labels[order], nodes), len(labels) - 1)
    missing = labels[order][pos] != nodes
    if missing.any():
        raise ExternalModelError(
            f"Abaqus matrix file '{path}': node {int(nodes[missing][0])} is not a *NODE of "
            "the input file; a *SUBSTRUCTURE GENERATE matrix (retained and generalized "
            "dofs) lacks the nodal mass distribution the invariants J1, J2 need: export "
            "the full matrices with *MATRIX GENERATE instead")
    idx = 3 * order[pos] + dofs - 1
    n = 3 * len(labels)
    A = sp.coo_matrix((e[:, 4], (idx[:, 0], idx[:, 1])), shape=(n, n)).tocsr()
    lower, upper = np.all(idx[:, 0] >= idx[:, 1]), np.all(idx[:, 0] <= idx[:, 1])
    if lower or upper:
        A = A + sp.triu(A, 1).T if upper else A + sp.tril(A, -1).T
    return sp.csr_matrix(A)


def read_abaqus(inp: str | Path, mass: str | Path, stiffness: str | Path,
                interfaces: tuple = (), name: str | None = None) -> ExternalModel:
    """An :class:`ExternalModel` from an input file (nodes, elements, ``*NSET`` s) and its
    ``*MATRIX GENERATE`` mass and stiffness files.  ``interfaces``:
    :class:`flexmbs.reduction.interfaces.InterfaceSpec`-like objects (``name``, ``kind``)
    naming node sets of the input file (equal nodal weights)."""
    mesh = read_mesh(inp)
    labels = node_labels(inp)
    if len(labels) != len(mesh.points):
        raise MeshError(f"mesh '{inp}': expected one *NODE line per point "
                        f"({len(mesh.points)}), found {len(labels)}")
    itfs = []
    for spec in interfaces:
        if spec.name not in mesh.node_sets:
            raise ExternalModelError(f"mesh '{inp}': interface '{spec.name}' is not a node "
                                     f"set; expected one of {sorted(mesh.node_sets)}")
        itfs.append(ExternalInterface(name=spec.name, nodes=mesh.node_sets[spec.name],
                                      kind=spec.kind))
    return ExternalModel(
        name=name or Path(inp).stem, source=f"{inp} + {mass} + {stiffness}",
        points=np.asarray(mesh.points), M=read_matrix(mass, labels),
        K=read_matrix(stiffness, labels), cells=np.asarray(mesh.cells),
        cell_type=mesh.cell_type, interfaces=tuple(itfs))
