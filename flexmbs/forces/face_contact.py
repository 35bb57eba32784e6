"""Contact of a sphere (or a point) with a named face of a flexible body, THEORY §2.6,
§5.7.2, §7 item 35.

The face (a facet set of the mesh, a physical group) is taken as its **mean plane**: the
plane through its centroid moving with the face's mean elastic displacement, normal to its
mean outward normal carried by the floating frame.  With the stored face integrals
(:class:`~flexmbs.io.bodyfile.Face`: ``F_n = int n dA``, area ``A``, centroid ``X_c``,
mean mode ``Phi_c = int Phi dA / A``) the plane's marker P on the flexible body has

    s_P = X_c,    Phi_P = Phi_c,    Psi_P = 0,    z_P = n_A = F_n / |F_n|,

and the contact is :class:`~flexmbs.forces.contact.SpherePlaneContact` with it:
``s = n_A . (p_Q - p_P) - R``.  Its force enters the elastic coordinates through
``Phi_c^T``: the contact load is spread over the face like a uniform pressure (the work
conjugate of the mean displacement).

Approximations (first order, like :class:`~flexmbs.forces.pressure.FacePressure`): the
plane is unbounded (no check that the contact point lies on the face), the elastic
rotation of the normal is neglected, and the face must be flat (``|F_n| >= 0.99 A``:
its normals within about 8 degrees of their mean).  Exact for a flat face of a body
moving rigidly, and for the mean motion of a flat face that deforms.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.attach import attach
from flexmbs.bodies.marker import Marker
from flexmbs.forces.contact import SpherePlaneContact
from flexmbs.kinematics.rotation import frame_from_axis

#: a face counts as flat when |int n dA| >= FLAT * A
FLAT = 0.99


@dataclass(frozen=True, eq=False)
class FaceContact(SpherePlaneContact):
    """Sphere of radius ``R`` [m] (0: a point) centred at Q (``second``) on the face
    ``face`` of the flexible body ``first`` (module docstring)."""

    face: str = ""
    kind = "face_contact"

    def face_data(self):
        """The :class:`~flexmbs.io.bodyfile.Face` of ``face``, or None."""
        for fc in getattr(getattr(self.first, "body", None), "faces", ()):
            if fc.name == self.face:
                return fc
        return None

    def resolve(self):
        fc = self.face_data()
        mk = self.first.face_marker(self.face)
        n = np.asarray(fc.F_n, dtype=float)
        P = Marker(f"{self.name}.face", self.first, mk.s, frame_from_axis(n / np.linalg.norm(n)),
                   mk.Phi, mk.Psi)
        return P, attach(self.second, self.name, "Q")

    def geometry_problems(self) -> list[str]:
        who = self.who
        if not hasattr(self.first, "face_marker"):
            return [f"{who}: first must be a flexible body, got {type(self.first).__name__}"]
        try:
            self.first.face_marker(self.face)
        except KeyError as exc:
            return [f"{who}: {exc.args[0]}"]
        out = [] if np.isfinite(self.R) and self.R >= 0 else [
            f"{who}: radius R must be >= 0 [m], got {self.R}"]
        fc = self.face_data()
        ratio = float(np.linalg.norm(fc.F_n)) / fc.A if fc.A > 0 else 0.0
        if ratio < FLAT:
            out.append(f"{who}: face '{self.face}' is not flat (|int n dA| / A = {ratio:.3f}, "
                       f"needs >= {FLAT}): its mean plane does not represent it")
        return out
