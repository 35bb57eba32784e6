"""Static solves with the reference-frame condition, distributed (THEORY §8.1).

The same two forms as the serial :func:`flexmbs.reduction.modes.static_modes_z`:

* interface frame: the frame marker's six coordinates held at zero,
  ``K_ff z_f = F_f`` (parallel MUMPS Cholesky of the sub-matrix);
* mean axis: the saddle point ``[[K, M R], [R^T M, 0]] [z; lam] = [F; 0]`` (inertia
  relief: the response is M-orthogonal to the rigid modes ``R``), bordered by six rows
  owned by the last rank (parallel MUMPS LU).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from flexmbs.reduction.eigen import ksp_solve, direct_ksp

from flexmbs.reduction.distributed.linalg import DistOperator, Layout, aij, gather_rows


def clamped_solve(K_op: DistOperator, fixed_serial: np.ndarray, F: np.ndarray, comm
                  ) -> np.ndarray:
    """``K z = F`` with the coordinates ``fixed_serial`` (serial indices) held at zero;
    ``F`` (n, k) and the result replicated, in serial order."""
    from petsc4py import PETSc
    lay = K_op.layout
    fixed = np.zeros(lay.n, dtype=bool)
    fixed[np.asarray(fixed_serial, dtype=np.int64)] = True
    free_local = ~fixed[lay.serial]
    rows = (lay.start + np.flatnonzero(free_local)).astype(PETSc.IntType)
    is_f = PETSc.IS().createGeneral(rows, comm=comm)
    Kf = K_op.A.createSubMatrix(is_f, is_f)
    ksp = direct_ksp(Kf, spd=True, prefix="flexmbs_static_")
    Z_local = np.zeros((lay.n_local, F.shape[1]))
    Z_local[free_local] = ksp_solve(ksp, Kf)(F[lay.serial[free_local]])
    for obj in (ksp, Kf, is_f):
        obj.destroy()
    return gather_rows(Z_local, lay, K_op.comm)


def mean_axis_solve(K_op: DistOperator, M_op: DistOperator, R: np.ndarray, F: np.ndarray,
                    comm) -> np.ndarray:
    """``[[K, M R], [R^T M, 0]] [z; lam] = [F; 0]`` -> ``z`` (n, k), replicated, serial
    order; ``R`` (n, 6) the rigid modes in the same coordinates."""
    lay, mpi = K_op.layout, K_op.comm
    n, n_r = lay.n, R.shape[1]
    last = mpi.Get_rank() == mpi.Get_size() - 1
    MR = M_op @ R                                              # (n, 6) replicated
    MR_new = MR[lay.order]                                     # rows in new order
    indptr, indices, values = K_op.A.getValuesCSR()
    K_loc = sp.csr_matrix((values, indices, indptr), shape=(lay.n_local, n))
    top = sp.hstack([K_loc, sp.csr_matrix(MR[lay.serial])], format="csr")
    if last:
        border = sp.hstack([sp.csr_matrix(MR_new.T), sp.csr_matrix((n_r, n_r))], format="csr")
        top = sp.vstack([top, border], format="csr")
    ext = Layout.from_local(np.concatenate([lay.serial, n + np.arange(n_r)]) if last
                            else lay.serial, mpi)
    A = aij(top, ext, ext, comm)
    ksp = direct_ksp(A, spd=False, prefix="flexmbs_static_")
    rhs = np.zeros((ext.n_local, F.shape[1]))
    rhs[:lay.n_local] = F[lay.serial]
    Z_local = ksp_solve(ksp, A)(rhs)[:lay.n_local]
    for obj in (ksp, A):
        obj.destroy()
    return gather_rows(Z_local, lay, mpi)
