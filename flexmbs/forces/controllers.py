"""Continuous controllers acting on a joint (THEORY §5.7, §7 items 34, 36): force
elements whose internal states are the controller's states and whose inputs are
sensors.

A controller reads ``m`` sensor components ``y`` (``feeds``: ``(sensor, component)``
pairs; the system hands their values and derivatives, :mod:`flexmbs.system.force_terms`),
forms the errors against the references ``r(t)`` (time functions, one per feed)

    w = r(t) - y,

and runs the linear state-space law (states ``z``, ``k`` of them)

    zd = A z + B w,        u = C z + D w.

``u`` is the generalized force on the actuated coordinate ``c`` of ``joint`` (its
``angle`` [rad] for a revolute: ``u`` is a torque [N m]; its ``displacement`` [m] for
a prismatic: a force [N]), applied through virtual work, ``Q_f = u grad c``: a positive
``u`` drives ``c`` up.

:func:`pid` builds the law of a PID controller

    u = K_p e + K_i int e dt + K_d ed,

with ``e = r - y`` of the first feed and ``ed`` either a second feed measuring the rate
(``ed = rd - yd``, exact) or the filtered derivative ``ed = s / (T_f s + 1) e``
(``T_f`` [s]; one more state).  A step of ``r`` at ``t0`` is a constant reference: its
derivative (an impulse) is not applied, so the derivative acts on the measurement.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexmbs.forces.base import ForceContribution
from flexmbs.forces.states import StatefulForceElement, time_function_problems
from flexmbs.kinematics.time_functions import TimeFunction, as_time_function


def _ro(a) -> np.ndarray:
    a = np.array(a, dtype=float, ndmin=2)
    a.setflags(write=False)
    return a


def actuated_name(element) -> str:
    """The actuated coordinate of ``element.joint`` (``element.coordinate`` or the joint's
    first)."""
    names = tuple(getattr(element.joint, "coordinate_names", ()))
    return element.coordinate or (names[0] if names else "")


def actuated_jet(element, ctx):
    """The actuated joint coordinate ``c`` as a jet over the element's local vector."""
    names = tuple(element.joint.coordinate_names)
    return element.joint.coordinates(ctx.frames[0], ctx.frames[1])[
        names.index(actuated_name(element))]


def actuation_problems(element) -> list[str]:
    """Problems of a controller's ``joint``, ``coordinate`` and ``feeds``."""
    who = f"{type(element).__name__} '{element.name}'"
    if not hasattr(element.joint, "resolve"):
        return [f"{who}: joint must be a joint object, got {type(element.joint).__name__}"]
    out = []
    names = tuple(getattr(element.joint, "coordinate_names", ()))
    if actuated_name(element) not in names:
        out.append(f"{who}: joint '{element.joint.name}' has no coordinate "
                   f"{actuated_name(element)!r} to actuate (it has {names})")
    for i, f in enumerate(element.feeds):
        if len(f) != 2 or not hasattr(f[0], "measure"):
            out.append(f"{who}: feeds[{i}] must be (sensor, component), got {f!r}")
    return out


def state_space_problems(element, keys: tuple, k: int) -> list[str]:
    """Problems of the matrices ``keys`` (A, B, C, D) of a state-space law with ``k``
    states and one input per feed, and of its ``references``."""
    who = f"{type(element).__name__} '{element.name}'"
    m = len(element.feeds)
    out = []
    for key, shape in zip(keys, ((k, k), (k, m), (1, k), (1, m)), strict=True):
        a = np.asarray(getattr(element, key), dtype=float)
        if a.shape != shape and not (a.size == 0 and 0 in shape):
            out.append(f"{who}: {key} must have shape {shape} for {k} states and {m} "
                       f"feeds, got {a.shape}")
    if len(element.references) != m:
        out.append(f"{who}: {m} feeds need {m} references, got {len(element.references)}")
    for i, r in enumerate(element.references):
        out += time_function_problems(r, f"{who}: references[{i}]", scalar=True)
    return out


