"""Stress recovery and the St. Venant-Kirchhoff internal force."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.fe.stress import (green_lagrange_energy, green_lagrange_internal_force,
                               green_lagrange_tangent, nodal_stress_operator, von_mises)
from flexmbs.io.mesh import read_mesh

MESHES = Path(__file__).resolve().parents[2] / "meshes"
MAT = Material(E=210e9, nu=0.3, rho=7850.0, name="steel")
SMALL = ["beam_tet4_10x1x1.msh", "beam_tet10_10x1x1.msh", "beam_hex8_10x1x1.msh",
         "beam_hex27_5x1x1.msh", "beam_hex20_10x1x1.msh", "beam_wedge6_40x4x4.msh"]


@pytest.fixture(scope="module", params=SMALL)
def fe(request):
    return assemble(read_mesh(MESHES / request.param), MAT)


def _linear_field(fe, A, b):
    u = np.zeros(fe.n_dof)
    for k in range(3):
        u[fe.dof_of_node[:, k]] = fe.mesh.points @ A[k] + b[k]
    return u


def _diff5(g, h):
    """Five-point central difference of g at 0: exact for polynomials of degree <= 4."""
    return (-g(2 * h) + 8 * g(h) - 8 * g(-h) + g(-2 * h)) / (12 * h)


def test_nodal_stress_uniform_strain(fe):
    """u = A x + b gives the uniform strain eps = sym(A) and sigma = C eps (Hooke)
    at every node, whatever the averaging."""
    rng = np.random.default_rng(1)
    A, b = 1e-3 * rng.normal(size=(3, 3)), rng.normal(size=3)
    s = (nodal_stress_operator(fe) @ _linear_field(fe, A, b)).reshape(-1, 6)
    e = 0.5 * (A + A.T)
    eps = np.array([e[0, 0], e[1, 1], e[2, 2], 2 * e[1, 2], 2 * e[0, 2], 2 * e[0, 1]])
    sig = MAT.C @ eps
    np.testing.assert_allclose(s, np.broadcast_to(sig, s.shape), atol=1e-9 * abs(sig).max())


@pytest.mark.parametrize("name", ["beam_tet10_10x1x1.msh", "beam_hex27_5x1x1.msh"])
def test_nodal_stress_linear_strain(name):
    """Quadratic elements reproduce a quadratic displacement u_i = x^T Q_i x exactly, so
    the element stress at each node is C eps(x_node) with eps = sym(grad u),
    grad u_i = (Q_i + Q_i^T) x; the nodal average of equal values is that value."""
    fe = assemble(read_mesh(MESHES / name), MAT)
    rng = np.random.default_rng(6)
    Q = 1e-3 * rng.normal(size=(3, 3, 3))
    x = fe.mesh.points
    u = np.zeros(fe.n_dof)
    for i in range(3):
        u[fe.dof_of_node[:, i]] = np.einsum("nj,jk,nk->n", x, Q[i], x)
    s = (nodal_stress_operator(fe) @ u).reshape(-1, 6)
    Hn = np.einsum("ijk,nk->nij", Q + Q.transpose(0, 2, 1), x)  # grad u at the nodes
    e = 0.5 * (Hn + Hn.transpose(0, 2, 1))
    eps = np.stack([e[:, 0, 0], e[:, 1, 1], e[:, 2, 2], 2 * e[:, 1, 2], 2 * e[:, 0, 2],
                    2 * e[:, 0, 1]], axis=1)
    sig = eps @ MAT.C.T
    np.testing.assert_allclose(s, sig, atol=1e-9 * np.abs(sig).max())


def test_von_mises():
    """Uniaxial: sigma_vm = |sigma|; pure shear tau: sqrt(3) tau; hydrostatic: 0."""
    s = np.array([[5.0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 2.0], [3.0, 3, 3, 0, 0, 0]])
    np.testing.assert_allclose(von_mises(s), [5.0, 2 * np.sqrt(3), 0.0], atol=1e-14)


def test_internal_force_small_strain_limit(fe):
    """As u -> 0 the Green-Lagrange force tends to the linear K u."""
    u = 1e-9 * np.random.default_rng(2).normal(size=fe.n_dof)
    f = green_lagrange_internal_force(fe, u)
    np.testing.assert_allclose(f, fe.K @ u, atol=1e-6 * np.abs(fe.K @ u).max())
    Kt = green_lagrange_tangent(fe, np.zeros(fe.n_dof))
    assert abs(Kt - fe.K).max() < 1e-12 * abs(fe.K).max()


def test_internal_force_is_energy_gradient(fe):
    """f(u) . d = d/de W(u + e d), W = int E:C:E/2 dV, at a random u with ~1% strains
    (where the quadratic term H^T H matters). W is a quartic polynomial in e, so the
    5-point central difference is exact up to round-off."""
    rng = np.random.default_rng(3)
    u = 1e-3 * rng.normal(size=fe.n_dof)
    d = 1e-3 * rng.normal(size=fe.n_dof)
    fd = _diff5(lambda e: green_lagrange_energy(fe, u + e * d), 0.1)
    assert green_lagrange_internal_force(fe, u) @ d == pytest.approx(fd, rel=1e-8)


def test_tangent_is_force_derivative(fe):
    """K_T(u) d = d/de f(u + e d) (material + initial stress); f is cubic in e, so the
    5-point central difference is exact up to round-off."""
    rng = np.random.default_rng(4)
    u = 1e-3 * rng.normal(size=fe.n_dof)
    d = 1e-3 * rng.normal(size=fe.n_dof)
    fd = _diff5(lambda e: green_lagrange_internal_force(fe, u + e * d), 0.1)
    Kd = green_lagrange_tangent(fe, u) @ d
    np.testing.assert_allclose(Kd, fd, atol=1e-8 * np.abs(Kd).max())
    Kt = green_lagrange_tangent(fe, u)
    assert abs(Kt - Kt.T).max() < 1e-10 * abs(Kt).max()  # hyperelastic: symmetric


def test_rigid_rotation_is_stress_free(fe):
    """A finite rigid rotation has E_GL = 0, hence zero internal force (objectivity)."""
    th = 0.7
    R = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]])
    u = _linear_field(fe, R - np.eye(3), np.array([0.1, 0.2, 0.3]))
    f = green_lagrange_internal_force(fe, u)
    assert np.abs(f).max() < 1e-6 * MAT.E * 1e-4


def test_nodal_stress_modes_equal_operator_times_modes(fe):
    """The chunked stress modes (no operator formed) equal ``S @ Phi`` reshaped."""
    from flexmbs.fe.stress import nodal_stress_modes
    Phi = np.random.default_rng(0).standard_normal((fe.n_dof, 3))
    ref = (nodal_stress_operator(fe) @ Phi).reshape(-1, 6, 3)
    np.testing.assert_allclose(nodal_stress_modes(fe, Phi), ref, atol=1e-12 * np.abs(ref).max())
