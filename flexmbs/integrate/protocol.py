"""The contract between the assembled multibody model and the integrators: the
:class:`DAE` every integrator needs, and the optional capabilities an integrator uses
when a system offers them (checked with ``isinstance``, once, when it is made; the
protocols' metaclass :class:`~flexmbs.capability.Capability` lists their members once).

The model is the index-3 DAE of THEORY §1.5 / §5.9.2 in residual form, on flat arrays:

    r(q, qd, qdd, lam, t) = M(q) qdd - f(q, qd, t) + G(q)^T lam = 0      (n_q rows)
    g(q, t)               = 0                                           (n_lam rows)

with ``q`` the generalized coordinates (positions, Euler parameters, elastic coordinates),
``qd`` and ``qdd`` their first and second time derivatives (same length as ``q``),
``G = dg/dq`` the constraint Jacobian and ``lam`` the Lagrange multipliers.  The
Euler-parameter normalisation conditions are ordinary rows of ``g``.

Derivatives of the position constraints, used for consistent initial conditions and
for stabilised (GGL / index-2) forms:

    dg/dt   = G qd + g_t
    d2g/dt2 = G qdd + gamma(q, qd, t)

Only numpy/scipy here: the integrators (``flexmbs.integrate``) wrap these in PETSc.

Optional capabilities:

* :class:`FixedPatternNewton` -- ``newton_matrix``: the Newton matrix of an implicit step
  ``[[c_K K + c_C C + c_M M, G^T], [G, 0]]`` in a fixed CSR pattern;
* :class:`FactoredNewton` -- ``newton_factor``: the Newton matrix (or an approximation of
  it, e.g. modified Newton) already factored, an object with ``solve(rhs)``, used in place
  of an assembled matrix when ``factored`` is true;
* :class:`IterationMatrix` -- ``iteration_matrix``: ``c_K K + c_C C + c_M M`` as one CSR
  matrix (one COO assembly instead of sums of sparse matrices);
* :class:`CompiledStepSystem` -- ``affine_plan``: what the compiled generalized-α step
  (:mod:`flexmbs.integrate.affine_step`) needs, or None when its kernels do not cover the
  system, plus the force elements and the source of a non-finite residual;
* :class:`ConstraintTimeDerivative` -- ``constraint_time_derivative``: ``g_t`` alone;
* :class:`Labelled` -- names of the coordinates and active rows (failure reports);
* :class:`FirstOrderStates` -- coordinates ``z = q[state_indices]`` whose residual rows
  are first-order ODEs ``zd - f(z, q, qd, t)`` (no mass: their ``qdd`` is unused), with
  ``state_rates`` giving ``f`` (consistent initial rates);
* :class:`VelocityConstraints` -- velocity (nonholonomic) rows ``A(q, t) qd + a(q, t) =
  0`` next to ``g = 0`` (THEORY §4): ``n_mu`` more multipliers ``mu`` follow ``lam`` in
  the multiplier vector, ``residual`` adds ``A^T mu`` and ``tangent``'s ``K`` holds
  ``d(A^T mu)/dq`` when given ``[lam; mu]``;
* :class:`Sampled` -- coordinates set at ticks (sampled controllers with a zero-order
  hold): the integrator lands on ``sample_times`` and applies ``sample`` there;
* :class:`Events` -- gap functions of contacts (``event_gaps``): the integrator lands on
  their zeros (:mod:`flexmbs.integrate.events`) and calls ``impact`` at a closing one.

And between a step residual and the Newton solver (:mod:`flexmbs.integrate._newton`):

* :class:`NativeResidual` -- a residual PETSc may call as a C function;
* :class:`NativeNewton` -- its Newton matrix as a C function too.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from flexmbs.capability import Capability

@runtime_checkable
class DAE(Protocol, metaclass=Capability):
    """Index-3 constrained mechanical system ``M qdd - f + G^T lam = 0, g = 0``."""

    n_q: int    # number of generalized coordinates
    n_lam: int  # number of constraint rows (multipliers)

    def residual(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                 lam: np.ndarray, t: float) -> np.ndarray:
        """``r = M(q) qdd - f(q, qd, t) + G(q)^T lam``, shape (n_q,)."""

    def tangent(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                lam: np.ndarray, t: float) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
        """``(K, C, M) = (dr/dq, dr/dqd, dr/dqdd)``, each CSR (n_q, n_q).

        ``K`` includes the constraint-force term ``d(G^T lam)/dq``."""

    def constraint(self, q: np.ndarray, t: float) -> np.ndarray:
        """``g(q, t)``, shape (n_lam,)."""

    def constraint_jacobian(self, q: np.ndarray, t: float) -> sp.csr_matrix:
        """``G = dg/dq``, CSR (n_lam, n_q)."""

    def constraint_rates(self, q: np.ndarray, qd: np.ndarray,
                         t: float) -> tuple[np.ndarray, np.ndarray]:
        """``(g_t, gamma)``: ``dg/dt = G qd + g_t`` and ``d2g/dt2 = G qdd + gamma``."""

    def constraint_force_jacobian(self, q: np.ndarray, mu: np.ndarray,
                                  t: float) -> sp.csr_matrix:
        """``d(G(q)^T mu)/dq`` for a fixed vector ``mu``, CSR (n_q, n_q)."""

    def constraint_velocity_jacobian(self, q: np.ndarray, v: np.ndarray,
                                     t: float) -> sp.csr_matrix:
        """``d(G(q) v)/dq`` for a fixed vector ``v``, CSR (n_lam, n_q)."""

    def normalize(self, q: np.ndarray) -> np.ndarray:
        """Return ``q`` with every Euler-parameter quadruple scaled to unit norm (a copy)."""


@runtime_checkable
class FixedPatternNewton(Protocol, metaclass=Capability):
    """A system that makes the Newton matrix of an implicit step itself."""

    def newton_matrix(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, lam: np.ndarray,
                      t: float, c_K: float, c_C: float, c_M: float):
        """``[[c_K (K + d(G^T lam)/dq) + c_C C + c_M M, G^T], [G, 0]]`` (N, N) in CSR form
        (``indptr, indices, data, shape``) whose pattern is the same at every call."""


@runtime_checkable
class FactoredNewton(Protocol, metaclass=Capability):
    """A system that factors (an approximation of) its Newton matrix itself."""

    factored: bool      # whether the integrator is to use ``newton_factor``

    def newton_factor(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, lam: np.ndarray,
                      t: float, c_K: float, c_C: float, c_M: float):
        """An object whose ``solve(rhs)`` returns ``W^-1 rhs`` (shape (N,)) for the Newton
        matrix ``W = [[c_K K + c_C C + c_M M, G^T], [G, 0]]`` or an approximation of it
        good enough for Newton to contract (the iteration then converges to the same
        solution: only the residual decides it)."""


@runtime_checkable
class IterationMatrix(Protocol, metaclass=Capability):
    """A system that sums its tangent in one assembly."""

    def iteration_matrix(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                         lam: np.ndarray, t: float, c_K: float, c_C: float,
                         c_M: float) -> sp.csr_matrix:
        """``c_K K + c_C C + c_M M`` of ``tangent``, CSR (n_q, n_q)."""


@runtime_checkable
class CompiledStepSystem(Protocol, metaclass=Capability):
    """A system the compiled step residual (:class:`flexmbs.integrate.affine_step.
    AffineStep`) can be built for."""

    n_q: int

    def affine_plan(self):
        """The :class:`~flexmbs.system.affine_plan.AffinePlan` of the current active set
        (bodies packed, all rows stacked), or None when the kernels do not cover it."""

    def force_contributions(self, q: np.ndarray, qd: np.ndarray, t: float, order: int,
                            blocks=None):
        """``(force block, contribution)`` of the force elements (or of ``blocks``)."""

    def nonfinite_source(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                         t: float) -> str:
        """What makes the residual non-finite (a body, a force element, the constraints)."""


@runtime_checkable
class ConstraintTimeDerivative(Protocol, metaclass=Capability):
    """A system that gives ``g_t`` without the second derivatives."""

    def constraint_time_derivative(self, q: np.ndarray, t: float) -> np.ndarray:
        """``g_t = dg/dt`` at fixed ``q``, shape (n_lam,)."""


@runtime_checkable
class Labelled(Protocol, metaclass=Capability):
    """A system that names its coordinates and active constraint rows."""

    coordinate_labels: list
    active_row_labels: list


@runtime_checkable
class FirstOrderStates(Protocol, metaclass=Capability):
    """A system with first-order coordinates ``z = q[state_indices]``, residual rows
    ``zd - f(z, q, qd, t)``."""

    state_indices: np.ndarray

    def state_rates(self, q: np.ndarray, qd: np.ndarray, t: float) -> np.ndarray:
        """``f(z, q, qd, t)``, shape (len(state_indices),)."""


@runtime_checkable
class VelocityConstraints(Protocol, metaclass=Capability):
    """A system with velocity rows ``c = A(q, t) qd + a(q, t) = 0`` (``n_mu`` of them,
    their multipliers ``mu`` after ``lam``: ``residual(q, qd, qdd, [lam; mu], t)`` is
    ``M qdd - f + G^T lam + A^T mu``)."""

    n_mu: int

    def velocity_constraint(self, q: np.ndarray, qd: np.ndarray, t: float) -> np.ndarray:
        """``c = A(q, t) qd + a(q, t)``, shape (n_mu,)."""

    def velocity_jacobians(self, q: np.ndarray, qd: np.ndarray,
                           t: float) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray]:
        """``(A, B, c_t)``: ``A = dc/dqd``, ``B = dc/dq`` (CSR (n_mu, n_q)) and ``c_t =
        dc/dt``, so that ``dc/dt = A qdd + B qd + c_t``."""


def velocity_rows(dae) -> int:
    """``n_mu`` of a :class:`VelocityConstraints` system, else 0 (a system without
    ``n_mu`` rows skips the protocol's slow ``isinstance``: it is called at every output)."""
    if not getattr(dae, "n_mu", 0):
        return 0
    return int(dae.n_mu) if isinstance(dae, VelocityConstraints) else 0


@runtime_checkable
class Sampled(Protocol, metaclass=Capability):
    """A system with coordinates held between ticks and set at them."""

    def sample_times(self, t0: float, t_end: float) -> np.ndarray:
        """The ticks in ``[t0, t_end]`` (sorted; empty when nothing is sampled)."""

    def sample(self, q: np.ndarray, qd: np.ndarray, t: float, t0: float) -> np.ndarray:
        """``q`` with the held coordinates set at the tick ``t`` (ticks counted from
        ``t0``)."""


@runtime_checkable
class Events(Protocol, metaclass=Capability):
    """A system with contact gaps ``s_k(q)`` [m] (closed for ``s_k <= 0``)."""

    event_labels: list      # the contacts' names
    event_bodies: list      # (body P, body Q) names of each contact

    def event_gaps(self, q: np.ndarray, qd: np.ndarray,
                   t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(s, sd, F_n)``: gaps [m], their rates [m/s], normal forces [N]."""

    def impact(self, q: np.ndarray, k: int, sd: float) -> np.ndarray:
        """``q`` with contact ``k``'s held states set for an impact at gap rate ``sd``."""


@runtime_checkable
class NativeResidual(Protocol, metaclass=Capability):
    """A residual ``F(x, out)`` that PETSc may call directly as the C function
    ``c_function`` with context ``c_context()`` when ``native`` is true; it records a
    non-finite value in ``status[0]`` (named afterwards by ``raise_nonfinite()``), and
    ``invalidate()`` is called after each solve (the C calls overwrote its buffers)."""

    native: bool
    status: np.ndarray
    c_function: int

    def __call__(self, x: np.ndarray, out: np.ndarray) -> None: ...

    def c_context(self) -> int: ...

    def invalidate(self) -> None: ...

    def raise_nonfinite(self) -> None: ...


@runtime_checkable
class NativeNewton(Protocol, metaclass=Capability):
    """A :class:`NativeResidual` whose Newton matrix is a C function too:
    ``c_newton() = (function, context)``, ``int fill(double *W, const double *x, void
    *ctx)`` writing the dense matrix row-major (1 when finite, 0 when not or when it
    stopped on an exception, which a C callback returns as 0)."""

    def c_newton(self) -> tuple[int, int]: ...
