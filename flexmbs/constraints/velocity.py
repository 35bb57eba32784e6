"""Velocity (nonholonomic) constraints ``A(q, t) qd + a(q, t) = 0`` (THEORY §4).

A velocity constraint ``c`` reads the motion of its markers and gives ``k`` scalar rows

    c(q, qd, t) = A(q, t) qd + a(q, t) = 0,

linear in the velocities ``qd`` but in general not the time derivative of any position
constraint (a rolling wheel, a knife edge; :mod:`flexmbs.analysis.integrability` decides).
Each constraint only states ``c`` on the states of its markers
(:class:`MarkerMotion`: position, axes, velocity and angular velocity, inertial
components); the system (:mod:`flexmbs.system.velocity_rows`) takes

    A = dc/dqd,   a = c(q, 0, t),   B = d(A qd + a)/dq,   c_t = dc/dt

from it.  The multipliers ``mu`` of the rows enter the equations of motion as
``M qdd - f + G^T lam + A^T mu = 0``; the constraint forces ``-A^T mu`` do the power
``-mu^T A qd = mu^T a``, zero for ideal rolling (``a = 0``).

The marker algebra below is written so that it also runs on complex coordinates (the
complex-step derivative ``B`` of :mod:`flexmbs.system.velocity_rows` is then exact to
round-off): no ``abs``, no ``np.linalg.norm``.  Markers on rigid bodies (``[r, e]``),
point masses (``r``), the ground and floating-frame elastic bodies (``[r, e, q_e]``, an
interface marker with its mode rows ``Phi``, ``Psi``, THEORY §2.1) are supported.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from flexmbs.bodies.attach import body_of, initial_state
from flexmbs.bodies.marker import Marker


@dataclass(frozen=True)
class MarkerMotion:
    """A marker's origin ``p`` [m], axes ``R`` (columns, inertial), origin velocity ``v``
    [m/s] and angular velocity ``omega`` [rad/s] (inertial components)."""

    p: np.ndarray
    R: np.ndarray
    v: np.ndarray
    omega: np.ndarray

    def point_velocity(self, x: np.ndarray) -> np.ndarray:
        """Velocity of the body's material point now at ``x``: ``v + omega x (x - p)``."""
        return self.v + cross(self.omega, x - self.p)


