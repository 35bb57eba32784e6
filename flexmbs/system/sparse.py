"""Sparse matrices of the system as plain arrays: CSR triples and COO chunks.

Jacobians are assembled from dense blocks on the local vectors ``idx`` of bodies, force
elements and constraint blocks (:mod:`flexmbs.system.layout`): a block's entries are
``(rows, cols, values)`` over the grid ``idx x idx`` (:class:`Grids`), and all chunks
go into one COO matrix (duplicates summed) converted to CSR.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp


class CSRMatrix(NamedTuple):
    """A square CSR matrix as plain arrays (``indptr``, ``indices``, ``data``, ``shape``,
    as in ``scipy.sparse.csr_matrix``; sorted column indices, no duplicates)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple

    def tocsr(self) -> sp.csr_matrix:
        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)

    def toarray(self) -> np.ndarray:
        return self.tocsr().toarray()

    def with_data(self, data: np.ndarray) -> CSRMatrix:
        """The same pattern with other values."""
        return self._replace(data=data)


class Grids:
    """Row and column indices of the dense blocks ``idx x idx``, cached per block key."""

    def __init__(self):
        self._grids: dict = {}

    def __call__(self, key, idx) -> tuple[np.ndarray, np.ndarray]:
        g = self._grids.get(key)
        if g is None:
            rr, cc = np.meshgrid(idx, idx, indexing="ij")
            g = self._grids[key] = (rr.ravel(), cc.ravel())
        return g


def coo(rows, cols, vals, shape) -> sp.csr_matrix:
    """The CSR matrix of the COO chunks ``rows``, ``cols``, ``vals`` (lists of arrays;
    duplicates summed)."""
    if not rows:
        return sp.csr_matrix(shape)
    return sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=shape).tocsr()
