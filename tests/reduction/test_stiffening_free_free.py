"""Geometric stiffening of a free--free body at its mean-axis frame (THEORY §2.5, §2.8.5,
§8.1): the counterparts of the clamped (Craig--Bampton) tests of test_stiffening.py.

Body: steel beam 1.0 x 0.02 x 0.02 m centred on the origin, free--free, frame
``mean_axis``, spinning at ``Omega`` about z through its centre of mass.  The inertial
static modes are computed with inertia relief (``static_modes_z``, saddle point with
the rigid modes).
"""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmbs.fe.stress import green_lagrange_internal_force, green_lagrange_tangent
from flexmbs.reduction import h_e, h_e_tangent
from flexmbs.reduction.interfaces import rigid_modes
from flexmbs.reduction.modes import compute_basis, inertial_loads
from flexmbs.reduction.stiffening import stiffening_tensors

from .conftest import STEEL, box_fe

L, B = 1.0, 0.02
BETA_L = 4.730040744862704            # first free-free root of cos(bL) cosh(bL) = 1


@cache
def _beam():
    fe = box_fe("hex27", (20, 1, 1), (L, B, B), (-L / 2, -B / 2, -B / 2))
    R = rigid_modes(fe.mesh.points, fe.dof_of_node, fe.n_dof)
    f_cf = -inertial_loads(fe.mesh.points, fe.dof_of_node, fe.M)[:, 11]  # Omega_z^2 = 1
    return fe, R, f_cf


@cache
def _reduced(static: bool):
    fe, _, _ = _beam()
    basis = compute_basis(fe, (), 6, "mean_axis", static_modes=static)
    Phi = basis.Phi
    K_e = Phi.T @ (fe.K @ Phi)
    K2, K3 = stiffening_tensors(fe.basis, STEEL.C, Phi)
    return basis, 0.5 * (K_e + K_e.T), K2, K3


def _relieved_response(fe, R, F):
    """Full-FE static response with inertia relief: ``[[K, M R], [R^T M, 0]]``."""
    MR = sp.csr_matrix(fe.M @ R)
    A = sp.bmat([[fe.K, MR], [MR.T, None]], format="csc")
    return spla.spsolve(A, np.concatenate([F, np.zeros(6)]))[:fe.n_dof]


def test_free_free_basis_with_static_modes_keeps_the_mean_axis_conditions():
    """The basis is M-orthonormal, K-diagonal and M-orthogonal to the six rigid modes
    (mean axis: C_t = 0, C_r0 = 0); static modes are kept, and with them the reduced
    centrifugal response equals the full-FE inertia-relief solve (axial stretch to 1e-6),
    which the 6 free--free modes alone miss."""
    fe, R, f_cf = _beam()
    basis, K_e, _, _ = _reduced(True)
    Phi = basis.Phi
    assert basis.n_static > 0
    Rn = R / np.sqrt(np.einsum("ik,ik->k", R, fe.M @ R))
    assert np.abs(Rn.T @ (fe.M @ Phi)).max() < 1e-10
    np.testing.assert_allclose(Phi.T @ (fe.M @ Phi), np.eye(Phi.shape[1]), atol=1e-10)
    assert np.abs(K_e - np.diag(basis.omega**2)).max() < 1e-8 * basis.omega.max() ** 2
    u = _relieved_response(fe, R, f_cf)
    tip = fe.dof_of_node[np.isclose(fe.mesh.points[:, 0], L / 2), 0]
    stretch = u[tip].mean()
    assert stretch > 0
    for static, tol in ((True, 1e-6), (False, None)):
        b, Ke, _, _ = _reduced(static)
        got = (b.Phi @ np.linalg.solve(Ke, b.Phi.T @ f_cf))[tip].mean()
        if tol:
            assert got == pytest.approx(stretch, rel=tol)
        else:
            assert abs(got) < 1e-3 * stretch                    # bending modes: no stretch


