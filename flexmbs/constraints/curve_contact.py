"""Curve-on-curve cam joint (u = 1): a planar curve of P touches a planar curve of Q.

Both curves lie in planes normal to ``z_P`` (the mechanism keeps them in one plane, e.g.
by revolute or prismatic joints about / along ``z_P``); each is a polar curve about its
marker, ``c_i(s_i) = p_i + rho_i(s_i) (cos s_i a_i + sin s_i b_i)`` with ``a, b`` the
marker's x, y axes and ``rho_i`` a C2 periodic cubic spline (a disc cam; a roller is a
constant radius).  The contact parameters ``s = (s_1, s_2)`` solve the common-normal
conditions

    h_1 = (c_2 - c_1) . t_1 = 0,      h_2 = (t_1 x t_2) . z_P = 0,      t_i = dc_i/ds_i,

(c_2 on the normal of curve 1, parallel tangents), found by Newton's method from the
line of the two markers' origins (exact for circles; a function of the state only, so
runs repeat to the last bit), or else from the best of a grid of samples; the row is
the signed gap along curve 1's outer normal ``n_1 = t_1 x z_P / |t_1|``:

    g(x) = G(x, s(x)) = (c_2 - c_1) . n_1.

The parameters are eliminated by the implicit-function theorem: with ``H = [h_1, h_2]``,

    s_x  = -H_s^-1 H_x,
    s_xx = -H_s^-1 (H_xx + H_xs s_x + s_x^T H_sx + s_x^T H_ss s_x),
    g_x  = G_x + G_s s_x,
    g_xx = G_xx + G_xs s_x + s_x^T G_sx + s_x^T G_ss s_x + G_s . s_xx,

all blocks taken from jets over ``[x; s]`` (the frame jets padded by two zeros), so the
Jacobian, the acceleration term and the Hessian term are exact.  The contact must be
non-conformal (curvatures not equal and opposite) for ``H_s`` to be regular.  The
multiplier ``lam`` [N] is the normal contact force (reactions ``-G^T lam``: ``-lam n_1``
on Q).  Joint coordinates: the contact parameters ``s_1``, ``s_2`` [rad].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from flexmbs.constraints.two_point import TwoPointJoint
from flexmbs.errors import ModelError
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.frames import FrameJet


def polar_spline(angles, radii) -> CubicSpline:
    """Periodic C2 spline ``rho(s)`` [m] through samples over less than one turn."""
    x, y = np.asarray(angles, float), np.asarray(radii, float)
    if x.ndim != 1 or x.shape != y.shape or len(x) < 4 or not np.all(np.isfinite(x)) \
            or not np.all(np.isfinite(y)):
        raise ValueError(f"expected two finite arrays of equal length >= 4, got shapes "
                         f"{x.shape} and {y.shape}")
    if np.any(np.diff(x) <= 0) or x[-1] - x[0] >= 2 * np.pi or np.any(y <= 0):
        raise ValueError("expected increasing angles spanning less than one turn and "
                         "positive radii [m]")
    return CubicSpline(np.append(x, x[0] + 2 * np.pi), np.append(y, y[0]), bc_type="periodic")


def local_point(spline, s: float) -> np.ndarray:
    """``[c, c', c'', c''']`` (4, 2) of ``c(s) = rho(s) (cos s, sin s)``."""
    r = [float(spline(s, k)) for k in range(4)]
    e, f = np.array([np.cos(s), np.sin(s)]), np.array([-np.sin(s), np.cos(s)])
    return np.array([r[0] * e,
                     r[1] * e + r[0] * f,
                     r[2] * e + 2 * r[1] * f - r[0] * e,
                     r[3] * e + 3 * r[2] * f - 3 * r[1] * e - r[0] * f])


def _pad(j: J.Jet, m: int) -> J.Jet:
    d = np.concatenate([j.d, np.zeros((*j.d.shape[:-1], m))], axis=-1)
    h = None
    if j.h is not None:
        h = np.zeros(j.h.shape[:-2] + (j.h.shape[-1] + m,) * 2)
        h[..., :-m, :-m] = j.h
    return J.Jet(j.v, d, h)


def _curve_jets(F, spline, s: J.Jet) -> tuple[J.Jet, J.Jet]:
    """Inertial point and tangent jets of the polar curve on frame ``F`` at parameter ``s``."""
    c = local_point(spline, float(s.v))
    cx, cy, tx, ty = (J.apply(s, *c[k:k + 3, i]) for k in (0, 1) for i in (0, 1))
    point = F.p + J.mul(cx, F.x) + J.mul(cy, F.y)
    tangent = J.mul(tx, F.x) + J.mul(ty, F.y)
    return point, tangent


@dataclass(frozen=True, eq=False)
class CurveOnCurve(TwoPointJoint):
    """Polar curves ``(curve_x, curve_y)`` on P and ``(second_curve_x, second_curve_y)``
    on Q (angles [rad], radii [m]) in contact (module docstring)."""

    curve_x: tuple | None = None
    curve_y: tuple | None = None
    second_curve_x: tuple | None = None
    second_curve_y: tuple | None = None
    kind = "curve_on_curve"
    labels = ("gap",)
    coordinate_names = ("s_1", "s_2")

    def splines(self) -> tuple[CubicSpline, CubicSpline]:
        cached = self.__dict__.get("_splines")
        if cached is None:
            cached = (polar_spline(self.curve_x, self.curve_y),
                      polar_spline(self.second_curve_x, self.second_curve_y))
            self.__dict__["_splines"] = cached
        return cached

    def problems(self) -> list[str]:
        out = super().problems()
        try:
            self.splines()
        except (TypeError, ValueError) as exc:
            out.append(f"CurveOnCurve '{self.name}': curves: {exc}")
        return out

    # -- the contact parameters ---------------------------------------------------------
    def _conditions(self, P, Q, s1, s2):
        """Jets of ``h_1``, ``h_2`` and ``g`` over ``[x; s]`` (P, Q padded)."""
        sp1, sp2 = self.splines()
        c1, t1 = _curve_jets(P, sp1, s1)
        c2, t2 = _curve_jets(Q, sp2, s2)
        gap = c2 - c1
        h1 = J.dot(gap, t1)
        h2 = J.dot(J.cross(t1, t2), P.z)
        n1 = J.cross(t1, P.z)
        g = J.dot(gap, n1) * J.apply(J.dot(n1, n1), *_inv_sqrt(float(J.dot(n1, n1).v)))
        return h1, h2, g

    def _solve(self, P, Q) -> np.ndarray:
        """Contact parameters at the frames' values (Newton on ``h``; module docstring)."""
        sp1, sp2 = self.splines()
        p1, a1, b1, z = P.p.v, P.x.v, P.y.v, P.z.v
        p2, a2, b2 = Q.p.v, Q.x.v, Q.y.v

        def h_and_jac(s):
            c1, c2 = local_point(sp1, s[0]), local_point(sp2, s[1])
            C1 = p1 + c1[0, 0] * a1 + c1[0, 1] * b1
            T1, D1 = (c1[k, 0] * a1 + c1[k, 1] * b1 for k in (1, 2))
            C2 = p2 + c2[0, 0] * a2 + c2[0, 1] * b2
            T2, D2 = (c2[k, 0] * a2 + c2[k, 1] * b2 for k in (1, 2))
            h = np.array([(C2 - C1) @ T1, np.cross(T1, T2) @ z])
            jac = np.array([[-T1 @ T1 + (C2 - C1) @ D1, T2 @ T1],
                            [np.cross(D1, T2) @ z, np.cross(T1, D2) @ z]])
            gap = (C2 - C1) @ np.cross(T1, z) / np.linalg.norm(T1)
            return h, jac, gap

        d = p2 - p1
        starts = (np.array([np.arctan2(d @ b1, d @ a1), np.arctan2(-d @ b2, -d @ a2)]), None)
        for s in starts:
            s = _grid_start(h_and_jac) if s is None else s
            for _ in range(30):
                h, jac, _ = h_and_jac(s)
                if np.max(np.abs(h)) < 1e-14 * max(1.0, np.abs(d).max()):
                    break
                try:
                    s = s - np.linalg.solve(jac, h)
                except np.linalg.LinAlgError:
                    break
            h = h_and_jac(s)[0]
            if np.max(np.abs(h)) < 1e-10 * max(1.0, np.abs(d).max()):
                return s
        raise ModelError(f"CurveOnCurve '{self.name}': no contact point of the two curves "
                         f"found (common normal), residual {np.max(np.abs(h)):.3g} m")

    def _eliminated(self, P, Q):
        """``(g, s1, s2)`` as jets over ``x`` (implicit-function theorem)."""
        n = P.p.d.shape[-1]
        order = 1 if P.p.h is None else 2
        s = self._solve(P, Q)
        Pp, Qp = (_padded(F, 2) for F in (P, Q))
        s1 = J.Jet.variable(n, s[0], n + 2, order)
        s2 = J.Jet.variable(n + 1, s[1], n + 2, order)
        h1, h2, g = self._conditions(Pp, Qp, s1, s2)
        Hd = np.array([h1.d, h2.d])
        Hs_inv = np.linalg.inv(Hd[:, n:])
        s_x = -Hs_inv @ Hd[:, :n]                                  # (2, n)
        s_xx = g_xx = None
        if order == 2:
            rhs = np.array([_chain2(Hk, s_x, n) for Hk in (h1, h2)])   # (2, n, n)
            s_xx = -np.einsum("kl,lij->kij", Hs_inv, rhs)
            g_xx = _chain2(g, s_x, n) + np.einsum("k,kij->ij", g.d[n:], s_xx)
        g_x = g.d[:n] + g.d[n:] @ s_x
        s_jets = [J.Jet(np.asarray(s[k]), s_x[k], None if s_xx is None else s_xx[k])
                  for k in range(2)]
        return J.Jet(np.asarray(float(g.v)), g_x, g_xx), s_jets[0], s_jets[1]

    def equations(self, P, Q, t):
        return [self._eliminated(P, Q)[0]]

    def coordinates(self, P, Q):
        _, s1, s2 = self._eliminated(P, Q)
        return [s1, s2]


