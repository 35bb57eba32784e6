"""Generalised symmetric eigenproblems ``K x = lam M x`` and sparse factorisations.

Backends (THEORY §8.4):

* ``scipy``: ``eigsh`` shift-invert on a SuperLU factor (small meshes);
* ``slepc``: Krylov--Schur, shift-invert with a MUMPS Cholesky factor (mid sizes);
* ``slepc-amg``: Krylov--Schur, shift-invert with an *iterative* inner solve
  (CG preconditioned by PETSc GAMG with the rigid-body near-null space; hypre
  BoomerAMG with ``-flexmbs_eps_st_pc_type hypre``): no factor, memory ~ the matrices;
* ``lobpcg``: LOBPCG preconditioned by one GAMG V-cycle (same memory; see
  :func:`_eigh_lobpcg`).

``backend='auto'`` picks by size: scipy up to :data:`SLEPC_THRESHOLD` dofs, then MUMPS,
out of core above :data:`OUT_OF_CORE_THRESHOLD` (the factor goes to disk, its in-core
memory drops by the factor size).  The iterative backends are selectable but not picked
by 'auto': on this 2-core machine they were 38x slower than MUMPS at 61k dofs for a
memory saving of 15% (docs/preprocessing.md).  Every backend starts from fixed
vectors, so the modes are reproducible run to run.  PETSc options with the prefixes
``flexmbs_eps_`` and ``flexmbs_factor_`` override the defaults.  slepc4py/petsc4py are
imported only inside the SLEPc functions.
"""
from __future__ import annotations

import logging
import warnings
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmbs.errors import FlexmbsError
from flexmbs.reduction.petsc_options import note_backend, set_prefix

log = logging.getLogger(__name__)

SLEPC_THRESHOLD = 60_000
#: above this many dofs the MUMPS factor is kept out of core (on disk, MUMPS ICNTL(22)).
#: In core, a 610k-dof hex27 beam peaked at 11.1 GB (269 s); out of core at 5.8 GB (437 s).
#: Force it at any size with the PETSc option -flexmbs_eps_st_mat_mumps_icntl_22 1.
OUT_OF_CORE_THRESHOLD = 700_000
#: above this many dofs 'auto' would use the iterative inner solve.  Measured 38x slower
#: than MUMPS at 61k dofs (docs/preprocessing.md), so 'auto' never picks it today.
ITERATIVE_THRESHOLD = 10**12
BACKENDS = ("auto", "scipy", "slepc", "slepc-amg", "lobpcg")
#: MUMPS ICNTL(14) (extra workspace, %) for the LU factors of saddle-point systems
LU_WORKSPACE_PERCENT = 100
#: relative residual of the inner CG solves of the iterative backends
INNER_RTOL = 1e-11


class EigenError(FlexmbsError):
    """An eigen solve that did not deliver the requested pairs."""


def choose_backend(backend: str, n: int) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"eigensolver must be one of {BACKENDS}, got {backend!r}")
    if backend == "auto":
        backend = "scipy" if n <= SLEPC_THRESHOLD else \
            "slepc" if n <= ITERATIVE_THRESHOLD else "slepc-amg"
    note_backend(backend)
    return backend


def start_vector(n: int) -> np.ndarray:
    """Fixed, generic starting vector (deterministic modes)."""
    i = np.arange(n, dtype=float)
    return 1.0 + 0.5 * np.sin(0.7 * i) + 0.25 * np.cos(1.3 * i + 0.1)


def start_block(n: int, k: int) -> np.ndarray:
    """``k`` fixed, generic, linearly independent starting vectors (n, k)."""
    i = np.arange(n, dtype=float)[:, None]
    j = np.arange(k, dtype=float)[None, :]
    freq = 0.13 + 3.0 * (j + 0.5) / (k + 1) + 0.01 * np.sqrt(2.0) * j   # distinct in (0, pi)
    return 1.0 + np.sin(freq * i + 0.3 * j)


def _petsc_aij(A: sp.spmatrix, bsize: int | None = None):
    """``(P, arrays)``: PETSc AIJ matrix sharing the CSR arrays of ``A`` (no copy if the
    index types match PETSc's); keep ``arrays`` alive while ``P`` is used."""
    from petsc4py import PETSc
    A = sp.csr_matrix(A)
    # PETSc needs sorted column indices; scipy's flag can be stale after index
    # arithmetic (it was for T^T K T with RBE3 interfaces: MUMPS Cholesky then read a
    # wrong upper triangle), so sort unconditionally (in place, a no-op when sorted)
    A.has_sorted_indices = False
    A.sort_indices()
    csr = (A.indptr.astype(PETSc.IntType, copy=False),
           A.indices.astype(PETSc.IntType, copy=False),
           np.ascontiguousarray(A.data, dtype=PETSc.ScalarType))
    P = PETSc.Mat().createAIJWithArrays(size=A.shape, csr=csr, bsize=bsize,
                                        comm=PETSc.COMM_SELF)
    return P, csr   # the arrays must outlive the Mat


