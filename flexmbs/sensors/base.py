"""Sensor machinery (THEORY §5.8).

A sensor measures from marker ``P`` (body i) to marker ``Q`` (body j); with only
``first`` given it measures ``Q = first`` absolutely, i.e. from the inertial origin /
frame.  Results are resolved in ``frame``: ``"inertial"``, ``"first"`` (P's axes),
``"second"`` (Q's axes) or any :class:`Marker` (appended to the resolved markers).

The assembler calls ``resolve()`` (a tuple of markers) and hands ``measure`` one
:class:`MarkerState` per resolved marker, in the same order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach, side_problems
from flexmbs.bodies.marker import Marker


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
