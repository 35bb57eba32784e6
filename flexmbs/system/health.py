"""Constraint health and divergence (THEORY §5.9.1): what makes a model unhealthy.

* **Redundant or inconsistent** (at ``t0``).  The rank test (:mod:`flexmbs.system.dof`)
  drops a row ``i`` whose gradient lies in the span of the rows kept before it,
  ``G_i = sum_k c_k G_k``.  It is *redundant* when the kept rows imply it: its value and
  rate vanish with theirs, ``g_i = 0`` and ``G_i qd + g_t,i = 0`` at the consistent
  initial state.  Otherwise it contradicts the rows it depends on (two drives asking
  ``omega = 1`` and ``omega = 2`` of one joint, a loop that cannot close): an error
  naming both.
* **Dropped rows during the run.**  A row dependent only at the start (a toggle position)
  is not redundant: once the mechanism leaves that position ``g_i`` grows.  Its value
  ``max |g_i|`` over the dropped rows is watched at every output step.
* **Conditioning of the active rows**: ``sigma_min / sigma_max`` of ``G`` (each row scaled
  to unit length), watched along the run; it tends to 0 at a singular configuration.
* **Fast rotation with constraints** (before the run).  In the index-3 form the error
  of the multipliers follows a recursion with the spurious root ``-rho_inf`` of
  generalized-α; the gyroscopic terms of a body spinning at ``Omega`` amplify it by
  about ``1 + Omega h`` per step, so it grows when ``rho_inf (1 + Omega h) > 1``
  (:func:`spin_step_limit`; measured on the heavy top of ``cases/``: runs with rho_inf
  from 0.9 to 1 and h from 2.5e-5 to 1e-3 s diverge exactly where this says).  It holds
  for a body whose spin axis can turn (:func:`rotation_freedoms` >= 2); a crank spinning
  on a revolute has no gyroscopic coupling and no such limit (the flexible slider-crank
  of the benchmarks runs at 150 rad/s, rho_inf = 0.9, h = 1e-3 s, 1.35 times its
  "limit", to 1e-8 of Exudyn).
* **Divergence**: coordinates no longer finite, or an elastic displacement bound
  ``sum_k |q_e,k| max|Phi_k|`` beyond the body's own size (the floating-frame model
  assumes small elastic displacements), or a position beyond ``1e6`` model sizes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: a dropped row whose value or rate exceeds this (m, rad, or their rates per s, at a
#: state consistent to ~1e-10) is not redundant
INCONSISTENT_TOL = 1e-7
#: a dropped row violated by more than this during the run (m or rad)
DROPPED_TOL = 1e-6
#: conditioning ``sigma_min / sigma_max`` of the active rows below this: singular
SINGULAR_RATIO = 1e-10


def partners(G_kept: np.ndarray, kept_rows: np.ndarray, G_i: np.ndarray) -> list[int]:
    """The kept rows ``k`` (indices into the full row list) with ``c_k != 0`` in
    ``G_i = sum_k c_k G_k`` (least squares, the rows that make row ``i`` dependent)."""
    if G_kept.shape[0] == 0:
        return []
    c = np.linalg.lstsq(G_kept.T, G_i, rcond=None)[0]
    big = np.abs(c) > 1e-6 * max(np.abs(c).max(initial=0.0), 1e-300)
    return [int(k) for k in kept_rows[big]]


def inconsistent_rows(asm, q: np.ndarray, qd: np.ndarray, t: float) -> list[str]:
    """One line per dropped row that the kept rows do not imply (module docstring)."""
    dropped = np.flatnonzero(~asm.active)
    if dropped.size == 0:
        return []
    g, gd = asm.rows_all(q, qd, t, dropped)
    G = asm.constraint_jacobian(q, t, all_rows=True).toarray()
    kept = np.flatnonzero(asm.active)
    out = []
    scale = max(1.0, float(np.max(np.abs(qd), initial=0.0)))
    for i, g_i, gd_i in zip(dropped, g, gd):
        if abs(g_i) <= INCONSISTENT_TOL and abs(gd_i) <= INCONSISTENT_TOL * scale:
            continue
        named = {asm.row_owner(k) for k in partners(G[kept], kept, G[i])}
        owners = sorted(named - {asm.row_owner(i)} or named)    # others first, else itself
        what = (f"position residual {g_i:.3g}" if abs(g_i) > INCONSISTENT_TOL else
                f"velocity residual {gd_i:.3g} per s")
        out.append(f"{asm.row_labels[i]} contradicts {', '.join(owners) or 'the other rows'}"
                   f" ({what} where a redundant row gives 0 at t = {t:g} s): the two ask "
                   f"for different motions; remove or change one of them")
    return out


def dropped_violation(asm, q: np.ndarray, t: float, dropped: np.ndarray | None = None,
                      g_all: np.ndarray | None = None) -> tuple[float, str]:
    """``(max |g_i|, label)`` over the rows dropped at the start (0, "" if none);
    ``dropped``: their indices, if already known; ``g_all``: the values of every row at
    ``(q, t)``, if already evaluated (:class:`~flexmbs.system.output_rows.RowsAt`)."""
    dropped = np.flatnonzero(~asm.active) if dropped is None else dropped
    if dropped.size == 0:
        return 0.0, ""
    g = asm.rows_all(q, np.zeros_like(q), t, dropped)[0] if g_all is None else g_all[dropped]
    k = int(np.argmax(np.abs(g)))
    return float(abs(g[k])), asm.row_labels[dropped[k]]


def conditioning(G: np.ndarray) -> tuple[float, int]:
    """``(sigma_min / sigma_max, i)`` of ``G`` with unit rows, and the row ``i`` that
    contributes most to the smallest singular vector (1.0, -1 for no rows)."""
    if G.shape[0] == 0:
        return 1.0, -1
    nrm = np.linalg.norm(G, axis=1)
    Gs = G / np.where(nrm > 0, nrm, 1.0)[:, None]
    U, s, _ = np.linalg.svd(Gs, full_matrices=False)
    if s[0] == 0.0:
        return 0.0, 0
    return float(s[-1] / s[0]), int(np.argmax(np.abs(U[:, -1])))


@dataclass(frozen=True)
class Scales:
    """The model's sizes for the divergence test: per flexible body its slice of ``q``,
    the bounds ``max|Phi_k|`` of its modes and its size; the model size [m]; the number
    of the bodies' coordinates (the force elements' internal states after them, pressures
    or forces, are not lengths)."""

    elastic: tuple          # ((name, slice of q_e, max|Phi_k| (n_q,), size [m]), ...)
    size: float
    n_body: int | None = None

    @classmethod
    def of(cls, asm, q0: np.ndarray) -> Scales:
        el, ext = [], [1.0]
        for b in asm.bodies:
            s = asm.body_slices[b.name]
            r = q0[s][:3]
            ext.append(float(np.max(np.abs(r), initial=0.0)))
            body = getattr(b, "body", None)
            modes = getattr(body, "modes", None)
            if modes is None or b.n_coords <= 7:
                continue
            P = np.asarray(body.points)
            size = float(np.linalg.norm(P.max(axis=0) - P.min(axis=0)))
            phi = np.abs(np.asarray(modes)).reshape(-1, np.asarray(modes).shape[-1]).max(axis=0)
            el.append((b.name, slice(s.start + 7, s.stop), phi, size))
            ext.append(size)
        n_body = sum(b.n_coords for b in asm.bodies)
        return cls(tuple(el), max(ext), n_body)


def divergence(scales: Scales, q: np.ndarray) -> str | None:
    """What diverged at ``q`` (module docstring), or None."""
    if not np.isfinite(q).all():
        return "the coordinates are no longer finite (inf/NaN)"
    for name, s, phi, size in scales.elastic:
        u = float(np.abs(q[s]) @ phi)
        if u > size:
            return (f"flexible body '{name}': elastic displacement up to {u:.3g} m, beyond "
                    f"the body's size {size:.3g} m (the floating-frame model assumes small "
                    f"elastic displacements)")
    r = float(np.abs(q[:scales.n_body]).max(initial=0.0))
    if r > 1e6 * scales.size:
        return f"a coordinate reached {r:.3g}, 1e6 times the model's size {scales.size:.3g} m"
    return None


#: the margin below the bounds of :func:`clear_of_divergence` (its sums of ``|q_e| Phi``
#: are rounded differently from :func:`divergence`'s, by far less)
CLEAR_MARGIN = 1e-9


def clear_of_divergence(scales: Scales, q: np.ndarray) -> np.ndarray:
    """``(k,)``: which of the states ``q`` (k, n_q) :func:`divergence` surely finds
    nothing at (finite, every elastic bound and the model bound below by
    :data:`CLEAR_MARGIN`); the others need :func:`divergence` itself."""
    ok = np.isfinite(q).all(axis=1)
    for _, s, phi, size in scales.elastic:
        ok &= np.abs(q[:, s]) @ phi < size * (1.0 - CLEAR_MARGIN)
    if scales.n_body != 0:
        ok &= np.abs(q[:, :scales.n_body]).max(axis=1, initial=0.0) <= 1e6 * scales.size
    return ok


def _omega_map(e: np.ndarray) -> np.ndarray:
    """``2 G(e)``: the angular velocity ``omega = 2 G(e) ed`` of Euler parameters."""
    return 2.0 * np.array([[-e[1], e[0], -e[3], e[2]], [-e[2], e[3], e[0], -e[1]],
                           [-e[3], -e[2], e[1], e[0]]])


def spins(asm, q: np.ndarray, qd: np.ndarray) -> list[tuple[str, float]]:
    """``(name, |omega|)`` [rad/s] of every body with a floating frame (Euler parameters
    ``e = q_b[3:7]``), fastest first."""
    out = []
    for b in asm.bodies:
        s = asm.body_slices[b.name]
        if s.stop - s.start >= 7:
            out.append((b.name, float(np.linalg.norm(_omega_map(q[s][3:7]) @ qd[s][3:7]))))
    return sorted(out, key=lambda x: -x[1])


def fastest_spin(asm, q: np.ndarray, qd: np.ndarray) -> tuple[str, float]:
    """The body with the largest angular speed ``|omega| = |2 G(e) ed|`` [rad/s], and that
    speed; ``("", 0)`` without one."""
    return (spins(asm, q, qd) or [("", 0.0)])[0]


def rotation_freedoms(asm, q: np.ndarray, t: float, names) -> dict[str, int]:
    """How many independent angular velocities the constraints leave each body of
    ``names``: the rank of ``2 G(e) P_e``, ``P`` an orthonormal basis of the velocities
    the constraints allow (``G_q P = 0``), ``P_e`` its rows of the body's ``e``.  1 for a
    body on a revolute (its spin axis cannot turn: no gyroscopic coupling), 3 on a
    spherical joint."""
    import scipy.linalg as sla
    names = list(names)
    if not names:
        return {}
    P = sla.null_space(asm.constraint_jacobian(q, t).toarray())
    out = {}
    for name in names:
        s = asm.body_slices[name]
        W = _omega_map(q[s][3:7]) @ P[s][3:7]
        out[name] = int(np.linalg.matrix_rank(W, tol=1e-8)) if W.size else 0
    return out


def spin_step_limit(rho_inf: float, Omega: float) -> float:
    """The largest step [s] at which a constrained body spinning at ``Omega`` [rad/s] keeps
    generalized-α's spurious multiplier mode from growing: ``rho_inf (1 + Omega h) <= 1``,
    ``h = (1 - rho_inf) / (rho_inf Omega)`` (module docstring); ``inf`` without rotation,
    0 at ``rho_inf = 1``, ``inf`` at ``rho_inf = 0`` (the spurious root is 0)."""
    if Omega <= 0.0 or rho_inf <= 0.0:
        return float("inf")
    return max(0.0, (1.0 - rho_inf) / (rho_inf * Omega))
