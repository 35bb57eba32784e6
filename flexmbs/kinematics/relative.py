"""Relative measures of two marker frames P and Q (THEORY §5.5, §5.7: force laws and
joint coordinates based on kinematic relative measurements).

Both take the :class:`~flexmbs.kinematics.frames.FrameJet` of P and Q and return a jet
over the same local vector:

    offset_along(P, Q, k) = a_P,k . (r_Q - r_P)                 (displacement along P's axis k)
    rotation_angle(P, Q)  = atan2(y_P . x_Q, x_P . x_Q)         (angle of Q about z_P)

Joints state equations and coordinates with them; drives, bushings and torsion springs
measure the same quantities.
"""
from __future__ import annotations

from flexmbs.kinematics import jet as J
from flexmbs.kinematics.frames import FrameJet


def offset_along(P: FrameJet, Q: FrameJet, k: int) -> J.Jet:
    """``a_P,k . (r_Q - r_P)``: relative displacement along P's axis ``k``."""
    return J.dot(P.axis(k), Q.p - P.p)


def rotation_angle(P: FrameJet, Q: FrameJet) -> J.Jet:
    """Angle of Q's x axis about P's z axis: ``atan2(y_P . x_Q, x_P . x_Q)`` in (-pi, pi]."""
    return J.atan2(J.dot(P.y, Q.x), J.dot(P.x, Q.x))
