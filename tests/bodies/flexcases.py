"""Shared reduced bodies and helpers for the flexible-body tests (built once per session)."""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path

import numpy as np

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material, material_from_name
from flexmbs.io.bodyfile import ReducedBody
from flexmbs.io.mesh import read_mesh
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model

MESHES = Path(__file__).resolve().parents[2] / "meshes"
STEEL = material_from_name("steel")


@lru_cache(maxsize=None)
def beam_cb(n_modes: int = 3, damping: float = 0.0, mesh: str = "beam_hex27_10x1x1") -> ReducedBody:
    """Craig-Bampton cantilever (1 x 0.1 x 0.1 m steel), frame at ``clamp``, marker ``tip``."""
    fe = assemble(read_mesh(MESHES / f"{mesh}.msh"), STEEL)
    s = ReductionSettings(n_modes=n_modes, interfaces=(InterfaceSpec("clamp"), InterfaceSpec("tip")),
                          frame="interface:clamp", damping=damping)
    return reduce_model(fe, s, name="beam")


@lru_cache(maxsize=None)
def beam_free(n_modes: int = 4, mesh: str = "beam_hex27_5x1x1", interfaces: bool = True
              ) -> ReducedBody:
    """Free-free (mean-axis) steel beam, with interface markers ``clamp`` and ``tip``."""
    fe = assemble(read_mesh(MESHES / f"{mesh}.msh"), STEEL)
    itf = (InterfaceSpec("clamp"), InterfaceSpec("tip")) if interfaces else ()
    s = ReductionSettings(n_modes=n_modes, interfaces=itf, frame="mean_axis")
    return reduce_model(fe, s, name="free")


@lru_cache(maxsize=None)
def pendulum_cb(n_modes: int = 2, stiff: float = 1.0) -> ReducedBody:
    """Pendulum rod 1 x 0.02 x 0.02 m, Craig-Bampton at ``pin`` (frame), E scaled by ``stiff``."""
    mat = Material(E=STEEL.E * stiff, nu=STEEL.nu, rho=STEEL.rho, name="stiff steel")
    fe = assemble(read_mesh(MESHES / "pendulum_hex27_25x1x1.msh"), mat)
    s = ReductionSettings(n_modes=n_modes, interfaces=(InterfaceSpec("pin"),),
                          frame="interface:pin")
    return reduce_model(fe, s, name="pendulum")


def truncated(body: ReducedBody, k: int) -> ReducedBody:
    """The same body with only its first ``k`` elastic coordinates (every invariant is a
    shape integral over the basis, so truncation gives the exact invariants of the
    smaller basis)."""
    q1 = ("C_t", "J1", "I1", "C_r0", "O_e0", "omega", "zeta")
    q2 = ("J2", "M_e", "I2", "C_r1", "O_e1", "K_e", "D_e")
    kw = {x: np.array(getattr(body, x))[:k] for x in q1}
    kw.update({x: np.array(getattr(body, x))[:k, :k] for x in q2})
    if body.K2.size:
        kw["K2"] = np.array(body.K2)[:k, :k, :k]
        kw["K3"] = np.array(body.K3)[:k, :k, :k, :k]
    kw["modes"] = np.array(body.modes)[:, :, :k]
    kw["stress_modes"] = np.array(body.stress_modes)[:, :, :k]
    kw["markers"] = tuple(dataclasses.replace(mk, Phi=mk.Phi[:, :k], Psi=mk.Psi[:, :k])
                          for mk in body.markers)
    kw["faces"] = tuple(dataclasses.replace(f, F_q=f.F_q[:k]) for f in body.faces)
    return dataclasses.replace(body, **kw)


def random_unit_e(rng) -> np.ndarray:
    e = rng.normal(size=4)
    return e / np.linalg.norm(e)


def fd_jacobian(f, x, h=1e-6):
    """Central differences of a vector function."""
    x = np.asarray(x, float)
    cols = []
    for i in range(len(x)):
        dx = np.zeros_like(x)
        dx[i] = h
        cols.append((np.asarray(f(x + dx)) - np.asarray(f(x - dx))) / (2 * h))
    return np.stack(cols, axis=-1)


class Local:
    """Local vector ``x = [q_1; q_2; ...; t]`` of a list of markers (ground: no coordinates),
    as the system builds it, with the markers' frame jets."""

    def __init__(self, markers):
        from flexmbs.kinematics.frames import frame_jet
        self._frame_jet = frame_jet
        self.markers, self.offsets, seen, n = markers, [], {}, 0
        for m in markers:
            if getattr(m.body, "is_ground", False):
                self.offsets.append(None)
                continue
            if id(m.body) not in seen:
                seen[id(m.body)] = n
                n += m.body.n_coords
            self.offsets.append(seen[id(m.body)])
        self.n = n + 1

    def q_of(self, x, k):
        o = self.offsets[k]
        return None if o is None else x[o:o + self.markers[k].body.n_coords]

    def frames(self, x, order=2):
        return [self._frame_jet(m, self.q_of(x, k), self.n, 0 if o is None else o, order)
                for k, (m, o) in enumerate(zip(self.markers, self.offsets, strict=True))]

    def random_x(self, rng, qs=1e-2, t=0.3):
        parts, seen = [], set()
        for m in self.markers:
            b = m.body
            if getattr(b, "is_ground", False) or id(b) in seen:
                continue
            seen.add(id(b))
            parts.append(np.concatenate([rng.normal(size=3), random_unit_e(rng),
                                         qs * rng.normal(size=b.n_coords - 7)]))
        return np.concatenate([*parts, [t]])


def check_jet(fun, x, h=1e-6, tol=1e-6):
    """Gradient and Hessian of the scalar jet ``fun(x)`` against central differences of its
    value and gradient; returns the largest relative error."""
    jt = fun(x)
    n = len(x)
    g_fd = np.array([(float(fun(x + h * u).v) - float(fun(x - h * u).v)) / (2 * h) for u in np.eye(n)])
    H_fd = np.stack([(fun(x + h * u).d - fun(x - h * u).d) / (2 * h) for u in np.eye(n)], axis=1)
    sg = max(np.abs(g_fd).max(), 1e-12)
    sh = max(np.abs(H_fd).max(), 1e-12)
    err = max(np.abs(jt.d - g_fd).max() / sg, np.abs(jt.h - H_fd).max() / sh)
    assert err < tol, err
    return err


def context(markers, x, xd, order=2):
    """The :class:`~flexmbs.forces.base.LocalContext` the system hands a force element."""
    from flexmbs.forces.base import LocalContext
    loc = Local(list(markers))
    frames = tuple(loc.frames(x, order))
    qb = tuple(loc.q_of(x, k) for k in range(len(markers)))
    qdb = tuple(loc.q_of(xd, k) for k in range(len(markers)))
    return LocalContext(tuple(markers), frames, x, xd, float(x[-1]), loc.n,
                        tuple(loc.offsets), qb, qdb, order)
