"""Geometric stiffening of the reduced body (THEORY §2.5, §2.8.5, §8.1)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse.linalg as spla

from flexmbs.fe.stress import green_lagrange_internal_force, green_lagrange_tangent
from flexmbs.reduction import InterfaceSpec, h_e, h_e_tangent
from flexmbs.reduction.interfaces import resolve_interface
from flexmbs.reduction.modes import compute_basis, inertial_loads
from flexmbs.reduction.stiffening import stiffening_tensors

from .conftest import STEEL, box_fe


def _clamped_basis(fe, n_modes, static):
    itf = resolve_interface(InterfaceSpec("x0"), fe.mesh, fe.dof_of_node)
    return itf, compute_basis(fe, (itf,), n_modes, "interface:x0", static_modes=static)


@pytest.mark.parametrize("cell_type", ["hex27", "tet10"])
def test_polynomial_force_equals_direct_fe_evaluation(cell_type):
    """Second formulation: h_e(q) = K_e q + K2:qq + K3:qqq equals Phi^T f_GL(Phi q) from the
    direct FE St. Venant-Kirchhoff evaluation (flexmbs.fe.stress) to 1e-8, for random q
    giving tip displacements of 5% of the length (nonlinear part not small); the tangent
    equals central differences of h_e and Phi^T K_T(Phi q) Phi."""
    fe = box_fe(cell_type, (8, 2, 2))
    _, basis = _clamped_basis(fe, 6, static=True)
    Phi = basis.Phi
    K_e = Phi.T @ fe.K @ Phi
    K2, K3 = stiffening_tensors(fe.basis, STEEL.C, Phi)
    rng = np.random.default_rng(7)
    q = rng.standard_normal(Phi.shape[1])
    q *= 0.05 / np.abs(Phi @ q).max()
    ref = Phi.T @ green_lagrange_internal_force(fe, Phi @ q)
    got = h_e(K_e, K2, K3, q)
    assert np.linalg.norm(got - K_e @ q) > 1e-3 * np.linalg.norm(ref)   # really nonlinear
    assert np.linalg.norm(got - ref) <= 1e-8 * np.linalg.norm(ref)
    T = h_e_tangent(K_e, K2, K3, q)
    h = 1e-6 * np.abs(q).max()
    T_fd = np.column_stack([(h_e(K_e, K2, K3, q + h * e) - h_e(K_e, K2, K3, q - h * e)) / (2 * h)
                            for e in np.eye(len(q))])
    assert np.abs(T - T_fd).max() <= 1e-6 * np.abs(T).max()
    T_fe = Phi.T @ (green_lagrange_tangent(fe, Phi @ q) @ Phi)
    assert np.abs(T - T_fe).max() <= 1e-8 * np.abs(T).max()


def test_centrifugal_stretch_and_stiffening_need_static_modes():
    """THEORY §8.1.  Slender clamped beam 1.0x0.02x0.02 m spinning about z through the
    clamp.  The lowest 4 modes (bending) carry no axial stretch: the reduced static
    centrifugal response misses the axial tip displacement and K2/K3 give no stiffening.
    With the inertial static modes the axial response equals the direct FE solve and the
    stiffened first bending frequency matches the direct FE tangent eigenproblem (reference:
    full FE, ``K_T(u*)`` of flexmbs.fe.stress at the FE static state)."""
    fe = box_fe("hex27", (20, 1, 1), (1.0, 0.02, 0.02), (0.0, -0.01, -0.01))  # axis on z
    itf = resolve_interface(InterfaceSpec("x0"), fe.mesh, fe.dof_of_node)
    free = np.setdiff1d(np.arange(fe.n_dof), itf.dofs.ravel())
    f_cf = -inertial_loads(fe.mesh.points, fe.dof_of_node, fe.M)[:, 11]  # omega_z^2: +rho(x,y,0)
    K_ff = fe.K[free][:, free].tocsc()
    u_full = np.zeros(fe.n_dof)
    u_full[free] = spla.spsolve(K_ff, f_cf[free])
    tip_x = fe.dof_of_node[fe.mesh.node_set("x1"), 0]   # mean axial tip displacement
    assert u_full[tip_x].mean() > 0
    omega0 = None
    results = {}
    for static in (False, True):
        _, basis = _clamped_basis(fe, 4, static)
        Phi = basis.Phi
        K_e = Phi.T @ fe.K @ Phi
        q1 = np.linalg.solve(K_e, Phi.T @ f_cf)
        results[static] = {"tip": (Phi @ q1)[tip_x].mean()}
        K2, K3 = stiffening_tensors(fe.basis, STEEL.C, Phi)
        omega0 = basis.omega[0] if omega0 is None else omega0
        Om2 = omega0**2                                  # spin rate = first bending freq
        KT = h_e_tangent(K_e, K2, K3, Om2 * q1)
        results[static]["f1"] = np.sqrt(sla.eigh(KT, Phi.T @ fe.M @ Phi, eigvals_only=True)[0])
        results[static]["f0"] = basis.omega[0]
    # direct FE reference of the stiffened first frequency
    KT_full = green_lagrange_tangent(fe, omega0**2 * u_full)[free][:, free]
    lam = spla.eigsh(KT_full.tocsc(), k=1, M=fe.M[free][:, free].tocsc(), sigma=0,
                     which="LM")[0]
    f1_fe = np.sqrt(lam[0])
    no, yes = results[False], results[True]
    assert abs(no["tip"]) < 1e-3 * u_full[tip_x].mean()
    assert yes["tip"] == pytest.approx(u_full[tip_x].mean(), rel=1e-6)
    assert no["f1"] == pytest.approx(no["f0"], rel=1e-9)        # no stiffening at all
    assert yes["f1"] > 1.2 * yes["f0"]                           # strong stiffening
    assert yes["f1"] == pytest.approx(f1_fe, rel=0.01)
