"""Small helpers between scipy.sparse and PETSc (private to ``flexmbs.integrate``)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from petsc4py import PETSc


def reason_name(enum_cls, value: int) -> str:
    """Name of a PETSc converged/diverged reason, e.g. ``DIVERGED_MAX_IT``."""
    for k, v in vars(enum_cls).items():
        if not k.startswith("_") and k != "ITERATING" and isinstance(v, int) and v == value:
            return k
    return str(value)


def saddle(S: sp.spmatrix, G: sp.spmatrix, GT: sp.spmatrix | None = None) -> sp.csr_matrix:
    """``[[S, G^T], [G, 0]]`` as CSR with sorted indices and an explicit zero diagonal
    in the constraint block (keeps the nonzero pattern stable for LU reordering)."""
    n_lam = G.shape[0]
    GT = G.T if GT is None else GT
    idx = np.arange(n_lam)
    Z = sp.coo_matrix((np.zeros(n_lam), (idx, idx)), shape=(n_lam, n_lam)) if n_lam else None
    A = sp.bmat([[S, GT], [G, Z]], format="csr") if n_lam else sp.csr_matrix(S)
    A = A.tocsr()
    A.sort_indices()
    return A


def aij_from_csr(A: sp.csr_matrix, comm=None) -> PETSc.Mat:
    """A new sequential PETSc AIJ matrix with the values and pattern of ``A``."""
    comm = PETSc.COMM_SELF if comm is None else comm
    A = sp.csr_matrix(A)
    A.sort_indices()
    M = PETSc.Mat().createAIJ(A.shape, csr=(A.indptr.astype(PETSc.IntType),
                                            A.indices.astype(PETSc.IntType),
                                            A.data.astype(PETSc.ScalarType)), comm=comm)
    M.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, False)
    M.assemble()
    return M


def fill_aij(M: PETSc.Mat, A: sp.csr_matrix) -> None:
    """Overwrite the values of ``M`` by those of ``A`` (pattern may grow)."""
    A = sp.csr_matrix(A)
    A.sort_indices()
    M.zeroEntries()
    M.setValuesCSR(A.indptr.astype(PETSc.IntType), A.indices.astype(PETSc.IntType),
                   A.data.astype(PETSc.ScalarType), addv=PETSc.InsertMode.INSERT_VALUES)
    M.assemble()


def finite(*arrays: np.ndarray) -> bool:
    return all(np.all(np.isfinite(a)) for a in arrays)
