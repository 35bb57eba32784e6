"""What a mode looks like: which body moves, along which axis, and its shape on the mesh.

A mode ``x`` (complex, in ``q``: :class:`~flexmbs.post.linearize.ModalResult`) moves the
nodes of a flexible body ``b`` elastically by ``u = Phi x_e`` (body frame, ``Phi`` the
``(N, 3, n_q)`` mode rows of the reduced body).  Its share along axis ``i``

    s_i = sum_nodes |u_i|^2 / sum_nodes |u|^2

tells bending in y (``s_y ~ 1``: for a beam along x spinning about z, *lag*, in the plane
of rotation) from bending in z (*flap*, out of that plane) and axial motion (x).  The
body with the largest ``sum |u|^2`` names the mode; a mode without elastic motion is
named by the body with the largest coordinate amplitude (rigid).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.post.recovery import elastic_displacements

AXES = ("x", "y", "z")


@dataclass(frozen=True)
class ModeLabel:
    """``body``, ``kind`` ("elastic" or "rigid"), ``axis`` (dominant body-frame axis of
    the elastic motion, "" if rigid) and ``share`` of that axis (0..1)."""

    body: str
    kind: str
    axis: str
    share: float

    def __str__(self) -> str:
        if self.kind == "rigid":
            return f"{self.body}: rigid"
        return f"{self.body}: elastic, {100 * self.share:.0f} % along {self.axis} (body frame)"


def label(asm, x: np.ndarray) -> ModeLabel:
    """The :class:`ModeLabel` of mode ``x`` (module docstring)."""
    best, best_e = None, 0.0
    for b in asm.bodies:
        s = asm.body_slices[b.name]
        body = getattr(b, "body", None)
        if getattr(body, "modes", None) is None or b.n_coords <= 7:
            continue
        u = elastic_displacements(body, x[s][7:])
        e = np.sum(np.abs(u) ** 2, axis=0)
        if e.sum() > best_e:
            best, best_e = (b.name, e / e.sum()), float(e.sum())
    if best is not None and best_e > 0.0:
        i = int(np.argmax(best[1]))
        return ModeLabel(best[0], "elastic", AXES[i], float(best[1][i]))
    amp = {b.name: float(np.linalg.norm(x[asm.body_slices[b.name]])) for b in asm.bodies}
    return ModeLabel(max(amp, key=amp.get) if amp else "", "rigid", "", 0.0)


def shape_fields(body, x_e: np.ndarray) -> np.ndarray:
    """The real elastic displacement field of a mode for plotting: ``Re(u e^{-i phi})``
    with the phase ``phi`` that makes it largest, scaled to ``max |u| = 1`` (N, 3)."""
    u = elastic_displacements(body, np.asarray(x_e, dtype=complex))
    k = np.unravel_index(np.argmax(np.abs(u)), u.shape)
    if abs(u[k]) == 0.0:
        return np.zeros(u.shape)
    v = (u * np.exp(-1j * np.angle(u[k]))).real
    return v / np.abs(v).max()
