"""Markers: named frames fixed to a body (THEORY §5.2).

A marker ``P`` on body ``B`` sits at ``s`` and has axes ``R`` (columns x, y, z), both in
body coordinates.  On a floating-frame elastic body it also carries the 3 x n_q rows
``Phi`` and ``Psi`` of its elastic translation ``Phi q_e`` and small rotation ``Psi q_e``
(THEORY §2.1), so that

    r_P = r + A(e) (s + Phi q_e),     axis_P = A(e) (a + (Psi q_e) x a),   a = R[:, k].
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _frozen(a) -> np.ndarray:
    arr = np.array(a, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Marker:
    """A named frame on a body.

    Parameters
    ----------
    name : marker name, unique on its body
    body : the body it is fixed to (``ground`` for inertial markers)
    s : (3,) position in the body frame [m]
    R : (3, 3) orientation in the body frame (columns = marker x, y, z axes)
    Phi, Psi : (3, n_q) elastic translation and rotation rows (empty on rigid bodies)
    """

    name: str
    body: object
    s: np.ndarray = field(default_factory=lambda: _frozen(np.zeros(3)))
    R: np.ndarray = field(default_factory=lambda: _frozen(np.eye(3)))
    Phi: np.ndarray | None = None
    Psi: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "s", _frozen(self.s))
        object.__setattr__(self, "R", _frozen(self.R))

    @property
    def label(self) -> str:
        return f"{self.body.name}.{self.name}"

    def __repr__(self) -> str:
        return f"Marker('{self.label}')"