def _inv_sqrt(v: float) -> tuple[float, float, float]:
    """``(f, f', f'')`` of ``f(v) = v^-1/2``."""
    return v**-0.5, -0.5 * v**-1.5, 0.75 * v**-2.5


def _padded(F, m: int) -> FrameJet:
    return FrameJet(*(_pad(j, m) for j in (F.p, F.x, F.y, F.z)))


def _chain2(F: J.Jet, s_x: np.ndarray, n: int) -> np.ndarray:
    """``F_xx + F_xs s_x + s_x^T F_sx + s_x^T F_ss s_x`` of a scalar jet over ``[x; s]``."""
    H = F.h
    X = H[:n, n:] @ s_x
    return H[:n, :n] + X + X.T + s_x.T @ H[n:, n:] @ s_x


def _grid_start(h_and_jac, m: int = 48) -> np.ndarray:
    """The sample ``(s_1, s_2)`` of an ``m x m`` grid with the smallest ``|h| + |gap|``
    (the touching pair of common normals, not the far side)."""
    grid = np.linspace(-np.pi, np.pi, m, endpoint=False)
    best, s_best = np.inf, None
    for a in grid:
        for b in grid:
            h, _, gap = h_and_jac(np.array([a, b]))
            r = np.abs(h).max() + abs(gap)
            if r < best:
                best, s_best = r, (a, b)
    return np.array(s_best)
