"""Generalised symmetric eigenproblems ``K x = lam M x`` and sparse factorisations.

Two backends (THEORY §8.4): scipy (``eigsh`` shift-invert on a SuperLU factor) for small
meshes, SLEPc (Krylov--Schur, shift-invert, MUMPS) for large ones.  ``backend='auto'``
picks SLEPc above :data:`SLEPC_THRESHOLD` dofs.  Both start from a fixed vector, so the
modes are reproducible run to run.  slepc4py/petsc4py are imported only inside the
SLEPc functions.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmbs.errors import FlexmbsError

log = logging.getLogger(__name__)

SLEPC_THRESHOLD = 60_000
BACKENDS = ("auto", "scipy", "slepc")


class EigenError(FlexmbsError):
    """An eigen solve that did not deliver the requested pairs."""


def choose_backend(backend: str, n: int) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"eigensolver must be one of {BACKENDS}, got {backend!r}")
    if backend == "auto":
        return "slepc" if n > SLEPC_THRESHOLD else "scipy"
    return backend


def start_vector(n: int) -> np.ndarray:
    """Fixed, generic starting vector (deterministic modes)."""
    i = np.arange(n, dtype=float)
    return 1.0 + 0.5 * np.sin(0.7 * i) + 0.25 * np.cos(1.3 * i + 0.1)


def _petsc_aij(A: sp.spmatrix):
    from petsc4py import PETSc
    A = sp.csr_matrix(A)
    return PETSc.Mat().createAIJ(size=A.shape, csr=(A.indptr.astype(PETSc.IntType),
                                                     A.indices.astype(PETSc.IntType),
                                                     A.data), comm=PETSc.COMM_SELF)


def factorize(A: sp.spmatrix, *, backend: str = "auto",
              spd: bool = False) -> Callable[[np.ndarray], np.ndarray]:
    """Sparse direct factorisation of ``A`` (square, nonsingular); returns ``solve(b)``
    for ``b`` of shape (n,) or (n, k).  ``spd``: MUMPS Cholesky instead of LU."""
    backend = choose_backend(backend, A.shape[0])
    if backend == "scipy":
        lu = spla.splu(sp.csc_matrix(A), permc_spec="MMD_AT_PLUS_A")
        return lu.solve
    from petsc4py import PETSc
    Ap = _petsc_aij(A)
    if spd:
        Ap.setOption(PETSc.Mat.Option.SPD, True)
    ksp = PETSc.KSP().create(comm=PETSc.COMM_SELF)
    ksp.setOptionsPrefix("flexmbs_factor_")
    ksp.setOperators(Ap)
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("cholesky" if spd else "lu")
    pc.setFactorSolverType("mumps")
    ksp.setFromOptions()
    ksp.setUp()
    x, b = Ap.createVecs()

    def solve(rhs: np.ndarray) -> np.ndarray:
        rhs = np.asarray(rhs, dtype=float)
        cols = rhs.reshape(rhs.shape[0], -1)
        out = np.empty_like(cols)
        for j in range(cols.shape[1]):
            b.array[:] = cols[:, j]
            ksp.solve(b, x)
            out[:, j] = x.array
        return out.reshape(rhs.shape)

    return solve


def eigh_sparse(K: sp.spmatrix, M: sp.spmatrix, n: int, *, sigma: float = 0.0,
                backend: str = "auto", tol: float = 1e-12,
                solve: Callable[[np.ndarray], np.ndarray] | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` eigenpairs of ``K x = lam M x`` nearest ``sigma`` (below the spectrum).

    ``solve`` (scipy backend): an existing factorisation of ``K - sigma M`` to reuse.
    Returns ``lam`` (n,) ascending and ``X`` (n_dof, n), M-orthonormal.
    """
    N = K.shape[0]
    if n <= 0:
        return np.zeros(0), np.zeros((N, 0))
    if n >= N - 1:
        raise EigenError(f"requested {n} eigenpairs of a problem with only {N} dofs")
    backend = choose_backend(backend, N)
    log.info("eigen solve: %d pairs of n_dof=%d, backend %s, shift %.3g", n, N, backend, sigma)
    if backend == "scipy":
        lam, X = spla.eigsh(sp.csc_matrix(K), k=n, M=sp.csc_matrix(M), sigma=sigma,
                            which="LM", v0=start_vector(N), tol=tol,
                            OPinv=_shift_invert_op(K, M, sigma) if solve is None else
                            spla.LinearOperator(K.shape, matvec=solve, dtype=float))
    else:
        lam, X = _eigh_slepc(K, M, n, sigma=sigma, tol=tol)
    order = np.argsort(lam)
    lam, X = lam[order], X[:, order]
    # M-orthonormalise (eigsh returns M-orthonormal vectors up to round-off)
    G = X.T @ (M @ X)
    Lc = np.linalg.cholesky(0.5 * (G + G.T))
    X = np.linalg.solve(Lc, X.T).T
    return lam, X


def _shift_invert_op(K, M, sigma):
    A = sp.csc_matrix(K - sigma * M) if sigma != 0.0 else sp.csc_matrix(K)
    lu = spla.splu(A, permc_spec="MMD_AT_PLUS_A")
    return spla.LinearOperator(A.shape, matvec=lu.solve, dtype=float)


def _eigh_slepc(K, M, n, *, sigma, tol):
    from petsc4py import PETSc
    from slepc4py import SLEPc
    Kp, Mp = _petsc_aij(K), _petsc_aij(M)
    if sigma > 0:
        raise ValueError(f"shift must be <= 0 (Cholesky of K - sigma M), got {sigma}")
    eps = SLEPc.EPS().create(comm=PETSc.COMM_SELF)
    eps.setOptionsPrefix("flexmbs_eps_")
    eps.setOperators(Kp, Mp)
    eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
    eps.setType(SLEPc.EPS.Type.KRYLOVSCHUR)
    eps.setDimensions(nev=n, ncv=max(2 * n + 1, n + 15))
    eps.setTolerances(tol=tol, max_it=500)
    eps.setTarget(sigma)
    eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
    st = eps.getST()
    st.setType(SLEPc.ST.Type.SINVERT)
    st.setShift(sigma)
    ksp = st.getKSP()
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("cholesky")            # K - sigma M is SPD for sigma <= 0
    pc.setFactorSolverType("mumps")   # == -st_pc_factor_mat_solver_type mumps
    v0 = Kp.createVecRight()
    v0.array[:] = start_vector(K.shape[0])
    eps.setInitialSpace([v0])
    eps.setFromOptions()
    eps.solve()
    nconv = eps.getConverged()
    if nconv < n:
        raise EigenError(f"SLEPc converged {nconv} of {n} eigenpairs "
                         f"(reason {eps.getConvergedReason()})")
    lam = np.empty(nconv)
    X = np.empty((K.shape[0], nconv))
    vr = Kp.createVecRight()
    for i in range(nconv):
        lam[i] = eps.getEigenpair(i, vr).real
        X[:, i] = vr.array
    order = np.argsort(np.abs(lam - sigma))[:n]
    for obj in (eps, Kp, Mp, v0, vr):
        obj.destroy()
    return lam[order], X[:, order]
