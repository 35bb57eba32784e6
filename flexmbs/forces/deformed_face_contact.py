"""Contact of a sphere (or a point) with the deformed shape of a named face of a flexible
body, THEORY §2.1, §5.7.2, §7 item 35.

The face (a facet set of the mesh, stored with the body) is a surface of linear triangles
on its nodes (:func:`~flexmbs.forces.surface_search.face_triangles`), each node ``i`` at

    x_i = r + A (X_i + Phi_i q_e)        (Phi_i = modes[i], the FE displacement field),

so the surface follows the floating frame and the elastic deformation, curved faces
included.  At each evaluation the triangle nearest to the sphere centre ``p_Q`` is found
(:func:`~flexmbs.forces.surface_search.nearest_on_triangles`, in the body frame) with the
barycentric coordinates ``b`` of the closest point.  With the outward unit normal ``n_T``
of that triangle:

* face interior (``b_i > 0``): ``s = n_T . (p_Q - x_1) - R``, ``n = n_T`` (a function of
  the three nodes' jets: the distance to the facet's plane, whose gradient and Hessian are
  exact while the closest point stays inside the facet);
* edge or corner: with the material point ``c_P = sum_i b_i x_i`` (``b`` held),
  ``d = p_Q - c_P``, ``sigma = sign(n_T . d)``: ``s = sigma |d| - R``,
  ``n = sigma d / |d|``.

The generalized force ``F_n grad s`` enters the body through the three nodes' mode rows,
i.e. the closest point's barycentric interpolation ``sum_i b_i Phi_i`` (the material
point; in the face interior ``d s / d x_i = -b_i n_T``).  The Newton tangent is exact for
the face interior; at an edge or corner the migration of the closest point (which
material point touches) is left out, as in the other contacts.  The gap is that of the
faceted surface: within the sagitta ``h^2 / (8 rho)`` of a face of curvature radius
``rho`` meshed at edge length ``h``.  Friction (either law of
:class:`~flexmbs.forces.contact.ContactElement`, the one-sided normal law is also
its) slides the sphere's point ``c_Q = p_Q - R n`` over the material point
``c_P = sum_i b_i x_i`` (``b`` held: its jet is that of the three nodes), so the sliding
velocity ``v_t = T (v_Q - sum_i b_i xd_i)`` and the friction's generalized force
``-D^T F_t`` on the face's nodes follow the deformation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach
from flexmbs.bodies.marker import Marker
from flexmbs.forces.contact import ContactElement, ContactGeometry, inverse_scaled
from flexmbs.forces.surface_search import face_triangles, nearest_on_triangles, outward_signs
from flexmbs.kinematics import jet as J
from flexmbs.kinematics.frames import frame_jet, rotation_data


@dataclass(frozen=True)
class FaceMesh:
    """The triangles of a face on a flexible body: node ids ``nodes`` (m,), ``tri`` (T, 3)
    indices into ``nodes``, outward ``sign`` (T,), reference positions ``X`` (m, 3) [m]
    and mode rows ``Phi`` (m, 3, n_q), and one marker per node (``s = X_i``,
    ``Phi = Phi_i``, ``Psi = 0``)."""

    nodes: np.ndarray
    tri: np.ndarray
    sign: np.ndarray
    X: np.ndarray
    Phi: np.ndarray
    markers: tuple

    def shape(self, qe: np.ndarray) -> np.ndarray:
        """Node positions ``X_i + Phi_i q_e`` (m, 3) [m], body frame."""
        return self.X + self.Phi @ qe


def face_mesh(flexible, face: str) -> FaceMesh:
    """The :class:`FaceMesh` of face ``face`` of the flexible body ``flexible``."""
    body = flexible.body
    facets = next(fc.facets for fc in body.faces if fc.name == face)
    tri_nodes = face_triangles(facets)
    nodes, tri = np.unique(tri_nodes, return_inverse=True)
    tri = tri.reshape(-1, 3)
    cells = np.asarray(body.cells)
    sign = outward_signs(tri_nodes, np.asarray(body.points), cells)
    X = np.asarray(body.points)[nodes]
    Phi = np.asarray(body.modes)[nodes]
    zero = np.zeros_like(Phi[0])
    markers = tuple(Marker(f"{face}:node{int(i)}", flexible, X[k], np.eye(3), Phi[k], zero)
                    for k, i in enumerate(nodes))
    return FaceMesh(nodes, tri, sign, X, Phi, markers)


@dataclass(frozen=True, eq=False)
class DeformedFaceContact(ContactElement):
    """Sphere of radius ``R`` [m] (0: a point) centred at Q (``second``) on the deformed
    face ``face`` of the flexible body ``first`` (module docstring)."""

    face: str = ""
    R: float = 0.0
    kind = "deformed_face_contact"

    def resolve(self):
        object.__setattr__(self, "_mesh", face_mesh(self.first, self.face))
        return (self.first.marker(f"{self.name}.frame"), attach(self.second, self.name, "Q"))

    def geometry_problems(self) -> list[str]:
        who = self.who
        if not hasattr(self.first, "face_marker"):
            return [f"{who}: first must be a flexible body, got {type(self.first).__name__}"]
        faces = {fc.name: fc for fc in self.first.body.faces}
        out = [] if np.isfinite(self.R) and self.R >= 0 else [
            f"{who}: radius R must be >= 0 [m], got {self.R}"]
        if self.face not in faces:
            out.append(f"{who}: flexible body '{self.first.name}' has no face '{self.face}' "
                       f"(has: {', '.join(faces) or 'none'})")
        elif faces[self.face].facets is None:
            out.append(f"{who}: face '{self.face}' has no facets in its body file (written "
                       f"by an older flexmbs): preprocess the body again")
        return out

    def nearest(self, q_b: np.ndarray, p_Q: np.ndarray):
        """The nearest triangle's :class:`~flexmbs.forces.surface_search.Nearest` to the
        sphere centre ``p_Q`` [m] (inertial) for body coordinates ``q_b``, in the body
        frame."""
        mesh = self._mesh
        A = rotation_data(q_b[3:7])[0]
        y = A.T @ (p_Q - q_b[0:3])
        return nearest_on_triangles(y, mesh.shape(q_b[7:])[mesh.tri])

    def geometry_at(self, ctx) -> ContactGeometry:
        mesh = self._mesh
        Q = ctx.frames[1]
        q_b, off = ctx.q_bodies[0], ctx.offsets[0]
        near = self.nearest(q_b, Q.p.v)
        rot = rotation_data(q_b[3:7])
        x = [frame_jet(mesh.markers[i], q_b, ctx.n, off, ctx.order, rot).p
             for i in mesh.tri[near.k]]
        normal = J.cross(x[1] - x[0], x[2] - x[0])
        n_T = inverse_scaled(normal, J.norm(normal)) * float(mesh.sign[near.k])
        w_P = x[0] * float(near.b[0]) + x[1] * float(near.b[1]) + x[2] * float(near.b[2])
        if near.interior:
            s = J.dot(n_T, Q.p - x[0]) - self.R
            n = n_T
        else:
            d = Q.p - w_P
            sigma = 1.0 if float(n_T.v @ d.v) >= 0.0 else -1.0
            dist = J.norm(d)
            n = inverse_scaled(d, dist) * sigma
            s = dist * sigma - self.R
        return ContactGeometry(s, n, w_P.v, Q.p.v - self.R * n.v, w_P)
