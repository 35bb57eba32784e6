"""Common machinery of force elements (THEORY §5.7, (2.57)).

A force element acts between body ``i`` at marker ``P`` and body ``j`` at marker ``Q``
(either may be the ground).  It returns its *generalized applied force* ``Q_f`` on the
local coordinates ``x = [q_i; q_j; t]`` (enters the system residual as ``-Q_f``), and,
for Newton, ``dQ_f/dx`` and ``dQ_f/dxd``.  Laws acting along a scalar measure ``s(x)``
(distance, joint angle, joint displacement) with force ``F(s, sd, t)`` that opposes
positive ``s`` use :func:`scalar_law`:

    Q_f = -F grad s,    sd = grad s . xd,
    dQ_f/dx  = -(F_s grad s + F_sd dsd/dx) grad s^T - F hess s,   dsd/dx = hess s . xd
    dQ_f/dxd = -F_sd grad s grad s^T
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from flexmbs.kinematics.jet import Jet


@dataclass(frozen=True)
class ForceContribution:
    """``Q`` (n,), and ``dQ_dx``, ``dQ_dxd`` (n, n) or None when not requested;
    ``dQ_dlam`` (n, k) by the multipliers ``ctx.lam`` of an element that reads its joint's
    reaction (None otherwise)."""

    Q: np.ndarray
    dQ_dx: np.ndarray | None
    dQ_dxd: np.ndarray | None
    dQ_dlam: np.ndarray | None = None


def scalar_law(s: Jet, xd: np.ndarray, F: float, F_s: float, F_sd: float,
               order: int) -> ForceContribution:
    """Generalized force of a 1-D law ``F(s, sd)`` acting against the measure ``s``.

    ``xd`` is the local velocity vector with ``1.0`` in the time slot.  ``F_s`` and
    ``F_sd`` are the partial derivatives of ``F`` by ``s`` and ``sd``.
    """
    g = s.d
    Q = -F * g
    if order < 2:
        return ForceContribution(Q, None, None)
    dsd_dx = s.h @ xd
    dQ_dx = -np.outer(g, F_s * g + F_sd * dsd_dx) - F * s.h
    dQ_dxd = -F_sd * np.outer(g, g)
    dQ_dxd[:, -1] = 0.0       # time is not a velocity
    return ForceContribution(Q, dQ_dx, dQ_dxd)


@dataclass(frozen=True, eq=False)
class ForceElement:
    """Base of force elements: ``name``, sides ``first`` (P) and ``second`` (Q).

    Subclasses implement ``resolve() -> (P, Q)`` markers (like joints; ``second`` may be
    None for single-body loads) and ``contribution(P_jet, Q_jet, x, xd, t, order)``.
    """

    name: str
    kind = None  # the case-file ``type`` of a subclass; None: not in case files

    def problems(self) -> list[str]:
        return []

    def energy_exchange(self) -> str | None:
        """What in this element adds or removes energy, or None when its generalized force
        is ``-grad V`` of its ``potential`` alone.  Elements that say nothing are assumed
        to exchange energy."""
        return "no potential energy declared"


def damping_exchange(d, unit: str) -> str | None:
    """``"damping d = ..."`` when a damper coefficient (scalar or per component) is positive
    (its power ``-d sd^2 <= 0`` removes energy), else None."""
    a = np.atleast_1d(np.asarray(d, dtype=float))
    if not np.any(a > 0):
        return None
    val = f"{a[0]:g}" if a.size == 1 else "(" + ", ".join(f"{v:g}" for v in a) + ")"
    return f"damping d = {val} {unit}"


@dataclass(frozen=True)
class Signals:
    """Sensor values ``y`` (m,) read by a force element, with ``y_x = dy/dx`` and
    ``y_xd = dy/dxd`` (m, n) on its local vector (None at order 1; the time column
    zero: sensors measure the motion only)."""

    y: np.ndarray
    y_x: np.ndarray | None
    y_xd: np.ndarray | None


@dataclass(frozen=True)
class LocalContext:
    """What the system hands a force element at one evaluation.

    ``markers`` are the resolved markers (P, Q) (Q may be absent); ``frames`` their
    :class:`~flexmbs.kinematics.frames.FrameJet` over the local vector ``x`` (length
    ``n``; the last entry is time), given as a tuple or as a function that makes it on
    first use (elements such as torques never need them); ``xd`` the local velocities (last entry 1.0);
    ``offsets[k]`` the start of marker k's body coordinates in ``x`` (None for ground);
    ``q_bodies[k]``/``qd_bodies[k]`` that body's coordinates and velocities (None for
    ground); ``order`` 1 (force only) or 2 (force and tangents); ``states`` the slice
    of the element's internal states in ``x`` (:mod:`flexmbs.forces.states`), or None;
    ``signals`` the :class:`Signals` of the sensors the element reads (its ``feeds``),
    or None; ``lam`` the multipliers of the rows of the joint an element reads the
    reaction of (``reads_reaction``, e.g. joint friction; dropped rows 0), else None.
    """

    markers: tuple
    frames_or_maker: object
    x: np.ndarray
    xd: np.ndarray
    t: float
    n: int
    offsets: tuple
    q_bodies: tuple
    qd_bodies: tuple
    order: int
    states: slice | None = None
    signals: object = None
    lam: np.ndarray | None = None

    @cached_property
    def frames(self) -> tuple:
        f = self.frames_or_maker
        return tuple(f()) if callable(f) else f
