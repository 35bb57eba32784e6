"""Forward sweep of a tree whose bodies may be flexible (floating frame of reference,
THEORY §2.1): the joints' markers move with the deformation of their bodies.

A marker with elastic rows ``Phi``, ``Psi`` on a flexible body with modal coordinates
``q_e`` sits at ``u = s + Phi q_e`` in the body frame R, its axes turned by the elastic
rotation ``D(theta)``, ``theta = Psi q_e`` (:func:`elastic_rotation`: an orthonormal
rotation equal to the linearised ``E + theta~`` of :mod:`flexmbs.kinematics.frames` to
first order in ``theta``, with the same direction of the marker's z axis).  The angular
velocity of ``D`` in R's components is ``W qd_e``, ``W = 2 G(e_D) (de_D/dtheta) Psi``.

For tree joint ``i`` with ``P`` on the parent p and ``Q`` on body i:

    A_PR = A_p D_P R_P,   r_P = r_p + A_p u_P,   r_Q = r_P + A_PR d,
    A_i  = A_PR A_rel R_Q^T D_Q^T,                r_i = r_Q - A_i u_Q,

and the twist ``v_i = [omega_i; v_Oi] = J_i betad`` is the parent's twist carried to
``O_i`` plus three relative motions, each an angular velocity ``w`` about a point ``c``
with the velocity ``v`` of that point, ``[w; v + w x (r_i - c)]``:

    P's deformation:  w = A_p W_P qd_p,         v = A_p Phi_P qd_p,       c = r_P
    the joint:        w = A_PR S_omega betad_i, v = A_PR S_v betad_i,     c = r_Q
    Q's deformation:  w = -A_i W_Q qd_i,        v = -A_i Phi_Q qd_i,      c = r_Q.

The velocity-product accelerations ``ahat_i = Jd_i betad`` (the twists' rates at
``betadd = 0``) are the complex-step derivative of the twists along the motion,

    ahat_i = Im(v_i(beta + i h betad)) / h,   v_i(x) = J_i(x) betad,

with ``h |betad|_inf = 1e-20``: ``v_i(beta + i h betad) = v_i + i h Jd_i betad + O(h^2)``
and no difference of nearby numbers is taken, so ``ahat`` is exact to round-off (a
central difference had truncation O(h^2) and round-off about 1e-10 relative).  The
sweep is written to carry complex numbers: every operation on ``beta`` is analytic
(``|m|`` is ``sqrt(m.m)``, not the modulus), and no array it fills is made real.
"""
from __future__ import annotations

import cmath
import math
import weakref
from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics.rotation import A_of, G_of, tilde
from flexmbs.relative.kinematics import transfer
from flexmbs.relative.newton_euler import cross
from flexmbs.relative.tree import Tree

#: imaginary displacement ``h |betad|_inf`` of the complex step along the motion (module
#: doc): any size far below the coordinates' scale gives ``ahat`` to round-off
COMPLEX_STEP = 1e-20

#: the rotation of a marker that does not deform (read-only, shared)
E3 = np.eye(3)
E3.flags.writeable = False


@dataclass(frozen=True, eq=False)
class FlexibleTreeKinematics:
    """Per body ``i`` (tree order): ``A[i]``, ``r[i]`` of its frame R, the twist
    ``v[i] = [omega; v_O]`` [rad/s, m/s], ``J[i]`` (6, n_beta) and ``ahat[i]`` (6,)
    [rad/s^2, m/s^2], inertial components."""

    A: list
    r: list
    v: list
    J: list
    ahat: list


def _quat_left(e: np.ndarray) -> np.ndarray:
    """``[e] `` with ``e * f = [e] f`` (Hamilton product, ``A(e * f) = A(e) A(f)``)."""
    w, v = e[0], e[1:]
    out = np.empty((4, 4))
    out[0, 0], out[0, 1:], out[1:, 0] = w, -v, v
    out[1:, 1:] = w * np.eye(3) + tilde(v)
    return out


def _quat_right(f: np.ndarray) -> np.ndarray:
    """``[f]'`` with ``e * f = [f]' e``."""
    w, v = f[0], f[1:]
    out = np.empty((4, 4))
    out[0, 0], out[0, 1:], out[1:, 0] = w, -v, v
    out[1:, 1:] = w * np.eye(3) - tilde(v)
    return out


