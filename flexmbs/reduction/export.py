"""Export of a flexmbs body as the matrices another code reads.

The body file holds the mesh (``points``, ``cells``, ``cell_type``) and the material, so
the consistent mass ``M = int rho N^T N dV`` and the stiffness ``K = int B^T C B dV`` are
re-assembled (:func:`flexmbs.fe.assemble.assemble`, the same matrices the reduction
used) and permuted to node-major dofs ``3 i + k``.  With them go the nodal modes
``Phi`` (3N, n_q), the stress modes and the interface node sets with their weights:
importing the export (:func:`flexmbs.reduction.external.external_body`) gives the body
back.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.io.bodyfile import ReducedBody
from flexmbs.io.external import ExternalInterface, ExternalModel, ExternalModelError
from flexmbs.io.mesh import Mesh


def node_major(A: sp.spmatrix, dof_of_node: np.ndarray) -> sp.csr_matrix:
    """``A`` with rows and columns reordered to dof ``3 i + k`` = node ``i``, direction
    ``k``: ``A_out = P A P^T`` with ``P[3 i + k, dof_of_node[i, k]] = 1``."""
    d = np.asarray(dof_of_node).ravel()
    return sp.csr_matrix(A)[d][:, d]


def exported_model(body: ReducedBody, source: str = "") -> ExternalModel:
    """The :class:`ExternalModel` of ``body`` (module docstring)."""
    where = f"export of body '{body.name}'" + (f" ('{source}')" if source else "")
    if body.cells.shape[0] == 0:
        raise ExternalModelError(f"{where}: the body has no cells (an imported body), so "
                                 "its mass and stiffness matrices cannot be assembled; "
                                 "export the original model instead")
    mat = body.material
    try:
        material = Material(E=float(mat["E"]), nu=float(mat["nu"]), rho=float(mat["rho"]),
                            name=str(mat.get("name", "")))
    except (KeyError, TypeError, ValueError) as exc:
        raise ExternalModelError(f"{where}: expected the body's material E, nu, rho, got "
                                 f"{dict(mat)} ({exc})") from None
    fe = assemble(Mesh(points=body.points, cells=body.cells, cell_type=body.cell_type),
                  material)
    n = len(body.points)
    itfs = tuple(ExternalInterface(name=mk.name, nodes=np.asarray(mk.nodes), kind=mk.kind,
                                   weights=np.asarray(mk.weights)) for mk in body.markers)
    return ExternalModel(
        name=body.name, source=source or body.name, points=np.asarray(body.points),
        M=node_major(fe.M, fe.dof_of_node), K=node_major(fe.K, fe.dof_of_node),
        Phi=np.asarray(body.modes).reshape(3 * n, body.n_q),
        stress_modes=np.asarray(body.stress_modes), cells=np.asarray(body.cells),
        cell_type=body.cell_type, interfaces=itfs, frame=body.frame,
        material={k: mat[k] for k in ("E", "nu", "rho", "name") if k in mat})
