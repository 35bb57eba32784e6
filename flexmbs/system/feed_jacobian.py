"""The values of the sensors a force element reads (its ``feeds``) and their derivatives
on the element's local vector ``x`` (the tangent of a controller), by the chain rule
through the markers' kinematics:

    y = S(m_1, ..., m_k),        m_i = (p_i, R_i = [a_1 a_2 a_3]_i, v_i, omega_i)(q, qd),

    dy/dx  = sum_i  S_p dp/dx + sum_j S_a_j da_j/dx + S_v dv/dx + S_omega domega/dx,
    dy/dxd = sum_i  S_v dp/dx + S_omega J_omega,

with ``dp/dx`` and ``da_j/dx`` the markers' frame jets (:mod:`flexmbs.kinematics.frames`),
``v = (dp/dq) qd`` so ``dv/dq = (d2p/dq2) qd``, and, as
:func:`flexmbs.system.outputs.marker_kinematics` measures it,

    omega = 2 G(e) ed + A(e) Psi qd_e,
    domega/ded = 2 G(e),   domega/dqd_e = A(e) Psi,
    domega/de = 2 d(G(e) ed)/de + d(A(e) (Psi qd_e))/de

(``Psi`` only for a marker of a flexible body).  The partial derivatives ``S_*`` of the
sensor's ``measure`` by its markers' states are central differences in that small
space (no kinematics evaluated again).  Accelerations are as the measure sees them at
``qdd = 0`` and not differentiated: an acceleration sensor cannot feed an element.

:func:`feed_jacobians_reference` is the plain reference: central differences of the
whole measurement in every local coordinate (``2 n`` kinematics per feed).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from flexmbs.kinematics import frames as F
from flexmbs.kinematics.rotation import G_of
from flexmbs.system.outputs import marker_kinematics

FD_STEP = 1e-7      # relative central-difference step

_UNIT_E = np.eye(4)


@dataclass(frozen=True)
class MarkerJacobian:
    """Derivatives of one marker's state by its body's coordinates ``cols`` (global
    indices): ``p_q`` (3, nb), ``a_q`` (3 axes, 3, nb), ``v_q`` (3, nb), ``w_q`` and
    ``w_qd`` (3, nb)."""

    cols: np.ndarray
    p_q: np.ndarray
    a_q: np.ndarray
    v_q: np.ndarray
    w_q: np.ndarray
    w_qd: np.ndarray


def marker_jacobian(layout, marker, q, qd) -> MarkerJacobian | None:
    """The :class:`MarkerJacobian` of ``marker`` at ``(q, qd)`` (None on the ground)."""
    body = marker.body
    if getattr(body, "is_ground", False):
        return None
    s = layout.body_slices[body.name]
    qb, qdb = q[s], qd[s]
    nb = body.n_coords
    fj = F.frame_jet(marker, qb, nb + 1, 0, 2)
    p_q = fj.p.d[:, :nb]
    a_q = np.stack([fj.axis(j).d[:, :nb] for j in range(3)])
    v_q = np.einsum("kij,j->ki", fj.p.h[:, :nb, :nb], qdb)
    w_q, w_qd = np.zeros((3, nb)), np.zeros((3, nb))
    if nb >= 7:
        e, ed = qb[3:7], qdb[3:7]
        w_qd[:, 3:7] = 2.0 * G_of(e)
        w_q[:, 3:7] = 2.0 * np.column_stack([G_of(_UNIT_E[k]) @ ed for k in range(4)])
        Psi = getattr(marker, "Psi", None)
        if nb > 7 and Psi is not None:
            w_qd[:, 7:] = F.A_of(e) @ Psi
            w_q[:, 3:7] += F.dAu_de(e, Psi @ qdb[7:])
    return MarkerJacobian(np.arange(s.start, s.stop), p_q, a_q, v_q, w_q, w_qd)


def _perturbed(state, part: str, k: int, h: float):
    """``state`` with entry ``k`` of ``part`` (p, R (row-major), v, omega) moved by ``h``."""
    a = np.array(getattr(state, part), dtype=float)
    a.reshape(-1)[k] += h
    return replace(state, **{part: a})


def feed_jacobians(layout, feeds, q, qd, idx) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, dy/dx, dy/dxd)`` of the sensor components ``feeds`` (``(sensor, component)``
    pairs) on the local vector of global indices ``idx`` plus time (module docstring)."""
    n = len(idx) + 1
    where = {int(g): k for k, g in enumerate(idx)}
    qdd = np.zeros_like(qd)
    y = np.empty(len(feeds))
    y_x, y_xd = np.zeros((len(feeds), n)), np.zeros((len(feeds), n))
    for i, (sensor, comp) in enumerate(feeds):
        markers = sensor.resolve()
        states = [marker_kinematics(layout, m, q, qd, qdd) for m in markers]
        y[i] = sensor.measure(tuple(states))[comp]
        for m_k, marker in enumerate(markers):
            jac = marker_jacobian(layout, marker, q, qd)
            if jac is None:
                continue
            cols = np.array([where[int(g)] for g in jac.cols])
            d = {}
            for part, size in (("p", 3), ("R", 9), ("v", 3), ("omega", 3)):
                g = np.empty(size)
                for k in range(size):
                    base = np.asarray(getattr(states[m_k], part)).reshape(-1)[k]
                    h = FD_STEP * (1.0 + abs(base))
                    sp, sm = list(states), list(states)
                    sp[m_k] = _perturbed(states[m_k], part, k, h)
                    sm[m_k] = _perturbed(states[m_k], part, k, -h)
                    g[k] = (sensor.measure(tuple(sp))[comp]
                            - sensor.measure(tuple(sm))[comp]) / (2.0 * h)
                d[part] = g
            S_R = d["R"].reshape(3, 3)            # S_R[r, j]: by entry r of axis j
            dx = d["p"] @ jac.p_q + d["v"] @ jac.v_q + d["omega"] @ jac.w_q
            dx += sum(S_R[:, j] @ jac.a_q[j] for j in range(3))
            y_x[i, cols] += dx
            y_xd[i, cols] += d["v"] @ jac.p_q + d["omega"] @ jac.w_qd
    return y, y_x, y_xd


def feed_jacobians_reference(layout, feeds, q, qd, idx,
                             n_body: int | None = None) -> tuple[np.ndarray, ...]:
    """The reference of :func:`feed_jacobians`: central differences of the measurement in
    the first ``n_body`` local coordinates (default: all of ``idx``)."""
    def measure(qq, vv):
        zero = np.zeros_like(vv)
        return np.array([s.measure(tuple(marker_kinematics(layout, m, qq, vv, zero)
                                         for m in s.resolve()))[k] for s, k in feeds])
    y = measure(q, qd)
    n = len(idx) + 1
    y_x, y_xd = np.zeros((len(y), n)), np.zeros((len(y), n))
    for k in range(len(idx) if n_body is None else n_body):
        i = idx[k]
        for v, out, is_rate in ((q, y_x, False), (qd, y_xd, True)):
            h = FD_STEP * (1.0 + abs(v[i]))
            vp, vm = v.copy(), v.copy()
            vp[i] += h
            vm[i] -= h
            if is_rate:
                fp, fm = measure(q, vp), measure(q, vm)
            else:
                fp, fm = measure(vp, qd), measure(vm, qd)
            out[:, k] = (fp - fm) / (2.0 * h)
    return y, y_x, y_xd
