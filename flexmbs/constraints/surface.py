"""Point-on-surface joint (u = 1): a point of Q stays on a surface fixed in P, the two
surface parameters eliminated.

The surface is a height field over P's x-y plane, ``z = f(x, y)`` [m], a C2 bicubic
spline through the grid ``surface_x`` (nx,), ``surface_y`` (ny,), ``surface_z`` (nx, ny)
(scipy's ``RectBivariateSpline``); P (``at``, ``axis``) is the height field's origin
and normal, Q (``second_at``) the point on it (:mod:`flexmbs.constraints.two_point`).
With Q's point in P's coordinates,
``u = (x_P . d, y_P . d, z_P . d)``, the row and its jets are

    g   = u_z - f(u_x, u_y),
    dg  = du_z - f_x du_x - f_y du_y,
    d2g = h_z - f_x h_x - f_y h_y - [du_x du_y] [[f_xx, f_xy], [f_xy, f_yy]] [du_x du_y]^T,

(``h`` the Hessians of ``u``).  A flat ``f`` is the sphere-on-plane joint.  The multiplier
``lam`` [N] is the contact force along the row's gradient (reactions ``-G^T lam``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import RectBivariateSpline

from flexmbs.constraints.two_point import TwoPointJoint
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.relative import offset_along


@dataclass(frozen=True, eq=False)
class PointOnSurface(TwoPointJoint):
    """Height field ``surface_z[i, j] = f(surface_x[i], surface_y[j])`` [m] in P's frame."""

    surface_x: tuple | None = None
    surface_y: tuple | None = None
    surface_z: tuple | None = None
    kind = "point_on_surface"
    labels = ("on surface",)
    coordinate_names = ("x", "y")

    def problems(self) -> list[str]:
        out = super().problems()
        try:
            self.spline()
        except (TypeError, ValueError) as exc:
            out.append(f"PointOnSurface '{self.name}': surface_x, surface_y, surface_z: {exc}")
        return out

    def spline(self) -> RectBivariateSpline:
        """The height field's spline; ValueError for unusable samples."""
        cached = self.__dict__.get("_spline")
        if cached is not None:
            return cached
        if self.surface_x is None or self.surface_y is None or self.surface_z is None:
            raise ValueError("give the grid of the surface (x (nx,), y (ny,), z (nx, ny) [m])")
        x, y = np.asarray(self.surface_x, float), np.asarray(self.surface_y, float)
        z = np.asarray(self.surface_z, float)
        if x.ndim != 1 or y.ndim != 1 or z.shape != (len(x), len(y)) or min(z.shape) < 4:
            raise ValueError(f"expected x (nx,), y (ny,), z (nx, ny) with nx, ny >= 4, got "
                             f"shapes {x.shape}, {y.shape}, {z.shape}")
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) <= 0):
            raise ValueError("expected strictly increasing surface_x and surface_y")
        spline = RectBivariateSpline(x, y, z, kx=3, ky=3, s=0)
        self.__dict__["_spline"] = spline
        return spline

    def equations(self, P, Q, t):
        ux, uy, uz = (offset_along(P, Q, k) for k in range(3))
        f = self.spline()
        x, y = float(ux.v), float(uy.v)
        fx, fy = float(f.ev(x, y, dx=1)), float(f.ev(x, y, dy=1))
        g = uz.v - float(f.ev(x, y))
        d = uz.d - fx * ux.d - fy * uy.d
        h = None
        if uz.h is not None:
            fxx, fxy = float(f.ev(x, y, dx=2)), float(f.ev(x, y, dx=1, dy=1))
            fyy = float(f.ev(x, y, dy=2))
            cross = fxy * np.outer(ux.d, uy.d)
            h = (uz.h - fx * ux.h - fy * uy.h - fxx * np.outer(ux.d, ux.d)
                 - fyy * np.outer(uy.d, uy.d) - cross - cross.T)
        return [J.Jet(np.asarray(g), d, h)]

    def coordinates(self, P, Q):
        return [offset_along(P, Q, 0), offset_along(P, Q, 1)]
