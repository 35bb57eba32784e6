"""The solids drawn for rigid bodies.  References: closed-form volumes and centroids of
a box, of the regular N-gon prism that approximates a cylinder,
``V = (N / 2) r^2 sin(2 pi / N) L``, and of the sphere's points (all at radius r); the
pose of a rigid body ``x = r + A(e) x_local`` against a rotation built independently
(axis-angle, Rodrigues)."""
import numpy as np
import pytest

from flexmbs.post.scene import N_SIDES, Solid, body_grids, solid_cells


def tet_volumes(P, cells):
    a, b, c, d = (P[cells[:, k]] for k in range(4))
    return np.einsum("ij,ij->i", b - a, np.cross(c - a, d - a)) / 6.0


def test_box_about_its_centre_of_mass():
    P, cells, kind = solid_cells(Solid("box", com=(0.05, 0.0, 0.005), size=(0.1, 0.02, 0.01)))
    assert kind == "hexahedron" and cells.shape == (1, 8)
    assert P.mean(axis=0) == pytest.approx([0.05, 0.0, 0.005])
    assert np.ptp(P, axis=0) == pytest.approx([0.1, 0.02, 0.01])


@pytest.mark.parametrize("axis, k", [("x", 0), ("y", 1), ("z", 2)])
def test_cylinder_prism_volume_and_axis(axis, k):
    r, L = 0.03, 0.2
    P, cells, kind = solid_cells(Solid("cylinder", com=(1.0, 2.0, 3.0), radius=r, length=L,
                                       axis=axis))
    assert kind == "wedge" and cells.shape == (N_SIDES, 6)
    # each wedge = bottom triangle x L
    a, b, c = (P[cells[:, j]] for j in range(3))
    V = np.sum(np.linalg.norm(np.cross(b - a, c - a), axis=1) / 2) * L
    assert V == pytest.approx(N_SIDES / 2 * r**2 * np.sin(2 * np.pi / N_SIDES) * L, rel=1e-12)
    assert np.ptp(P[:, k]) == pytest.approx(L)
    assert P.mean(axis=0)[k] == pytest.approx([1.0, 2.0, 3.0][k])


def test_sphere_points_on_the_radius_and_its_volume_below_the_sphere():
    P, cells, kind = solid_cells(Solid("sphere", com=(0.0, 0.0, 1.0), radius=0.5))
    assert kind == "tetra"
    assert np.linalg.norm(P[:-1] - [0, 0, 1], axis=1) == pytest.approx(0.5)
    V = np.abs(tet_volumes(P, cells)).sum()
    assert 0.9 * 4 / 3 * np.pi * 0.125 < V < 4 / 3 * np.pi * 0.125   # inscribed polyhedron


def test_rigid_body_grid_follows_its_pose():
    axis, phi = np.array([1.0, 2.0, 2.0]) / 3.0, 0.7
    e = np.concatenate([[np.cos(phi / 2)], np.sin(phi / 2) * axis])
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    A = np.eye(3) + np.sin(phi) * K + (1 - np.cos(phi)) * K @ K      # Rodrigues
    r = np.array([0.3, -0.1, 0.2])
    q = np.tile(np.concatenate([r, e]), (2, 1))
    solid = Solid("box", com=(0.05, 0.0, 0.0), size=(0.1, 0.02, 0.01))
    grid = body_grids("crank", q, solid)
    local, _, _ = solid_cells(solid)
    assert grid.points(1) == pytest.approx(r + local @ A.T, abs=1e-15)
    point = body_grids("slider", np.array([[1.0, 2.0, 3.0]]), None)
    assert point.points(0) == pytest.approx(np.array([[1.0, 2.0, 3.0]]))


def test_unknown_solid_is_refused():
    with pytest.raises(ValueError, match="kind must be box, cylinder, sphere or frame"):
        solid_cells(Solid("cone"))
