"""MPI: distributed eigen solve of a shipped cantilever mesh under ``mpiexec -n 2``.

Reference: the same generalized eigenproblem K phi = omega^2 M phi (clamp dofs removed)
solved serially by scipy's ARPACK shift-invert; the distributed SLEPc Krylov-Schur with
shift-invert and parallel MUMPS over row-partitioned MPIAIJ matrices must reproduce the
lowest frequencies to 1e-8 relative, asserted on every rank (STYLE.md: MPI tests).
"""
import os

import numpy as np
import pytest
import scipy.sparse.linalg as spla

pytestmark = pytest.mark.mpi

MESH = os.path.join(os.path.dirname(__file__), "..", "..", "meshes", "beam_hex27_10x1x1.msh")


def _clamped_matrices():
    from flexmbs.fe.assemble import assemble
    from flexmbs.fe.material import material_from_name
    from flexmbs.io.mesh import read_mesh
    mesh = read_mesh(MESH)
    fe = assemble(mesh, material_from_name("steel"))
    fixed = np.unique(fe.dof_of_node[mesh.node_set("clamp")].ravel())
    free = np.setdiff1d(np.arange(fe.n_dof), fixed)
    return fe.K[free][:, free].tocsr(), fe.M[free][:, free].tocsr()


def _petsc_rows(A, comm):
    from petsc4py import PETSc
    n = A.shape[0]
    M = PETSc.Mat().createAIJ(size=((PETSc.DECIDE, n), (PETSc.DECIDE, n)), comm=comm)
    M.setPreallocationNNZ(int(np.diff(A.indptr).max()))
    M.setUp()
    r0, r1 = M.getOwnershipRange()
    for i in range(r0, r1):
        cols = A.indices[A.indptr[i]:A.indptr[i + 1]]
        M.setValues(i, cols, A.data[A.indptr[i]:A.indptr[i + 1]])
    M.assemble()
    return M


def test_distributed_frequencies_equal_serial():
    from mpi4py import MPI
    from petsc4py import PETSc
    from slepc4py import SLEPc
    comm = PETSc.COMM_WORLD
    assert comm.getSize() == MPI.COMM_WORLD.Get_size()
    K, M = _clamped_matrices()
    n_ev = 4
    lam_serial = np.sort(spla.eigsh(K, n_ev, M, sigma=0.0, v0=np.ones(K.shape[0]))[0])
    Kp, Mp = _petsc_rows(K, comm), _petsc_rows(M, comm)
    eps = SLEPc.EPS().create(comm)
    eps.setOperators(Kp, Mp)
    eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
    eps.setDimensions(n_ev)
    eps.setTarget(0.0)
    eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
    st = eps.getST()
    st.setType(SLEPc.ST.Type.SINVERT)
    ksp = st.getKSP()
    ksp.setType("preonly")
    ksp.getPC().setType("cholesky")
    ksp.getPC().setFactorSolverType("mumps")
    eps.setTolerances(1e-12, 200)
    eps.solve()
    nconv = eps.getConverged()
    assert nconv >= n_ev
    lam_par = np.sort([eps.getEigenvalue(i).real for i in range(nconv)])[:n_ev]
    # every rank checks the globally reduced result
    assert np.allclose(lam_par, lam_serial, rtol=1e-8, atol=0)
    f_hz = np.sqrt(lam_par) / (2 * np.pi)
    assert 70.0 < f_hz[0] < 90.0          # first bending of the 1 m steel cantilever (EB 83.55 Hz)
    for obj in (eps, Kp, Mp):
        obj.destroy()
    MPI.COMM_WORLD.Barrier()
