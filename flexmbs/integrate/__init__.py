"""flexmbs.integrate: DAE -> trajectory, on PETSc SNES/KSP/TS.

* :func:`integrate` — the entry point: consistent initial conditions, then
  generalized-α (``method="genalpha"``, Arnold & Brüls 2007) or an implicit PETSc TS on
  the GGL index-2 form (``method="ts"``, BDF by default);
* :func:`solve_static` — static equilibrium;
* :func:`consistent_initial_conditions` — THEORY §8.3;
* :mod:`.ode_reference` — a check, not an integrator: a DAE's index-1 ODE (the saddle
  system's accelerations) by scipy's DOP853 to a tight tolerance;
* :class:`OptionsManager`, :func:`petsc_options_from_args` — PETSc options;
* :class:`SolverSettings`, :data:`DEFAULTS` — every solver default, in one place;
* :mod:`.protocol` — the :class:`~.protocol.DAE` the integrators take and the optional
  capabilities they use (fixed-pattern Newton matrix, compiled step, ...);
* :mod:`.affine_step` / :mod:`.step_kernel` — generalized-α's own step residual and Newton
  matrix, compiled, built from the system's public ``affine_plan()``.

The PETSc solver objects (SNES, KSP, TS) live here; elsewhere petsc4py appears only in
:mod:`flexmbs.petsc_c` (C addresses of PETSc functions), the reduction's eigensolvers
(SLEPc) and the MPI helpers of preprocessing and sweeps.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .consistent import ConsistentState, consistent_initial_conditions
from .genalpha import GenAlphaParameters, GeneralizedAlpha
from .options import OptionsManager, default_direct_lu, petsc_options_from_args
from .settings import DEFAULTS, SolverSettings
from .static import StaticSolution, solve_static
from .trajectory import Callback, Stats, Trajectory
from .ts import GGLIntegrator

__all__ = ["DEFAULTS", "Callback", "ConsistentState", "GGLIntegrator", "GenAlphaParameters",
           "GeneralizedAlpha", "OptionsManager", "SolverSettings", "StaticSolution", "Stats",
           "Trajectory",
           "consistent_initial_conditions", "default_direct_lu", "integrate",
           "petsc_options_from_args", "solve_static"]


def integrate(dae, q0: np.ndarray, qd0: np.ndarray, t_end: float, *,
              method: str = DEFAULTS.method, h: float, t0: float = DEFAULTS.t0,
              rho_inf: float = DEFAULTS.rho_inf, adaptive: bool = DEFAULTS.adaptive,
              rtol: float = DEFAULTS.rtol, atol: float = DEFAULTS.atol,
              output_times: Sequence[float] | None = None, callback: Callback | None = None,
              store: bool | None = None, project_velocity: bool = DEFAULTS.project_velocity,
              jacobian_reuse: bool = DEFAULTS.jacobian_reuse,
              fixed_positions: Sequence[int] = (),
              fixed_velocities: Sequence[int] = (),
              options_prefix: str = DEFAULTS.options_prefix,
              petsc_options: Mapping | None = None, comm=None) -> Trajectory:
    """Integrate ``dae`` from ``(q0, qd0)`` at ``t0`` to ``t_end``.

    The initial state is first made consistent (:func:`consistent_initial_conditions`,
    keeping ``fixed_positions`` / ``fixed_velocities``).  Then

    * ``method="genalpha"``: generalized-α with ``rho_inf``; fixed steps ``h`` or, with
      ``adaptive``, error-controlled steps starting from ``h`` (``rtol``/``atol`` on ``q``);
    * ``method="ts"``: PETSc TS (``-<prefix>ts_type``, default BDF-2) on the GGL form,
      adaptive by TS with ``rtol``/``atol``, first step ``h``.

    ``callback(t, q, qd, qdd, lam, stats)`` is called at ``t0`` and every accepted step
    (returning a true value stops).  The returned :class:`Trajectory` holds the states at
    ``output_times`` (or every step); if a callback is given and ``store`` is not set,
    only the final state is kept.  The defaults are those of :data:`DEFAULTS`
    (:class:`~flexmbs.integrate.settings.SolverSettings`), as for :func:`flexmbs.simulate`:
    with ``project_velocity`` the reported velocities satisfy ``G qd = -g_t``.
    """
    store = callback is None if store is None else store
    cs = consistent_initial_conditions(dae, q0, qd0, t0, fixed_positions=fixed_positions,
                                       fixed_velocities=fixed_velocities)
    if method == "genalpha":
        ga = GeneralizedAlpha(dae, rho_inf=rho_inf, options_prefix=options_prefix,
                              petsc_options=petsc_options, jacobian_reuse=jacobian_reuse,
                              jacobian_cost=DEFAULTS.jacobian_cost,
                              newton_rtol=DEFAULTS.newton_rtol,
                              project_velocity=project_velocity, comm=comm)
        try:
            return ga.run(cs.q, cs.qd, cs.qdd, cs.lam, t0, t_end, h=h, adaptive=adaptive,
                          rtol=rtol, atol=atol, output_times=output_times,
                          callback=callback, store=store)
        finally:
            ga.destroy()
    if method == "ts":
        ts = GGLIntegrator(dae, options_prefix=options_prefix, petsc_options=petsc_options,
                           comm=comm)
        try:
            return ts.run(cs.q, cs.qd, cs.lam, t0, t_end, h=h, rtol=rtol, atol=atol,
                          output_times=output_times, callback=callback, store=store)
        finally:
            ts.destroy()
    raise ValueError(f"integrate: method must be 'genalpha' or 'ts', got {method!r}")
