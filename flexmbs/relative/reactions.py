"""Joint reactions of a relative run from the backward sweep (THEORY §3.9), in the
convention of the descriptor form (:func:`flexmbs.system.outputs.reactions`): the wrench
``(force, torque)`` the joint exerts on the body of its second marker Q, about Q's
origin, in Q's axes [N, N m].

* Tree joint ``i``: ``f^P_i = [M; F]`` on body ``i`` about ``O_i`` from the sweep of
  :func:`~flexmbs.relative.recursive.joint_wrenches`, with the cut joints' forces on the
  bodies as applied wrenches.  When body ``i`` holds the joint's second marker,
  ``force = R_Q^T F``, ``torque = R_Q^T (M - (r_Q - r_i) x F)``; when it holds the first
  (the tree took the joint the other way round), the second body gets the opposite
  wrench, ``force = -R_Q^T F``, ``torque = -R_Q^T (M + (r_i - r_Q) x F)``.
* Cut joint, drive: the descriptor form's reaction of its rows with the relative
  multipliers (the same rows ``c``, so the same ``lam``).  Their generalized forces on
  the bodies, ``-C_b^T lam``, and the force elements' enter the sweep as applied
  wrenches (:meth:`~flexmbs.relative.dae.RelativeDAE.applied_wrenches`).
* A tree with flexible bodies, recursive formalism: the first six rows of ``f^P_i`` of
  :func:`flexmbs.relative.flexible_recursive.joint_wrenches` (the cut joints' forces as
  applied loads: the bodies' residuals with their multipliers), carried as above to Q's
  origin and axes as the descriptor form places them on the deformed body
  (:mod:`flexmbs.kinematics.frames`).
* A tree with flexible bodies, non-recursive formalism: the descriptor form's reactions
  with the descriptor multipliers that balance the bodies' residuals, the least-squares
  solution of ``G_b^T lam_b = -r_b(q_b, qd_b, qdd_b)`` (exact on the motion: the
  projected equations leave ``r_b`` in the range of ``G_b^T``).
"""
from __future__ import annotations

import numpy as np

from flexmbs.bodies.attach import body_of
from flexmbs.kinematics import frames
from flexmbs.relative import flexible_recursive
from flexmbs.relative.kinematics import forward
from flexmbs.relative.recursive import joint_wrenches


def reactions(dae, beta, betad, betadd, lam, t: float) -> dict:
    """``{joint name: (force, torque)}`` of every joint of the model (module doc)."""
    tree = dae.tree
    n_e = len(tree.e_rows)
    beta, betad = np.asarray(beta, float), np.asarray(betad, float)
    if tree.flexible and dae.formulation != "recursive":
        return _descriptor_reactions(dae, beta, betad, np.asarray(betadd, float), t)
    if tree.flexible:
        return _flexible_sweep_reactions(dae, beta, betad, np.asarray(betadd, float),
                                         np.asarray(lam, float), t)
    q_b = dae.body_coordinates(beta)[0]
    kin = forward(tree, beta, betad)
    fP = joint_wrenches(tree, kin, np.asarray(betadd, float), dae.gravity,
                        dae.applied_wrenches(beta, betad, t, lam[n_e:]))

    def pose(i, tj, Q, on_second):
        A_Q = kin.A[i] if on_second else (
            np.eye(3) if tj.parent < 0 else kin.A[tj.parent])
        r_body = kin.r[i] if on_second else (
            np.zeros(3) if tj.parent < 0 else kin.r[tj.parent])
        return A_Q @ Q.R, r_body + A_Q @ Q.s

    out = _tree_reactions(tree, fP, kin.r, pose)
    out.update(_cut_reactions(dae, q_b, lam[n_e:], t))
    return out


def _tree_reactions(tree, fP, r, pose) -> dict:
    """``{tree joint: (force, torque)}`` from the backward sweep's wrenches ``fP`` about
    the bodies' origins ``r``; ``pose(i, tj, Q, on_second)`` gives the axes and origin of
    the joint's marker ``Q`` on the side it acts on."""
    out = {}
    for i, tj in enumerate(tree.joints):
        if tj.joint is None:
            continue
        on_second = body_of(tj.joint.second) is tree.bodies[i]
        Q = tj.Q if on_second else tj.P
        out[tj.name] = _on_second(fP[i], r[i], *pose(i, tj, Q, on_second), on_second)
    return out


def _on_second(f_P, r_i, R_Q, r_Q, on_second: bool) -> tuple:
    """``(force, torque)`` of the wrench ``f_P = [M; F]`` the joint exerts on body ``i``
    (about ``O_i = r_i``) in the descriptor convention (module doc), Q's axes ``R_Q``
    and origin ``r_Q``."""
    M, F = f_P[:3], f_P[3:6]
    M_Q = M - np.cross(r_Q - r_i, F)
    sign = 1.0 if on_second else -1.0
    return sign * R_Q.T @ F, sign * R_Q.T @ M_Q


def _cut_reactions(dae, q_b, lam_cut, t) -> dict:
    """The cut joints' and drives' reactions with the relative multipliers."""
    if not len(dae.cut_rows):
        return {}
    lam_b = np.zeros(dae.absolute.n_lam)
    lam_b[dae.cut_rows] = lam_cut
    rows = dae.absolute.reactions(q_b, lam_b, t)
    return {x.name: rows[x.name] for x in (*dae.tree.cut, *dae.model.drives)
            if x.name in rows}


def _flexible_sweep_reactions(dae, beta, betad, betadd, lam, t: float) -> dict:
    """The flexible tree's reactions by the recursive backward sweep (module doc)."""
    tree, asm = dae.tree, dae.absolute
    n_e = len(tree.e_rows)
    mu_b = np.zeros(asm.n_lam)
    mu_b[dae.cut_rows] = lam[n_e:]
    st = dae.flexible_state(beta, betad)
    fP = flexible_recursive.joint_wrenches(
        tree, st, betadd, lambda q, qd, qdd: asm.residual(q, qd, qdd, mu_b, t),
        asm.body_slices, asm.n_q)
    q_b = flexible_recursive.body_state(tree, st, asm.body_slices, asm.n_q)[0]

    def pose(i, tj, Q, on_second):
        q_Q = None if getattr(Q.body, "is_ground", False) else q_b[asm.body_slices[Q.body.name]]
        return frames.orientation(Q, q_Q), frames.position(Q, q_Q)

    out = _tree_reactions(tree, fP, st.loc.r, pose)
    out.update(_cut_reactions(dae, q_b, lam[n_e:], t))
    return out


def _descriptor_reactions(dae, beta, betad, betadd, t: float) -> dict:
    """The flexible tree's reactions through the descriptor multipliers (module doc)."""
    q_b, qd_b, T, Tdbd = dae.absolute_coordinates(beta, betad)
    r_b = dae.body_residual(q_b, qd_b, T @ betadd + Tdbd, t)
    G_b = dae.absolute.constraint_jacobian(q_b, t).toarray()
    lam_b = np.linalg.lstsq(G_b.T, -r_b, rcond=None)[0]
    return dae.absolute.reactions(q_b, lam_b, t)
