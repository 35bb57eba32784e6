"""Energy bookkeeping: does a model conserve ``E = T + V_g + V_e``, and how well did a run?

With the energies of :meth:`AssembledSystem.energy
<flexmbs.system.assembly.AssembledSystem.energy>` (kinetic ``T``, gravity ``V_g``, strain
and force-element potentials ``V_e``), the equations of motion give the balance

    dE/dt = P_nc = - sum_dampers d sd^2  - qd_e^T D_e qd_e  + sum_loads Q_f . qd  + lam^T g_t,

the power of what has no potential: dampers (``d > 0``, incl. bushings and stop contact),
structural damping of flexible bodies, time-varying, follower or torque loads, and drives
(rheonomic constraints ``g(q, t)``, whose reactions ``-G^T lam`` work at the rate
``-lam^T G qd = lam^T g_t``).  A model with none of them is *conservative*: ``E`` is a first
integral and its drift in a run measures the integrator (generalized-α with
``rho_inf < 1`` dissipates ``O(h^2)``).  Gravity and scleronomic joints do no net work.

:func:`energy_exchanges` lists the parts of a model that exchange energy, and
:func:`energy_summary` writes the summary line of a run.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EnergyExchange:
    """One part of a model that adds or removes energy: ``kind`` ("drive", "force element",
    "body"), its ``name`` and the ``reason``."""

    kind: str
    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.kind} '{self.name}' ({self.reason})"


def _structural_damping(body) -> str | None:
    """``"structural damping D_e"`` for a flexible body that applies ``D_e qd_e != 0`` (the
    matrix it applies: the body file's, or a Rayleigh or modal one given to the body)."""
    D_e = getattr(body, "D_e", None)
    if D_e is None:
        D_e = getattr(getattr(body, "body", None), "D_e", None)
    if D_e is None or not getattr(body, "damping", False) or not np.any(np.asarray(D_e)):
        return None
    return "structural damping D_e qd_e"


def energy_exchanges(model) -> list[EnergyExchange]:
    """Every part of ``model`` (a :class:`~flexmbs.system.model.System`) whose work is not
    ``-dV`` of a potential: drives, force elements whose ``energy_exchange()`` names a
    reason (an element that declares no potential counts as exchanging), damped flexible
    bodies."""
    out = [EnergyExchange("drive", d.name, "prescribed motion, reaction does work")
           for d in model.drives]
    for f in model.forces:
        reason = f.energy_exchange()       # (ForceElement's default: no potential)
        if reason is not None:
            out.append(EnergyExchange("force element", f.name, reason))
    for b in model.bodies:
        reason = _structural_damping(b)
        if reason is not None:
            out.append(EnergyExchange("body", b.name, reason))
    return out


def is_conservative(model) -> bool:
    """True when nothing in ``model`` adds or removes energy (:func:`energy_exchanges`)."""
    return not energy_exchanges(model)


def relative_drift(energy: dict) -> float:
    """``max_t |E - E0| / max(max_t T, |E0|)`` of recorded energies (``energy["total"]``,
    ``energy["kinetic"]``, one value per output step)."""
    E = np.asarray(energy["total"], dtype=float)
    T = np.asarray(energy.get("kinetic", np.zeros(1)), dtype=float)
    scale = max(float(np.abs(T).max(initial=0.0)), abs(float(E[0])), 1e-300)
    return float(np.abs(E - E[0]).max()) / scale


def energy_summary(energy: dict, model=None) -> str:
    """One line on the energy of a run: for a conservative ``model`` how well ``E`` was
    conserved, otherwise its change and the parts that exchange energy (``model=None``:
    the change only)."""
    E = np.asarray(energy["total"], dtype=float)
    dE = float(np.abs(E - E[0]).max())
    rel = relative_drift(energy)
    head = f"total energy: {E[0]:.6g} J -> {E[-1]:.6g} J"
    if "friction_work" in energy:       # joint friction: its work W_f (docs/friction.md)
        W = np.asarray(energy["friction_work"], dtype=float)
        head += (f" (friction work {W[-1]:.6g} J; E + W_f: {E[0] + W[0]:.6g} J -> "
                 f"{E[-1] + W[-1]:.6g} J)")
    if model is None:
        return f"{head}, max |E - E0| = {dE:.3g} J ({rel:.2e} of max(T, |E0|))"
    parts = energy_exchanges(model)
    if not parts:
        return (f"{head}; energy conserved to {rel:.2e} of max(T, |E0|) "
                "(no drive, damper or external work)")
    return (f"{head}, max |E - E0| = {dE:.3g} J ({rel:.2e} of max(T, |E0|)); not "
            f"conserved by the model, energy exchanged by: {', '.join(map(str, parts))}")
