"""Gear pair (spur, internal or bevel): the turns of two wheels relative to their common
carrier are coupled by the tooth counts.

Sides: the first wheel (marker ``P`` at its centre, ``z_P`` its axis: ``at``, ``axis``)
and the second (``Q`` at its centre, ``z_Q`` its axis: ``second_at``, ``second_axis``).
Both wheels turn on joints (revolutes) to one carrier (a body or the ground), which
holds the centre line ``d = r_Q - r_P`` fixed in the carrier.  The angle of ``d`` about
each wheel's axis, seen from the wheel,

    beta_P = atan2(y_P . d, x_P . d),    beta_Q = atan2(y_Q . d, x_Q . d),

decreases by the wheel's turn relative to the carrier (``d - (d.z) z`` is fixed in the
carrier), so ``theta_P - theta_P0 = -(beta_P - beta_P0)`` (the same for Q), whatever the
carrier does.  The gear law

    theta_Q = s (z_P / z_Q) theta_P,    s = -1 external (spur or bevel), +1 internal,

for tooth counts ``z_P``, ``z_Q`` (the ratio of the pitch radii) is imposed as

    g = sin(phi) / z_Q,    phi = z_Q (beta_Q - beta_Q0) - s z_P (beta_P - beta_P0),

with ``beta_0`` those of the initial configuration.  The integer tooth counts make
``phi`` independent of the branch of atan2, so the wheels may turn any number of turns;
``g`` vanishes with ``phi`` and has the gradient ``d theta_Q - s (z_P / z_Q) d theta_P``
there.  Axes: for a bevel pair with both axes pointing away from the cone apex (or
both towards it) the pair is external (s = -1), as a spur pair with parallel axes.

Reaction split (reactions ``-G^T lam``): the multiplier ``lam`` [N m] is the torque of
the mesh on the second wheel about ``z_Q``, that on the first ``-s (z_P / z_Q) lam``
about ``z_P`` (:func:`mesh_forces`); with the pitch radii ``r = m z / 2`` (module ``m``)
the tangential tooth force is ``F_t = lam / r_Q`` and the separating force
``|F_t| tan(alpha)`` for the pressure angle ``alpha``; on a bevel pair (shaft angle
``Sigma`` between ``z_P`` and ``z_Q``, pitch cone angles ``delta_P + delta_Q = Sigma``,
``tan delta_P = sin Sigma / (z_Q / z_P + cos Sigma)``) it splits into the radial force
``F_r = |F_t| tan(alpha) cos(delta_Q)`` and the axial force
``F_a = |F_t| tan(alpha) sin(delta_Q)`` on the second wheel (a spur pair: ``delta = 0``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.constraints.two_point import TwoPointJoint
from flexmbs.kinematics import jet as J


def centre_line_angle(F, d) -> J.Jet:
    """``atan2(y . d, x . d)``: the angle of ``d`` about the frame's z axis [rad]."""
    return J.atan2(J.dot(F.y, d), J.dot(F.x, d))


@dataclass(frozen=True)
class MeshForces:
    """Torques [N m] on the wheels about their axes and tooth forces [N] at the mesh
    (radial and axial: on the second wheel)."""

    torque_first: float
    torque_second: float
    tangential: float
    radial: float
    axial: float


@dataclass(frozen=True, eq=False)
class GearPair(TwoPointJoint):
    """``teeth = (z_P, z_Q)``; ``internal``: ring gear; ``module`` [m] and
    ``pressure_angle`` [rad] for the tooth forces (module docstring)."""

    teeth: tuple | None = None
    internal: bool = False
    module: float | None = None
    pressure_angle: float = float(np.deg2rad(20.0))
    kind = "gear"
    labels = ("sin(phi)/z_Q",)

    @property
    def sign(self) -> float:
        return 1.0 if self.internal else -1.0

    @property
    def ratio(self) -> float:
        """``theta_Q / theta_P`` relative to the carrier: ``s z_P / z_Q``."""
        return self.sign * self.teeth[0] / self.teeth[1]

    def problems(self) -> list[str]:
        out = super().problems()
        z = self.teeth
        if (not isinstance(z, (tuple, list)) or len(z) != 2
                or not all(isinstance(k, (int, np.integer)) and k > 0 for k in z)):
            out.append(f"{self.title}: teeth must be two positive integers (z_P, z_Q), "
                       f"got {z!r}")
        if self.module is not None and not (np.isfinite(self.module) and self.module > 0):
            out.append(f"{self.title}: module must be a positive length [m], got {self.module}")
        if not 0.0 <= self.pressure_angle < 0.5 * np.pi:
            out.append(f"{self.title}: pressure_angle must be in [0, pi/2) [rad], got "
                       f"{self.pressure_angle}")
        if not out:
            (p, A), (pq, B) = self.initial_frames()
            d = pq - p
            for tag, ax in (("first", A[:, 2]), ("second", B[:, 2])):
                if np.linalg.norm(d - (d @ ax) * ax) < 1e-9 * max(1.0, np.linalg.norm(d)):
                    out.append(f"{self.title}: the centre line from the first to the second "
                               f"wheel centre is along the {tag} wheel's axis; place the "
                               "markers at the wheel centres (not at a common point)")
                    break
        return out

    def _beta0(self) -> tuple[float, float]:
        """``(beta_P0, beta_Q0)`` [rad] of the initial configuration."""
        (p, A), (pq, B) = self.initial_frames()
        d = pq - p
        return (float(np.arctan2(A[:, 1] @ d, A[:, 0] @ d)),
                float(np.arctan2(B[:, 1] @ d, B[:, 0] @ d)))

    def equations(self, P, Q, t):
        zP, zQ = (float(k) for k in self.teeth)
        bP0, bQ0 = self._beta0()
        d = Q.p - P.p
        phi = (centre_line_angle(Q, d) - bQ0) * zQ \
            - (centre_line_angle(P, d) - bP0) * (self.sign * zP)
        f = float(phi.v)
        return [J.apply(phi, np.sin(f) / zQ, np.cos(f) / zQ, -np.sin(f) / zQ)]


def cone_angle_second(gear: GearPair) -> float:
    """Pitch cone angle ``delta_Q`` [rad] of the second wheel (module docstring; 0 for
    parallel axes and internal pairs)."""
    if gear.internal:
        return 0.0
    (_, A), (_, B) = gear.initial_frames()
    cos_s = float(np.clip(A[:, 2] @ B[:, 2], -1.0, 1.0))
    sin_s = float(np.sqrt(1.0 - cos_s * cos_s))
    zP, zQ = gear.teeth
    delta_P = float(np.arctan2(sin_s, zQ / zP + cos_s))
    return float(np.arccos(cos_s)) - delta_P


def mesh_forces(gear: GearPair, lam: float) -> MeshForces:
    """Torques and tooth forces of ``gear`` for its multiplier ``lam`` [N m] (module
    docstring); the tooth forces need ``gear.module`` (else NaN)."""
    lam = float(lam)
    T_first = -gear.ratio * lam
    Ft = Fr = Fa = float("nan")
    if gear.module is not None:
        Ft = lam / (0.5 * gear.module * gear.teeth[1])
        separating = abs(Ft) * float(np.tan(gear.pressure_angle))
        delta = cone_angle_second(gear)
        Fr, Fa = separating * np.cos(delta), separating * np.sin(delta)
    return MeshForces(T_first, lam, Ft, float(Fr), float(Fa))
