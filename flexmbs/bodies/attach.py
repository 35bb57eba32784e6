"""Attaching elements to bodies: the sides of joints, force elements and sensors.

A side is a :class:`~flexmbs.bodies.marker.Marker`, a body (its origin with the body
axes) or ``(body, point)``, a point given in inertial coordinates of the initial
configuration.  With the initial pose ``(r0, A0)`` of the body (identity for the
ground and for point masses), a point ``p`` and inertial axes ``R`` become the marker

    s = A0^T (p - r0),      R_B = A0^T R      (body coordinates, THEORY §5.2).
"""
from __future__ import annotations

import numpy as np

from flexmbs.bodies.marker import Marker
from flexmbs.kinematics.rotation import A_of, e_from_matrix


def body_of(side):
    """The body of a side (a marker's body, or the side itself)."""
    return side.body if isinstance(side, Marker) else side


def initial_pose(body) -> tuple[np.ndarray, np.ndarray]:
    """Initial position and rotation matrix of a body frame (ground: identity)."""
    if getattr(body, "is_ground", False):
        return np.zeros(3), np.eye(3)
    if body.n_coords == 3:
        return np.asarray(body.r0, float), np.eye(3)
    return np.asarray(body.r0, float), A_of(e_from_matrix(body.R0))


def initial_state(marker) -> tuple[np.ndarray, np.ndarray]:
    """Inertial position and axes (columns) of a marker in the initial configuration."""
    r0, A0 = initial_pose(marker.body)
    return r0 + A0 @ marker.s, A0 @ marker.R


def attach(side, owner: str, tag: str, R=None) -> Marker:
    """Marker for one side of an element named ``owner``.

    ``side`` is a :class:`Marker` (returned as is), a body (marker at its origin with
    body axes) or ``(body, point)``: a marker at the inertial ``point`` of the initial
    configuration with inertial axes ``R`` (default: the inertial axes).
    """
    if isinstance(side, Marker):
        return side
    if isinstance(side, tuple) and len(side) == 2:
        body, point = side
        point = np.asarray(point, dtype=float)
        if point.shape != (3,):
            raise ValueError(f"'{owner}': point of side {tag} must have shape (3,), "
                             f"got {point.shape}")
        r0, A0 = initial_pose(body)
        R_in = np.eye(3) if R is None else np.asarray(R, dtype=float)
        return Marker(f"{owner}.{tag}", body, A0.T @ (point - r0), A0.T @ R_in)
    if hasattr(side, "n_coords"):
        if R is None:
            return Marker(f"{owner}.{tag}", side)
        _, A0 = initial_pose(side)
        return Marker(f"{owner}.{tag}", side, np.zeros(3), A0.T @ np.asarray(R, float))
    raise TypeError(f"'{owner}': side {tag} must be a Marker, a body or (body, point), "
                    f"got {type(side).__name__}")


def side_problems(side, who: str, tag: str) -> list[str]:
    """What is wrong with a side (as :func:`attach` would raise it), prefixed with ``who``."""
    try:
        attach(side, who, tag)
    except (TypeError, ValueError) as exc:
        return [f"{who}: {exc}"]
    return []
