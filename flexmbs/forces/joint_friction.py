"""Coulomb friction in a revolute, prismatic, cylindrical or spherical joint, with the
normal force taken from the joint's reaction (THEORY §3, §5.7, §7 items 28 and 35).

Slip.  The joint's slip velocity ``v = B xd`` [m/s] has one component per friction
direction, from the joint coordinates ``s`` (``B = grad s``) or the relative angular
velocity ``omega`` of Q to P (components on P's axes):

    revolute     v = r thetad                  (pin radius r [m], theta the joint angle)
    prismatic    v = sd                        (s the displacement along z_P)
    cylindrical  v = (sd, r thetad)            (axial and circumferential slip)
    spherical    v = r omega                   (ball radius r)

The directions of one joint share the slip speed ``|v|`` (isotropic friction).

Normal force.  With the multipliers ``lam`` of the joint's rows ``g_j`` (the Newton
iterate's; :class:`~flexmbs.forces.base.LocalContext` ``lam``), the force of the joint on
the body of Q is the translational part ``f`` of ``-G_j^T lam`` (on P's body for a joint
to the ground), and

    N = |f - (f . z_P) z_P| + N_0      (revolute, prismatic, cylindrical: the radial or
                                        transverse reaction)
    N = |f| + N_0                      (spherical)

plus a ``preload`` ``N_0`` [N].  With ``from_reaction = False``, ``N = N_0``: a revolute
then has the constant bearing friction torque ``T = mu r N_0``.  Reaction moments are
not taken into ``N``.

Friction law and sticking.  :mod:`flexmbs.forces.lugre` with states ``z`` (d,) [m]: the
friction force on the slip is ``F = N (sigma0 z + sigma1(|v|) zd) + c_v v`` with
``sigma0 = mu_s / z_s`` (``stiction_deformation`` ``z_s`` [m]) and the bristle damping
``sigma1`` fading above ``|v| = v_d = 5 stiction_velocity``; the generalized force is

    Q_f = -B^T F,

i.e. a torque ``-r F`` about the pin axis of a revolute.  A law without a Stribeck curve
(``v_s = 0``) and ``mu_s > mu_k`` is used with ``v_s = stiction_velocity`` [m/s] (the
bristle model needs a continuous ``mu``).  A stuck joint moves less than ``2 z_s``
and does not drift; the step must resolve the bristles, ``h <= z_s / (2 v_st)``
(docs/friction.md).  One more state ``W`` [J] integrates the friction
work, ``Wd = F . v``; it is reported as ``friction_work`` in the energies.

Newton: the contribution carries ``dQ_f/dlam = dQ_f/dN dN/dlam`` (``dN/dx`` at fixed
``lam``, the turning of the reaction with the joint frame, is left out of ``dQ_f/dx``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.forces.base import ForceContribution
from flexmbs.forces.bristle import BristleParameters
from flexmbs.forces.friction_law import FrictionLaw
from flexmbs.forces.lugre import lugre
from flexmbs.forces.states import StatefulForceElement
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.rotation import tilde

#: friction directions of each joint type: (label, joint coordinate, times pin radius)
DIRECTIONS = {
    "revolute": (("circumferential", "angle", True),),
    "prismatic": (("axial", "displacement", False),),
    "cylindrical": (("axial", "displacement", False), ("circumferential", "angle", True)),
    "spherical": (("x", None, True), ("y", None, True), ("z", None, True)),
}


def angular_velocity_map(P, Q) -> np.ndarray:
    """``B`` (3, n) with ``omega = B xd`` the angular velocity of frame Q relative to P on
    P's axes: ``omega = 1/2 sum_i a_i x ad_i`` for the axes ``a_i`` of a frame (since
    ``ad_i = omega x a_i``), Q's minus P's."""
    B = sum(tilde(a.v) @ a.d for a in (Q.x, Q.y, Q.z)) \
        - sum(tilde(a.v) @ a.d for a in (P.x, P.y, P.z))
    R_P = np.column_stack([P.x.v, P.y.v, P.z.v])
    return 0.5 * R_P.T @ B


@dataclass(frozen=True, eq=False)
class JointFriction(BristleParameters, StatefulForceElement):
    """Friction in ``joint`` (a Revolute, Prismatic, Cylindrical or Spherical) with the
    :class:`~flexmbs.forces.friction_law.FrictionLaw` ``law`` (module docstring).

    ``pin_radius`` [m] (rotational slip of revolute, cylindrical and spherical joints),
    ``preload`` ``N_0`` [N], ``from_reaction`` (normal force from the reaction),
    ``stiction_deformation`` ``z_s`` [m], ``stiction_velocity`` [m/s] (Stribeck velocity
    when the law has none), ``bristle_damping`` ``sigma1`` [s/m].
    """

    joint: object = None
    law: FrictionLaw | None = None
    pin_radius: float | None = None
    preload: float = 0.0
    from_reaction: bool = True
    reads_reaction = True          # ForceTerms hands the joint's multipliers in ctx.lam
    statically_indeterminate = True   # sticking holds any load below the limit
    state_units = "m (z), J (W)"

    @property
    def directions(self) -> tuple:
        return DIRECTIONS.get(getattr(self.joint, "kind", None), ())

    @property
    def state_names(self) -> tuple:
        return (*(f"z_{d[0]}" for d in self.directions), "W")

    @property
    def work_index(self) -> int:
        """Index of the friction work ``W`` among the element's states."""
        return len(self.directions)

    def resolve(self):
        return self.joint.resolve()

    def energy_exchange(self) -> str | None:
        return "joint friction (its work W is reported as friction_work)"

    def problems(self) -> list[str]:
        who = f"JointFriction '{self.name}'"
        kind = getattr(self.joint, "kind", None)
        if kind not in DIRECTIONS:
            return [f"{who}: friction needs a revolute, prismatic, cylindrical or spherical "
                    f"joint, got {kind or type(self.joint).__name__}"]
        if not isinstance(self.law, FrictionLaw):
            return [f"{who}: law must be a FrictionLaw, got {type(self.law).__name__}"]
        out = self.law.problems(who)
        if not out and self.law.mu_k <= 0:
            out.append(f"{who}: friction mu_k must be > 0 [-], got {self.law.mu_k}")
        rotational = any(d[2] for d in self.directions)
        r = self.pin_radius
        if rotational and (r is None or not np.isfinite(r) or r <= 0):
            out.append(f"{who}: a {kind} joint needs pin_radius > 0 [m], got {r}")
        elif not rotational and r is not None:
            out.append(f"{who}: a {kind} joint has no rotational slip, so pin_radius is not "
                       f"used; remove it (got {r} m)")
        if not np.isfinite(self.preload) or self.preload < 0:
            out.append(f"{who}: preload must be finite and >= 0 [N], got {self.preload}")
        out += self.bristle_problems(who)
        if not self.from_reaction and self.preload <= 0:
            out.append(f"{who}: from_reaction = false needs a preload > 0 [N], got "
                       f"{self.preload}")
        return out

    # -- the law: BristleParameters (sigma0, sigma1, effective_law, max_step) -----------
    def slip_map(self, ctx) -> tuple[np.ndarray, np.ndarray | None]:
        """``B`` (d, n) with ``v = B xd`` and, at order 2 for coordinate slips, the
        Hessians ``H`` (d, n, n) of the slip measures (else None)."""
        P, Q = ctx.frames
        dirs = self.directions
        if dirs[0][1] is None:                      # spherical: r omega
            return self.pin_radius * angular_velocity_map(P, Q), None
        coords = dict(zip(self.joint.coordinate_names, self.joint.coordinates(P, Q),
                          strict=True))
        scale = [self.pin_radius if d[2] else 1.0 for d in dirs]
        B = np.array([c * coords[d[1]].d for c, d in zip(scale, dirs, strict=True)])
        if ctx.order < 2:
            return B, None
        return B, np.array([c * coords[d[1]].h for c, d in zip(scale, dirs, strict=True)])

    def normal_force(self, ctx) -> float:
        """``N`` [N] of the module docstring from the joint's multipliers ``ctx.lam``."""
        return self.normal_force_and_gradient(ctx)[0]

    def normal_force_and_gradient(self, ctx) -> tuple[float, np.ndarray | None]:
        """``N`` [N] and ``dN/dlam`` (k,) (None when ``N`` does not depend on ``lam``):
        ``f`` is linear in ``lam`` and ``dN/dlam = u . df/dlam`` with ``u`` the unit
        transverse (spherical: whole) reaction."""
        N0 = float(self.preload)
        lam = getattr(ctx, "lam", None)
        if not self.from_reaction or lam is None or not np.any(lam):
            return N0, None
        P, Q = ctx.frames
        rows = self.joint.equations(P, Q, J.Jet.variable(ctx.n - 1, ctx.t, ctx.n, 1))
        o_P, o_Q = ctx.offsets[0], ctx.offsets[1]
        D = np.array([g.d for g in rows])
        # the force on Q's body, f = df_dlam @ lam
        df_dlam = -D[:, o_Q:o_Q + 3].T if o_Q is not None else D[:, o_P:o_P + 3].T
        f = df_dlam @ np.asarray(lam)
        if self.joint.kind != "spherical":
            a = P.z.v
            f = f - (f @ a) * a
        size = float(np.linalg.norm(f))
        if size == 0.0:
            return N0, None
        return size + N0, (f / size) @ df_dlam

    def contribution(self, ctx) -> ForceContribution:
        n, S = ctx.n, ctx.states
        d = len(self.directions)
        zs, wi = slice(S.start, S.start + d), S.start + d
        B, H = self.slip_map(ctx)
        xd = ctx.xd
        N, N_lam = self.normal_force_and_gradient(ctx)
        st = lugre(self.effective_law, B @ xd, ctx.x[zs], N,
                   self.sigma0, self.sigma1, self.smoothing, self.damping_velocity)
        Q = -(B.T @ st.F)
        Q[zs] += st.f
        Q[wi] += st.P
        if ctx.order < 2:
            return ForceContribution(Q, None, None)
        dQ_dlam = None
        if N_lam is not None:                       # dQ/dN dN/dlam
            dQ_dN = -(B.T @ st.F_N)
            dQ_dN[wi] += st.F_N @ (B @ xd)
            dQ_dlam = np.outer(dQ_dN, N_lam)
        dQ_dx, dQ_dxd = np.zeros((n, n)), np.zeros((n, n))
        dQ_dxd -= B.T @ st.F_v @ B
        dQ_dx[:, zs] -= B.T @ st.F_z
        dQ_dx[zs, zs] += st.f_z
        dQ_dx[wi, zs] += st.P_z
        dQ_dxd[zs, :] += st.f_v @ B
        dQ_dxd[wi, :] += st.P_v @ B
        if H is not None:                           # dv/dx = H xd
            Hxd = H @ xd
            dQ_dx -= B.T @ st.F_v @ Hxd + np.einsum("k,kij->ij", st.F, H)
            dQ_dx[zs, :] += st.f_v @ Hxd
            dQ_dx[wi, :] += st.P_v @ Hxd
        dQ_dxd[:, -1] = 0.0                         # time is not a velocity
        return ForceContribution(Q, dQ_dx, dQ_dxd, dQ_dlam)
