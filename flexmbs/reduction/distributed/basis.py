"""The reduction basis computed over MPI ranks (free--free or Craig--Bampton).

Same mathematics as :func:`flexmbs.reduction.modes.compute_basis` (THEORY §2.8.7):

* ``M``, ``K`` are assembled rank by rank into PETSc MPIAIJ matrices (each rank computes
  the element matrices of its halo elements and keeps its own rows);
* interfaces: ``u = T z`` with ``T`` an MPIAIJ matrix, ``K_z = T^T K T`` by PETSc's
  ``PtAP``; the fixed-interface problem ``K_ii x = lam M_ii x`` is solved by SLEPc
  Krylov--Schur, shift-invert with a parallel MUMPS Cholesky factor, and the same factor
  gives the constraint modes ``-K_ii^-1 K_ib``;
* free--free: the same on ``K``, ``M`` with the shift ``sigma = -1e-8 tr K / tr M``;
* the basis vectors (a few tens) are then gathered on every rank and the serial
  Gram--Schmidt / Rayleigh--Ritz / sign normalisation run on them, with the products by
  ``K_z``, ``M_z`` done in parallel (:class:`DistOperator`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from flexmbs.errors import FlexmbsError
from flexmbs.fe.assemble import assemble_blocks
from flexmbs.reduction.distributed.linalg import (DistOperator, Layout, aij, gather_rows,
                                                  permuted_rows)
from flexmbs.reduction.distributed.partition import Partition
from flexmbs.reduction.eigen import EigenError, ksp_solve, shift_invert_eps, start_vector
from flexmbs.reduction.interfaces import interface_transformation, rigid_modes
from flexmbs.reduction.distributed.static import clamped_solve, mean_axis_solve
from flexmbs.reduction.modes import (ModalBasis, inertial_loads, m_orthonormalize,
                                     nonzero_responses, normalize_signs, rigid_modes_z, ritz,
                                     static_basis)

log = logging.getLogger(__name__)


class DistributedError(FlexmbsError):
    """A setting that the distributed preprocessing cannot do."""


@dataclass
class DistributedBasis:
    """The basis and what the invariants need from the distributed matrices.

    basis : the :class:`ModalBasis` (replicated, serial dof order)
    K_e : (n_q, n_q) ``Phi^T K Phi`` computed with the distributed ``K``
    K_u, M_u : the distributed ``K``, ``M`` on the FE dofs (``keep_u=True`` only; the
        caller destroys them), for a later enrichment of the basis
    """

    basis: ModalBasis
    K_e: np.ndarray
    K_u: DistOperator | None = None
    M_u: DistOperator | None = None


def assemble_distributed(basis, material, part: Partition, comm):
    """``(K, M, layout)``: MPIAIJ stiffness and mass in the partition's dof order."""
    M_loc, K_loc = assemble_blocks(basis.restricted(part.halo), material)
    rows = part.own_old
    mpi = comm.tompi4py()
    layout = Layout.from_local(rows, mpi)
    Kp = aij(permuted_rows(K_loc, rows, part.dof_new), layout, layout, comm)
    del K_loc
    Mp = aij(permuted_rows(M_loc, rows, part.dof_new), layout, layout, comm)
    return Kp, Mp, layout


def _eps(A, B, n: int, sigma: float, v0_local: np.ndarray, comm, *, tol: float = 1e-12):
    """SLEPc Krylov--Schur, shift-invert about ``sigma`` with a MUMPS Cholesky factor of
    ``A - sigma B``; PETSc options prefix ``flexmbs_eps_``."""
    eps = shift_invert_eps(A, B, n, sigma, comm, tol=tol)
    v0 = A.createVecRight()
    v0.array[:] = v0_local
    eps.setInitialSpace([v0])
    eps.setFromOptions()
    eps.solve()
    nconv = eps.getConverged()
    if nconv < n:
        raise EigenError(f"SLEPc (distributed) converged {nconv} of {n} eigenpairs "
                         f"(reason {eps.getConvergedReason()})")
    lam = np.empty(nconv)
    X = np.empty((v0.getLocalSize(), nconv))
    for i in range(nconv):
        lam[i] = eps.getEigenpair(i, v0).real
        X[:, i] = v0.array
    order = np.argsort(np.abs(lam - sigma))[:n]
    log.info("SLEPc distributed: %d iterations, %d converged", eps.getIterationNumber(), nconv)
    return lam[order], X[:, order], eps, v0


