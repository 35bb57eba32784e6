"""Static equilibrium: ``r(q, 0, 0, lam, t) = 0``, ``g(q, t) = 0`` by Newton on PETSc SNES.

The Newton matrix is ``[[K, G^T], [G, 0]]`` with ``K = dr/dq`` (including the
constraint-force term).  Load stepping uses the Newton homotopy

    F_s(x) = F(x) - (1 - s) F(x_0),     s = 1/n, 2/n, ..., 1,

which needs no load parameter in the model: at ``s = 0`` the initial guess is a solution,
at ``s = 1`` the true problem is solved, and in between the out-of-balance forces of the
initial guess are removed in ``n`` equal parts (for loads independent of ``q`` this is
ordinary proportional load stepping from the initial state).  Held internal states
(:func:`held_diagonal`) keep their values.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from petsc4py import PETSc

from flexmbs.errors import ConvergenceError

from .settings import DEFAULTS
from ._newton import NewtonFailure, NewtonSolver
from ._petsc import saddle
from .protocol import FirstOrderStates
from .trajectory import Stats

__all__ = ["StaticSolution", "solve_static"]


@dataclasses.dataclass(frozen=True)
class StaticSolution:
    q: np.ndarray
    lam: np.ndarray
    stats: Stats

    def __post_init__(self):
        for f in ("q", "lam"):
            a = np.array(getattr(self, f), dtype=float)
            a.flags.writeable = False
            object.__setattr__(self, f, a)


def held_diagonal(K: sp.csr_matrix, z: np.ndarray) -> sp.csr_matrix:
    """A unit diagonal on the rows of the internal states ``z`` whose static tangent row is
    zero: held states (``zd = 0``, a contact's approach speed, a sampled controller's
    output) have no static equation, ``r_z = 0`` whatever ``z``; the unit entry makes the
    Newton matrix regular and keeps them at their values."""
    held = z[np.asarray(abs(K[z]).sum(axis=1)).ravel() == 0.0]
    return sp.csr_matrix((np.ones(held.size), (held, held)), shape=K.shape)


def solve_static(dae, q0: np.ndarray, *, t: float = DEFAULTS.t0, lam0: np.ndarray | None = None,
                 load_steps: int = DEFAULTS.load_steps,
                 options_prefix: str = DEFAULTS.static_options_prefix,
                 petsc_options: Mapping | None = None, comm=None) -> StaticSolution:
    """Static equilibrium from the guess ``q0`` (see module doc for ``load_steps``).

    Raises ``ConvergenceError`` naming the load step, the SNES reason and the residual.
    """
    n, m = dae.n_q, dae.n_lam
    q0 = np.asarray(q0, dtype=float)
    if q0.shape != (n,):
        raise ValueError(f"solve_static: q0 must have shape ({n},), got {q0.shape}")
    if load_steps < 1:
        raise ValueError(f"solve_static: load_steps must be >= 1, got {load_steps}")
    zq = np.zeros(n)
    t_start = time.perf_counter()

    def F(x):
        q, lam = x[:n], x[n:]
        return np.concatenate([np.asarray(dae.residual(q, zq, zq, lam, t), dtype=float),
                               np.asarray(dae.constraint(q, t), dtype=float)])

    z = np.asarray(dae.state_indices if isinstance(dae, FirstOrderStates) else (), int)

    def J(x):
        q, lam = x[:n], x[n:]
        K = sp.csr_matrix(dae.tangent(q, zq, zq, lam, t)[0])
        if z.size:
            K = K + held_diagonal(K, z)
        G = sp.csr_matrix(dae.constraint_jacobian(q, t), shape=(m, n))
        return saddle(K, G)

    x = np.concatenate([q0, np.zeros(m) if lam0 is None else np.asarray(lam0, dtype=float)])
    F0 = F(x) if load_steps > 1 else np.zeros(n + m)
    solver = NewtonSolver(n + m, prefix=options_prefix, petsc_options=petsc_options,
                          comm=PETSc.COMM_SELF if comm is None else comm)
    its = jacs = 0
    try:
        for k in range(1, load_steps + 1):
            s = k / load_steps
            try:
                x, info = solver.solve(x, lambda y, s=s: F(y) - (1.0 - s) * F0, J)
            except NewtonFailure as f:
                raise ConvergenceError(
                    f"static equilibrium: Newton failed ({f.reason}) in load step {k} of "
                    f"{load_steps} with residual norm {f.residual:.3e} after "
                    f"{f.iterations} iterations", t=t, step=k) from None
            its += info.iterations
            jacs += info.jacobian_evaluations
    finally:
        solver.destroy()
    stats = Stats(steps=load_steps, newton_iterations=its, jacobian_evaluations=jacs,
                  linear_solves=its, wall_time=time.perf_counter() - t_start)
    return StaticSolution(q=x[:n], lam=x[n:], stats=stats)
