"""The deformed rim of an elastic wheel as a smooth closed curve (THEORY §2.1, §4).

The rim is a ring of ``N`` mesh nodes about the wheel's axis (a named node set of the
mesh).  Node ``k`` sits at ``X_k`` (body frame) with mode rows ``Phi_k`` (3 x n_q), so
its deformed body-frame position is ``u_k = X_k + Phi_k q_e``.  Around the ring both are
interpolated in the angle ``psi = phi - phi_0`` about the ring's centre (``phi_0`` the
angle of the first node) by one linear rule, a basis row ``b(psi)`` (n_F,) applied to
coefficients ``F`` (n_F, ...) of the nodal values:

    u(psi) = X(psi) + Phi(psi) q_e,     f(psi) = b(psi) F,     f(psi_k) = f_k,

with ``u'``, ``u''`` from ``b'``, ``b''``.  Two rules:

* nodes evenly spaced in angle (``psi_k = 2 pi k / N``): trigonometric interpolation,

      b(psi) = [1, cos psi, sin psi, ..., cos K psi, sin K psi (, cos(N/2) psi)],

  ``F`` (``n_F = N``) the discrete Fourier coefficients of the nodal values
  (``K = (N - 1) // 2``; the last cosine for even ``N``): C-infinity, a circle
  reproduced exactly;
* nodes unevenly spaced (a ring of an unstructured or graded mesh): the circle part by
  least squares plus a periodic cubic spline of the rest (:class:`RingSpline`),

      f(psi) = t(psi) P f_n + S(psi) (f_n - T P f_n),
      t(psi) = [1, cos psi, sin psi],   T = t(psi_k) (N x 3),   P = (T^T T)^-1 T^T,

  ``S(psi)`` the periodic cubic spline through the nodal values, its moments (second
  derivatives at the nodes) ``M`` times them; ``F = [P f_n; G f_n; M G f_n]``
  (``n_F = 2 N + 3``, ``G = I - T P``), so the spline acts on ``G f_n``, round-off for a
  circle (and so is the noise it adds to ``u'``).  It interpolates the nodes
  (``t(psi_k) P + S(psi_k)(I - T P) = I``), reproduces any ``f`` in
  ``span{1, cos psi, sin psi}`` exactly (then ``f_n - T P f_n = 0``): a circle about
  the ring's centre and every rigid-body mode row, so an undeformed rim is the circle to
  round-off; and ``u``, ``u'``, ``u''`` are
  continuous (``u'''`` jumps at the nodes), which the contact angle's Newton iteration
  and the contact's Hessian (``f_psi,psi``) need.  The error on a smooth rest (the
  deformation) is the cubic spline's: ``O(h^4)`` in ``u``, ``O(h^2)`` in ``u''`` (``h``
  the largest node step).  Trigonometric interpolation on uneven nodes would be
  ill-conditioned (and not unique for even ``N``), a spline of the coordinates alone would
  miss the circle by ``O(h^4)``.

Every function here is complex-safe (no ``abs``, no ``np.linalg.norm`` of ``psi``; the
spline's interval from ``Re psi``) for the complex-step derivatives of the rows.
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


def circle_basis(psi, order: int = 0) -> np.ndarray:
    """``d^order t / dpsi^order`` (3,) of ``t(psi) = [1, cos psi, sin psi]``."""
    c, s = np.cos(psi), np.sin(psi)
    rows = ((1.0, c, s), (0.0, -s, c), (0.0, -c, -s))[order]
    return np.array(rows, dtype=np.result_type(c, float))


def periodic_spline_moments(psi_k: np.ndarray) -> np.ndarray:
    """``M`` (N, N): the second derivatives ``S''(psi_k) = M f`` of the periodic cubic
    spline through values ``f`` at the angles ``psi_k`` (increasing, in ``[0, 2 pi)``),
    from the continuity of ``S'`` at every node (``h_k = psi_k+1 - psi_k``, cyclic):

        h_k-1 M_k-1 / 6 + (h_k-1 + h_k) M_k / 3 + h_k M_k+1 / 6
            = (f_k+1 - f_k) / h_k - (f_k - f_k-1) / h_k-1."""
    N = len(psi_k)
    h = np.diff(np.append(psi_k, 2.0 * np.pi))
    hm = np.roll(h, 1)                                   # h_k-1
    k, kp, km = np.arange(N), (np.arange(N) + 1) % N, (np.arange(N) - 1) % N
    lhs = np.zeros((N, N))
    rhs = np.zeros((N, N))
    np.add.at(lhs, (k, km), hm / 6.0)
    np.add.at(lhs, (k, k), (hm + h) / 3.0)
    np.add.at(lhs, (k, kp), h / 6.0)
    np.add.at(rhs, (k, kp), 1.0 / h)
    np.add.at(rhs, (k, k), -1.0 / h - 1.0 / hm)
    np.add.at(rhs, (k, km), 1.0 / hm)
    return np.linalg.solve(lhs, rhs)


@dataclass(frozen=True, eq=False)
class RingSpline:
    """The uneven-node interpolant (module docstring) at node angles ``psi_k`` (N,)
    [rad]: coefficients ``F = [P f; G f; M G f]`` (2 N + 3, ...) of nodal values ``f``
    (``G = I - T P``, ``M`` of :func:`periodic_spline_moments`), so a circle's spline
    part ``G f`` is round-off and so is its noise in ``u'``."""

    psi_k: np.ndarray
    P: np.ndarray
    G: np.ndarray
    MG: np.ndarray

    @classmethod
    def of(cls, psi_k: np.ndarray) -> "RingSpline":
        psi_k = np.asarray(psi_k, float)
        T = np.stack([circle_basis(p) for p in psi_k])
        P = np.linalg.solve(T.T @ T, T.T)
        G = np.eye(len(psi_k)) - T @ P
        return cls(psi_k, P, G, periodic_spline_moments(psi_k) @ G)

    def coefficients(self, values: np.ndarray) -> np.ndarray:
        """``F`` (2 N + 3, ...) of the nodal ``values`` (N, ...)."""
        values = np.asarray(values, float)
        return np.concatenate([np.tensordot(A, values, axes=1)
                               for A in (self.P, self.G, self.MG)])

    def basis(self, psi, order: int = 0) -> np.ndarray:
        """``d^order b / dpsi^order`` (2 N + 3,) at ``psi`` [rad]: ``t(psi)`` on ``P f``
        and, on the interval ``[psi_i, psi_i+1]`` (``h``, ``s = psi_i+1 - psi``,
        ``w = psi - psi_i``), the spline of ``g = G f`` with moments ``m = M G f``

            S = g_i s/h + g_i+1 w/h + m_i (s^3/h - h s)/6 + m_i+1 (w^3/h - h w)/6."""
        N = len(self.psi_k)
        two_pi = 2.0 * np.pi
        x = psi - two_pi * np.floor(np.real(psi) / two_pi)
        i = min(max(int(np.searchsorted(self.psi_k, np.real(x), side="right")) - 1, 0),
                N - 1)
        j = (i + 1) % N
        end = self.psi_k[j] if j else two_pi
        h = end - self.psi_k[i]
        s, w = end - x, x - self.psi_k[i]
        c, sn = np.cos(psi), np.sin(psi)
        if order == 0:
            t, cf = (1.0, c, sn), (s / h, w / h)
            cm = ((s ** 3 / h - h * s) / 6.0, (w ** 3 / h - h * w) / 6.0)
        elif order == 1:
            t, cf = (0.0, -sn, c), (-1.0 / h, 1.0 / h)
            cm = (h / 6.0 - s * s / (2.0 * h), w * w / (2.0 * h) - h / 6.0)
        else:
            t, cf, cm = (0.0, -c, -sn), (0.0, 0.0), (s / h, w / h)
        row = np.zeros(2 * N + 3, dtype=np.result_type(c, float))
        row[:3] = t
        row[[3 + i, 3 + j]] = cf
        row[[3 + N + i, 3 + N + j]] = cm
        return row