@dataclass(frozen=True, eq=False)
class LinearController(StatefulForceElement):
    """State-space controller ``(A, B, C, D)`` on ``joint``'s coordinate ``coordinate``
    fed by ``feeds`` against ``references`` (module docstring)."""

    joint: object = None
    feeds: tuple = ()
    references: tuple = ()
    A: np.ndarray = field(default_factory=lambda: _ro(np.zeros((0, 0))))
    B: np.ndarray = field(default_factory=lambda: _ro(np.zeros((0, 1))))
    C: np.ndarray = field(default_factory=lambda: _ro(np.zeros((1, 0))))
    D: np.ndarray = field(default_factory=lambda: _ro(np.zeros((1, 1))))
    z0: tuple | None = None
    coordinate: str | None = None
    kind = "state_space_controller"

    def __post_init__(self):
        for key in ("A", "B", "C", "D"):
            object.__setattr__(self, key, _ro(getattr(self, key)))
        if self.A.size == 0:
            object.__setattr__(self, "A", _ro(np.zeros((0, 0))))
        object.__setattr__(self, "feeds", tuple(tuple(f) for f in self.feeds))

    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(f"z{k + 1}" for k in range(self.A.shape[0]))

    def initial_states(self) -> np.ndarray:
        k = self.A.shape[0]
        return np.zeros(k) if self.z0 is None else np.asarray(self.z0, dtype=float)

    def resolve(self):
        return self.joint.resolve()

    def problems(self) -> list[str]:
        who = f"{type(self).__name__} '{self.name}'"
        out = actuation_problems(self)
        if out:
            return out
        k = self.A.shape[0]
        out += state_space_problems(self, ("A", "B", "C", "D"), k)
        if self.z0 is not None and np.shape(self.z0) != (k,):
            out.append(f"{who}: z0 must have shape ({k},), got {np.shape(self.z0)}")
        return out

    def contribution(self, ctx) -> ForceContribution:
        """``Q_x = u grad c``, ``Q_z = A z + B w`` with ``w = r(t) - y``; tangents
        ``dQ_x/dx = grad c (du/dx)^T + u hess c``, ``du/dx = -D dy/dx`` (+ ``C`` in the
        ``z`` columns), ``dQ_z/dx = -B dy/dx`` (+ ``A``), and the same with ``xd``."""
        c = actuated_jet(self, ctx)
        sig, st = ctx.signals, ctx.states
        z = ctx.x[st] if st is not None else np.zeros(0)
        refs = [as_time_function(r, self.name)(ctx.t) for r in self.references]
        w = np.array([float(r[0]) for r in refs]) - sig.y
        w_t = np.array([float(r[1]) for r in refs])
        A, B, C, D = self.A.reshape(len(z), len(z)), self.B.reshape(len(z), len(w)), \
            self.C.reshape(1, len(z)), self.D.reshape(1, len(w))
        u = float(C[0] @ z + D[0] @ w)
        g = c.d
        Q = u * g
        if st is not None:
            Q[st] += A @ z + B @ w
        if ctx.order < 2:
            return ForceContribution(Q, None, None)
        u_x, u_xd = -(D[0] @ sig.y_x), -(D[0] @ sig.y_xd)
        u_x[-1] += D[0] @ w_t
        if st is not None:
            u_x[st] += C[0]
        dQ_dx = np.outer(g, u_x) + u * c.h
        dQ_dxd = np.outer(g, u_xd)
        if st is not None:
            dQ_dx[st, :] -= B @ sig.y_x
            dQ_dx[st, st] += A
            dQ_dx[st, -1] += B @ w_t
            dQ_dxd[st, :] -= B @ sig.y_xd
        dQ_dxd[:, -1] = 0.0
        return ForceContribution(Q, dQ_dx, dQ_dxd)

    def energy_exchange(self) -> str | None:
        return "control force (an active element)"

    def recorded_signals(self, t: float, y: np.ndarray, z: np.ndarray, ends=()) -> dict:
        """What a result file records of the loop at ``t`` from the measured ``y`` and the
        states ``z`` (``ends``: the markers' states, unused): ``error`` ``w = r - y`` and
        the actuation ``u = C z + D w`` [N m or N], each ``(values, unit, columns)``."""
        w = np.array([float(as_time_function(r, self.name)(t)[0])
                      for r in self.references]) - np.asarray(y, dtype=float)
        k = len(z)
        u = float(self.D.reshape(1, len(w))[0] @ w) + (
            float(self.C.reshape(1, k)[0] @ z) if k else 0.0)
        return {"error": (w, "rad | m", tuple(f"e{i + 1}" for i in range(len(w)))),
                "u": (np.array([u]), "N m | N", ("u",))}


