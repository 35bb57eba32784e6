"""The ground: the inertial frame, body 0 (THEORY §5.2).  It has no coordinates."""
from __future__ import annotations

import numpy as np

from flexmbs.bodies.marker import Marker


class Ground:
    """The inertial frame.  ``ground.marker(name, at, R)`` makes an inertial marker."""

    name = "ground"
    n_coords = 0
    is_ground = True

    def marker(self, name: str, at=(0.0, 0.0, 0.0), R=None) -> Marker:
        return Marker(name, self, np.asarray(at, float), np.eye(3) if R is None else R)

    def __repr__(self) -> str:
        return "ground"


ground = Ground()