def _unit(p: np.ndarray, dp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p / |p|`` and its derivative from ``dp = dp/dtheta``."""
    n = np.linalg.norm(p)
    u = p / n
    return u, (dp - np.outer(u, u @ dp)) / n


def elastic_rotation(a: np.ndarray, theta: np.ndarray, second: bool = False
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Euler parameters ``e_D`` of the elastic rotation and ``de_D/dtheta`` (4, 3), in
    scalar arithmetic (the sweeps call it once per deforming marker;
    :func:`elastic_rotation_reference` is the same by matrix products).

    ``D = tilt(a -> n) spin(a, a.theta)``: the spin about the joint axis ``a`` (the
    marker's z axis in the body frame) by the linearised angle ``a.theta``, then the
    smallest rotation taking ``a`` to the direction ``n`` of the joint axis that the
    descriptor rows of a revolute or cylindrical joint see with the linearised axes of
    :mod:`flexmbs.kinematics.frames`: on the joint's first marker (rows use ``z_P``)
    ``n ~ a + theta x a``; on its second (rows use ``x_Q``, ``y_Q``, so the axis is
    ``x_Q x y_Q``) ``n ~ a + theta x a + (theta.a) theta``.  Such joints see the same
    axis in both forms; the other axes agree to first order in ``theta``."""
    ax, ay, az = a.tolist()
    t = theta.tolist()
    tx, ty, tz = t
    # complex-step sweeps (module doc) pass a complex theta: the same formulas in cmath
    fn = cmath if np.iscomplexobj(theta) else math
    phi = ax * tx + ay * ty + az * tz
    m = [ax + (ty * az - tz * ay), ay + (tz * ax - tx * az), az + (tx * ay - ty * ax)]
    dm = [[0.0, az, -ay], [-az, 0.0, ax], [ay, -ax, 0.0]]          # -a~
    if second:
        av = (ax, ay, az)
        m = [m[i] + phi * t[i] for i in range(3)]
        dm = [[dm[i][j] + t[i] * av[j] + (phi if i == j else 0.0) for j in range(3)]
              for i in range(3)]
    # straight-line scalar code: n = m / |m| and dn = (dm - n (n^T dm)) / |m|, then the
    # same for the tilt's Euler parameters, and the Hamilton products (Python floats, in a
    # fixed order: the numbers do not depend on numpy's summation)
    n_m = fn.sqrt(0 + m[0] * m[0] + m[1] * m[1] + m[2] * m[2])
    nx, ny, nz = m[0] / n_m, m[1] / n_m, m[2] / n_m
    dn = [[0.0] * 3 for _ in range(3)]
    for j in range(3):
        u_dm = 0 + nx * dm[0][j] + ny * dm[1][j] + nz * dm[2][j]
        dn[0][j] = (dm[0][j] - nx * u_dm) / n_m
        dn[1][j] = (dm[1][j] - ny * u_dm) / n_m
        dn[2][j] = (dm[2][j] - nz * u_dm) / n_m
    # [1 + a.n; a x n] and its derivative [a^T dn; a~ dn], normalised
    p0, p1, p2, p3 = (1.0 + ax * nx + ay * ny + az * nz, ay * nz - az * ny,
                      az * nx - ax * nz, ax * ny - ay * nx)
    n_t = fn.sqrt(0 + p0 * p0 + p1 * p1 + p2 * p2 + p3 * p3)
    w, x, y, z = p0 / n_t, p1 / n_t, p2 / n_t, p3 / n_t          # e_t
    c, s = fn.cos(0.5 * phi), fn.sin(0.5 * phi)
    s0, s1, s2, s3 = c, s * ax, s * ay, s * az                    # e_s
    d0, d1, d2, d3 = -s, c * ax, c * ay, c * az                   # de_s / d(phi / 2)
    half_a = (0.5 * ax, 0.5 * ay, 0.5 * az)
    de = np.empty((3, 4), theta.dtype)   # rows j; returned transposed, as before
    for j in range(3):
        t0 = ax * dn[0][j] + ay * dn[1][j] + az * dn[2][j]
        t1 = ay * dn[2][j] - az * dn[1][j]
        t2 = az * dn[0][j] - ax * dn[2][j]
        t3 = ax * dn[1][j] - ay * dn[0][j]
        u_t = 0 + w * t0 + x * t1 + y * t2 + z * t3
        g0, g1, g2, g3 = ((t0 - w * u_t) / n_t, (t1 - x * u_t) / n_t,
                          (t2 - y * u_t) / n_t, (t3 - z * u_t) / n_t)       # de_t[:, j]
        h = half_a[j]
        f0, f1, f2, f3 = d0 * h, d1 * h, d2 * h, d3 * h
        de[j, 0] = (g0 * s0 - g1 * s1 - g2 * s2 - g3 * s3) + (
            w * f0 - x * f1 - y * f2 - z * f3)
        de[j, 1] = (g0 * s1 + s0 * g1 + g2 * s3 - g3 * s2) + (
            w * f1 + f0 * x + y * f3 - z * f2)
        de[j, 2] = (g0 * s2 + s0 * g2 + g3 * s1 - g1 * s3) + (
            w * f2 + f0 * y + z * f1 - x * f3)
        de[j, 3] = (g0 * s3 + s0 * g3 + g1 * s2 - g2 * s1) + (
            w * f3 + f0 * z + x * f2 - y * f1)
    return np.array([w * s0 - x * s1 - y * s2 - z * s3, w * s1 + s0 * x + y * s3 - z * s2,
                     w * s2 + s0 * y + z * s1 - x * s3, w * s3 + s0 * z + x * s2 - y * s1]), de.T


def elastic_rotation_reference(a: np.ndarray, theta: np.ndarray, second: bool = False
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`elastic_rotation` by matrix products (the reference of its scalar form):
    Euler parameters ``e_D`` of ``D = tilt(a -> n) spin(a, a.theta)`` and ``de_D/dtheta``
    (4, 3); the axis ``n`` and the two markers' cases as documented there."""
    m, dm = a + cross(theta, a), -tilde(a)
    if second:
        m, dm = m + (a @ theta) * theta, dm + np.outer(theta, a) + (a @ theta) * np.eye(3)
    n, dn = _unit(m, dm)
    e_t, de_t = _unit(np.concatenate([[1.0 + a @ n], cross(a, n)]),
                      np.vstack([a @ dn, tilde(a) @ dn]))
    phi = a @ theta
    e_s = np.concatenate([[np.cos(0.5 * phi)], np.sin(0.5 * phi) * a])
    de_s = np.outer(np.concatenate([[-np.sin(0.5 * phi)], np.cos(0.5 * phi) * a]), 0.5 * a)
    return _quat_left(e_t) @ e_s, _quat_right(e_s) @ de_t + _quat_left(e_t) @ de_s


def _deforms(marker) -> bool:
    """Whether the marker's elastic rows are not all zero (e.g. not the interface that
    carries the body frame)."""
    return bool(np.any(marker.Phi) or np.any(marker.Psi))


#: per marker (weakly held): 0 rigid (or rows all zero), 1 translation only, 2 rotating
_KIND: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _marker_kind(marker) -> int:
    """The kind of :data:`_KIND` of a marker (its rows are read-only once built)."""
    kind = _KIND.get(marker)
    if kind is None:
        kind = _KIND[marker] = (0 if marker.Phi is None or not _deforms(marker)
                                else 1 if not np.any(marker.Psi) else 2)
    return kind


def elastic_marker(marker, qe, second: bool) -> tuple:
    """``(u, D, W, Phi)`` of a marker at the modal coordinates ``qe`` (module doc;
    ``second``: the marker is its joint's second); ``(s, E, None, None)`` on a rigid body
    or the ground."""
    kind = _marker_kind(marker)
    if kind == 0 or not len(qe):
        return marker.s, E3, None, None
    if kind == 1:                              # translation only: D = E
        return marker.s + marker.Phi @ qe, E3, np.zeros_like(marker.Psi), marker.Phi
    e_D, de = elastic_rotation(marker.R[:, 2], marker.Psi @ qe, second)
    return (marker.s + marker.Phi @ qe, A_of(e_D), 2.0 * G_of(e_D) @ de @ marker.Psi,
            marker.Phi)


def _motion_into(out, w, v, lever) -> None:
    """Twist columns ``[w; v + w x lever]`` of an angular velocity ``w`` about a point
    moving with ``v`` (``lever = r_i - c``), written into ``out`` (6, n)."""
    out[:3] = w
    out[3:] = v - tilde(lever) @ w


@dataclass(frozen=True, eq=False)
class LocalKinematics:
    """The joint-local quantities of the sweep at ``beta``, per body ``i`` (tree order):
    pose ``A[i]``, ``r[i]``; ``rho[i] = r_i - r_p`` (the transfer ``B_{p(i),i}``);
    ``X_e[i]`` (6, n_e of the parent) the twist columns of the parent's modal rates
    (P's deformation; None if P does not deform); ``C[i]`` (6, n_beta_i + n_e_i) those
    of the joint's rates and of body i's own modal rates (Q's deformation), so that

        v_i = B_{p(i),i} v_p + X_e[i] qd_e,p + C[i] [betad_i; qd_e,i]."""

    A: list
    r: list
    rho: list
    X_e: list
    C: list


def _local_joint(tj, A_p, r_p, q_p, beta) -> tuple:
    """``(A_i, r_i, rho_i, X_e[i], C_i)`` of tree joint ``tj`` (module doc) from its
    parent's pose ``A_p``, ``r_p`` and modal coordinates ``q_p``."""
    b = beta[tj.s]
    u_P, D_P, W_P, Phi_P = elastic_marker(tj.P, q_p, tj.swapped)
    u_Q, D_Q, W_Q, Phi_Q = elastic_marker(tj.Q, beta[tj.qe], not tj.swapped)
    A_rel, d = tj.motion.pose(b)
    S_w, S_v = tj.motion.subspace(b)
    # products with E (the ground's axes, a marker that does not deform) are skipped:
    # they return their other factor exactly
    A_PR = (A_p if D_P is E3 else A_p @ D_P) @ tj.P.R
    r_P = r_p + (u_P if A_p is E3 else A_p @ u_P)
    r_Q = r_P + A_PR @ d
    A_i = A_PR @ A_rel @ tj.Q.R.T
    if D_Q is not E3:
        A_i = A_i @ D_Q.T
    r_i = r_Q - A_i @ u_Q
    C_i = np.empty((6, tj.qe.stop - tj.s.start), beta.dtype)
    n_b = tj.s.stop - tj.s.start
    _motion_into(C_i[:, :n_b], A_PR @ S_w, A_PR @ S_v, r_i - r_Q)
    if W_Q is not None:
        _motion_into(C_i[:, n_b:], -A_i @ W_Q, -A_i @ Phi_Q, r_i - r_Q)
    else:
        C_i[:, n_b:] = 0.0
    X_e = None
    if W_P is not None:
        X_e = np.empty((6, W_P.shape[1]), beta.dtype)
        _motion_into(X_e, A_p @ W_P, A_p @ Phi_P, r_i - r_P)
    return A_i, r_i, r_i - r_p, X_e, C_i


def _sweep(tree: Tree, beta: np.ndarray, moved, base) -> tuple[list, list, list, list, list]:
    """The local quantities of the joints ``i`` with ``moved[i]`` (all if ``moved`` is
    None), the others' ``(A, r)`` taken from ``base`` and their ``rho, X_e, C`` None."""
    A, r, rho, X_e, C = [], [], [], [], []
    for i, tj in enumerate(tree.joints):
        if moved is not None and not moved[i]:
            A.append(base[0][i])
            r.append(base[1][i])
            rho.append(None)
            X_e.append(None)
            C.append(None)
            continue
        p = tj.parent
        if p < 0:
            A_p, r_p, q_p = E3, np.zeros(3), ()
        else:
            A_p, r_p, q_p = A[p], r[p], beta[tree.joints[p].qe]
        for out, x in zip((A, r, rho, X_e, C), _local_joint(tj, A_p, r_p, q_p, beta),
                          strict=True):
            out.append(x)
    return A, r, rho, X_e, C


def local_kinematics(tree: Tree, beta: np.ndarray) -> LocalKinematics:
    """The :class:`LocalKinematics` at ``beta`` (module doc), O(n)."""
    return LocalKinematics(*_sweep(tree, beta, None, None))


def moved_bodies(tree: Tree, k: int) -> list:
    """Whether each body's pose or ``J`` row depends on ``beta[k]``: the body whose joint
    coordinates hold ``k``, the body whose modal coordinates hold it if its joint's Q
    deforms, the children whose P deforms with their parent's modal coordinate ``k``, and
    the descendants of all these."""
    moved = []
    for tj in tree.joints:
        p = tj.parent
        moved.append(tj.s.start <= k < tj.s.stop
                     or (tj.qe.start <= k < tj.qe.stop and _elastic(tj.Q))
                     or (p >= 0 and (moved[p] or (tree.joints[p].qe.start <= k
                                                   < tree.joints[p].qe.stop
                                                   and _elastic(tj.P)))))
    return moved


def _elastic(marker) -> bool:
    """Whether :func:`elastic_marker` reads the modal coordinates of the marker's body."""
    return _marker_kind(marker) > 0


def poses_and_jacobians(tree: Tree, beta: np.ndarray, moved=None, base=None
                        ) -> tuple[list, list, list]:
    """``(A, r, J)`` of every body at ``beta`` (module doc): ``J_i = B_{p,i} J_p`` plus
    the local columns of :func:`local_kinematics`.  With ``moved`` (per body, e.g.
    :func:`moved_bodies`) and ``base`` (the ``(A, r, J)`` at a ``beta`` that differs
    only in coordinates that do not move the other bodies), only the moved bodies are
    swept and the others' entries are those of ``base`` (the same numbers: their sweep
    does not read the changed coordinates)."""
    A, r, rho, X_e, C = _sweep(tree, beta, moved, base)
    J = []
    for i, tj in enumerate(tree.joints):
        if C[i] is None:
            J.append(base[2][i])
            continue
        p = tj.parent
        J_i = np.zeros((6, tree.n_beta)) if p < 0 else transfer(rho[i], J[p])
        if X_e[i] is not None:
            J_i[:, tree.joints[p].qe] += X_e[i]
        n_b = tj.s.stop - tj.s.start
        J_i[:, tj.s] += C[i][:, :n_b]
        if np.any(C[i][:, n_b:]):
            J_i[:, tj.qe] += C[i][:, n_b:]
        J.append(J_i)
    return A, r, J


def _carried(rho: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``B_{p,i} x`` of a twist ``x = [omega; v]`` (:func:`~flexmbs.relative.kinematics.
    transfer`) in the numbers of ``rho`` and ``x``, complex ones included."""
    out = x.copy()
    out[3:] -= cross(rho, x[:3])
    return out


def twists(tree: Tree, loc: LocalKinematics, betad: np.ndarray) -> list:
    """The twists ``v_i`` (6,) of :class:`LocalKinematics` at the rates ``betad``, O(n)
    (complex if ``loc`` is: the complex step of :func:`velocity_products`)."""
    v = []
    for i, tj in enumerate(tree.joints):
        p = tj.parent
        v_i = loc.C[i] @ betad[tj.s.start:tj.qe.stop]
        if p >= 0:
            v_i = v_i + _carried(loc.rho[i], v[p])
            if loc.X_e[i] is not None:
                v_i = v_i + loc.X_e[i] @ betad[tree.joints[p].qe]
        v.append(v_i)
    return v


def velocity_products(tree: Tree, beta: np.ndarray, betad: np.ndarray) -> list:
    """``ahat_i = Jd_i betad`` (6,) per body: the complex step of the twists along the
    motion, ``Im(v_i(beta + i h betad)) / h`` at the rates ``betad`` (module doc), by one
    O(n) sweep in complex numbers."""
    speed = np.abs(betad).max(initial=0.0)
    if speed == 0.0:
        return [np.zeros(6) for _ in tree.joints]
    h = COMPLEX_STEP / speed
    beta_c = np.asarray(beta, float) + (1j * h) * np.asarray(betad, float)
    return [x.imag / h for x in twists(tree, local_kinematics(tree, beta_c), betad)]


def forward_flexible(tree: Tree, beta: np.ndarray, betad: np.ndarray,
                     pose: tuple | None = None) -> FlexibleTreeKinematics:
    """The sweep at ``(beta, betad)`` with ``ahat`` (module doc); ``pose``: the
    ``(A, r, J)`` of :func:`poses_and_jacobians` at ``beta`` if already made."""
    A, r, J = poses_and_jacobians(tree, beta) if pose is None else pose
    return FlexibleTreeKinematics(A, r, [x @ betad for x in J], J,
                                  velocity_products(tree, beta, betad))
