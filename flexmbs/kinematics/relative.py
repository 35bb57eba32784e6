"""Relative measures of two marker frames P and Q (THEORY §5.5, §5.7: force laws and
joint coordinates based on kinematic relative measurements).

Both take the :class:`~flexmbs.kinematics.frames.FrameJet` of P and Q and return a jet
over the same local vector:

    offset_along(P, Q, k) = a_P,k . (r_Q - r_P)                 (displacement along P's axis k)
    rotation_angle(P, Q)  = atan2(y_P . x_Q, x_P . x_Q)         (angle of Q about z_P)

Joints state equations and coordinates with them; drives, bushings and torsion springs
measure the same quantities.  :func:`offset_along_value` and :func:`rotation_angle_value`
are their values alone from frames ``(p, R)`` (``R``: the axes as columns), by the jets'
own arithmetic (the same bits, without the jets: a recorded joint coordinate).
"""
from __future__ import annotations

import numpy as np

from flexmbs.kinematics import jet as J
from flexmbs.kinematics.frames import FrameJet


def offset_along(P: FrameJet, Q: FrameJet, k: int) -> J.Jet:
    """``a_P,k . (r_Q - r_P)``: relative displacement along P's axis ``k``."""
    return J.dot(P.axis(k), Q.p - P.p)


def rotation_angle(P: FrameJet, Q: FrameJet) -> J.Jet:
    """Angle of Q's x axis about P's z axis: ``atan2(y_P . x_Q, x_P . x_Q)`` in (-pi, pi]."""
    return J.atan2(J.dot(P.y, Q.x), J.dot(P.x, Q.x))


def offset_along_value(P: tuple, Q: tuple, k: int) -> float:
    """The value of :func:`offset_along` of the frames ``P = (p_P, R_P)``, ``Q``."""
    return float(P[1][:, k] @ (Q[0] - P[0]))


def rotation_angle_value(P: tuple, Q: tuple) -> float:
    """The value of :func:`rotation_angle` of the frames ``P = (p_P, R_P)``, ``Q``."""
    RP, RQ = P[1], Q[1]
    return float(np.arctan2(RP[:, 1] @ RQ[:, 0], RP[:, 0] @ RQ[:, 0]))
