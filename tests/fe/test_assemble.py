"""Mass and stiffness identities on the shipped box-shaped beam meshes."""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from flexmbs.fe.assemble import assemble, assemble_forms, rigid_modes
from flexmbs.fe.material import Material
from flexmbs.io.mesh import read_mesh

MESHES = Path(__file__).resolve().parents[2] / "meshes"
BOX = ["beam_tet4_10x1x1.msh", "beam_tet10_10x1x1.msh", "beam_hex8_10x1x1.msh",
       "beam_hex27_10x1x1.msh", "beam_hex20_10x1x1.msh", "beam_wedge6_40x4x4.msh"]
MAT = Material(E=70e9, nu=0.33, rho=2700.0, name="aluminium")


def _moved(name):
    """The 1 x 0.1 x 0.1 box rigidly rotated and translated (a generic placement)."""
    c, s = np.cos(0.4), np.sin(0.4)
    R = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]) @ np.array([[c, -s, 0], [s, c, 0],
                                                                [0, 0, 1]])
    t = np.array([0.3, -1.2, 2.0])
    return read_mesh(MESHES / name).translated_rotated(R, t), R, t


@pytest.mark.parametrize("name", BOX)
def test_mass_com_inertia(name):
    """Rigid-body integrals of M equal the closed form of a homogeneous box
    (m = rho a b c; centroid at the box centre; I_xx = m (b^2 + c^2) / 12, ...),
    to 1e-10 relative: the mass quadrature is exact."""
    mesh, R, t = _moved(name)
    fe = assemble(mesh, MAT)
    a, b, c = 1.0, 0.1, 0.1
    m = MAT.rho * a * b * c
    com = R @ np.array([a, b, c]) / 2 + t
    J_body = m / 12 * np.diag([b**2 + c**2, a**2 + c**2, a**2 + b**2])
    J = R @ J_body @ R.T
    T = rigid_modes(fe)[:, :3]
    X = np.zeros(fe.n_dof)  # the field u(x) = x (position)
    for k in range(3):
        X[fe.dof_of_node[:, k]] = mesh.points[:, k]
    mass = T.T @ fe.M @ T
    np.testing.assert_allclose(mass, m * np.eye(3), rtol=1e-10, atol=1e-10 * m)
    np.testing.assert_allclose(T.T @ fe.M @ X / m, com, rtol=1e-10)
    Rot = rigid_modes(fe, about=com)[:, 3:]
    np.testing.assert_allclose(Rot.T @ fe.M @ Rot, J, atol=1e-10 * np.abs(J).max())


@pytest.mark.parametrize("name", BOX)
def test_rigid_modes_and_spd(name):
    """K annihilates the six rigid modes; M and K symmetric; M positive definite."""
    mesh, _, _ = _moved(name)
    fe = assemble(mesh, MAT)
    assert sp.isspmatrix_csr(fe.M) and sp.isspmatrix_csr(fe.K)
    Phi = rigid_modes(fe)
    Phi /= np.linalg.norm(Phi, axis=0)
    assert np.abs(fe.K @ Phi).max() < 1e-12 * sp.linalg.norm(fe.K, np.inf)
    assert sp.linalg.norm(fe.M - fe.M.T, np.inf) == 0.0
    assert sp.linalg.norm(fe.K - fe.K.T, np.inf) == 0.0
    # M SPD: Cholesky of the dense matrix (small mesh) succeeds
    np.linalg.cholesky(fe.M.toarray())
    # K has exactly 6 zero eigenvalues relative to its largest
    w = np.linalg.eigvalsh(fe.K.toarray())
    assert np.sum(np.abs(w) < 1e-10 * w.max()) == 6


@pytest.mark.parametrize("name", BOX + ["conrod_tet10.msh"])
def test_dof_of_node_linear_field(name):
    """Nodal values of u(x) = A x + b placed with dof_of_node interpolate to A x + b at
    every quadrature point (Lagrange elements reproduce linear fields exactly), for
    vertex, mid-edge, mid-face and interior nodes alike."""
    mesh = read_mesh(MESHES / name)
    fe = assemble(mesh, MAT)
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(3, 3)), rng.normal(size=3)
    u = np.zeros(fe.n_dof)
    for k in range(3):
        u[fe.dof_of_node[:, k]] = mesh.points @ A[k] + b[k]
    assert np.array_equal(np.sort(fe.dof_of_node.ravel()), np.arange(fe.n_dof))
    for k in range(3):  # each dof sits at its node
        np.testing.assert_allclose(fe.basis.doflocs[:, fe.dof_of_node[:, k]].T, mesh.points,
                                   atol=1e-14)
    uh = fe.basis.interpolate(u)
    x = np.asarray(fe.basis.global_coordinates())
    exact = np.einsum("ij,jeq->ieq", A, x) + b[:, None, None]
    np.testing.assert_allclose(np.asarray(uh), exact, atol=1e-12 * np.abs(exact).max())
    np.testing.assert_allclose(uh.grad, np.broadcast_to(A[:, :, None, None], uh.grad.shape),
                               atol=1e-9 * np.abs(A).max())


@pytest.mark.parametrize("name", BOX)
def test_batched_assembly_matches_skfem_forms(name):
    """The batched element kernels equal scikit-fem's ``linear_elasticity`` and mass
    ``BilinearForm`` assembly (a second implementation of the same integrals)."""
    mesh, _, _ = _moved(name)
    fe = assemble(mesh, MAT)
    M, K = assemble_forms(mesh, MAT)
    assert abs(fe.M - M).max() < 1e-13 * abs(M).max()
    assert abs(fe.K - K).max() < 1e-13 * abs(K).max()


def test_chunked_assembly_independent_of_chunk_size(monkeypatch):
    """Element chunks of 1 element and of all elements give the same M and K."""
    A = importlib.import_module("flexmbs.fe.assemble")  # the package exports a function of that name
    mesh = read_mesh(MESHES / "beam_tet10_10x1x1.msh")
    mat = Material(E=210e9, nu=0.3, rho=7850.0)
    monkeypatch.setattr(A, "CHUNK_FLOATS", 1)
    fe1 = A.assemble(mesh, mat)
    monkeypatch.setattr(A, "CHUNK_FLOATS", 10**9)
    fe2 = A.assemble(mesh, mat)
    assert abs(fe1.K - fe2.K).max() <= 1e-12 * abs(fe2.K).max()
    assert abs(fe1.M - fe2.M).max() <= 1e-12 * abs(fe2.M).max()


def test_det_inv3_equals_lapack():
    """Cofactor determinant and inverse of 3x3 stacks equal numpy's LAPACK ones."""
    from flexmbs.fe.assemble import det_inv3
    J = np.random.default_rng(7).normal(size=(40, 5, 3, 3))
    det, inv = det_inv3(J)
    np.testing.assert_allclose(det, np.linalg.det(J), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(inv, np.linalg.inv(J), rtol=1e-10, atol=1e-12)
