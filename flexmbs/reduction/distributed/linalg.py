"""Distributed matrices (PETSc MPIAIJ) and replicated dense blocks.

A :class:`Layout` says which rows of a vector space a rank owns, in PETSc's contiguous
new order, and which *serial* index each of them has.  Large sparse operators live in
PETSc; the few dense basis vectors (``n x n_q``, ``n_q`` ~ 10-100) are replicated on
every rank in the serial order, so that the serial reduction code (Gram--Schmidt, Ritz,
sign normalisation) runs unchanged and gives the serial result: a product ``A @ X``
(:class:`DistOperator`) scatters the owned rows of ``X`` into a PETSc vector, multiplies
in parallel and gathers the result back to every rank.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Layout:
    """Row ownership of a distributed space of dimension ``n``.

    serial : (n_local,) serial index of each owned row (owned rows in new order)
    counts : (size,) rows per rank;  start : first new index of this rank
    order : (n,) serial index of every new index (all ranks' ``serial`` concatenated)
    """

    serial: np.ndarray
    counts: np.ndarray
    start: int
    order: np.ndarray

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def n_local(self) -> int:
        return len(self.serial)

    @staticmethod
    def from_local(serial: np.ndarray, mpi_comm) -> Layout:
        serial = np.asarray(serial, dtype=np.int64)
        parts = mpi_comm.allgather(serial)
        counts = np.array([len(p) for p in parts], dtype=np.int64)
        start = int(counts[:mpi_comm.Get_rank()].sum())
        return Layout(serial=serial, counts=counts, start=start, order=np.concatenate(parts))


def gather_rows(local: np.ndarray, layout: Layout, mpi_comm) -> np.ndarray:
    """The full (n, ...) array, in serial order, on every rank, from the owned rows
    ``local`` (n_local, ...) of each rank."""
    local = np.ascontiguousarray(local, dtype=float)
    tail = local.shape[1:]
    width = int(np.prod(tail)) if tail else 1
    buf = np.empty(layout.n * width)
    mpi_comm.Allgatherv(local.ravel(), [buf, layout.counts * width])
    out = np.empty((layout.n, *tail))
    out[layout.order] = buf.reshape(layout.n, *tail)
    return out


def aij(rows: sp.csr_matrix, row_layout: Layout, col_layout: Layout, comm):
    """PETSc MPIAIJ from the owned rows ``rows`` (n_local_rows x N_cols, CSR, *new* column
    indices); values are copied."""
    from petsc4py import PETSc
    rows = sp.csr_matrix(rows)
    rows.sort_indices()
    csr = (rows.indptr.astype(PETSc.IntType), rows.indices.astype(PETSc.IntType),
           np.ascontiguousarray(rows.data, dtype=PETSc.ScalarType))
    A = PETSc.Mat().createAIJ(size=((row_layout.n_local, row_layout.n),
                                    (col_layout.n_local, col_layout.n)), csr=csr, comm=comm)
    return A


def permuted_rows(A: sp.csr_matrix, rows_serial: np.ndarray, col_new: np.ndarray
                  ) -> sp.csr_matrix:
    """Rows ``rows_serial`` of the serially numbered ``A`` with their columns renumbered
    by ``col_new`` (serial -> new)."""
    R = sp.csr_matrix(A)[rows_serial]
    R = sp.csr_matrix((R.data, col_new[R.indices], R.indptr), shape=R.shape)
    R.sort_indices()
    return R


class DistOperator:
    """``A @ X`` for a PETSc matrix ``A`` (square, rows and columns in ``layout``) and a
    replicated ``X`` (n,) or (n, k) in serial order; the result is replicated too."""

    def __init__(self, A, layout: Layout, mpi_comm):
        self.A, self.layout, self.comm = A, layout, mpi_comm
        self.x, self.y = A.createVecs()
        self.shape = (layout.n, layout.n)

    def local(self, X: np.ndarray) -> np.ndarray:
        """``(A X)`` on the owned rows (n_local, k) (new order)."""
        X = np.asarray(X, dtype=float).reshape(self.layout.n, -1)
        out = np.empty((self.layout.n_local, X.shape[1]))
        for j in range(X.shape[1]):
            self.x.array[:] = X[self.layout.serial, j]
            self.A.mult(self.x, self.y)
            out[:, j] = self.y.array
        return out

    def __matmul__(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        out = gather_rows(self.local(X), self.layout, self.comm)
        return out[:, 0] if X.ndim == 1 else out

    def diagonal_sum(self) -> float:
        d = self.A.getDiagonal()
        s = d.sum()
        d.destroy()
        return float(s)

    def destroy(self, matrix: bool = True) -> None:
        """Free the work vectors and (``matrix``) the matrix."""
        for obj in (self.x, self.y, *((self.A,) if matrix else ())):
            obj.destroy()
