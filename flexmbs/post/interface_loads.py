"""Interface loads of a flexible body: the wrench every joint and force element exerts
at each of its markers, in body-frame components (THEORY §1.5, §2.6).

A joint block ``j`` acts on body ``b`` with the generalized constraint force
``g = -G_j,b^T lam_j``, a force element with its ``Q``; on the body coordinates
``q_b = [r, e, q_e]`` a wrench ``(f, m_P)`` (inertial) at marker ``P`` gives

    g_r = f,    1/2 G(e) g_e = m_P + (p_P - r) x f,

with ``p_P`` the deformed marker position.  The wrench conjugate to the marker motion
``[t; theta]`` of the reduced body (``flexmbs.reduction.interfaces``) is its body-frame
form ``W_P = [A^T f; A^T m_P]`` [N, N m]: the load ``L_P^T W_P`` that the static
correction of the stresses spreads over the interface nodes
(``flexmbs.reduction.residual``, :func:`flexmbs.post.recovery.nodal_stress`).
"""
from __future__ import annotations

import logging

import numpy as np

from flexmbs.kinematics import frames as F
from flexmbs.kinematics.rotation import A_of, G_of
from flexmbs.reduction.interfaces import fit_rows

__all__ = ["corrected_markers", "marker_wrenches", "nodal_loads", "stress_wrenches"]

log = logging.getLogger(__name__)


def marker_wrenches(asm, body, q, lam, t: float = 0.0, qd=None) -> dict[str, np.ndarray]:
    """``{marker name: W (6,)}``: the summed wrench ``[F; M]`` (body frame, about the
    deformed marker origin) [N, N m] of every joint and force element that acts on
    ``body`` (a body of the assembled system ``asm``) through that marker, at state
    ``(q, qd, lam, t)`` (``qd`` defaults to rest, as at a static equilibrium)."""
    q = np.asarray(q, dtype=float)
    qd = np.zeros_like(q) if qd is None else np.asarray(qd, dtype=float)
    q_b = q[asm.body_slices[body.name]]
    out: dict[str, np.ndarray] = {}

    def add(markers, offsets, gen):
        seen = set()            # the body's part of gen once (a fed drive's or a
        for mk, off in zip(markers, offsets, strict=True):   # controller's sensor may be on it)
            if off is not None and mk.body is body and off not in seen:
                seen.add(off)
                g_b = gen[off:off + body.n_coords]
                out[mk.name] = out.get(mk.name, np.zeros(6)) + _wrench(mk, q_b, g_b)

    rows = asm.constraint_rows
    lam_all = np.zeros(asm.n_rows_all)
    lam_all[rows.active] = lam
    for bi, blk in enumerate(asm.blocks):
        if blk.kind == "normalization" or not any(
                o is not None and m.body is body for m, o in zip(blk.markers, blk.offsets)):
            continue
        _, D, _ = rows.block_rows(bi, q, t, 1, {})
        add(blk.markers, blk.offsets,
            -(lam_all[asm.row_start[bi]:asm.row_start[bi + 1]] @ D[:, :-1]))
    blocks = [fb for fb in asm.force_blocks
              if any(o is not None and m.body is body for m, o in zip(fb.markers, fb.offsets))]
    for fb, c in asm.force_contributions(q, qd, t, 1, blocks, lam):
        add(fb.markers, fb.offsets, np.asarray(c.Q)[:len(fb.idx)])
    return out


def nodal_loads(reduced, name: str, W) -> np.ndarray:
    """Nodal forces (n_i, 3) [N] (or (n_t, n_i, 3)), body frame, on the nodes
    ``reduced.marker(name).nodes`` of an RBE3 marker loaded with ``W = [F; M]`` (6,) or
    (n_t, 6): ``f = L^T W``, i.e. ``f_i = w_i F + w_i (A^-1 M) x r_i``
    (:func:`flexmbs.reduction.interfaces.fit_rows`); their resultant is ``F`` and their
    moment about the marker point ``R`` is ``M``.  An RBE2 marker holds its nodes
    rigidly, and how it spreads a load depends on the stiffness under it: ``ValueError``."""
    mk = reduced.marker(name)
    if mk.kind != "rbe3":
        raise ValueError(f"body '{reduced.name}': marker '{name}' is {mk.kind}; nodal loads "
                         "are the spread of an rbe3 marker (a rigid rbe2 spider's depends on "
                         "the stiffness under it)")
    L = fit_rows(np.asarray(reduced.points)[mk.nodes], mk.weights, mk.R)
    f = np.einsum("wk,...w->...k", L, np.asarray(W, dtype=float))
    return f.reshape(*f.shape[:-1], len(mk.nodes), 3)


def corrected_markers(reduced) -> tuple[str, ...]:
    """Names of the markers of the reduced body ``reduced`` that carry residual stress
    modes (preprocessed with ``residual_flexibility``)."""
    return tuple(mk.name for mk in reduced.markers if mk.stress_residual is not None)


def stress_wrenches(asm, body, q, lam, t: float = 0.0, qd=None) -> dict[str, np.ndarray]:
    """The :func:`marker_wrenches` of the flexible ``body`` at its markers that carry
    residual stress modes, for :func:`flexmbs.post.recovery.nodal_stress`; ``{}`` (the
    mode-only recovery) when it has none or when ``lam`` does not match the system's
    active constraint rows."""
    names = corrected_markers(body.body)
    if not names:
        return {}
    if np.size(lam) != asm.n_lam:
        log.warning("body '%s': %d multipliers at t = %g s, the model has %d active "
                    "constraint rows: stresses without the interface correction",
                    body.name, np.size(lam), t, asm.n_lam)
        return {}
    W = marker_wrenches(asm, body, q, lam, t, qd)
    return {k: v for k, v in W.items() if k in names}


def _wrench(marker, q_b: np.ndarray, g_b: np.ndarray) -> np.ndarray:
    """Body-frame ``[F; M]`` at ``marker`` of the generalized force ``g_b`` on its body."""
    r, e = q_b[:3], q_b[3:7]
    f = g_b[:3]
    m_P = 0.5 * G_of(e) @ g_b[3:7] - np.cross(F.position(marker, q_b) - r, f)
    A = A_of(e)
    return np.concatenate([A.T @ f, A.T @ m_P])
