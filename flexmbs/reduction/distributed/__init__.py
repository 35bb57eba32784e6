"""Distributed preprocessing: one body reduced over the ranks of an MPI communicator.

``mpiexec -n N flexmbs preprocess MESH ...`` runs :func:`flexmbs.reduction.reduce_model`
with ``comm = PETSc.COMM_WORLD``.  Then

* :mod:`.partition` partitions the nodes (PT-Scotch via PETSc ``MatPartitioning``) and
  the elements over the ranks;
* :mod:`.basis` assembles ``M``, ``K`` into PETSc MPIAIJ matrices, projects them on the
  interface coordinates (``PtAP``) and computes the Craig--Bampton or free--free basis
  with SLEPc shift-invert on a parallel MUMPS factor;
* every element integral of the reduction (shape integrals, ``K2``/``K3``, nodal stress
  sums) is summed by each rank over its own elements and added over the ranks
  (:meth:`Distributed.sum`), which is a parallel reduction of the serial quadrature.

The body is the serial one up to round-off: the same basis (to the eigen solver's
tolerance) and the same quadrature, summed in another order
(``tests/reduction/test_distributed_preprocess.py``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from flexmbs.reduction.distributed.basis import (DistributedBasis, DistributedError,
                                                 distributed_basis)
from flexmbs.reduction.distributed.partition import Partition, partition_mesh


@dataclass(frozen=True)
class Distributed:
    """A communicator (PETSc) and the mesh partition of one distributed reduction."""

    comm: object
    part: Partition

    @staticmethod
    def create(fe, comm) -> Distributed:
        return Distributed(comm=comm, part=partition_mesh(np.asarray(fe.basis.nodes),
                                                          np.asarray(fe.dof_of_node), comm))

    @property
    def mpi(self):
        return self.comm.tompi4py()

    def sum(self, x):
        """Sum over the ranks of a float, an array or a dataclass of them."""
        from mpi4py import MPI
        if dataclasses.is_dataclass(x):
            return dataclasses.replace(x, **{f.name: self.sum(getattr(x, f.name))
                                             for f in dataclasses.fields(x)})
        if np.isscalar(x):
            return self.mpi.allreduce(float(x), op=MPI.SUM)
        a = np.ascontiguousarray(x, dtype=float)
        out = np.empty_like(a)
        self.mpi.Allreduce(a, out, op=MPI.SUM)
        return out


def is_distributed(comm) -> bool:
    """True for a PETSc communicator of more than one rank."""
    return comm is not None and comm.getSize() > 1


__all__ = ["Distributed", "DistributedBasis", "DistributedError", "Partition",
           "distributed_basis", "is_distributed", "partition_mesh"]
