"""The whole mechanism as XDMF grids (:class:`~flexmbs.io.xdmf_collection.Grid`) over time.

Every body, joint marker and sensor becomes a named grid whose points are inertial
positions [m] at each output step ``k`` (body coordinates ``q_b(t_k)``):

* flexible body: its mesh at ``r + A(e) (X + Phi q_e)``
  (:func:`~flexmbs.post.recovery.deformed_positions`) with the point fields
  ``displacement`` (inertial, from the reference mesh), ``elastic_displacement``
  (``Phi q_e``, body frame), ``von_mises`` [Pa] and, when given, the static fields of
  the maximum over time (``von_mises_max`` [Pa], ``time_of_max`` [s]);
* rigid body: its solid (:class:`Solid`: box, cylinder or sphere about its centre of
  mass) or, without one, a glyph of its frame axes, at ``r + A(e) x_local``;
* point mass: one vertex at ``r``;
* joints: one vertex per joint at its marker P, ``r_P = r + A(e) (s + Phi q_e)``
  (:func:`flexmbs.kinematics.frames.position`);
* sensor: one vertex at the marker it measures (Q, or P alone) carrying the sensor's
  output (its columns) as a point field named after the sensor.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.io.xdmf_collection import Grid
from flexmbs.kinematics.frames import position
from flexmbs.kinematics.rotation import A_of
from flexmbs.post.recovery import deformed_positions, elastic_displacements, von_mises_stress

__all__ = ["Solid", "body_grids", "flexible_grid", "joint_grid", "sensor_grids",
           "solid_cells"]

#: facets of the cylinder and sphere approximations
N_SIDES = 24


@dataclass(frozen=True)
class Solid:
    """The solid of a rigid body in its frame: ``kind`` box (edge lengths ``size``),
    cylinder (``radius``, ``length`` along body ``axis``) or sphere (``radius``), centred
    at ``com`` [m]; ``kind = "frame"``: a glyph of the frame axes of length ``length``."""

    kind: str
    com: tuple = (0.0, 0.0, 0.0)
    size: tuple = (0.0, 0.0, 0.0)
    radius: float = 0.0
    length: float = 0.0
    axis: str = "z"


def solid_cells(solid: Solid) -> tuple[np.ndarray, np.ndarray, str]:
    """``(points (N, 3) in the body frame [m], cells, cell type)`` of a :class:`Solid`."""
    c = np.asarray(solid.com, dtype=float)
    if solid.kind == "box":
        unit = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                         [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)
        return c + 0.5 * unit * np.asarray(solid.size, float), np.arange(8)[None], "hexahedron"
    if solid.kind == "cylinder":
        phi = 2 * np.pi * np.arange(N_SIDES) / N_SIDES
        ring = np.column_stack([solid.radius * np.cos(phi), solid.radius * np.sin(phi),
                                np.zeros(N_SIDES)])
        h = 0.5 * solid.length
        pts = np.vstack([[0, 0, -h], [0, 0, h], ring + [0, 0, -h], ring + [0, 0, h]])
        k = np.arange(N_SIDES)
        k1 = (k + 1) % N_SIDES
        cells = np.column_stack([np.zeros(N_SIDES, int), 2 + k, 2 + k1,
                                 np.ones(N_SIDES, int), 2 + N_SIDES + k, 2 + N_SIDES + k1])
        perm = {"x": [2, 0, 1], "y": [1, 2, 0], "z": [0, 1, 2]}[solid.axis]
        return c + pts[:, perm], cells, "wedge"
    if solid.kind == "sphere":
        from scipy.spatial import ConvexHull
        n = 4 * N_SIDES                                   # Fibonacci points on the sphere
        i = np.arange(n) + 0.5
        z, phi = 1 - 2 * i / n, np.pi * (1 + 5 ** 0.5) * i
        s = np.sqrt(1 - z * z)
        pts = solid.radius * np.column_stack([s * np.cos(phi), s * np.sin(phi), z])
        tri = ConvexHull(pts).simplices
        cells = np.column_stack([np.full(len(tri), n), tri])   # tetrahedra to the centre
        return c + np.vstack([pts, [0.0, 0.0, 0.0]]), cells, "tetra"
    if solid.kind == "frame":
        pts = np.vstack([np.zeros(3), solid.length * np.eye(3)])
        return pts, np.array([[0, 1], [0, 2], [0, 3]]), "line"
    raise ValueError(f"Solid: kind must be box, cylinder, sphere or frame, got {solid.kind!r}")


def flexible_grid(name: str, body, q: np.ndarray, static: dict | None = None,
                  check=None, wrenches=None) -> Grid:
    """The grid of a flexible body (:class:`~flexmbs.io.bodyfile.ReducedBody`) with body
    coordinates ``q`` (n, 7 + n_q) at the steps (module doc); ``wrenches`` ``{marker:
    (n, 6)}``: the interface loads of the stress correction
    (:func:`flexmbs.post.recovery.nodal_stress`)."""
    X = np.asarray(body.points)
    W = wrenches or {}

    def at(i):
        if check is not None:
            check()
        return deformed_positions(body, q[i])

    return Grid(name, body.cell_type, body.cells, at, fields={
        "displacement": lambda i: at(i) - X,
        "elastic_displacement": lambda i: elastic_displacements(body, q[i, 7:]),
        "von_mises": lambda i: von_mises_stress(body, q[i, 7:],
                                                {k: v[i] for k, v in W.items()})},
        static=static or {})


def body_grids(name: str, q: np.ndarray, solid: Solid | None) -> Grid:
    """The grid of a rigid body (``q`` (n, 7) = ``[r, e]``, ``solid``) or a point mass
    (``q`` (n, 3), ``solid`` None)."""
    if q.shape[1] == 3:
        return Grid(name, "vertex", [[0]], lambda i: q[i][None, :])
    local, cells, ctype = solid_cells(solid)
    return Grid(name, ctype, cells, lambda i: q[i, :3] + local @ A_of(q[i, 3:7]).T)


def _marker_positions(markers, q_of, n: int) -> np.ndarray:
    """(n, m, 3): inertial positions of ``markers`` at the ``n`` steps; ``q_of(body)`` ->
    (n, n_b) (a marker on the ground stays at ``s``)."""
    out = []
    for mk in markers:
        if getattr(mk.body, "is_ground", False):
            out.append(np.tile(mk.s, (n, 1)))
        else:
            out.append(np.array([position(mk, qk) for qk in q_of(mk.body)]))
    return np.stack(out, axis=1)


def joint_grid(joints, q_of, n: int) -> Grid:
    """One vertex per joint at its marker P at the ``n`` steps (module doc); point field
    ``joint`` (index in ``joints``, in the order of the model)."""
    P = _marker_positions([j.resolve()[0] for j in joints], q_of, n)
    ids = np.arange(len(joints), dtype=float)
    return Grid("joints", "vertex", np.arange(len(joints))[:, None], lambda i: P[i],
                static={"joint": ids})


def sensor_grids(sensors, values: dict, q_of) -> list[Grid]:
    """One grid per sensor: a vertex at the marker it measures with its output
    ``values[name]`` (n, k) as a point field (module doc)."""
    out = []
    for s in sensors:
        markers = s.resolve()
        measured = markers[1] if s.second is not None else markers[0]
        v = np.asarray(values[s.name], dtype=float)
        p = _marker_positions([measured], q_of, len(v))
        v = v.reshape(len(v), -1)
        v = v[:, 0][:, None] if v.shape[1] == 1 else v[:, None, :]   # (n, 1) or (n, 1, k)
        out.append(Grid(f"sensor_{s.name}", "vertex", [[0]],
                        lambda i, p=p: p[i], fields={s.name: lambda i, v=v: v[i]}))
    return out
