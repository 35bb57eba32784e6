"""Fixed joint / rigid clamp (u = 6, f = 0).

``r_Q - r_P = 0`` and three orientation conditions that lock the relative rotation,

    z_P . x_Q = 0,   z_P . y_Q = 0,   x_P . y_Q = 0,

which hold (near the assembled state) only for ``A^{PQ} = E``.  No joint coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint


@dataclass(frozen=True, eq=False)
class Fixed(Joint):
    kind = "fixed"
    labels = ("x", "y", "z", "z_P.x_Q", "z_P.y_Q", "x_P.y_Q")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
