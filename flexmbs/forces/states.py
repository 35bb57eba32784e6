"""Force elements with internal states (THEORY §5.7, §7 items 29, 33): the public base
class for user force elements.

An element with internal states ``z`` (``k`` of them, named ``state_names``, initial
values ``initial_states()``) obeys the first-order ODEs

    zd = f(z, x, xd, t)

beside its generalized force ``Q_f(z, x, xd, t)`` on its bodies' local coordinates
``x``.  The states join the DAE as extra coordinates (:mod:`flexmbs.system.layout`:
``x = [q_i; q_j; z; t]``, ``ctx.states`` their slice).  Their residual rows are

    r_z = zd - f(z, x, xd, t) = 0,

so the element returns ``f`` in the ``z`` slots of its ``Q`` (the system subtracts ``Q``
from the residual and adds ``zd`` for every state, i.e. the states' "damping matrix" is
the identity and their mass matrix zero).  Tangents: ``dQ/dx`` holds ``dQ_f/dz`` in the
``z`` columns and ``df/dx``, ``df/dz`` in the ``z`` rows; ``dQ/dxd`` holds ``df/dxd``.
The generalized-alpha update ``zd = v0 + gamma' (z - z0) + ...`` makes the Newton block
of a state ``gamma' I - df/dz``, regular for a small enough step.  The integrator makes
the initial rates consistent, ``zd(t0) = f(z0, x0, xd0, t0)``
(:func:`flexmbs.integrate.consistent.consistent_initial_conditions`).

Writing a user element: subclass :class:`StatefulForceElement`, give ``state_names``
and ``initial_states()``, ``resolve()`` (the markers) and ``contribution(ctx)``.  An
element acting along one scalar measure ``s`` of its markers (a length, a joint angle)
builds its contribution with :func:`scalar_state_law` from ``F``, ``f`` and their
partial derivatives.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.forces.base import ForceContribution, ForceElement, scalar_law
from flexmbs.kinematics.jet import Jet
from flexmbs.kinematics.time_functions import as_time_function


def time_function_problems(spec, who: str, scalar: bool = False) -> list[str]:
    """``[]`` when ``spec`` makes a time function (with ``scalar``: one whose value is a
    number, not a vector), else the one-line problem."""
    try:
        f = as_time_function(spec, who)
    except (TypeError, ValueError) as e:
        return [str(e)]
    if scalar:
        shape = np.shape(f(0.0)[0])
        if shape != ():
            return [f"{who}: expected a scalar time function (a number at every t), got "
                    f"values of shape {shape}"]
    return []


@dataclass(frozen=True, eq=False)
class StatefulForceElement(ForceElement):
    """Base of force elements with internal states ``z`` (module docstring).

    Subclasses give ``state_names`` (a tuple of names, one per state, also the labels of
    the states in results), ``initial_states()`` (``z0``, shape (k,)), ``resolve()`` and
    ``contribution(ctx)`` returning ``Q`` with ``f`` in the ``ctx.states`` slots.
    """

    state_names = ()

    def initial_states(self) -> np.ndarray:
        return np.zeros(len(self.state_names))

    def energy_exchange(self) -> str | None:
        return "internal states (a force law with its own dynamics)"


@dataclass(frozen=True)
class StateLaw:
    """The state part of a scalar law: rates ``f`` (k,) and their partial derivatives
    ``f_s``, ``f_sd`` (k,), ``f_z`` (k, k), ``f_t`` (k,) by the measure ``s``, its rate
    ``sd``, the states ``z`` and time ``t``."""

    f: np.ndarray
    f_s: np.ndarray
    f_sd: np.ndarray
    f_z: np.ndarray
    f_t: np.ndarray


def scalar_state_law(s: Jet, xd: np.ndarray, states: slice, F: float, F_s: float,
                     F_sd: float, F_z: np.ndarray, law: StateLaw,
                     order: int) -> ForceContribution:
    """Contribution of a 1-D law ``F(s, sd, z)`` acting against the measure ``s`` (as
    :func:`flexmbs.forces.base.scalar_law`) with states ``zd = f(s, sd, z, t)``:

        Q_x = -F grad s,        Q_z = f,
        dQ_x/dz = -grad s F_z^T,
        dQ_z/dx = f_s grad s^T + f_sd (hess s . xd)^T,   dQ_z/dz = f_z,   dQ_z/dt = f_t,
        dQ_z/dxd = f_sd grad s^T.
    """
    c = scalar_law(s, xd, F, F_s, F_sd, order)
    Q = c.Q.copy()
    Q[states] += law.f
    if order < 2:
        return ForceContribution(Q, None, None)
    g = s.d
    dQ_dx, dQ_dxd = c.dQ_dx.copy(), c.dQ_dxd.copy()
    dQ_dx[:, states] -= np.outer(g, F_z)
    dQ_dx[states, :] += np.outer(law.f_s, g) + np.outer(law.f_sd, s.h @ xd)
    dQ_dx[states, states] += law.f_z
    dQ_dx[states, -1] += law.f_t
    dQ_dxd[states, :] += np.outer(law.f_sd, g)
    dQ_dxd[:, -1] = 0.0          # time is not a velocity
    return ForceContribution(Q, dQ_dx, dQ_dxd)
