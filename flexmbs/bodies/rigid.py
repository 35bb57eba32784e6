"""Rigid bodies: data (THEORY §5.2) and Newton-Euler equations (§5.3, (2.4)).

Coordinates of a rigid body: ``q_b = [r, e]``, the position ``r`` of the body origin
``O`` (inertial, m) and the Euler parameters ``e`` of ``A(e)`` (body -> inertial).  The
body-frame angular velocity and acceleration are ``omega' = 2 L(e) ed`` and
``alpha' = 2 L(e) edd`` (``L(ed) ed = 0``); the origin's acceleration in body components
is ``a' = A^T rdd``.  Projecting (2.4) with the virtual displacements ``delta r`` and
``delta pi' = 2 L delta e`` gives the residual rows (``c`` the centre of mass and
``I_O`` the inertia about ``O``, both in body components, ``g`` gravity):

    r_r = m rdd + A (m alpha' x c + m omega' x (omega' x c)) - m g
    r_e = 2 L^T (m c x (A^T (rdd - g)) + I_O alpha' + omega' x I_O omega')

The normalisation ``e.e = 1`` is a constraint row of the system (it removes the
singular direction ``e`` of the 4x4 block ``4 L^T I_O L``), so a body can spin forever.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexmbs.bodies import ffrf_kernel, ffrf_reference
from flexmbs.bodies.marker import Marker
from flexmbs.compiled import arg, backend, state
from flexmbs.kinematics.rotation import A_of, G_of, L_of, e_from_matrix


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """``np.allclose(a, b, rtol, atol)`` of finite arrays, ``|a - b| <= atol + rtol |b|``
    elementwise, without its generality (about 30 us a call)."""
    return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def _ro(a) -> np.ndarray:
    arr = np.array(a, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class RigidBody:
    """A rigid body.

    Parameters
    ----------
    name : unique body name
    m : mass [kg]
    I_S : (3, 3) inertia tensor about the centre of mass, body axes [kg m^2]
          (products of inertia with the sign convention ``I_xy = -int x y dm``)
    com : (3,) centre of mass in the body frame [m]
    r0 : (3,) initial position of the body origin [m]
    R0 : (3, 3) initial orientation (body -> inertial)
    v0 : (3,) initial velocity of the body origin [m/s], inertial
    omega0 : (3,) initial angular velocity [rad/s], inertial
    markers : {name: (s, R)} named markers, position [m] and axes in the body frame
    """

    kind = "rigid"          # its case-file type (flexmbs.case.kinds)

    name: str
    m: float
    I_S: np.ndarray
    com: np.ndarray = field(default_factory=lambda: _ro(np.zeros(3)))
    r0: np.ndarray = field(default_factory=lambda: _ro(np.zeros(3)))
    R0: np.ndarray = field(default_factory=lambda: _ro(np.eye(3)))
    v0: np.ndarray = field(default_factory=lambda: _ro(np.zeros(3)))
    omega0: np.ndarray = field(default_factory=lambda: _ro(np.zeros(3)))
    markers: dict = field(default_factory=dict)

    is_ground = False
    n_coords = 7

    def __post_init__(self):
        for key in ("I_S", "com", "r0", "R0", "v0", "omega0"):
            object.__setattr__(self, key, _ro(getattr(self, key)))
        object.__setattr__(self, "m", float(self.m))
        object.__setattr__(self, "markers", dict(self.markers))

    # -- constructors for common shapes ----------------------------------------------
    @classmethod
    def box(cls, name: str, size, rho: float, **kw) -> RigidBody:
        """Solid box of edge lengths ``size`` (a, b, c) [m], density ``rho`` [kg/m^3]."""
        a, b, c = (float(x) for x in size)
        m = rho * a * b * c
        I_S = m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
        return cls(name, m, I_S, **kw)

    @classmethod
    def cylinder(cls, name: str, radius: float, length: float, rho: float,
                 axis: str = "z", **kw) -> RigidBody:
        """Solid circular cylinder along body axis ``axis``."""
        m = rho * np.pi * radius**2 * length
        Ia, It = 0.5 * m * radius**2, m * (3 * radius**2 + length**2) / 12.0
        d = {"x": [Ia, It, It], "y": [It, Ia, It], "z": [It, It, Ia]}[axis]
        return cls(name, m, np.diag(d), **kw)

    @classmethod
    def sphere(cls, name: str, radius: float, rho: float, **kw) -> RigidBody:
        """Solid sphere."""
        m = rho * 4.0 / 3.0 * np.pi * radius**3
        return cls(name, m, 0.4 * m * radius**2 * np.eye(3), **kw)

    # -- markers --------------------------------------------------------------------
    def __getitem__(self, name: str) -> Marker:
        if name not in self.markers:
            raise KeyError(f"RigidBody '{self.name}': no marker '{name}' "
                           f"(has: {', '.join(self.markers) or 'none'})")
        s, R = self.markers[name]
        return Marker(name, self, s, R)

    def marker(self, name: str, s=(0.0, 0.0, 0.0), R=None) -> Marker:
        """A marker at body-frame position ``s`` with body-frame axes ``R``."""
        return Marker(name, self, np.asarray(s, float), np.eye(3) if R is None else R)

    # -- derived data ---------------------------------------------------------------
    @property
    def I_O(self) -> np.ndarray:
        """Inertia about the body origin (Steiner): ``I_S + m (c.c E - c c^T)``."""
        cached = self.__dict__.get("_I_O")
        if cached is None:
            c = self.com
            cached = self.I_S + self.m * ((c @ c) * np.eye(3) - np.outer(c, c))
            cached.setflags(write=False)
            self.__dict__["_I_O"] = cached
        return cached

    def initial_q(self) -> np.ndarray:
        return np.concatenate([self.r0, e_from_matrix(self.R0)])

    def initial_qd(self) -> np.ndarray:
        e = e_from_matrix(self.R0)
        return np.concatenate([self.v0, 0.5 * G_of(e).T @ self.omega0])

    def problems(self) -> list[str]:
        """Every problem with the data (empty if valid).  The body is immutable (frozen,
        read-only arrays): the checks run once, at the first call."""
        found = self.__dict__.get("_problems")
        if found is None:
            found = self.__dict__["_problems"] = tuple(self._data_problems())
        return list(found)

    def _data_problems(self) -> list[str]:
        out = []
        who = f"RigidBody '{self.name}'"
        if not np.isfinite(self.m) or self.m <= 0:
            out.append(f"{who}: mass must be positive, got {self.m}")
        for key, shape in (("I_S", (3, 3)), ("com", (3,)), ("r0", (3,)), ("R0", (3, 3)),
                           ("v0", (3,)), ("omega0", (3,))):
            val = getattr(self, key)
            if val.shape != shape:
                out.append(f"{who}: {key} must have shape {shape}, got {val.shape}")
            elif not np.all(np.isfinite(val)):
                out.append(f"{who}: {key} has non-finite entries")
        if self.I_S.shape == (3, 3) and np.all(np.isfinite(self.I_S)):
            if not _close(self.I_S, self.I_S.T, rtol=1e-10, atol=1e-14 * np.abs(self.I_S).max()):
                out.append(f"{who}: inertia I_S must be symmetric, got {self.I_S.tolist()}")
            else:
                lam = np.linalg.eigvalsh(self.I_S)
                if lam.min() <= 0:
                    out.append(f"{who}: inertia I_S must be positive definite, "
                               f"eigenvalues {np.round(lam, 12).tolist()}")
                elif lam[2] > lam[0] + lam[1] + 1e-12 * lam[2]:
                    out.append(f"{who}: inertia I_S violates the triangle inequality "
                               f"(principal moments {lam.tolist()})")
        if self.R0.shape == (3, 3) and np.all(np.isfinite(self.R0)):
            if not _close(self.R0 @ self.R0.T, np.eye(3), rtol=1e-5, atol=1e-9) \
                    or np.linalg.det(self.R0) < 0:
                out.append(f"{who}: R0 must be a rotation matrix (orthonormal, det +1)")
        return out

    # -- kinematics on the coordinates q_b = [r, e] ------------------------------------
    def A(self, q: np.ndarray) -> np.ndarray:
        return A_of(q[3:7])

    def omega(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Angular velocity, inertial components: ``2 G(e) ed``."""
        return 2.0 * G_of(q[3:7]) @ qd[3:7]

    # -- dynamics --------------------------------------------------------------------
    def residual(self, q, qd, qdd, gravity) -> np.ndarray:
        """Rows ``[r_r; r_e]`` of the module docstring, shape (7,): the floating-frame
        residual with no elastic coordinates (``ffrf_residual`` with ``lin0 = [m c, I_O]``,
        ``n_q = 0``) of the compiled kernels or of their reference
        (:func:`flexmbs.compiled.backend`)."""
        return backend(ffrf_kernel, ffrf_reference).ffrf_residual(
            *self._state_args(q, qd, qdd, gravity), *self.kernel_args())

    def _state_args(self, q, qd, qdd, gravity) -> tuple:
        """The state arguments of the kernels, shapes checked (:func:`flexmbs.compiled.state`)."""
        return state(f"RigidBody '{self.name}'", self.n_coords, q, qd, qdd, gravity)

    def kernel_args(self) -> tuple:
        """Constant arguments of :func:`~flexmbs.bodies.ffrf_kernel.ffrf_residual` for a
        floating frame with no elastic coordinates: ``lin0 = [m c, I_O]``."""
        a = self.__dict__.get("_kargs")
        if a is None:
            z = np.zeros
            a = self.__dict__["_kargs"] = (
                float(self.m), arg(np.concatenate([self.m * np.asarray(self.com, float),
                                                   np.ravel(self.I_O)])),
                z((0, 12)), z((0, 0)), z((0, 3)), z((0, 3)), z((0, 3)), z((0, 0)),
                z((0, 0)), z((0, 0)), 0)
        return a

    def tangent(self, q, qd, qdd, gravity):
        """``(K, C, M)``: derivatives of :meth:`residual` by q, qd, qdd (7x7 each):
        ``ffrf_tangent`` with ``n_q = 0`` of the compiled kernels or of their reference
        (:func:`flexmbs.compiled.backend`)."""
        return backend(ffrf_kernel, ffrf_reference).ffrf_tangent(
            *self._state_args(q, qd, qdd, gravity), *self.kernel_args()[:6],
            *self.tangent_args())

    def tangent_args(self) -> tuple:
        """Constant arguments of :func:`~flexmbs.bodies.ffrf_kernel.ffrf_tangent` after those
        shared with the residual (all empty: no elastic coordinates)."""
        a = self.__dict__.get("_targs")
        if a is None:
            z = np.zeros
            a = self.__dict__["_targs"] = (
                z((0, 3)), z((0, 0)), z((0, 0)), z((0, 9)), z((0, 0)), z((0, 0)), z((0, 3)),
                z((0, 0)), z((0, 9)), z((0, 0)), z((0, 0)), z((0, 0)), 0)
        return a

    def kinetic_energy(self, q, qd) -> float:
        """``T = 1/2 m |rd|^2 + m rd . A (omega' x c) + 1/2 omega'^T I_O omega'``."""
        e = q[3:7]
        w = 2.0 * L_of(e) @ qd[3:7]
        rd = qd[0:3]
        return 0.5 * self.m * rd @ rd + self.m * rd @ (A_of(e) @ np.cross(w, self.com)) \
            + 0.5 * w @ self.I_O @ w

    def potential_energy(self, q, gravity) -> float:
        """Gravity potential ``V = -m g . (r + A c)``."""
        return -self.m * gravity @ (q[0:3] + A_of(q[3:7]) @ self.com)

    def __repr__(self) -> str:
        return f"RigidBody('{self.name}', m={self.m:g} kg)"


def _point_mass(cls, name: str, m: float, **kw):
    """A point mass (3 translational DOF); see :class:`flexmbs.bodies.point_mass.PointMass`."""
    from flexmbs.bodies.point_mass import PointMass
    return PointMass(name, m, **kw)


RigidBody.point_mass = classmethod(_point_mass)