def cross(a, b) -> np.ndarray:
    """``a x b`` of two 3-vectors (complex-safe; cheaper than ``np.cross`` for one pair)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def rotation(e) -> np.ndarray:
    """``A(e)`` of THEORY §0 (body -> inertial), complex-safe."""
    e0, x, y, z = e
    return np.array([
        [e0*e0 + x*x - y*y - z*z, 2*(x*y - e0*z), 2*(x*z + e0*y)],
        [2*(x*y + e0*z), e0*e0 - x*x + y*y - z*z, 2*(y*z - e0*x)],
        [2*(x*z - e0*y), 2*(y*z + e0*x), e0*e0 - x*x - y*y + z*z],
    ])


def angular_velocity(e, ed) -> np.ndarray:
    """``omega = 2 G(e) ed`` (inertial components), complex-safe."""
    e0, x, y, z = e
    G = np.array([[-x, e0, -z, y], [-y, z, e0, -x], [-z, -y, x, e0]])
    return 2.0 * (G @ ed)


@lru_cache(maxsize=256)
def fixed_motion(marker: Marker) -> MarkerMotion:
    """:class:`MarkerMotion` of a ground marker (made once per marker; read-only)."""
    p, R = initial_state(marker)
    arrays = (p, R, np.zeros(3), np.zeros(3))
    for a in arrays:
        a.setflags(write=False)
    return MarkerMotion(*arrays)


def marker_motion(marker: Marker, qb, qdb) -> MarkerMotion:
    """:class:`MarkerMotion` of ``marker`` from its body's coordinates ``qb`` and
    velocities ``qdb`` (None for the ground).  With ``u = s + Phi q_e`` and the small
    rotation ``theta = Psi q_e`` of an elastic body's marker (zero on rigid bodies),

        p = r + A(e) u,              R_P = A(e) (R + theta x R),
        v = rd + omega x (A(e) u) + A(e) Phi qd_e,
        omega_P = omega + A(e) Psi qd_e,     omega = 2 G(e) ed."""
    if qb is None:
        return fixed_motion(marker)
    r, rd = qb[:3], qdb[:3]
    if len(qb) == 3:                                      # point mass: no rotation
        return MarkerMotion(r + marker.s, np.asarray(marker.R), rd, np.zeros(3))
    A = rotation(qb[3:7])
    omega = angular_velocity(qb[3:7], qdb[3:7])
    if len(qb) == 7 or marker.Phi is None:
        arm = A @ marker.s
        return MarkerMotion(r + arm, A @ marker.R, rd + cross(omega, arm), omega)
    q_e, qd_e = qb[7:], qdb[7:]
    arm = A @ (marker.s + marker.Phi @ q_e)
    theta = marker.Psi @ q_e
    R_P = A @ (marker.R + np.stack([cross(theta, marker.R[:, k]) for k in range(3)], axis=1))
    return MarkerMotion(r + arm, R_P, rd + cross(omega, arm) + A @ (marker.Phi @ qd_e),
                        omega + A @ (marker.Psi @ qd_e))


def as_marker(side, who: str, role: str) -> Marker:
    """A side given as a marker is kept; a body gets a marker at its frame origin."""
    if isinstance(side, Marker):
        return side
    if hasattr(side, "n_coords") or getattr(side, "is_ground", False):
        return Marker(f"{who}.{role}", side)
    raise TypeError(f"{who}: '{role}' must be a body or a marker, got {side!r}")


@dataclass(frozen=True, eq=False)
class VelocityConstraint:
    """Base of the velocity constraints: a ``name`` and its rows' ``labels``.

    A subclass gives :meth:`markers` and :meth:`rates` (``c`` from the markers'
    :class:`MarkerMotion` and the time), and may give :meth:`holonomic_joints`, position
    constraints that come with it (the normal contact of a rolling disc), added to the
    model's joints with it."""

    name: str
    kind = None          # the case-file ``type`` of a subclass
    labels = ()          # one label per scalar row

    @property
    def title(self) -> str:
        return f"{type(self).__name__} '{self.name}'"

    def markers(self) -> tuple:
        """The markers whose motion ``c`` reads (bodies given as sides get one)."""
        raise NotImplementedError

    def resolve(self) -> tuple:
        return self.markers()

    def rates(self, motions: list[MarkerMotion], t: float) -> np.ndarray:
        """``c = A qd + a`` (k,) from the markers' motions (same order as :meth:`markers`)."""
        raise NotImplementedError

    #: whether :meth:`local_rates` runs on complex coordinates (complex-step derivatives)
    complex_safe = True

    def local_rates(self, x, xd, t, slices, markers) -> np.ndarray:
        """``c`` on the local vector ``x`` (the coordinates of the markers' bodies) and its
        velocities ``xd``; ``markers`` are those of :meth:`markers` and ``slices[k]`` is
        marker ``k``'s body in ``x`` (None: ground)."""
        motions = [marker_motion(mk, None if s is None else x[s], None if s is None else xd[s])
                   for mk, s in zip(markers, slices)]
        return self.rates(motions, t)

    def holonomic_joints(self) -> tuple:
        """Position constraints that belong to this one (added to the model with it)."""
        return ()

    def reaction_point(self, motions: list[MarkerMotion]) -> np.ndarray | None:
        """Where the reaction force acts [m] (inertial), or None (no force: a generalized
        velocity relation such as a ratio coupling)."""
        return None

    def local_reaction_point(self, x, xd, slices, markers):
        """:meth:`reaction_point` on the local vector (as :meth:`local_rates`)."""
        motions = [marker_motion(mk, None if s is None else x[s], None if s is None else xd[s])
                   for mk, s in zip(markers, slices)]
        return self.reaction_point(motions)

    def problems(self) -> list[str]:
        out = []
        try:
            mks = self.markers()
        except (TypeError, ValueError) as exc:
            return [str(exc)]
        for mk in mks:
            body = body_of(mk)
            if not (getattr(body, "is_ground", False) or hasattr(body, "n_coords")):
                out.append(f"{self.title}: {body!r} is not a body")
        return out