@dataclass(frozen=True, eq=False)
class RimCurve:
    """The interpolated rim: ``phi_0`` [rad], frame ``(a, b, axis)`` (body frame, columns
    of ``frame``), ``centre`` [m], coefficients ``X_c`` (n_F, 3) [m] and ``Phi_c``
    (n_F, 3, n_q), the ring's ``nodes`` in angular order, and the ``spline`` of unevenly
    spaced nodes (None: evenly spaced, trigonometric interpolation; module docstring)."""

    phi_0: float
    frame: np.ndarray
    centre: np.ndarray
    X_c: np.ndarray
    Phi_c: np.ndarray
    nodes: np.ndarray
    spline: RingSpline | None = None

    @property
    def n(self) -> int:
        return len(self.nodes)

    def coefficients(self, q_e) -> np.ndarray:
        """``U`` (n_F, 3): the coefficients of ``u(psi) = X(psi) + Phi(psi) q_e``."""
        return self.X_c + self.Phi_c @ q_e

    def basis(self, psi, order: int = 0) -> np.ndarray:
        """``d^order b / dpsi^order`` (n_F,) of the interpolation rule at ``psi`` [rad]."""
        if self.spline is None:
            return trig_basis(psi, self.n, order)
        return self.spline.basis(psi, order)

    def point(self, U, psi, order: int = 0):
        """``d^order u / dpsi^order`` (3,) from the coefficients ``U``."""
        return self.basis(psi, order) @ U

    def angle_of_node(self, k: int) -> float:
        if self.spline is None:
            return 2.0 * np.pi * k / self.n
        return float(self.spline.psi_k[k])

    @property
    def B_nodes(self) -> np.ndarray:
        """``b(psi_k)`` of every node (N, n_F): ``B_nodes @ U`` are the nodal ``u_k``."""
        cached = self.__dict__.get("_B_nodes")
        if cached is None:
            cached = np.stack([self.basis(self.angle_of_node(k)) for k in range(self.n)])
            cached.setflags(write=False)
            self.__dict__["_B_nodes"] = cached
        return cached


