"""Spherical joint (VDI D3, u = 3): ``r_Q - r_P = 0``."""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.constraints.base import Joint


@dataclass(frozen=True, eq=False)
class Spherical(Joint):
    kind = "spherical"
    labels = ("x", "y", "z")
    label_rows = True  # equations: the rows named by the labels (constraints.rows)
