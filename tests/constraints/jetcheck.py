"""Test support: random rigid bodies, local coordinate vectors and finite-difference checks.

Reference for every derivative check: central differences of the value (gradient) and
of the gradient (Hessian), step 1e-6, which agree with exact derivatives to ~1e-8.
"""
from __future__ import annotations

import numpy as np

from flexmbs.bodies.ground import ground
from flexmbs.bodies.rigid import RigidBody
from flexmbs.kinematics.frames import frame_jet
from flexmbs.kinematics.jet import Jet
from flexmbs.kinematics.rotation import A_of

STEP = 1e-6


def random_e(rng) -> np.ndarray:
    e = rng.normal(size=4)
    return e / np.linalg.norm(e)


def random_body(rng, name: str) -> RigidBody:
    return RigidBody(name, 1.0, np.eye(3) * 0.1, r0=rng.normal(size=3), R0=A_of(random_e(rng)))


def random_q(rng) -> np.ndarray:
    return np.concatenate([rng.normal(size=3), random_e(rng)])


class Layout:
    """Local vector ``x = [q_i; q_j; t]`` for a list of markers (ground has no coordinates)."""

    def __init__(self, markers):
        self.markers = markers
        self.offsets, n = [], 0
        for m in markers:
            if getattr(m.body, "is_ground", False):
                self.offsets.append(None)
            else:
                self.offsets.append(n)
                n += m.body.n_coords
        self.n = n + 1

    def split(self, x):
        return [None if o is None else x[o:o + m.body.n_coords]
                for m, o in zip(self.markers, self.offsets, strict=True)]

    def frames(self, x, order=2):
        qs = self.split(x)
        return [frame_jet(m, q, self.n, 0 if o is None else o, order)
                for m, q, o in zip(self.markers, qs, self.offsets, strict=True)]

    def time(self, x, order=2):
        return Jet.variable(self.n - 1, x[-1], self.n, order)

    def random_x(self, rng, t=None):
        parts = [random_q(rng) for o in self.offsets if o is not None]
        return np.concatenate([*parts, [rng.uniform(0.1, 1.0) if t is None else t]])


def pair(rng, with_ground=False):
    """Two random bodies (or ground and a body) and a random joint point and axis."""
    a = ground if with_ground else random_body(rng, "a")
    b = random_body(rng, "b")
    return a, b, rng.normal(size=3), rng.normal(size=3)


def fd_gradient(f, x, h=STEP):
    """Central differences of ``f`` (array-valued) over ``x``: shape f.shape + (n,)."""
    cols = []
    for k in range(len(x)):
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        cols.append((np.asarray(f(xp)) - np.asarray(f(xm))) / (2 * h))
    return np.stack(cols, axis=-1)


def check_jets(fun, x, rtol=1e-6, atol=1e-7):
    """``fun(x, order) -> list[Jet]``: gradient vs FD of values, Hessian vs FD of gradients."""
    jets = fun(x, 2)
    d = np.array([j.d for j in jets])
    h = np.array([j.h for j in jets])
    v1 = np.array([j.v for j in fun(x, 1)])
    assert np.allclose(v1, [j.v for j in jets])
    d_fd = fd_gradient(lambda y: np.array([j.v for j in fun(y, 1)]), x)
    h_fd = fd_gradient(lambda y: np.array([j.d for j in fun(y, 1)]), x)
    np.testing.assert_allclose(d, d_fd, rtol=rtol, atol=atol)
    np.testing.assert_allclose(h, h_fd, rtol=rtol, atol=atol)
    np.testing.assert_allclose(h, np.swapaxes(h, -1, -2), atol=1e-12)


def check_acceleration(fun, x0, rng, rtol=1e-5, atol=1e-5):
    """``d2g/dt2`` along ``x(t) = x0 + v t + a t^2/2`` (time slot: ``t``) equals
    ``G xdd + xd^T H xd`` (``flexmbs.kinematics.jet.rate2``); reference: FD in t."""
    n = len(x0)
    v, a = rng.normal(size=n), rng.normal(size=n)
    v[-1], a[-1] = 1.0, 0.0

    def g(tau):
        return np.array([j.v for j in fun(x0 + v * tau + 0.5 * a * tau * tau, 1)])

    hstep = 1e-4
    g2_fd = (g(hstep) - 2 * g(0.0) + g(-hstep)) / hstep**2
    g1_fd = (g(hstep) - g(-hstep)) / (2 * hstep)
    jets = fun(x0, 2)
    g1 = np.array([j.d @ v for j in jets])
    g2 = np.array([j.d @ a + v @ j.h @ v for j in jets])
    np.testing.assert_allclose(g1, g1_fd, rtol=rtol, atol=atol)
    np.testing.assert_allclose(g2, g2_fd, rtol=rtol, atol=atol)


def joint_jets(joint, layout):
    """``fun(x, order)``: a joint's equations and coordinates as jets on ``layout``."""
    def fun(x, order):
        P, Q = layout.frames(x, order)
        return joint.equations(P, Q, layout.time(x, order)) + joint.coordinates(P, Q)
    return fun


def check_joint(joint, rng, acc_rtol=1e-5):
    """:func:`check_jets` and :func:`check_acceleration` of ``joint``'s equations and
    coordinates at a random local vector."""
    layout = Layout(joint.resolve())
    x = layout.random_x(rng)
    fun = joint_jets(joint, layout)
    check_jets(fun, x)
    check_acceleration(fun, x, rng, rtol=acc_rtol)


def context(layout, x, xd, order=2):
    """The ``LocalContext`` the assembler hands a force element at ``(x, xd)``."""
    from flexmbs.forces.base import LocalContext
    qs = layout.split(x)
    qds = layout.split(xd)
    return LocalContext(tuple(layout.markers), tuple(layout.frames(x, order)), x, xd,
                        float(x[-1]), layout.n, tuple(layout.offsets), tuple(qs), tuple(qds),
                        order)


def random_xd(rng, layout):
    xd = rng.normal(size=layout.n)
    xd[-1] = 1.0
    return xd


def check_contribution(element, layout, x, xd, rtol=1e-6, atol=1e-6):
    """``dQ/dx`` and ``dQ/dxd`` against central differences of ``Q`` (time slot of xd kept 1)."""
    c = element.contribution(context(layout, x, xd, 2))
    c1 = element.contribution(context(layout, x, xd, 1))
    np.testing.assert_allclose(c.Q, c1.Q)
    assert c1.dQ_dx is None and c1.dQ_dxd is None
    dx = fd_gradient(lambda y: element.contribution(context(layout, y, xd, 1)).Q, x)
    dxd = fd_gradient(lambda y: element.contribution(context(layout, x, y, 1)).Q, xd)
    dxd[:, -1] = 0.0
    np.testing.assert_allclose(c.dQ_dx, dx, rtol=rtol, atol=atol)
    np.testing.assert_allclose(c.dQ_dxd, dxd, rtol=rtol, atol=atol)
    return c
