"""What a system reports besides its DAE: marker kinematics, joint reactions, joint
coordinates and energies (THEORY §1.5, §5.9).

Plain functions of a :class:`~flexmbs.system.layout.Layout` (and the constraint rows or
force terms they need) at a state; the :class:`~flexmbs.system.assembly.AssembledSystem`
offers them as methods.
"""
from __future__ import annotations

import numpy as np

from flexmbs.kinematics import frames as F
from flexmbs.kinematics.rotation import G_of
from flexmbs.system.layout import frame_jets


def marker_kinematics(layout, marker, q, qd, qdd):
    """Inertial position, axes, velocity, angular velocity, acceleration, angular
    acceleration of a marker: ``v = J_T qd``, ``a = J_T qdd + Jd_T qd`` (via jets)."""
    from flexmbs.sensors.base import MarkerState
    body = marker.body
    if getattr(body, "is_ground", False):
        z = np.zeros(3)
        return MarkerState(np.array(marker.s), np.array(marker.R), z, z, z, z)
    s = layout.body_slices[body.name]
    qb, qdb, qddb = q[s], qd[s], qdd[s]
    nb = body.n_coords
    fj = F.frame_jet(marker, qb, nb + 1, 0, 2)
    xd = np.append(qdb, 0.0)
    xdd = np.append(qddb, 0.0)
    p = fj.p.v
    v = fj.p.d @ xd
    a = fj.p.d @ xdd + np.einsum("kij,i,j->k", fj.p.h, xd, xd)
    R = np.column_stack([fj.x.v, fj.y.v, fj.z.v])
    if nb >= 7:
        e, ed, edd = qb[3:7], qdb[3:7], qddb[3:7]
        w = 2.0 * G_of(e) @ ed
        al = 2.0 * G_of(e) @ edd        # G(ed) ed = 0
        Psi = getattr(marker, "Psi", None)
        if nb > 7 and Psi is not None:
            # flexible marker: omega_P = omega + A Psi qd_e (J_R = [0, 2G, A Psi]),
            # alpha_P = alpha + A Psi qdd_e + omega x (A Psi qd_e)   (A' = omega~ A)
            A = F.A_of(e)
            wv = A @ (Psi @ qdb[7:])
            al = al + A @ (Psi @ qddb[7:]) + np.cross(w, wv)
            w = w + wv
    else:
        w = al = np.zeros(3)
    return MarkerState(p, R, v, w, a, al)


def reactions(rows, q, lam, t):
    """Joint reactions ``{name: (force, torque)}`` of the
    :class:`~flexmbs.system.constraint_rows.ConstraintRows` ``rows``: the wrench exerted
    by the joint on the body of its second marker Q, about Q's origin, in Q's (joint)
    frame [N, N m].  From the generalized constraint force ``-G_j^T lam_j`` of that body
    (rigid: force = translational rows, torque about O = 1/2 G(e) (rotational rows))."""
    layout = rows.layout
    out = {}
    lam_all = np.zeros(layout.n_rows_all)
    lam_all[rows.active] = lam
    start = layout.row_start
    for bi, blk in enumerate(layout.blocks):
        if blk.kind == "normalization":
            continue
        lam_b = lam_all[start[bi]:start[bi + 1]]   # 0 if inactive
        _, D, _ = rows.block_rows(bi, q, t, 1, {})
        gen = -(lam_b @ D[:, :-1])
        P, Q = blk.markers[:2]                     # a fed drive: then its sensor's
        sign, mk, off = 1.0, Q, blk.offsets[1]
        if off is None:
            sign, mk, off = -1.0, P, blk.offsets[0]
        if off is None:
            out[blk.name] = (np.zeros(3), np.zeros(3))
            continue
        body = mk.body
        qb = q[blk.idx[off:off + body.n_coords]]
        g_b = gen[off:off + body.n_coords]
        f = g_b[0:3].copy()
        p_Q = F.position(Q, q[layout.body_slices[Q.body.name]]) if blk.offsets[1] is not None \
            else np.array(Q.s)
        if body.n_coords >= 7:
            m_O = 0.5 * G_of(qb[3:7]) @ g_b[3:7]
            m_Q = m_O - np.cross(p_Q - qb[0:3], f)
        else:
            m_Q = -np.cross(p_Q - qb[0:3], f)
        RQ = F.orientation(Q, None if blk.offsets[1] is None
                           else q[layout.body_slices[Q.body.name]])
        out[blk.name] = (sign * RQ.T @ f, sign * RQ.T @ m_Q)
    return out


