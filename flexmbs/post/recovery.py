"""Recovery of nodal fields of a reduced flexible body at output times (pure functions).

For a body with coordinates ``q_b = [r, e, q_e]`` (frame origin ``r``, Euler parameters
``e`` of ``A(e)``, elastic coordinates ``q_e``) and a reduced body
(:class:`flexmbs.io.bodyfile.ReducedBody`) with nodes ``X`` (N, 3) in the body frame,
modes ``Phi`` (N, 3, n_q) and stress modes ``S`` (N, 6, n_q):

    u_i   = Phi_i q_e                          elastic displacement, body frame (THEORY §2.1)
    r_i   = r + A(e) (X_i + u_i)               deformed node position, inertial
    sig_i = S_i q_e + sum_I S_I,i W_I          small-strain Cauchy stress, Voigt (xx..xy)
    sig_vM = von_mises(sig_i)

Interface loads: ``W_I = [F; M]`` (body frame) is the wrench at interface marker ``I``
(:func:`flexmbs.post.interface_loads.marker_wrenches`, from the joint multipliers and
the force elements).  ``S_I`` (N, 6, 6) are the marker's residual stress modes, the
stresses of the part of the static response to ``L_I^T W_I`` that the modes lack
(modal acceleration method, ``flexmbs.reduction.residual``; stored when the body is
preprocessed with ``residual_flexibility``).  Without wrenches the recovery is mode-only.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from flexmbs.fe.stress import von_mises
from flexmbs.kinematics.rotation import A_of

__all__ = ["deformed_positions", "displacements", "elastic_displacements", "nodal_stress",
           "residual_stress_modes", "von_mises_stress"]


def _split(body, q_b) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q_b = np.asarray(q_b, dtype=float)
    n_q = body.modes.shape[2]
    if q_b.shape[-1] != 7 + n_q:
        raise ValueError(f"body '{body.name}': q_b must have 7 + n_q = {7 + n_q} entries "
                         f"[r, e, q_e], got {q_b.shape[-1]}")
    return q_b[..., :3], q_b[..., 3:7], q_b[..., 7:]


def elastic_displacements(body, q_e) -> np.ndarray:
    """``u = Phi q_e`` (N, 3) [m] in the body frame; ``q_e`` (n_q,) or (n_t, n_q) ->
    (n_t, N, 3); complex ``q_e`` (a mode shape) gives complex ``u``."""
    q_e = np.asarray(q_e)
    return np.einsum("ikq,...q->...ik", body.modes, q_e.astype(np.result_type(q_e, float)))


def deformed_positions(body, q_b) -> np.ndarray:
    """``r + A(e) (X + Phi q_e)`` (N, 3) [m], inertial; ``q_b`` (7 + n_q,) or (n_t, 7 + n_q)."""
    r, e, q_e = _split(body, q_b)
    local = np.asarray(body.points) + elastic_displacements(body, q_e)
    if np.ndim(r) == 1:
        return r + local @ A_of(e).T
    A = np.stack([A_of(ek) for ek in e])
    return r[:, None, :] + np.einsum("tjk,tik->tij", A, local)


def displacements(body, q_b, q_b_ref=None) -> np.ndarray:
    """Inertial nodal displacement ``deformed_positions(q_b) - deformed_positions(q_b_ref)``
    [m]; ``q_b_ref`` defaults to the undeformed body at the frame pose of ``q_b``
    (then it is ``A(e) Phi q_e``, the elastic displacement in inertial components)."""
    if q_b_ref is None:
        _, e, q_e = _split(body, q_b)
        u = elastic_displacements(body, q_e)
        if np.ndim(e) == 1:
            return u @ A_of(e).T
        return np.einsum("tjk,tik->tij", np.stack([A_of(ek) for ek in e]), u)
    return deformed_positions(body, q_b) - deformed_positions(body, q_b_ref)


def nodal_stress(body, q_e, wrenches: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
    """``S q_e`` (N, 6) [Pa], Voigt xx, yy, zz, yz, xz, xy in the body frame
    (small strain, linear in ``q_e``); ``q_e`` (n_q,) or (n_t, n_q) -> (n_t, N, 6).

    ``wrenches``: ``{marker: W}`` with ``W = [F; M]`` (6,) or (n_t, 6) [N, N m], body
    frame: adds the static correction ``sum_I S_I W_I`` of those interfaces (module
    doc); ``ValueError`` naming the marker if the body holds no residual stress modes
    for it."""
    sig = np.einsum("icq,...q->...ic", body.stress_modes, np.asarray(q_e, dtype=float))
    for name, W in (wrenches or {}).items():
        sig = sig + np.einsum("icw,...w->...ic", residual_stress_modes(body, name),
                              np.asarray(W, dtype=float))
    return sig


def residual_stress_modes(body, name: str) -> np.ndarray:
    """The residual stress modes ``S_I`` (N, 6, 6) [Pa/N, Pa/(N m)] of marker ``name``."""
    mk = body.marker(name)
    if mk.stress_residual is None:
        raise ValueError(f"body '{body.name}': marker '{name}' has no residual stress modes; "
                         "preprocess the body with residual_flexibility = true")
    return mk.stress_residual


def von_mises_stress(body, q_e, wrenches: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
    """Nodal von Mises stress (N,) [Pa] (or (n_t, N)) of :func:`nodal_stress`."""
    return von_mises(nodal_stress(body, q_e, wrenches))