def pid_law(name, measure, reference, rate, Kp, Ki, Kd, T_f, e0):
    """``(A, B, C, D, feeds, references, z0)`` of a PID controller (module docstring)."""
    if rate is not None:
        r = as_time_function(reference, f"PID '{name}': reference")
        return [[0.0]], [[1.0, 0.0]], [[Ki]], [[Kp, Kd]], (measure, rate), (r, RateOf(r)), None
    if Kd:
        if not T_f > 0:
            raise ValueError(f"PIDController '{name}': a derivative gain Kd needs a rate feed "
                             f"or a filter time constant T_f > 0 [s], got T_f = {T_f}")
        return ([[0.0, 0.0], [0.0, -1.0 / T_f]], [[1.0], [1.0 / T_f]], [[Ki, -Kd / T_f]],
                [[Kp + Kd / T_f]], (measure,), (reference,), (0.0, float(e0)))
    return [[0.0]], [[1.0]], [[Ki]], [[Kp]], (measure,), (reference,), None


@dataclass(frozen=True, eq=False)
class PIDGains:
    """The keys of a PID law ``u = K_p e + K_i int e dt + K_d ed`` on a sensor feed (mixed
    into the elements that carry one): ``measure`` the ``(sensor, component)`` of ``y``,
    ``reference`` ``r(t)``, ``rate`` the ``(sensor, component)`` of ``yd`` (exact
    derivative), else the derivative filtered with ``T_f`` [s]; ``e0`` the error at
    ``t0`` (the filter's start)."""

    measure: tuple = ()
    reference: object = 0.0
    rate: tuple | None = None
    Kp: float = 0.0
    Ki: float = 0.0
    Kd: float = 0.0
    T_f: float = 0.0
    e0: float = 0.0

    def pid_law(self):
        """``(A, B, C, D, feeds, references, z0)`` of the law (:func:`pid_law`)."""
        return pid_law(self.name, tuple(self.measure), self.reference,
                       None if self.rate is None else tuple(self.rate), self.Kp, self.Ki,
                       self.Kd, self.T_f, self.e0)


@dataclass(frozen=True, eq=False)
class PIDController(PIDGains, LinearController):
    """PID controller ``u = K_p e + K_i int e dt + K_d ed`` (module docstring) on
    ``joint``, with the keys of :class:`PIDGains` ([rad or m] for ``reference``).
    States: ``int e dt`` (and the filter state ``x_f``, ``x_f' = (e - x_f) / T_f``,
    ``ed = (e - x_f) / T_f``, starting at ``x_f = e0``: the error at ``t0``, so that a
    step of the reference does not kick the derivative)."""

    kind = "pid"

    def __post_init__(self):
        A, B, C, D, feeds, refs, z0 = self.pid_law()
        for key, v in (("A", A), ("B", B), ("C", C), ("D", D), ("feeds", feeds),
                       ("references", refs), ("z0", z0)):
            object.__setattr__(self, key, v)
        super().__post_init__()


def pid(name: str, joint, measure, reference, **kw) -> PIDController:
    """A :class:`PIDController` (keywords ``Kp``, ``Ki``, ``Kd``, ``rate``, ``T_f``,
    ``e0``, ``coordinate``)."""
    return PIDController(name, joint=joint, measure=measure, reference=reference, **kw)


@dataclass(frozen=True)
class RateOf(TimeFunction):
    """The time function ``(fd, fdd, 0)`` of a time function's rate."""

    function: object = None

    def __call__(self, t):
        _, fd, fdd = self.function(t)
        return fd, fdd, np.zeros_like(np.asarray(fdd, dtype=float))
