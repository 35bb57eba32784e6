"""A reference solution of a DAE by its index-1 ODE (a check, not a production
integrator): the state ``y = (q, qd)`` moves by

    yd = (qd, qdd(q, qd, t)),   [[M, G^T], [G, 0]] [qdd; lam] = [f; -gamma],

``f = -r(q, qd, 0, 0, t)``, ``gamma`` the constraints' second time derivative without
``G qdd`` (:func:`~.consistent.accelerations`, one saddle solve per evaluation),
integrated by scipy's ``solve_ivp`` (an explicit Runge-Kutta method, DOP853 by default)
to a tight tolerance.  Two formulations of one model (two coordinate systems for the
same equations of motion) integrated this way differ by the integrator's tolerance
only, not by a discretisation of the DAE.

The position and velocity constraints are not enforced: ``g = 0`` and ``G qd + g_t = 0``
hold at the start and drift at the integrator's tolerance; the run reports the largest
``|g|`` at the output times.  With ``project`` the state at each output is projected
onto ``g = 0`` and ``G qd = -g_t`` (:func:`~.consistent.consistent_positions`,
:func:`~.consistent.project_velocities`) before it is recorded (the integration goes on
from the unprojected state).
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.integrate import solve_ivp

from .consistent import (
    accelerations,
    consistent_positions,
    project_velocities,
    tangent_mass,
)
from .protocol import FirstOrderStates, velocity_rows

__all__ = ["ODEReference", "ode_reference", "saddle_accelerations"]


@dataclasses.dataclass(frozen=True)
class ODEReference:
    """The states at the output times ``t`` (rows), the accelerations and multipliers
    of the saddle system there, the largest ``|g|`` at each output (before any
    projection), the right-hand side's evaluations and the CPU time [s]."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    drift: np.ndarray
    evaluations: int
    cpu: float


def saddle_accelerations(dae, mass_of=None):
    """``(q, qd, t) -> (qdd, lam)`` of ``[[M, G^T], [G, 0]] [qdd; lam] = [f; -gamma]``
    by one dense LU solve (no condition estimate: the system is the consistent initial
    conditions' one, known regular along the run); :func:`~.consistent.accelerations`
    for a DAE with velocity rows or first-order states, or when the LU fails."""
    if velocity_rows(dae) or isinstance(dae, FirstOrderStates) and dae.state_indices.size:
        return lambda q, qd, t: accelerations(dae, q, qd, t)
    n, m = dae.n_q, dae.n_lam
    zq, zl = np.zeros(n), np.zeros(m)

    def acc(q, qd, t):
        f = -np.asarray(dae.residual(q, qd, zq, zl, t), dtype=float)
        M = mass_of(q) if mass_of is not None else tangent_mass(dae, q, qd, zq, zl, t)
        A = np.zeros((n + m, n + m))
        A[:n, :n] = M.toarray() if sp.issparse(M) else M
        if m:
            G = dae.constraint_jacobian(q, t)
            G = G.toarray() if sp.issparse(G) else np.asarray(G, dtype=float)
            A[:n, n:], A[n:, :n] = G.T, G
            gamma = np.asarray(dae.constraint_rates(q, qd, t)[1], dtype=float)
            b = np.concatenate([f, -gamma])
        else:
            b = f
        try:
            x = sla.lu_solve(sla.lu_factor(A, check_finite=False), b, check_finite=False)
        except (sla.LinAlgError, ValueError):
            return accelerations(dae, q, qd, t)
        if not np.all(np.isfinite(x)):
            return accelerations(dae, q, qd, t)
        return x[:n], x[n:]

    return acc


def ode_reference(dae, q0: np.ndarray, qd0: np.ndarray, t_eval, *, rtol: float = 1e-12,
                  atol: float | np.ndarray | None = None, method: str = "DOP853",
                  project: bool = False, mass_of=None) -> ODEReference:
    """Integrate ``dae``'s index-1 ODE (module doc) from the consistent ``(q0, qd0)`` at
    ``t_eval[0]`` and record it at ``t_eval``.

    ``atol``: per component of ``y = (q, qd)`` (scalar or ``2 n_q``); default
    ``rtol`` times ``max(|y0|, 1)``.  ``mass_of(q) -> M`` replaces the DAE's
    ``tangent_mass`` (the same ``M`` by a cheaper route, e.g. without the tangent's
    ``K``, ``C``)."""
    t_eval = np.asarray(t_eval, dtype=float)
    n = dae.n_q
    acc = saddle_accelerations(dae, mass_of)
    y0 = np.concatenate([np.asarray(q0, dtype=float), np.asarray(qd0, dtype=float)])
    if atol is None:
        atol = rtol * np.maximum(np.abs(y0), 1.0)
    count = [0]

    def rhs(t, y):
        count[0] += 1
        return np.concatenate([y[n:], acc(y[:n], y[n:], t)[0]])

    c0 = time.process_time()
    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), y0, method=method, rtol=rtol, atol=atol,
                    t_eval=t_eval)
    cpu = time.process_time() - c0
    if not sol.success:
        raise RuntimeError(f"ode_reference: {method} failed at t = {sol.t[-1]:g}: "
                           f"{sol.message}")
    q, qd, qdd, lam, drift = [], [], [], [], []
    for t, y in zip(sol.t, sol.y.T, strict=True):
        qi, qdi = y[:n].copy(), y[n:].copy()
        g = np.asarray(dae.constraint(qi, t), dtype=float)
        drift.append(float(np.abs(g).max(initial=0.0)))
        if project:
            qi = consistent_positions(dae, qi, t, tol=1e-13)[0]
            qdi = project_velocities(dae, qi, qdi, t)
        a, l = acc(qi, qdi, t)
        q.append(qi)
        qd.append(qdi)
        qdd.append(a)
        lam.append(l)
    return ODEReference(sol.t, np.array(q), np.array(qd), np.array(qdd), np.array(lam),
                        np.array(drift), count[0], cpu)
