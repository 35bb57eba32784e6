"""A model in joint coordinates through the generalized-alpha integrator: consistent
initial joint coordinates, rates, accelerations and multipliers (THEORY §8.3) of the
:class:`~flexmbs.relative.dae.RelativeDAE`, then the run; at each output the state is
handed on as the bodies' absolute coordinates ``q_b = q_b(beta)``, ``qd_b = T betad``,
``qdd_b = T betadd + Td betad`` (:mod:`flexmbs.relative.absolute_map`), so that every
output of the descriptor form (energies, joint coordinates, files) reads it, with the
joint reactions of the backward sweep (:mod:`flexmbs.relative.reactions`).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from flexmbs.integrate.consistent import consistent_initial_conditions
from flexmbs.integrate.genalpha import GeneralizedAlpha
from flexmbs.integrate.settings import DEFAULTS
from flexmbs.relative.dae import RelativeDAE
from flexmbs.relative.reactions import reactions

log = logging.getLogger(__name__)

#: Newton settings of a relative run: its tangent is made by central differences (a
#: few dozen residuals), so the Newton matrix is kept while Newton contracts
RELATIVE_NEWTON = {"jacobian_cost": None}


@dataclass(frozen=True)
class BodyState:
    """One output of a relative run: time [s], joint coordinates and rates, the
    multipliers of the relative DAE, and the bodies' absolute state."""

    t: float
    beta: np.ndarray
    betad: np.ndarray
    betadd: np.ndarray
    lam: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    reactions: dict           # {joint: (force [N], torque [N m])}, flexmbs.relative.reactions
    stats: object = None      # the integrator's counters


def run_relative(model, t0: float, t_end: float, dt: float, *, formulation: str,
                 on_output: Callable[[BodyState], bool], rho_inf: float = DEFAULTS.rho_inf,
                 output_times=None, adaptive: bool = DEFAULTS.adaptive,
                 rtol: float = DEFAULTS.rtol, atol: float = DEFAULTS.atol,
                 integrator_options: dict | None = None, petsc_options: dict | None = None,
                 options_prefix: str = DEFAULTS.options_prefix):
    """Integrate ``model`` in joint coordinates from ``t0`` to ``t_end``; ``on_output``
    gets a :class:`BodyState` at ``t0`` and each output (a true return stops the run).
    Returns ``(dae, trajectory, dropped row labels)``."""
    dae = RelativeDAE(model, formulation)
    beta0 = dae.initial_q()
    dropped = dae.drop_redundant(beta0, t0)
    for lab in dropped:
        log.info("relative form: %s is redundant, dropped", lab)
    init = consistent_initial_conditions(dae, beta0, dae.initial_qd(), t0)

    def callback(t, q, qd, qdd, lam, stats):
        q_b, qd_b = dae.body_coordinates(q, qd)[:2]
        return on_output(BodyState(t, q, qd, qdd, lam, q_b, qd_b,
                                   dae.body_accelerations(q, qd, qdd),
                                   reactions(dae, q, qd, qdd, lam, t), stats))

    integ = GeneralizedAlpha(dae, **{**DEFAULTS.genalpha_options(), **RELATIVE_NEWTON,
                                     **(integrator_options or {})}, rho_inf=rho_inf,
                             options_prefix=options_prefix, petsc_options=petsc_options)
    try:
        traj = integ.run(init.q, init.qd, init.qdd, init.lam, t0, t_end, h=dt,
                         adaptive=adaptive, rtol=rtol, atol=atol, output_times=output_times,
                         callback=callback, store=False,
                         callback_at_outputs=output_times is not None)
    finally:
        integ.destroy()
    return dae, traj, dropped