class _Clock:
    """Logs the wall time of each step (rank 0, INFO)."""

    def __init__(self, comm):
        import time
        self.time, self.rank = time.perf_counter, comm.getRank()
        self.t = self.time()

    def __call__(self, step: str) -> None:
        now = self.time()
        if self.rank == 0:
            log.info("distributed basis: %s %.2f s", step, now - self.t)
        self.t = now


def distributed_basis(fe_basis, material, points, dof_of_node, part: Partition, interfaces,
                      n_modes: int, frame: str, comm, *,
                      static_modes: bool = False, keep_u: bool = False) -> DistributedBasis:
    """The reduction basis of the mesh of ``fe_basis`` (an ``ElementBasis``) over the
    ranks of the PETSc communicator ``comm``; see the module docstring.  ``static_modes``
    adds the 12 inertial static modes (THEORY §8.1), solved with the frame condition
    (:mod:`.static`), as the serial ``compute_basis`` does."""
    from petsc4py import PETSc
    mpi = comm.tompi4py()
    names = [i.name for i in interfaces]
    if frame != "mean_axis" and not frame.startswith("interface:"):
        raise ValueError(f"frame must be 'mean_axis' or 'interface:NAME', got {frame!r}")
    if frame.startswith("interface:") and frame.split(":", 1)[1] not in names:
        raise ValueError(f"frame {frame!r}: no such interface among {names}")
    clock = _Clock(comm)
    Kp, Mp, u_layout = assemble_distributed(fe_basis, material, part, comm)
    clock("assembly (MPIAIJ)")
    n_dof = u_layout.n
    rigid = rigid_modes(points, dof_of_node, n_dof)
    tr = interface_transformation(n_dof, points, tuple(interfaces))
    if not interfaces:
        method = "free_free"
        K_op, M_op = DistOperator(Kp, u_layout, mpi), DistOperator(Mp, u_layout, mpi)
        sigma = -1e-8 * K_op.diagonal_sum() / M_op.diagonal_sum()
        v0 = start_vector(n_dof)[u_layout.serial]
        lam, X, eps, _ = _eps(Kp, Mp, n_modes + 6, sigma, v0, comm)
        eps.destroy()
        X = gather_rows(X[:, np.argsort(lam)], u_layout, mpi)
        Rn = m_orthonormalize(rigid, M_op)
        Vz = m_orthonormalize(X[:, 6:], M_op, against=Rn)
        T = None
        Z = (mean_axis_solve(K_op, M_op, rigid, inertial_loads(points, dof_of_node, M_op), comm)
             if static_modes else None)
    else:
        method = "craig_bampton"
        nk = tr.n_kept
        z_of_dof = -np.ones(n_dof, dtype=np.int64)
        z_of_dof[tr.kept] = np.arange(nk)
        own_z = z_of_dof[part.own_old]
        own_z = own_z[own_z >= 0]
        n_kept_local = len(own_z)
        last = part.rank == part.size - 1
        n_b = 6 * len(interfaces)
        if last:
            own_z = np.concatenate([own_z, nk + np.arange(n_b)])
        z_layout = Layout.from_local(own_z, mpi)
        z_new = np.empty(z_layout.n, dtype=np.int64)
        z_new[z_layout.order] = np.arange(z_layout.n)
        Tp = aij(permuted_rows(tr.T, part.own_old, z_new), u_layout, z_layout, comm)
        Fz = None
        if static_modes:                    # inertial loads M a, needed in u before PtAP
            Mu = DistOperator(Mp, u_layout, mpi)
            Fz = tr.T.T @ inertial_loads(points, dof_of_node, Mu)
            Mu.destroy(matrix=False)
        Kz, Mz = Kp.PtAP(Tp), Mp.PtAP(Tp)
        clock("interface projection T^T K T (PtAP)")
        for obj in (Tp,) if keep_u else (Kp, Mp, Tp):
            obj.destroy()
        K_op, M_op = DistOperator(Kz, z_layout, mpi), DistOperator(Mz, z_layout, mpi)
        is_i = PETSc.IS().createStride(n_kept_local, first=z_layout.start, step=1, comm=comm)
        K_ii, M_ii = Kz.createSubMatrix(is_i, is_i), Mz.createSubMatrix(is_i, is_i)
        boundary = list(range(n_b))
        if frame.startswith("interface:"):
            sl = tr.marker_slice(frame.split(":", 1)[1])
            boundary = [b for b in boundary if not (sl.start <= nk + b < sl.stop)]
        # K_ib columns: K_z e_b on the kept rows
        E = np.zeros((z_layout.n, len(boundary)))
        E[nk + np.array(boundary, dtype=int), np.arange(len(boundary))] = 1.0
        K_ib = K_op.local(E)[:n_kept_local]
        v0 = start_vector(nk)[z_layout.serial[:n_kept_local]]
        clock("K_ii, K_ib")
        lam, Phi_i, eps, _ = _eps(K_ii, M_ii, n_modes, 0.0, v0, comm)
        clock("fixed-interface eigen solve (SLEPc, MUMPS)")
        log.info("fixed-interface frequencies [Hz]: %s",
                 np.array2string(np.sqrt(np.abs(np.sort(lam))) / 2 / np.pi, precision=4))
        # the shift-invert factor (sigma = 0) of K_ii solves for the constraint modes
        Xc = (ksp_solve(eps.getST().getKSP(), K_ii)(-K_ib) if boundary
              else np.zeros((n_kept_local, 0)))
        eps.destroy()
        for obj in (K_ii, M_ii, is_i):
            obj.destroy()
        V_local = np.zeros((z_layout.n_local, n_modes + len(boundary)))
        V_local[:n_kept_local, :n_modes] = Phi_i[:, np.argsort(lam)]
        V_local[:n_kept_local, n_modes:] = Xc
        clock("constraint modes")
        Vz = gather_rows(V_local, z_layout, mpi)
        Vz[nk + np.array(boundary, dtype=int), n_modes + np.arange(len(boundary))] = 1.0
        Rz = rigid_modes_z(tr, rigid)
        Rn = m_orthonormalize(Rz, M_op) if frame == "mean_axis" else None
        Z = None
        if static_modes and frame == "mean_axis":
            Z = mean_axis_solve(K_op, M_op, Rz, Fz, comm)
        elif static_modes:
            Z = clamped_solve(K_op, np.arange(sl.start, sl.stop), Fz, comm)
        T = tr.T
    n_static = 0
    if Z is not None:                       # as compute_basis: [V0, S] M-orthonormal
        V0 = m_orthonormalize(Vz, M_op, against=Rn)
        S = static_basis(nonzero_responses(Z, M_op), M_op, K_op,
                         against=V0 if Rn is None else np.hstack([Rn, V0]))
        n_static = S.shape[1]
        Vz = np.hstack([V0, S])
    # M-orthonormal before Rayleigh--Ritz, as in the serial compute_basis
    Vz = m_orthonormalize(Vz, M_op, against=Rn)
    clock("static modes, gather, orthonormalise")
    lam, Phiz = ritz(Vz, K_op, M_op)
    clock("Rayleigh-Ritz")
    if np.any(lam <= 0):
        raise ValueError(f"reduction basis has non-positive eigenvalues {lam[lam <= 0]}: "
                         "rigid-body content left (check interfaces and frame)")
    Phi = Phiz if T is None else T @ Phiz
    Phi_n = normalize_signs(Phi)
    s = np.sign(np.einsum("ij,ij->j", Phi_n, Phi))
    Phiz = Phiz * s
    K_e = Phiz.T @ (K_op @ Phiz)
    K_e = 0.5 * (K_e + K_e.T)
    K_u = M_u = None
    if keep_u and T is None:                # free-free: the z operators are the u ones
        K_u, M_u = K_op, M_op
    else:
        if keep_u:
            K_u, M_u = DistOperator(Kp, u_layout, mpi), DistOperator(Mp, u_layout, mpi)
        K_op.destroy()
        M_op.destroy()
    return DistributedBasis(ModalBasis(Phi=Phi_n, omega=np.sqrt(lam), frame=frame,
                                       method=method, n_static=n_static), K_e=K_e,
                            K_u=K_u, M_u=M_u)
