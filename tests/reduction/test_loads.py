"""Face-load integrals on named facet sets against closed forms."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.reduction.loads import face_integrals

from .boxmesh import box_mesh

SIZE, ORIGIN = (0.6, 0.2, 0.1), (0.3, -0.1, 0.25)


@pytest.mark.parametrize("cell_type", ["tet4", "tet10", "hex8", "hex27"])
def test_face_integrals_closed_form(cell_type):
    """End face x = x1 of a box (A = b c, outward +x): int n dA = (A, 0, 0);
    int R x n dA = A (centre x e_x); fields phi_1 = X (int phi.n = x1 A) and, for quadratic
    faces, phi_2 = (y^2, 0, 0): int y^2 dA = c (y1^3 - y0^3) / 3.  Face x0 points -x."""
    mesh = box_mesh(cell_type, (3, 2, 2), SIZE, ORIGIN)
    X = mesh.points
    modes = np.zeros((len(X), 3, 2))
    modes[:, :, 0] = X
    modes[:, 0, 1] = X[:, 1] ** 2
    a, b, c = SIZE
    x0, y0, z0 = ORIGIN
    A = b * c
    centre = np.array([x0 + a, y0 + b / 2, z0 + c / 2])
    fi = face_integrals("x1", mesh.facet_set("x1"), X, modes)
    np.testing.assert_allclose(fi.F_n, [A, 0, 0], atol=1e-14)
    np.testing.assert_allclose(fi.F_m, A * np.cross(centre, [1.0, 0, 0]), atol=1e-14)
    assert fi.F_q[0] == pytest.approx((x0 + a) * A, rel=1e-12)
    if cell_type in ("tet10", "hex27"):
        assert fi.F_q[1] == pytest.approx(c * ((y0 + b) ** 3 - y0**3) / 3, rel=1e-12)
    f0 = face_integrals("x0", mesh.facet_set("x0"), X, modes)
    np.testing.assert_allclose(f0.F_n, [-A, 0, 0], atol=1e-14)


def test_face_integrals_quad8_faces_of_hex20():
    """The serendipity quad8 faces of the shipped hex20 beam (tip face x = 1, 0.1 x 0.1 m,
    outward +x): int n dA = (0.01, 0, 0) m^2 and int y^2 dA = 0.1 * 0.1^3 / 3 (quad8
    interpolates quadratics exactly), as for quad9."""
    from pathlib import Path

    from flexmbs.io.mesh import read_mesh

    mesh = read_mesh(Path(__file__).resolve().parents[2] / "meshes" / "beam_hex20_20x2x2.msh")
    X = mesh.points
    modes = np.zeros((len(X), 3, 1))
    modes[:, 0, 0] = X[:, 1] ** 2
    fi = face_integrals("tip", mesh.facet_set("tip"), X, modes)
    assert mesh.facet_set("tip").shape[1] == 8
    np.testing.assert_allclose(fi.F_n, [0.01, 0, 0], atol=1e-15)
    assert fi.F_q[0] == pytest.approx(0.1 * 0.1 ** 3 / 3, rel=1e-12)
    assert fi.A == pytest.approx(0.01, rel=1e-12)
