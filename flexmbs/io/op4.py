"""Nastran OUTPUT4 (``.op4``) matrices, read and written by pyNastran's OP4 reader.

``read_op4_matrix(path, name)`` returns one named matrix (ASCII or binary OP4, dense or
sparse); ``write_op4(path, matrices)`` writes ASCII OP4 in double precision (pyNastran
writes sparse matrices only as ASCII), which reads back bit for bit.  A Nastran g-set
matrix has six dofs per GRID: ``translational(A, 6)`` keeps dofs 1--3 of each.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from flexmbs.io.external import ExternalModelError

log = logging.getLogger(__name__)


def _op4():
    try:
        from pyNastran.op4.op4 import OP4, read_op4
    except ImportError:
        raise ExternalModelError("OP4 files need pyNastran (pip install pyNastran)") from None
    return OP4, read_op4


def read_op4_matrix(path: str | Path, name: str):
    """Matrix ``name`` of the OP4 file ``path``: ndarray or CSR matrix."""
    path = Path(path)
    if not path.is_file():
        raise ExternalModelError(f"OP4 file '{path}' not found")
    _, read_op4 = _op4()
    try:
        mats = read_op4(str(path), debug=False, log=log)
    except Exception as exc:                      # pyNastran raises plain errors
        raise ExternalModelError(f"OP4 file '{path}': expected Nastran OUTPUT4 matrices, "
                                 f"could not read it ({type(exc).__name__}: {exc})") from None
    if name not in mats:
        raise ExternalModelError(f"OP4 file '{path}': no matrix {name!r}; found "
                                 f"{sorted(mats)}")
    data = mats[name].data
    return sp.csr_matrix(data) if sp.issparse(data) else np.asarray(data)


def write_op4(path: str | Path, matrices: dict) -> None:
    """ASCII OP4 of ``matrices`` (name -> ndarray or sparse), double precision."""
    OP4, _ = _op4()
    out = {k: (2, sp.coo_matrix(A) if sp.issparse(A) else np.asarray(A, dtype=float))
           for k, A in matrices.items()}
    OP4(debug=False, log=log).write_op4(str(path), out, is_binary=False, precision="double")


def translational(A, dofs_per_node: int):
    """Rows and columns of dofs 1--3 of each node of a matrix on ``dofs_per_node`` (3 or 6)
    dofs per node (rows only for a tall matrix such as recovery modes)."""
    if dofs_per_node == 3:
        return A
    keep = np.arange(A.shape[0]).reshape(-1, dofs_per_node)[:, :3].ravel()
    square = A.shape[0] == A.shape[1]
    A = A[keep]
    return A[:, keep] if square else A
