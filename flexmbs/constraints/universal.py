"""Universal (Cardan) joint (VDI D2, u = 4).

The cross carries the axis ``x_P`` (fixed in body i) and the axis ``y_Q`` (fixed in
body j); they stay perpendicular:

    r_Q - r_P = 0,   x_P . y_Q = 0.

Joint coordinates, with ``A^{PQ} = R_x(alpha) R_y(beta)`` (zero when the frames agree):

    alpha = atan2(z_P . y_Q, y_P . y_Q)   (cross about x_P),
    beta  = atan2(x_P . z_Q, x_P . x_Q)   (body j about y_Q).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.constraints.base import Joint
from flexmbs.kinematics.jet import atan2, dot


@dataclass(frozen=True, eq=False)
class Universal(Joint):
    kind = "universal"
    labels = ("x", "y", "z", "x_P.y_Q")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
    coordinate_names = ("alpha", "beta")

    def coordinates(self, P, Q):
        return [atan2(dot(P.z, Q.y), dot(P.y, Q.y)), atan2(dot(P.x, Q.z), dot(P.x, Q.x))]

    def coordinate_values(self, P, Q):
        RP, RQ = P[1], Q[1]         # the arithmetic of coordinates' jets, values alone
        return [float(np.arctan2(RP[:, 2] @ RQ[:, 1], RP[:, 1] @ RQ[:, 1])),
                float(np.arctan2(RP[:, 0] @ RQ[:, 2], RP[:, 0] @ RQ[:, 0]))]
