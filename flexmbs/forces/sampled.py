"""Sampled controllers with a zero-order hold (THEORY §5.7, §7 items 34, 36).

A sampled controller acts at its ticks ``t_k = t0 + k T`` (``period`` ``T`` [s], ``t0``
the start of the run): it reads its sensor components ``y_k = y(t_k)`` (``feeds``),
updates its discrete states ``x`` and sets the output ``u`` that it holds until the next
tick (zero-order hold):

    u_k = u(t_k, x_k, y_k),      x_{k+1} = x_next(t_k, x_k, y_k),      u(t) = u_k on [t_k, t_{k+1}).

``u`` is the generalized force on the actuated coordinate of ``joint`` (as for the
continuous controllers of :mod:`flexmbs.forces.controllers`, ``Q_f = u grad c``).  The
states ``[x; u]`` are coordinates of the DAE whose rows are ``zd = 0`` between ticks;
the integrator lands on every tick (like an output time), then sets them from
:meth:`SampledController.update` and restarts from consistent accelerations
(:mod:`flexmbs.integrate.genalpha`).  The held value recorded at ``t_k`` is the new
one ``u_k`` (right-continuous).

* :class:`DiscreteStateSpaceController`: ``w_k = r(t_k) - y_k``,
  ``x_{k+1} = A_d x_k + B_d w_k``, ``u_k = C_d x_k + D_d w_k``;
* :class:`CallbackController`: ``u_k = function(t_k, y_k)``, any Python function (no
  discrete states).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from flexmbs.forces.base import ForceContribution
from flexmbs.forces.controllers import actuated_jet, actuation_problems, state_space_problems
from flexmbs.forces.states import StatefulForceElement
from flexmbs.kinematics.time_functions import as_time_function


def is_tick(t: float, t0: float, period: float) -> bool:
    """Whether ``t`` is one of the ticks ``t0 + k period`` (to ``1e-9 period``)."""
    k = round((t - t0) / period)
    return k >= 0 and abs(t - (t0 + k * period)) <= 1e-9 * period


def ticks(t0: float, t_end: float, period: float) -> np.ndarray:
    """The ticks ``t0 + k period`` in ``[t0, t_end]``."""
    n = int(np.floor((t_end - t0) / period * (1 + 1e-12)))
    return t0 + period * np.arange(n + 1)


@dataclass(frozen=True, eq=False)
class SampledController(StatefulForceElement):
    """Base of sampled controllers on ``joint`` fed by ``feeds`` every ``period`` [s]
    (module docstring).  Subclasses give ``n_discrete``, :meth:`step` and
    ``initial_states``."""

    joint: object = None
    feeds: tuple = ()
    period: float = 0.0
    coordinate: str | None = None
    n_discrete = 0

    @property
    def state_names(self) -> tuple[str, ...]:
        return (*(f"x{k + 1}" for k in range(self.n_discrete)), "u")

    def resolve(self):
        return self.joint.resolve()

    def problems(self) -> list[str]:
        out = actuation_problems(self)
        if not np.isfinite(self.period) or self.period <= 0:
            out.append(f"{type(self).__name__} '{self.name}': period must be > 0 [s], "
                       f"got {self.period}")
        return out

    def step(self, t: float, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        """``(x_{k+1}, u_k)`` at the tick ``t`` from ``x_k`` and the sensor values ``y``."""
        raise NotImplementedError

    def update(self, t: float, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The states ``[x_{k+1}; u_k]`` after the tick ``t`` (``z = [x_k; u_{k-1}]``)."""
        x, u = self.step(t, np.asarray(z[:-1], dtype=float), y)
        return np.append(x, float(u))

    def contribution(self, ctx) -> ForceContribution:
        """``Q_x = u grad c``, ``Q_z = 0`` (held states); ``dQ_x/du = grad c``."""
        c = actuated_jet(self, ctx)
        st = ctx.states
        u = float(ctx.x[st][-1])
        Q = u * c.d
        if ctx.order < 2:
            return ForceContribution(Q, None, None)
        dQ_dx = u * c.h
        dQ_dx[:, st.stop - 1] += c.d
        return ForceContribution(Q, dQ_dx, np.zeros((ctx.n, ctx.n)))

    def energy_exchange(self) -> str | None:
        return "control force (an active element)"


@dataclass(frozen=True, eq=False)
class DiscreteStateSpaceController(SampledController):
    """``x_{k+1} = A_d x_k + B_d w_k``, ``u_k = C_d x_k + D_d w_k``, ``w_k = r(t_k) - y_k``
    (``references``: one time function per feed; ``x0`` the initial discrete states)."""

    references: tuple = ()
    A_d: object = field(default_factory=lambda: np.zeros((0, 0)))
    B_d: object = field(default_factory=lambda: np.zeros((0, 1)))
    C_d: object = field(default_factory=lambda: np.zeros((1, 0)))
    D_d: object = field(default_factory=lambda: np.zeros((1, 1)))
    x0: tuple | None = None
    kind = "sampled_state_space_controller"

    @property
    def n_discrete(self) -> int:
        return int(np.asarray(self.A_d, dtype=float).reshape(-1).size ** 0.5)

    def initial_states(self) -> np.ndarray:
        x = np.zeros(self.n_discrete) if self.x0 is None else np.asarray(self.x0, float)
        return np.append(x, 0.0)

    def matrices(self):
        k, m = self.n_discrete, len(self.feeds)
        return tuple(np.asarray(a, dtype=float).reshape(s) for a, s in
                     ((self.A_d, (k, k)), (self.B_d, (k, m)), (self.C_d, (1, k)),
                      (self.D_d, (1, m))))

    def problems(self) -> list[str]:
        return super().problems() + state_space_problems(
            self, ("A_d", "B_d", "C_d", "D_d"), self.n_discrete)

    def step(self, t, x, y):
        A, B, C, D = self.matrices()
        r = np.array([float(as_time_function(f, self.name)(t)[0]) for f in self.references])
        w = r - y
        return A @ x + B @ w, float(C[0] @ x + D[0] @ w)


@dataclass(frozen=True, eq=False)
class CallbackController(SampledController):
    """``u_k = function(t_k, y_k)`` [N or N m]: a Python function of the time [s] and the
    sensor values (an array, one per feed), called at every tick."""

    function: Callable | None = None
    kind = None        # Python only

    def problems(self) -> list[str]:
        out = super().problems()
        if not callable(self.function):
            out.append(f"CallbackController '{self.name}': function must be callable "
                       f"f(t, y) -> u, got {type(self.function).__name__}")
        return out

    def step(self, t, x, y):
        u = self.function(t, np.array(y))
        if not np.isfinite(u):
            raise ValueError(f"CallbackController '{self.name}': function returned {u!r} "
                             f"at t = {t:.6g} s, expected a finite number")
        return x, float(u)