def _near_null_space(Ap, near_null: np.ndarray | None):
    """Attach the rigid-body modes (n, 6) as near-null space for GAMG."""
    from petsc4py import PETSc
    if near_null is None:
        return None
    Q, _ = np.linalg.qr(np.asarray(near_null, dtype=float))
    vecs = []
    for j in range(Q.shape[1]):
        v = Ap.createVecRight()
        v.array[:] = Q[:, j]
        vecs.append(v)
    ns = PETSc.NullSpace().create(vectors=vecs, comm=PETSc.COMM_SELF)
    Ap.setNearNullSpace(ns)
    return ns


def _amg_ksp(ksp, *, rtol: float = INNER_RTOL):
    """CG + GAMG (smoothed aggregation, Chebyshev/Jacobi smoothing) on an SPD operator."""
    ksp.setType("cg")
    ksp.setTolerances(rtol=rtol, atol=0.0, max_it=5000)
    pc = ksp.getPC()
    pc.setType("gamg")
    pc.setGAMGType("agg")


def factorize(A: sp.spmatrix, *, backend: str = "auto", spd: bool = False,
              near_null: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """Solver of ``A x = b`` (``A`` square, nonsingular); returns ``solve(b)`` for ``b``
    of shape (n,) or (n, k).  ``spd``: MUMPS Cholesky instead of LU.  The iterative
    backends (``spd`` only) use CG + GAMG with ``near_null`` as near-null space."""
    backend = choose_backend(backend, A.shape[0])
    if backend == "scipy":
        lu = spla.splu(sp.csc_matrix(A), permc_spec="MMD_AT_PLUS_A")
        return lu.solve
    from petsc4py import PETSc
    A = sp.csr_matrix(A)
    Ap, arrays = _petsc_aij(A)
    if backend in ("slepc-amg", "lobpcg") and spd:
        ksp = PETSc.KSP().create(comm=PETSc.COMM_SELF)
        set_prefix(ksp, "flexmbs_factor_")
        ksp.setOperators(Ap)
        _near_null_space(Ap, near_null)
        _amg_ksp(ksp)
        ksp.setFromOptions()
        ksp.setUp()
    else:
        ksp = direct_ksp(Ap, spd=spd)
    return ksp_solve(ksp, Ap, owner=arrays)


def direct_ksp(Ap, *, spd: bool, prefix: str = "flexmbs_factor_"):
    """A set-up KSP that solves with a MUMPS factor of the PETSc matrix ``Ap`` (Cholesky
    if ``spd``, else LU), on ``Ap``'s communicator; options under ``prefix``."""
    from petsc4py import PETSc
    if spd:
        Ap.setOption(PETSc.Mat.Option.SPD, True)
    ksp = PETSc.KSP().create(comm=Ap.getComm())
    set_prefix(ksp, prefix)
    ksp.setOperators(Ap)
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("cholesky" if spd else "lu")
    pc.setFactorSolverType("mumps")
    if not spd:
        # LU of the bordered saddle points (zero diagonal block, six dense rows) delays
        # pivots beyond MUMPS's default 20 % workspace margin (INFOG(1) = -9 on a strip
        # 8 m x 37 mm x 2 mm); <prefix>mat_mumps_icntl_14 still overrides
        pc.setFactorSetUpSolverType()
        pc.getFactorMatrix().setMumpsIcntl(14, LU_WORKSPACE_PERCENT)
    ksp.setFromOptions()
    ksp.setUp()
    return ksp


def ksp_solve(ksp, Ap, owner=None):
    x, b = Ap.createVecs()

    def solve(rhs: np.ndarray) -> np.ndarray:
        rhs = np.asarray(rhs, dtype=float)
        cols = rhs.reshape(rhs.shape[0], -1)
        out = np.empty_like(cols)
        for j in range(cols.shape[1]):
            b.array[:] = cols[:, j]
            ksp.solve(b, x)
            if ksp.getConvergedReason() < 0:
                raise EigenError(f"linear solve diverged (KSP reason "
                                 f"{ksp.getConvergedReason()}, {ksp.getIterationNumber()} it"
                                 f"{_mumps_status(ksp)})")
            out[:, j] = x.array
        return out.reshape(rhs.shape)

    solve.keep = (owner, Ap, ksp)
    return solve


def _mumps_status(ksp) -> str:
    """``, MUMPS INFOG(1) = ..`` of a failed MUMPS factor, else ``''``."""
    try:
        pc = ksp.getPC()
        if pc.getFactorSolverType() != "mumps":
            return ""
        F = pc.getFactorMatrix()
        return f"; MUMPS INFOG(1) = {F.getMumpsInfog(1)}, INFOG(2) = {F.getMumpsInfog(2)}"
    except Exception:              # no factor (iterative PC) or not a MUMPS build
        return ""


def eigh_sparse(K: sp.spmatrix, M: sp.spmatrix, n: int, *, sigma: float = 0.0,
                backend: str = "auto", tol: float = 1e-12,
                solve: Callable[[np.ndarray], np.ndarray] | None = None,
                rhs: np.ndarray | None = None, near_null: np.ndarray | None = None):
    """The ``n`` eigenpairs of ``K x = lam M x`` nearest ``sigma`` (below the spectrum).

    ``solve`` (scipy backend): an existing factorisation of ``K - sigma M`` to reuse.
    ``rhs`` (n_dof, k): also return ``Y = (K - sigma M)^-1 rhs``, solved with the same
    factor / preconditioner before it is released.  ``near_null`` (n_dof, 6): the
    rigid-body modes for the AMG preconditioner of the iterative backends.
    Returns ``lam`` (n,) ascending and ``X`` (n_dof, n), M-orthonormal (and ``Y``).
    """
    N = K.shape[0]
    if n <= 0:
        out = np.zeros(0), np.zeros((N, 0))
        return out if rhs is None else (*out, _solve_only(K, M, sigma, rhs, backend,
                                                           near_null))
    if n >= N - 1:
        raise EigenError(f"requested {n} eigenpairs of a problem with only {N} dofs")
    backend = choose_backend(backend, N)
    log.info("eigen solve: %d pairs of n_dof=%d, backend %s, shift %.3g", n, N, backend, sigma)
    Y = None
    if backend == "scipy":
        if solve is None:
            A = sp.csc_matrix(K - sigma * M) if sigma != 0.0 else sp.csc_matrix(K)
            solve = spla.splu(A, permc_spec="MMD_AT_PLUS_A").solve
        lam, X = spla.eigsh(sp.csc_matrix(K), k=n, M=sp.csc_matrix(M), sigma=sigma,
                            which="LM", v0=start_vector(N), tol=tol,
                            OPinv=spla.LinearOperator(K.shape, matvec=solve, dtype=float))
        if rhs is not None:
            Y = solve(np.asarray(rhs, dtype=float))
    elif backend == "lobpcg":
        lam, X = _eigh_lobpcg(K, M, n, sigma=sigma, tol=tol, near_null=near_null)
        if rhs is not None:
            Y = _solve_only(K, M, sigma, rhs, "slepc-amg", near_null)
    else:
        lam, X, Y = _eigh_slepc(K, M, n, sigma=sigma, tol=tol, backend=backend, rhs=rhs,
                                near_null=near_null)
    order = np.argsort(lam)
    lam, X = lam[order], X[:, order]
    # M-orthonormalise (the solvers return M-orthonormal vectors up to round-off)
    G = X.T @ (M @ X)
    Lc = np.linalg.cholesky(0.5 * (G + G.T))
    X = np.linalg.solve(Lc, X.T).T
    return (lam, X) if rhs is None else (lam, X, Y)


def _solve_only(K, M, sigma, rhs, backend, near_null):
    A = K - sigma * M if sigma != 0.0 else K
    return factorize(A, backend=backend, spd=True, near_null=near_null)(rhs)


def _eigh_lobpcg(K, M, n, *, sigma, tol, near_null=None):
    """LOBPCG (scipy) preconditioned by one GAMG V-cycle on ``K - sigma M`` (PETSc).

    SLEPc 3.18's own LOBPCG broke down (``sygvd`` failure in the projected problem)
    with AMG preconditioners on these problems, so the iteration is scipy's; the
    preconditioner is PETSc's.  ``n + 4`` guard vectors speed up convergence.
    """
    from petsc4py import PETSc
    A = sp.csr_matrix(K - sigma * M) if sigma != 0.0 else sp.csr_matrix(K)
    Ap, arrays = _petsc_aij(A)
    ns = _near_null_space(Ap, near_null)
    ksp = PETSc.KSP().create(comm=PETSc.COMM_SELF)
    set_prefix(ksp, "flexmbs_lobpcg_")
    ksp.setOperators(Ap)
    ksp.setType("preonly")
    ksp.getPC().setType("gamg")
    ksp.setFromOptions()
    ksp.setUp()
    x, b = Ap.createVecs()

    def precond(r):
        r = np.asarray(r).reshape(A.shape[0], -1)
        out = np.empty_like(r)
        for j in range(r.shape[1]):
            b.array[:] = r[:, j]
            ksp.solve(b, x)
            out[:, j] = x.array
        return out

    P = spla.LinearOperator(A.shape, matvec=precond, matmat=precond, dtype=float)
    k = min(n + 4, A.shape[0] - 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lam, X = spla.lobpcg(sp.csr_matrix(K), start_block(A.shape[0], k),
                             B=sp.csr_matrix(M), M=P, largest=False,
                             tol=max(tol, 1e-8) ** 0.5, maxiter=1000)
    for w in caught:
        log.warning("lobpcg: %s", " ".join(str(w.message).split())[:200])
    for obj in (ksp, Ap, x, b, *([ns] if ns is not None else [])):
        obj.destroy()
    del arrays
    order = np.argsort(lam)[:n]
    return lam[order], X[:, order]


def shift_invert_eps(K, M, n: int, sigma: float, comm, *, tol: float, mumps: bool = True):
    """A SLEPc EPS for the ``n`` pairs of ``K x = lam M x`` nearest ``sigma``: Krylov--Schur,
    shift-invert, options prefix ``flexmbs_eps_``; with ``mumps`` the inner solve is a
    MUMPS Cholesky factor of ``K - sigma M`` (SPD for ``sigma <= 0``).  Not yet solved:
    the caller sets the start space and calls ``setFromOptions`` and ``solve``."""
    from petsc4py import PETSc
    from slepc4py import SLEPc
    for P in (K, M):
        P.setOption(PETSc.Mat.Option.SYMMETRIC, True)
    eps = SLEPc.EPS().create(comm=comm)
    set_prefix(eps, "flexmbs_eps_")
    eps.setOperators(K, M)
    eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
    eps.setType(SLEPc.EPS.Type.KRYLOVSCHUR)
    eps.setDimensions(nev=n, ncv=max(2 * n + 1, n + 15))
    eps.setTarget(sigma)
    eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
    eps.setTolerances(tol=tol, max_it=500)
    st = eps.getST()
    st.setType(SLEPc.ST.Type.SINVERT)
    st.setShift(sigma)
    if mumps:
        K.setOption(PETSc.Mat.Option.SPD, True)
        ksp = st.getKSP()
        ksp.setType("preonly")
        pc = ksp.getPC()
        pc.setType("cholesky")
        pc.setFactorSolverType("mumps")   # == -st_pc_factor_mat_solver_type mumps
    return eps


def _eigh_slepc(K, M, n, *, sigma, tol, backend, rhs=None, near_null=None):
    from petsc4py import PETSc
    if sigma > 0:
        raise ValueError(f"shift must be <= 0 (Cholesky of K - sigma M), got {sigma}")
    K, M = sp.csr_matrix(K), sp.csr_matrix(M)
    (Kp, k_arrays), (Mp, m_arrays) = _petsc_aij(K), _petsc_aij(M)
    eps = shift_invert_eps(Kp, Mp, n, sigma, PETSc.COMM_SELF,
                           mumps=backend != "slepc-amg",
                           tol=max(tol, 1e-10) if backend == "slepc-amg" else tol)
    ksp = eps.getST().getKSP()
    ns = None
    if backend == "slepc-amg":
        ns = _near_null_space(Kp, near_null)
        _amg_ksp(ksp)
    else:
        if K.shape[0] > OUT_OF_CORE_THRESHOLD:
            ooc = PETSc.Options()
            ooc["flexmbs_eps_st_mat_mumps_icntl_22"] = 1     # only while solving
            log.info("MUMPS factor out of core (ICNTL(22) = 1)")
    v0 = Kp.createVecRight()
    v0.array[:] = start_vector(K.shape[0])
    init = [v0]
    eps.setInitialSpace(init)
    eps.setFromOptions()
    try:
        eps.solve()
    finally:
        if K.shape[0] > OUT_OF_CORE_THRESHOLD and backend == "slepc":
            PETSc.Options().delValue("flexmbs_eps_st_mat_mumps_icntl_22")
    nconv = eps.getConverged()
    log.info("SLEPc %s: %d iterations, %d converged", backend, eps.getIterationNumber(), nconv)
    if nconv < n:
        raise EigenError(f"SLEPc ({backend}) converged {nconv} of {n} eigenpairs "
                         f"(reason {eps.getConvergedReason()})")
    lam = np.empty(nconv)
    X = np.empty((K.shape[0], nconv))
    vr = Kp.createVecRight()
    for i in range(nconv):
        lam[i] = eps.getEigenpair(i, vr).real
        X[:, i] = vr.array
    order = np.argsort(np.abs(lam - sigma))[:n]
    Y = None
    if rhs is not None:
        # reuse the shift-invert factor / AMG hierarchy
        Y = ksp_solve(ksp, Kp)(np.asarray(rhs, dtype=float))
    for obj in (eps, Kp, Mp, vr, *init, *([ns] if ns is not None else [])):
        obj.destroy()
    del k_arrays, m_arrays
    return lam[order], X[:, order], Y