def joint_coordinates(layout, joints, q):
    """``{joint name: [coordinates]}`` (angles in rad, displacements in m) of ``joints``."""
    out = {}
    for j in joints:
        if j.coordinate_names:
            markers = layout.joint_markers[j.name]
            idx, offs = layout.local(markers)
            P, Q = frame_jets(markers, offs, q, idx, len(idx) + 1, 1)
            out[j.name] = np.array([float(c.v) for c in j.coordinates(P, Q)])
    return out


def energy(layout, forces, q, qd, t=0.0, rigid=None, flexible=None):
    """Energies [J] at ``(q, qd, t)`` (``forces``: the system's
    :class:`~flexmbs.system.force_terms.ForceTerms`):

        kinetic            T   = sum_b T_b(q_b, qd_b),
        potential_gravity  V_g = sum_b -m_b g . r_S,b           (r_S,b: centre of mass),
        potential_elastic  V_e = sum_b V_e,b(q_e,b) + sum_f V_f  (strain energy of the
                                 flexible bodies, potentials of the force elements),
        total              E   = T + V_g + V_e,

    and, for a model with joint friction or bristle contact friction, ``friction_work``
    ``W_f = sum W`` (the work done against friction, integrated in each friction
    element's state ``W``, :mod:`flexmbs.forces.joint_friction`,
    :mod:`flexmbs.forces.contact`; ``E + W_f`` is then constant when friction is the only
    exchange).

    ``dE/dt`` is the power of what has no potential (dampers, structural damping,
    drives, time-varying or follower loads, friction; :mod:`flexmbs.post.energy`), so
    ``E`` is constant for a model without them.

    ``rigid``: a :class:`~flexmbs.bodies.rigid_set.RigidSet` whose bodies' ``T`` and
    ``V_g`` are summed at once, ``flexible``: a :class:`~flexmbs.bodies.flexible_set.
    FlexibleSet` whose bodies' ``T``, ``V_g`` and strain energies are each one call (the
    others body by body)."""
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    T = V = W = 0.0
    if rigid is not None:
        T, V = rigid.energies(q, qd, layout.gravity)
    if flexible is not None:
        T_f, V_f, W = flexible.energies(q, qd, layout.gravity)
        T += T_f
        V += V_f
    for b in layout.bodies:
        if (rigid is not None and b in rigid) or (flexible is not None and b in flexible):
            continue
        s = layout.body_slices[b.name]
        T += b.kinetic_energy(q[s], qd[s])
        V += b.potential_energy(q[s], layout.gravity)
        strain = getattr(b, "elastic_energy", None)
        if strain is not None:
            W += float(strain(q[s]))
    W += sum(forces.potentials(q, t).values())
    out = {"kinetic": T, "potential_gravity": V, "potential_elastic": W, "total": T + V + W}
    work = friction_work(layout, q)
    if work is not None:
        out["friction_work"] = work
    return out


def friction_work(layout, q) -> float | None:
    """``W_f`` [J]: the sum of the friction-work states of the force elements that have
    one (``work_index`` among their states), or None when none has."""
    parts = [float(q[layout.state_slices[f.name].start + f.work_index])
             for f in layout.stateful if getattr(f, "work_index", None) is not None]
    return sum(parts) if parts else None
