"""Invariants from element quadrature: closed forms, identities, second formulation."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.reduction import C_r, G_e, G_r, I, InterfaceSpec, O_e, c, mass_matrix
from flexmbs.reduction.interfaces import resolve_interface, rigid_modes
from flexmbs.reduction.invariants import axial, invariants_from_shape_integrals
from flexmbs.reduction.modes import compute_basis
from flexmbs.reduction.quadrature import shape_integrals

from .boxmesh import box_mesh
from .conftest import STEEL, box_fe

SIZE, ORIGIN = (0.6, 0.2, 0.1), (0.3, -0.1, 0.25)


def _box_invariants(cell_type, n_modes=4, frame="mean_axis", interfaces=()):
    fe = box_fe(cell_type, (3, 2, 2), SIZE, ORIGIN)
    itfs = tuple(resolve_interface(InterfaceSpec(n), fe.mesh, fe.dof_of_node)
                 for n in interfaces)
    basis = compute_basis(fe, itfs, n_modes, frame)
    inv = invariants_from_shape_integrals(shape_integrals(fe.basis, STEEL.rho, basis.Phi))
    return fe, basis, inv


@pytest.mark.parametrize("cell_type", ["tet4", "tet10", "hex8", "hex27"])
def test_box_mass_com_inertia_closed_form(cell_type):
    """Reference: homogeneous box a x b x c, m = rho abc, c = centre,
    I_O = m/12 diag(b^2+c^2, a^2+c^2, a^2+b^2) + m (|c|^2 E - c c^T) (Steiner)."""
    _, _, inv = _box_invariants(cell_type)
    a, b, h = SIZE
    m = STEEL.rho * a * b * h
    com = np.array(ORIGIN) + 0.5 * np.array(SIZE)
    I_ref = m / 12 * np.diag([b**2 + h**2, a**2 + h**2, a**2 + b**2]) \
        + m * (com @ com * np.eye(3) - np.outer(com, com))
    q0 = np.zeros(inv.M_e.shape[0])
    assert inv.m == pytest.approx(m, rel=1e-10)
    np.testing.assert_allclose(c(inv, q0), com, rtol=1e-10, atol=1e-10 * np.abs(com).max())
    np.testing.assert_allclose(I(inv, q0), I_ref, rtol=1e-10, atol=1e-10 * np.abs(I_ref).max())


@pytest.mark.parametrize("cell_type", ["tet10", "hex27"])
def test_identities_by_finite_differences(cell_type):
    """THEORY §2.8.7: dI/dt = (G_r + G_r^T)/2, G_e = 2 dC_r/dt, m dc/dt = C_t^T qd;
    the (6 + n_q) mass matrix of §2.3 is SPD.  Clamped frame so C_t, C_r0 != 0."""
    _, _, inv = _box_invariants(cell_type, 4, "interface:x0", ("x0",))
    n_q = inv.M_e.shape[0]
    rng = np.random.default_rng(1)
    q, qd = rng.standard_normal(n_q) * 1e-2, rng.standard_normal(n_q)
    h = 1e-4

    def ddt(f):
        return (f(q + h * qd) - f(q - h * qd)) / (2 * h)

    Id = ddt(lambda x: I(inv, x))
    Gr = G_r(inv, q, qd)
    assert np.abs(Id - 0.5 * (Gr + Gr.T)).max() <= 1e-8 * np.abs(Id).max()
    Crd = ddt(lambda x: C_r(inv, x))
    assert np.abs(G_e(inv, qd) - 2 * Crd).max() <= 1e-8 * np.abs(Crd).max()
    cd = ddt(lambda x: c(inv, x))
    np.testing.assert_allclose(inv.m * cd, inv.C_t.T @ qd, rtol=1e-8, atol=1e-12)
    Mfull = mass_matrix(inv, q)
    np.testing.assert_allclose(Mfull, Mfull.T, atol=1e-12 * np.abs(Mfull).max())
    assert np.linalg.eigvalsh(Mfull).min() > 0


def test_polynomials_equal_the_shape_integral_formulas():
    """Second formulation: the invariants at ``q`` straight from the shape integrals
    (THEORY §2.3, table of §2.8.2), ``Theta = int r r^T dm = J0 + sum q_k (J1_k + J1_k^T)
    + sum q_k q_l J2_kl`` and ``I = tr(Theta) E - Theta``, ``C_r``, ``O_e``, ``G_r``, ``G_e``
    from ``J1``, ``J2``, ``M_e``, against the polynomials in the coefficient arrays
    (``I0, I1, I2, C_r0, C_r1, O_e0, O_e1``).  Clamped frame so C_t, C_r0 != 0."""
    _, _, inv = _box_invariants("hex27", 4, "interface:x0", ("x0",))
    n_q = inv.M_e.shape[0]
    rng = np.random.default_rng(2)
    q, qd = rng.standard_normal(n_q) * 1e-2, rng.standard_normal(n_q)
    E = np.eye(3)
    J1, J2, J1T = inv.J1, inv.J2, np.swapaxes(inv.J1, 1, 2)
    trJ1 = np.trace(J1, axis1=1, axis2=2)
    A = np.einsum("k,kij->ij", q, J1)
    Theta = inv.J0 + A + A.T + np.einsum("k,l,klij->ij", q, q, J2)
    J2d = J2 - np.swapaxes(J2, 0, 1)                       # J2_kl - J2_lk
    refs = {
        "c": (c(inv, q), (inv.s0 + inv.C_t.T @ q) / inv.m),
        "I": (I(inv, q), np.trace(Theta) * E - Theta),
        "C_r": (C_r(inv, q), axial(J1T - J1) + axial(np.einsum("l,klij->kij", q, J2d))),
        "O_e": (O_e(inv, q), J1 + np.einsum("l,lkij->kij", q, J2)
                - (trJ1 + q @ inv.M_e)[:, None, None] * E),
        "G_r": (G_r(inv, q, qd), -2.0 * (np.einsum("m,mji->ij", qd, J1) - (qd @ trJ1) * E
                                         + np.einsum("m,l,mlij->ij", qd, q, J2)
                                         - (q @ inv.M_e @ qd) * E)),
        "G_e": (G_e(inv, qd), 2.0 * axial(np.einsum("l,klij->kij", qd, J2d))),
    }
    for name, (got, ref) in refs.items():
        assert np.abs(got - ref).max() <= 1e-12 * np.abs(ref).max(), name


@pytest.mark.parametrize("cell_type", ["tet10", "hex27"])
def test_quadrature_equals_consistent_mass_route(cell_type):
    """Second formulation (THEORY §2.8.4, Zwolfer & Gerstmayr 2019): m, s0, s_k, J0, J1, J2
    from the scalar consistent mass matrix and nodal data; M_e = Phi^T M Phi."""
    fe, basis, inv = _box_invariants(cell_type, 4, "interface:x0", ("x0",))
    Phi, X, dofs = basis.Phi, fe.mesh.points, fe.dof_of_node
    mh = fe.M[dofs[:, 0]][:, dofs[:, 0]]           # scalar mass matrix (x-x block)
    P = Phi[dofs]                                  # (N, 3, n_q)
    one = np.ones(len(X))
    mhd = mh.toarray()
    pairs = [(inv.m, one @ mh @ one), (inv.s0, X.T @ (mh @ one)),
             (inv.C_t, np.einsum("nik,n->ki", P, mh @ one)), (inv.J0, X.T @ (mh @ X)),
             (inv.J1, np.einsum("ni,nm,mjk->kij", X, mhd, P)),
             (inv.J2, np.einsum("nik,nm,mjl->klij", P, mhd, P)),
             (inv.M_e, Phi.T @ fe.M @ Phi), (inv.M_e, np.eye(len(inv.M_e))),
             (inv.C_t, Phi.T @ fe.M @ rigid_modes(X, dofs, fe.n_dof)[:, :3])]
    for i, (a, b) in enumerate(pairs):
        assert np.abs(np.asarray(a) - b).max() <= 1e-11 * np.abs(b).max(), i


def test_stiffness_has_no_rigid_content():
    """K_e = Phi^T K Phi is positive definite (no rigid modes in the basis) and equals
    diag(omega^2); the FE K annihilates the six rigid modes."""
    fe, basis, inv = _box_invariants("hex27", 6)
    K_e = basis.Phi.T @ fe.K @ basis.Phi
    assert np.linalg.eigvalsh(K_e).min() > 0
    np.testing.assert_allclose(K_e, np.diag(basis.omega**2), atol=1e-8 * basis.omega.max()**2)
    R = rigid_modes(fe.mesh.points, fe.dof_of_node, fe.n_dof, origin=np.array([0.1, 0.2, 0.3]))
    KR = fe.K @ R
    assert np.abs(KR).max() <= 1e-10 * abs(fe.K).max() * np.abs(R).max()
    # mean-axis condition: C_t = 0 and C_r0 = 0
    assert np.abs(inv.C_t).max() < 1e-10 * np.sqrt(inv.m)
    assert np.abs(inv.C_r0).max() < 1e-10 * np.sqrt(inv.m)


def test_rigid_motion_of_mesh_leaves_invariants_unchanged():
    """Frequencies, m, principal inertias about the COM, ||M_e||, singular values of C_t and
    C_r0 do not depend on where the mesh is placed (rotation about an oblique axis)."""
    from flexmbs.fe.assemble import assemble
    from scipy.spatial.transform import Rotation

    Q = Rotation.from_rotvec([0.3, -0.7, 0.5]).as_matrix()
    t = np.array([1.0, -2.0, 0.5])
    results = []
    for mesh in (box_mesh("hex27", (3, 2, 2), SIZE, ORIGIN),
                 box_mesh("hex27", (3, 2, 2), SIZE, ORIGIN).translated_rotated(Q, t)):
        fe = assemble(mesh, STEEL)
        itf = resolve_interface(InterfaceSpec("x0"), fe.mesh, fe.dof_of_node)
        basis = compute_basis(fe, (itf,), 4, "interface:x0")
        inv = invariants_from_shape_integrals(shape_integrals(fe.basis, STEEL.rho, basis.Phi))
        q0 = np.zeros(len(basis.omega))
        com = c(inv, q0)
        Ic = I(inv, q0) - inv.m * (com @ com * np.eye(3) - np.outer(com, com))
        # C_r0 about the COM (independent of the frame origin)
        Cr_com = C_r(inv, q0) - np.cross(com, inv.C_t)
        results.append((basis.omega, inv.m, np.linalg.eigvalsh(Ic), np.linalg.norm(inv.M_e),
                        np.linalg.svd(inv.C_t, compute_uv=False),
                        np.linalg.svd(Cr_com, compute_uv=False)))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10 * np.max(np.abs(a)))
