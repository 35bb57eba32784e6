"""Small helpers between scipy.sparse and PETSc (private to ``flexmbs.integrate``)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from petsc4py import PETSc


class CSR(NamedTuple):
    """A matrix in sorted CSR form as plain arrays (what :func:`csr_parts` returns)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple


_REASONS: dict = {}


def reason_name(enum_cls, value: int) -> str:
    """Name of a PETSc converged/diverged reason, e.g. ``DIVERGED_MAX_IT`` (the table of
    each enum is made once)."""
    names = _REASONS.get(enum_cls)
    if names is None:
        names = _REASONS[enum_cls] = {
            v: k for k, v in reversed(list(vars(enum_cls).items()))
            if not k.startswith("_") and k != "ITERATING" and isinstance(v, int)}
    return names.get(value, str(value))


def saddle(S: sp.spmatrix, G: sp.spmatrix) -> sp.csr_matrix:
    """``[[S, G^T], [G, 0]]`` as sorted CSR, with explicit zeros on the whole diagonal:
    a stable nonzero pattern for the LU reordering, and no empty row (SuperLU crashes
    instead of reporting a zero pivot on a structurally singular matrix, e.g. the tangent
    of a chain of unstressed springs)."""
    n, m = S.shape[0], G.shape[0]
    if m == 0:
        return block_csr([[S]], [n], [n], zero_diagonal_from=0)
    return block_csr([[S, G.T], [G, None]], [n, m], [n, m], zero_diagonal_from=0)


def csr_parts(A) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """``(indptr, indices, data, shape)`` of a matrix with sorted column indices: any
    ``scipy.sparse`` matrix, or an object with those four attributes already in sorted
    CSR form (e.g. :class:`CSR` or :class:`flexmbs.system.sparse.CSRMatrix`, passed
    through as is)."""
    if sp.issparse(A):
        if not (sp.isspmatrix_csr(A) and A.has_sorted_indices):
            A = sp.csr_matrix(A)
            A.sort_indices()
        return A.indptr, A.indices, A.data, A.shape
    return A.indptr, A.indices, A.data, tuple(A.shape)


def csr_of_dense(A: np.ndarray) -> CSR:
    """The nonzeros of the dense matrix ``A`` in sorted CSR form (those of
    ``scipy.sparse.csr_matrix(A)``, without its checks: a few numpy calls)."""
    A = np.asarray(A, dtype=float)
    nz = A != 0.0
    indptr = np.zeros(A.shape[0] + 1, dtype=np.int32)
    np.cumsum(np.count_nonzero(nz, axis=1), out=indptr[1:])
    return CSR(indptr, np.nonzero(nz)[1].astype(np.int32), A[nz], A.shape)


def aij_from_csr(A, comm=None) -> PETSc.Mat:
    """A new sequential PETSc AIJ matrix with the values and pattern of ``A``."""
    comm = PETSc.COMM_SELF if comm is None else comm
    ip, ix, data, shape = csr_parts(A)
    M = PETSc.Mat().createAIJ(shape, csr=(ip.astype(PETSc.IntType), ix.astype(PETSc.IntType),
                                          np.asarray(data, dtype=PETSc.ScalarType)), comm=comm)
    M.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, False)
    M.assemble()
    return M


def fill_aij(M: PETSc.Mat, A) -> None:
    """Overwrite the values of ``M`` by those of ``A`` (pattern may grow)."""
    ip, ix, data, _ = csr_parts(A)
    M.zeroEntries()
    M.setValuesCSR(ip.astype(PETSc.IntType), ix.astype(PETSc.IntType),
                   np.asarray(data, dtype=PETSc.ScalarType),
                   addv=PETSc.InsertMode.INSERT_VALUES)
    M.assemble()


class FixedPatternFill:
    """Fills an AIJ matrix whose pattern is that of the first matrix given, in place.

    When a later matrix has the *same* ``indptr`` and ``indices`` arrays (identity, as
    returned by :meth:`flexmbs.system.assembly.AssembledSystem.newton_matrix`), only its
    values are inserted (``MatSetValuesCSR`` on the existing pattern; no zeroing, no
    index conversion); any other matrix takes the general :func:`fill_aij` path.
    """

    def __init__(self, A0):
        ip, ix, _, _ = csr_parts(A0)
        self._ref = (ip, ix)
        self._ip = ip.astype(PETSc.IntType)
        self._ix = ix.astype(PETSc.IntType)
        self.general_used = False        # some fill took the general path (pattern changed)

    def __call__(self, M: PETSc.Mat, A) -> None:
        ip, ix, data, _ = csr_parts(A)
        if ip is self._ref[0] and ix is self._ref[1]:
            M.setValuesCSR(self._ip, self._ix, np.asarray(data, dtype=PETSc.ScalarType),
                           addv=PETSc.InsertMode.INSERT_VALUES)
            M.assemble()
        else:
            self.general_used = True
            fill_aij(M, A)


