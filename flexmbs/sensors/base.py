"""Sensor machinery (THEORY §5.8).

A sensor measures from marker ``P`` (body i) to marker ``Q`` (body j); with only
``first`` given it measures ``Q = first`` absolutely, i.e. from the inertial origin /
frame.  Results are resolved in ``frame``: ``"inertial"``, ``"first"`` (P's axes),
``"second"`` (Q's axes) or any :class:`Marker` (appended to the resolved markers).

The assembler calls ``resolve()`` (a tuple of markers) and hands ``measure`` one
:class:`MarkerState` per resolved marker, in the same order.

Sensors whose reading depends on the positions only (``position_level``: position,
orientation as Cardan angles or matrix, face displacement) also give it as jets of the
markers' frame jets (``measure_jet``, :mod:`flexmbs.kinematics.frames`): its gradient and
Hessian over a local vector, exact, for a drive fed by the sensor
(:mod:`flexmbs.constraints.drives`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach, side_problems
from flexmbs.bodies.marker import Marker
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.frames import FrameJet


@dataclass(frozen=True)
class MarkerState:
    """Inertial kinematics of one marker: position ``p`` [m], axes ``R`` (columns), velocity
    ``v`` [m/s], angular velocity ``omega`` [rad/s], acceleration ``a`` [m/s^2] and angular
    acceleration ``alpha`` [rad/s^2]."""

    p: np.ndarray
    R: np.ndarray
    v: np.ndarray
    omega: np.ndarray
    a: np.ndarray
    alpha: np.ndarray


def ground_frame_jet(like: FrameJet) -> FrameJet:
    """The inertial frame as a constant :class:`FrameJet` over the local vector of ``like``."""
    n, order = like.p.n, 1 if like.p.h is None else 2
    return FrameJet(J.Jet.constant(np.zeros(3), n, order),
                    *(J.Jet.constant(e, n, order) for e in np.eye(3)))


GROUND_STATE = MarkerState(np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3),
                           np.zeros(3))


@dataclass(frozen=True, eq=False)
class Sensor:
    """Base: ``name``, ``first`` (P), ``second`` (Q, optional), ``frame`` of the result."""

    name: str
    first: object
    second: object = None
    frame: object = "inertial"
    kind = None  # the case-file ``type`` of a subclass; None: not in case files
    unit = ""
    quantity = ""

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(f"{self.name}.{c}" for c in ("x", "y", "z"))

    def resolve(self) -> tuple[Marker, ...]:
        out = [attach(self.first, self.name, "P")]
        if self.second is not None:
            out.append(attach(self.second, self.name, "Q"))
        if isinstance(self.frame, Marker):
            out.append(self.frame)
        return tuple(out)

    def problems(self) -> list[str]:
        who = f"{type(self).__name__} '{self.name}'"
        out = side_problems(self.first, who, "P")
        if self.second is not None:
            out += side_problems(self.second, who, "Q")
        if not isinstance(self.frame, Marker) and self.frame not in ("inertial", "first", "second"):
            out.append(f"{who}: frame must be 'inertial', 'first', 'second' or a Marker, "
                       f"got {self.frame!r}")
        if self.frame == "second" and self.second is None:
            out.append(f"{who}: frame 'second' needs a second marker")
        return out

    # -- helpers for the subclasses ------------------------------------------------------
    def pair(self, states) -> tuple[MarkerState, MarkerState]:
        """``(P, Q)`` states; absolute sensors measure from the ground."""
        if self.second is None:
            return GROUND_STATE, states[0]
        return states[0], states[1]

    def frame_state(self, states) -> MarkerState:
        if isinstance(self.frame, Marker):
            return states[-1]
        if self.frame == "first":
            return states[0]
        if self.frame == "second":
            return states[1]
        return GROUND_STATE

    def resolve_in_frame(self, states, w: np.ndarray) -> np.ndarray:
        """Components of the inertial vector ``w`` in the sensor frame: ``A^{sI} w``."""
        return self.frame_state(states).R.T @ w

    def measure(self, states) -> np.ndarray:
        raise NotImplementedError

    # -- position-level readings as jets (module docstring) ------------------------------
    #: whether the reading depends on the markers' positions and axes only
    position_level = False

    def measure_jet(self, frames) -> list[J.Jet]:
        """The components of ``measure`` as scalar jets of the frame jets ``frames`` (one
        per resolved marker, in ``resolve()`` order); position-level sensors only."""
        raise NotImplementedError(f"{type(self).__name__} '{self.name}' is not a "
                                  "position-level sensor")

    def pair_jets(self, frames) -> tuple[FrameJet, FrameJet]:
        """``(P, Q)`` frame jets, as :meth:`pair`."""
        if self.second is None:
            return ground_frame_jet(frames[0]), frames[0]
        return frames[0], frames[1]

    def resolve_jet(self, frames, w: J.Jet) -> list[J.Jet]:
        """Components of the inertial vector jet ``w`` in the sensor frame, as
        :meth:`resolve_in_frame`: ``a_k . w`` for the frame's axes ``a_k``."""
        if isinstance(self.frame, Marker):
            S = frames[-1]
        elif self.frame in ("first", "second"):
            S = frames[0 if self.frame == "first" else 1]
        else:
            return [w[k] for k in range(3)]
        return [J.dot(S.axis(k), w) for k in range(3)]
