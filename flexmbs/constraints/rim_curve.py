"""The deformed rim of an elastic wheel as a smooth closed curve (THEORY §2.1, §4).

The rim is a ring of ``N`` mesh nodes evenly spaced in angle about the wheel's axis (a
named node set of the mesh).  Node ``k`` sits at ``X_k`` (body frame) with mode rows
``Phi_k`` (3 x n_q), so its deformed body-frame position is ``u_k = X_k + Phi_k q_e``.
Around the ring both are interpolated trigonometrically in the angle
``psi = phi - phi_0`` (``phi_0`` the angle of the first node):

    u(psi) = X(psi) + Phi(psi) q_e,     f(psi) = sum_j b_j(psi) F_j,
    b(psi) = [1, cos psi, sin psi, ..., cos K psi, sin K psi (, cos(N/2) psi)],

with the coefficients ``F_j`` of the discrete Fourier transform of the nodal values
(``K = (N - 1) // 2``; the last cosine for even ``N``), so ``f(psi_k) = f_k`` at every
node and a circle ``X(psi)`` is reproduced exactly.  The curve is smooth (C-infinity),
with ``u'``, ``u''`` from ``b'``, ``b''``.  Every function here is complex-safe (no
``abs``, no ``np.linalg.norm``) for the complex-step derivatives of the rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def trig_basis(psi, N: int, order: int = 0) -> np.ndarray:
    """``d^order b / dpsi^order`` (N,) of the interpolation basis at ``psi`` [rad]."""
    K = (N - 1) // 2
    j = np.arange(1, K + 1)
    c, s = np.cos(j * psi), np.sin(j * psi)
    # derivatives of (cos, sin)(j psi) cycle: (c, s) -> j (-s, c) -> j^2 (-c, -s)
    if order == 0:
        pairs = (c, s)
    elif order == 1:
        pairs = (-j * s, j * c)
    else:
        pairs = (-j * j * c, -j * j * s)
    cols = np.empty(2 * K, dtype=np.result_type(c, float))
    cols[0::2], cols[1::2] = pairs
    head = np.array([1.0 if order == 0 else 0.0], dtype=cols.dtype)
    out = [head, cols]
    if N % 2 == 0:
        m = N // 2
        nyq = (np.cos(m * psi) if order == 0 else -m * np.sin(m * psi) if order == 1
               else -m * m * np.cos(m * psi))
        out.append(np.array([nyq]))
    return np.concatenate(out)


def trig_coefficients(values: np.ndarray) -> np.ndarray:
    """Coefficients (N, ...) of the interpolant through ``values`` (N, ...) at the evenly
    spaced angles ``psi_k = 2 pi k / N`` (in the order of :func:`trig_basis`)."""
    N = len(values)
    c = np.fft.fft(values, axis=0) / N
    K = (N - 1) // 2
    out = np.empty((N,) + values.shape[1:])
    out[0] = c[0].real
    out[1:2 * K + 1:2] = 2.0 * c[1:K + 1].real
    out[2:2 * K + 1:2] = -2.0 * c[1:K + 1].imag
    if N % 2 == 0:
        out[-1] = c[N // 2].real
    return out


@dataclass(frozen=True, eq=False)
class RimCurve:
    """The interpolated rim: ``phi_0`` [rad], frame ``(a, b, axis)`` (body frame, columns
    of ``frame``), ``centre`` [m], coefficients ``X_c`` (N, 3) [m] and ``Phi_c``
    (N, 3, n_q), the ring's ``nodes`` in angular order."""

    phi_0: float
    frame: np.ndarray
    centre: np.ndarray
    X_c: np.ndarray
    Phi_c: np.ndarray
    nodes: np.ndarray

    @property
    def n(self) -> int:
        return len(self.nodes)

    def coefficients(self, q_e) -> np.ndarray:
        """``U`` (N, 3): the coefficients of ``u(psi) = X(psi) + Phi(psi) q_e``."""
        return self.X_c + self.Phi_c @ q_e

    def point(self, U, psi, order: int = 0):
        """``d^order u / dpsi^order`` (3,) from the coefficients ``U``."""
        return trig_basis(psi, self.n, order) @ U

    def angle_of_node(self, k: int) -> float:
        return 2.0 * np.pi * k / self.n

    @property
    def B_nodes(self) -> np.ndarray:
        """``b(psi_k)`` of every node (N, N): ``B_nodes @ U`` are the nodal ``u_k``."""
        cached = self.__dict__.get("_B_nodes")
        if cached is None:
            cached = np.stack([trig_basis(self.angle_of_node(k), self.n)
                               for k in range(self.n)])
            cached.setflags(write=False)
            self.__dict__["_B_nodes"] = cached
        return cached


def ring_order(points: np.ndarray, axis: np.ndarray, who: str) -> tuple:
    """``(order, phi_0, frame, centre)`` of a ring of points about ``axis`` (body frame):
    the points sorted by angle, checked to lie in one plane normal to the axis and evenly
    spaced in angle.  ValueError naming ``who`` otherwise."""
    if len(points) < 8:
        raise ValueError(f"{who}: the rim needs a ring of at least 8 nodes, got "
                         f"{len(points)}")
    w = np.asarray(axis, float) / np.linalg.norm(axis)
    a = np.cross(w, [1.0, 0.0, 0.0] if abs(w[0]) < 0.9 else [0.0, 1.0, 0.0])
    a /= np.linalg.norm(a)
    frame = np.column_stack([a, np.cross(w, a), w])
    centre = points.mean(axis=0)
    loc = (points - centre) @ frame
    radius = np.hypot(loc[:, 0], loc[:, 1])
    spread = np.ptp(loc[:, 2])
    if spread > 1e-6 * radius.max():
        raise ValueError(f"{who}: the rim nodes must lie in one plane normal to the wheel "
                         f"axis (a ring), but they span {spread:.3g} m along it")
    phi = np.arctan2(loc[:, 1], loc[:, 0])
    order = np.argsort(phi)
    step = np.diff(np.append(phi[order], phi[order][0] + 2.0 * np.pi))
    N = len(points)
    if np.max(np.abs(step - 2.0 * np.pi / N)) > 1e-6 * 2.0 * np.pi / N:
        raise ValueError(f"{who}: the rim nodes must be evenly spaced in angle about the "
                         f"wheel axis; their steps range from {step.min():.6g} to "
                         f"{step.max():.6g} rad (expected {2 * np.pi / N:.6g})")
    return order, float(phi[order][0]), frame, centre


def rim_curve(points: np.ndarray, modes: np.ndarray, nodes, axis, who: str) -> RimCurve:
    """The :class:`RimCurve` of mesh ``nodes`` (``points`` (n, 3) [m], ``modes``
    (n, 3, n_q)) about ``axis`` (body frame)."""
    nodes = np.asarray(nodes, int)
    order, phi_0, frame, centre = ring_order(points[nodes], axis, who)
    nodes = nodes[order]
    X_c = trig_coefficients(points[nodes])
    Phi_c = trig_coefficients(np.asarray(modes, float)[nodes])
    return RimCurve(phi_0, frame, centre, X_c, Phi_c, nodes)