def circle_centre(loc: np.ndarray) -> np.ndarray:
    """In-plane centre (2,) of the circle through the points ``loc`` (n, 2+) by algebraic
    least squares, ``x^2 + y^2 = 2 c_x x + 2 c_y y + d`` (exact for points on a circle)."""
    mean = loc[:, :2].mean(axis=0)
    xy = loc[:, :2] - mean
    lhs = np.column_stack([2.0 * xy, np.ones(len(xy))])
    sol = np.linalg.lstsq(lhs, np.sum(xy * xy, axis=1), rcond=None)[0]
    return mean + sol[:2]


def ring_order(points: np.ndarray, axis: np.ndarray, who: str) -> tuple:
    """``(order, phi_0, frame, centre, psi_k)`` of a ring of points about ``axis`` (body
    frame): the points sorted by angle, checked to lie in one plane normal to the axis;
    if they are not evenly spaced, also on a circle about it (to 5 %; its centre by
    :func:`circle_centre`), around it (no gap over a quarter turn), at distinct angles
    (steps over 1e-3 of the mean) and convex (each node turns the polygon the same way),
    with ``psi_k`` their angles from the first node (None
    if evenly spaced).  ValueError naming ``who`` otherwise."""
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
    if np.max(np.abs(step - 2.0 * np.pi / N)) <= 1e-6 * 2.0 * np.pi / N:
        return order, float(phi[order][0]), frame, centre, None
    # unevenly spaced: angles about the circle's centre (the mean is not it)
    centre = centre + frame[:, :2] @ circle_centre(loc)
    loc = (points - centre) @ frame
    radius = np.hypot(loc[:, 0], loc[:, 1])
    if np.ptp(radius) > 0.05 * radius.mean():
        raise ValueError(f"{who}: the rim nodes must form a ring about the wheel axis (a "
                         f"circle to 5 %), but their distances from its centre range from "
                         f"{radius.min():.6g} to {radius.max():.6g} m")
    phi = np.arctan2(loc[:, 1], loc[:, 0])
    order = np.argsort(phi)
    step = np.diff(np.append(phi[order], phi[order][0] + 2.0 * np.pi))
    if step.max() > 0.5 * np.pi:
        raise ValueError(f"{who}: the rim nodes must go around the wheel axis, but they "
                         f"leave a gap of {step.max():.6g} rad (at most pi/2)")
    if step.min() < 1e-3 * 2.0 * np.pi / N:
        raise ValueError(f"{who}: the rim nodes must be at distinct angles about the wheel "
                         f"axis (one node per angle), but two are {step.min():.3g} rad apart "
                         f"(the mean step is {2.0 * np.pi / N:.3g} rad)")
    xy = loc[order, :2]
    edge = np.roll(xy, -1, axis=0) - xy                 # p_{k+1} - p_k, by angle
    back = np.roll(edge, 1, axis=0)                     # p_k - p_{k-1}
    turn = back[:, 0] * edge[:, 1] - back[:, 1] * edge[:, 0]
    if turn.min() <= 0.0:
        k = int(order[np.argmin(turn)])
        raise ValueError(f"{who}: the rim nodes must form a convex ring about the wheel "
                         f"axis (the contact is the lowest point of a convex curve), but "
                         f"the ring turns inwards at its node {k} (counted from 0 in the node set)")
    psi_k = phi[order] - phi[order][0]
    return order, float(phi[order][0]), frame, centre, psi_k


def rim_curve(points: np.ndarray, modes: np.ndarray, nodes, axis, who: str) -> RimCurve:
    """The :class:`RimCurve` of mesh ``nodes`` (``points`` (n, 3) [m], ``modes``
    (n, 3, n_q)) about ``axis`` (body frame)."""
    nodes = np.asarray(nodes, int)
    order, phi_0, frame, centre, psi_k = ring_order(points[nodes], axis, who)
    nodes = nodes[order]
    if psi_k is not None:
        spline = RingSpline.of(psi_k)
        return RimCurve(phi_0, frame, centre, spline.coefficients(points[nodes]),
                        spline.coefficients(np.asarray(modes, float)[nodes]), nodes, spline)
    X_c = trig_coefficients(points[nodes])
    Phi_c = trig_coefficients(np.asarray(modes, float)[nodes])
    return RimCurve(phi_0, frame, centre, X_c, Phi_c, nodes)