class DenseFill:
    """Fills a sequential dense PETSc matrix (LAPACK LU with partial pivoting) from CSR
    or from a dense (N, N) array.

    For the fixed pattern of the first matrix given (same ``indptr``/``indices`` arrays,
    as :class:`FixedPatternFill`) the values go to precomputed row-major positions of a
    buffer that stays zero elsewhere; any other matrix is expanded in full.
    """

    general_used = False            # a dense matrix has no pattern to set up again

    def __init__(self, A0):
        ip, ix, _, shape = csr_parts(A0)
        self._ref = (ip, ix)
        rows = np.repeat(np.arange(shape[0]), np.diff(ip))
        self._pos = rows * shape[1] + ix
        self._buf = np.zeros(shape[0] * shape[1], dtype=PETSc.ScalarType)
        self._rows = np.arange(shape[0], dtype=PETSc.IntType)
        self._cols = np.arange(shape[1], dtype=PETSc.IntType)

    def create(self, comm=None) -> PETSc.Mat:
        """A new sequential dense matrix of this shape."""
        M = PETSc.Mat().createDense((self._rows.size, self._cols.size),
                                    comm=PETSc.COMM_SELF if comm is None else comm)
        M.setUp()
        return M

    def __call__(self, M: PETSc.Mat, A) -> None:
        if isinstance(A, np.ndarray):           # already dense (N, N)
            M.setValues(self._rows, self._cols, A, addv=PETSc.InsertMode.INSERT_VALUES)
            M.assemble()
            return
        ip, ix, data, _ = csr_parts(A)
        if ip is self._ref[0] and ix is self._ref[1]:
            self._buf[self._pos] = data
            values = self._buf
        else:
            values = (A.toarray() if sp.issparse(A) else
                      sp.csr_matrix((data, ix, ip), shape=(self._rows.size,
                                                           self._cols.size)).toarray())
        M.setValues(self._rows, self._cols, values, addv=PETSc.InsertMode.INSERT_VALUES)
        M.assemble()


def finite(*arrays: np.ndarray) -> bool:
    return all(np.all(np.isfinite(a)) for a in arrays)


_SMALL = 400  # below this total size block matrices are assembled densely (scipy overhead)


def block_csr(blocks: list[list], row_sizes: list[int], col_sizes: list[int],
              zero_diagonal_from: int | None = None) -> sp.csr_matrix:
    """``sp.bmat(blocks)`` as sorted CSR; ``None`` blocks are zero.  Fast for small sizes.

    ``zero_diagonal_from``: add explicit zeros on the diagonal from that row on (a stable
    pattern for the multiplier block of saddle-point matrices).
    """
    n_r, n_c = sum(row_sizes), sum(col_sizes)
    if max(n_r, n_c) <= _SMALL:
        A = np.zeros((n_r, n_c))
        r0 = 0
        for brow, nr in zip(blocks, row_sizes):
            c0 = 0
            for b, nc in zip(brow, col_sizes):
                if b is not None and nr and nc:
                    A[r0:r0 + nr, c0:c0 + nc] = b.toarray() if sp.issparse(b) else b
                c0 += nc
            r0 += nr
        if zero_diagonal_from is not None:
            i = np.arange(zero_diagonal_from, min(n_r, n_c))
            mask = A != 0.0
            mask[i, i] = True
            rows, cols = np.nonzero(mask)
            out = sp.csr_matrix((A[rows, cols], (rows, cols)), shape=(n_r, n_c))
        else:
            out = sp.csr_matrix(A)
    else:
        fixed = [[b if b is not None else None for b in brow] for brow in blocks]
        for i, nr in enumerate(row_sizes):  # bmat needs the sizes of empty block rows
            for j, nc in enumerate(col_sizes):
                if i == j and fixed[i][j] is None:
                    fixed[i][j] = sp.csr_matrix((nr, nc))
        out = sp.bmat(fixed, format="csr")
        if zero_diagonal_from is not None:
            i = np.arange(zero_diagonal_from, min(n_r, n_c))
            out = (out + sp.csr_matrix((np.zeros(i.size), (i, i)), shape=out.shape)).tocsr()
    out.sort_indices()
    return out
