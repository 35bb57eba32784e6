"""Partition of a mesh over the ranks of an MPI communicator.

The node graph (two nodes are adjacent when they share an element) is partitioned by
PT-Scotch through PETSc's ``MatPartitioning``; every node gets an owner rank.  Nodes are
renumbered rank by rank (in their original order within a rank), so that each rank owns
one contiguous range of the new dof numbering ``3 n_new + k`` -- the row layout of a
PETSc MPIAIJ matrix.  Each element belongs to the lowest owner among its nodes (its
integrals are summed there once); the *halo* elements of a rank are all elements that
touch one of its nodes (their matrices complete its rows without communication).

Every rank holds the whole (replicated) mesh: it is small next to the matrices and the
factor, which are what is distributed.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from flexmbs.reduction.petsc_options import set_prefix

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Partition:
    """Ownership of nodes, dofs and elements on one rank.

    rank, size : this rank and the number of ranks
    node_owner : (N,) owner rank of each mesh node
    dof_new : (n_dof,) new (rank-contiguous) index of each original dof
    dof_old : (n_dof,) original dof of each new index (inverse of ``dof_new``)
    dof_range : (size + 1,) rank r owns the new dofs ``dof_range[r]:dof_range[r+1]``
    elements : the elements whose integrals this rank sums
    halo : the elements touching a node of this rank (complete rows of M, K)
    """

    rank: int
    size: int
    node_owner: np.ndarray
    dof_new: np.ndarray
    dof_old: np.ndarray
    dof_range: np.ndarray
    elements: np.ndarray
    halo: np.ndarray

    @property
    def own(self) -> slice:
        """The new dofs of this rank."""
        return slice(int(self.dof_range[self.rank]), int(self.dof_range[self.rank + 1]))

    @property
    def own_old(self) -> np.ndarray:
        """The original dofs of this rank, in new order."""
        return self.dof_old[self.own]


def node_graph(nodes: np.ndarray, n_nodes: int) -> sp.csr_matrix:
    """Adjacency (N, N) of the mesh nodes sharing an element (``nodes`` (E, n_loc)),
    without the diagonal."""
    E, n = nodes.shape
    rows = np.repeat(nodes, n, axis=1).ravel()
    cols = np.tile(nodes, (1, n)).ravel()
    G = sp.csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)),
                      shape=(n_nodes, n_nodes))
    G.setdiag(0)
    G.eliminate_zeros()
    return G


def scotch_owner(graph: sp.csr_matrix, comm) -> np.ndarray:
    """Owner rank (N,) of every node: PT-Scotch k-way partition of ``graph`` through
    PETSc ``MatPartitioning`` (rows distributed in contiguous blocks for the call)."""
    from petsc4py import PETSc
    size = comm.getSize()
    n = graph.shape[0]
    if size == 1:
        return np.zeros(n, dtype=np.int64)
    A = PETSc.Mat().createAIJ(size=((PETSc.DECIDE, n), (PETSc.DECIDE, n)), comm=comm)
    A.setUp()
    r0, r1 = A.getOwnershipRange()
    A.destroy()
    rows = graph[r0:r1]
    csr = (rows.indptr.astype(PETSc.IntType), rows.indices.astype(PETSc.IntType),
           np.ones(rows.nnz, dtype=PETSc.ScalarType))
    A = PETSc.Mat().createAIJ(size=((r1 - r0, n), (r1 - r0, n)), csr=csr, comm=comm)
    part = PETSc.MatPartitioning().create(comm=comm)
    part.setAdjacency(A)
    part.setType("ptscotch")
    set_prefix(part, "flexmbs_partition_")
    part.setFromOptions()
    is_ = PETSc.IS().create(comm=comm)
    part.apply(is_)
    local = is_.getIndices().astype(np.int64)
    for obj in (is_, part, A):
        obj.destroy()
    return np.concatenate(comm.tompi4py().allgather(local))


def partition_mesh(nodes: np.ndarray, dof_of_node: np.ndarray, comm) -> Partition:
    """Partition the mesh whose elements have the mesh nodes ``nodes`` (E, n_loc); the
    dof of node ``i`` in direction ``k`` is ``dof_of_node[i, k]`` (PETSc ``comm``)."""
    rank, size = comm.getRank(), comm.getSize()
    n_nodes = dof_of_node.shape[0]
    owner = scotch_owner(node_graph(nodes, n_nodes), comm)
    counts = np.bincount(owner, minlength=size)
    if np.any(counts == 0):
        raise ValueError(f"partition: rank(s) {np.flatnonzero(counts == 0).tolist()} got no "
                         f"nodes ({n_nodes} nodes over {size} ranks); use fewer ranks")
    order = np.lexsort((np.arange(n_nodes), owner))          # nodes rank by rank
    node_new = np.empty(n_nodes, dtype=np.int64)
    node_new[order] = np.arange(n_nodes)
    # dof_of_node[i, k] is dof 3 b_i + k; the new dof is 3 node_new[i] + k
    n_dof = 3 * n_nodes
    dof_new = np.empty(n_dof, dtype=np.int64)
    dof_new[dof_of_node.ravel()] = (3 * node_new[:, None] + np.arange(3)).ravel()
    dof_old = np.empty(n_dof, dtype=np.int64)
    dof_old[dof_new] = np.arange(n_dof)
    dof_range = np.concatenate([[0], 3 * np.cumsum(counts)])
    elem_owners = owner[nodes]                               # (E, n_loc)
    elements = np.flatnonzero(elem_owners.min(axis=1) == rank)
    halo = np.flatnonzero((elem_owners == rank).any(axis=1))
    log.info("rank %d: %d nodes, %d elements (%d with halo)", rank, counts[rank],
             len(elements), len(halo))
    return Partition(rank=rank, size=size, node_owner=owner, dof_new=dof_new,
                     dof_old=dof_old, dof_range=dof_range, elements=elements, halo=halo)