@pytest.mark.parametrize("static", [False, True])
def test_free_free_polynomial_force_is_the_fe_force_and_conservative(static):
    """h_e(q) equals Phi^T f_GL(Phi q) from the direct FE St. Venant--Kirchhoff force to
    1e-8 for a q of 5% of the length; its tangent is symmetric (a potential exists: the
    work of h_e is path-independent) and equals Phi^T K_T(Phi q) Phi."""
    fe, _, _ = _beam()
    basis, K_e, K2, K3 = _reduced(static)
    Phi = basis.Phi
    q = np.random.default_rng(11).standard_normal(Phi.shape[1])
    q *= 0.05 * L / np.abs(Phi @ q).max()
    ref = Phi.T @ green_lagrange_internal_force(fe, Phi @ q)
    got = h_e(K_e, K2, K3, q)
    assert np.linalg.norm(got - K_e @ q) > 1e-3 * np.linalg.norm(ref)
    assert np.linalg.norm(got - ref) <= 1e-8 * np.linalg.norm(ref)
    T = h_e_tangent(K_e, K2, K3, q)
    assert np.abs(T - T.T).max() <= 1e-10 * np.abs(T).max()
    T_fe = Phi.T @ (green_lagrange_tangent(fe, Phi @ q) @ Phi)
    assert np.abs(T - T_fe).max() <= 1e-8 * np.abs(T).max()


def _free_free_rise_coefficient() -> float:
    """Closed form (Euler--Bernoulli, first order in Omega^2, Rayleigh): a beam spinning
    about a normal axis through its centre carries the tension ``N(x) = rho A Omega^2
    (L^2/4 - x^2) / 2``, so ``d(omega^2)/d(Omega^2) = int (L^2/4 - x^2)/2 w'^2 dx /
    int w^2 dx`` with the first free--free mode ``w`` (cos/cosh form)."""
    b = BETA_L / L
    s = (np.cosh(BETA_L) - np.cos(BETA_L)) / (np.sinh(BETA_L) - np.sin(BETA_L))
    xi, wq = np.polynomial.legendre.leggauss(200)
    x = 0.5 * L * xi                                  # on [-L/2, L/2]
    z = b * (x + L / 2)
    w = np.cosh(z) + np.cos(z) - s * (np.sinh(z) + np.sin(z))
    dw = b * (np.sinh(z) - np.sin(z) - s * (np.cosh(z) + np.cos(z)))
    return float(np.sum(wq * (L**2 / 4 - x**2) / 2 * dw**2) / np.sum(wq * w**2))


def test_spinning_free_free_beam_bending_frequency_rise():
    """Centrifugal stiffening of the free--free beam: the first bending eigenvalue of
    ``K_T(q*)`` (q* the reduced centrifugal state) rises with Omega^2 at the closed-form
    rate of the Euler--Bernoulli beam (Rayleigh, within 2%) and, at Omega = omega_0,
    equals the full-FE ``K_T(u*)`` eigenvalue on the rigid modes' M-orthogonal
    complement (within 1%).  Without static modes there is no stiffening at all."""
    fe, R, f_cf = _beam()
    basis, K_e, K2, K3 = _reduced(True)
    Phi, w0 = basis.Phi, basis.omega[0]

    def first(K_e, K2, K3, Phi, Om2):
        q = np.linalg.solve(K_e, Phi.T @ (Om2 * f_cf))
        return sla.eigh(h_e_tangent(K_e, K2, K3, q), Phi.T @ (fe.M @ Phi),
                        eigvals_only=True)[0]

    Om2 = (0.05 * w0) ** 2
    slope = (first(K_e, K2, K3, Phi, Om2) - w0**2) / Om2
    assert slope == pytest.approx(_free_free_rise_coefficient(), rel=0.02)
    b0, Ke0, K20, K30 = _reduced(False)
    assert first(Ke0, K20, K30, b0.Phi, w0**2) == pytest.approx(b0.omega[0] ** 2, rel=1e-9)
    lam_red = first(K_e, K2, K3, Phi, w0**2)
    assert lam_red > 1.2 * w0**2
    u = _relieved_response(fe, R, w0**2 * f_cf)
    Z = sla.null_space((fe.M @ R).T)                  # complement of the rigid modes
    KT = green_lagrange_tangent(fe, u)
    lam_fe = sla.eigh(Z.T @ (KT @ Z), Z.T @ (fe.M @ Z), eigvals_only=True,
                      subset_by_index=(0, 0))[0]
    assert np.sqrt(lam_red) == pytest.approx(np.sqrt(lam_fe), rel=0.01)
