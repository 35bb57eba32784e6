"""Static modal derivatives cure the membrane locking of the reduced K2/K3 (THEORY §2.5, §8.1).

Body: Kane's spin-up strip ``meshes/kane_hex27_40x1x1.msh`` (L = 8 m, h = 36.8 mm in y,
b = 1.98 mm in z, E = 6.8952e10 Pa; Kane, Ryan & Banerjee 1987), clamped ("clamp", RBE2,
frame at the clamp), 6 fixed-interface modes + inertial static modes, as in
tests/scenarios/flexible/test_spinup_beam.py.  References:

* the full-FE St. Venant--Kirchhoff Newton solution (``flexmbs.fe.stress``) of a transverse
  tip load giving 1.5 % L deflection, and Euler--Bernoulli ``P L^3 / (3 E I)``;
* the full-FE tangent eigenproblem ``K_T(u*) x = w^2 M x`` at the centrifugal static state
  ``u*`` (THEORY §8.1), and the first-order Southwell estimate
  ``w^2 = w0^2 + 1.193 Omega^2`` (an upper bound for the first mode).

The strip is loaded past its lateral-torsional buckling load (``4.013 sqrt(E I_y G J) /
L^2 = 0.13 N`` < ``P = 0.40 N``), so the in-plane FE equilibrium is unstable; the FE Newton
iterates are kept mirror-symmetric about the mid-plane z = b/2 (round-off would otherwise
drive the out-of-plane mode).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import material_from_name
from flexmbs.fe.stress import green_lagrange_internal_force, green_lagrange_tangent
from flexmbs.io.mesh import read_mesh
from flexmbs.reduction import InterfaceSpec, h_e, h_e_tangent
from flexmbs.reduction.derivatives import (constrained_solver, derivative_pairs,
                                           dominant_axis_modes, enrich_basis,
                                           modal_derivatives, quadratic_force)
from flexmbs.reduction.interfaces import resolve_interface
from flexmbs.reduction.modes import compute_basis, inertial_loads
from flexmbs.reduction.stiffening import stiffening_tensors

from .conftest import MESHES

L, E, I = 8.0, 6.8952e10, 8.2189e-9
KANE = material_from_name("aluminium_kane")


@lru_cache(maxsize=None)
def kane():
    """``(fe, fixed dofs, plain basis, in-plane bending indices)``."""
    fe = assemble(read_mesh(MESHES / "kane_hex27_40x1x1.msh"), KANE)
    itf = resolve_interface(InterfaceSpec("clamp"), fe.mesh, fe.dof_of_node)
    basis = compute_basis(fe, (itf,), 6, "interface:clamp", static_modes=True)
    iy = dominant_axis_modes(fe, basis.Phi, 1, 3)
    return fe, itf.dofs.ravel(), basis, tuple(iy)


@lru_cache(maxsize=None)
def enriched():
    fe, fixed, basis, iy = kane()
    return enrich_basis(fe, basis.Phi, iy, fixed_dofs=fixed)


def _tensors(fe, Phi):
    K_e = Phi.T @ (fe.K @ Phi)
    return (0.5 * (K_e + K_e.T), *stiffening_tensors(fe.basis, KANE.C, Phi))


def _mirror_z(fe) -> sp.csr_matrix:
    """``S u``: the mirror image of ``u`` in the plane z = b/2 (node permutation, u_z -> -u_z)."""
    X = np.asarray(fe.mesh.points)
    Y = X.copy()
    Y[:, 2] = X[:, 2].max() - X[:, 2]
    key = {tuple(np.round(x, 9)): k for k, x in enumerate(X)}
    mate = np.array([key[tuple(np.round(y, 9))] for y in Y])
    d = np.asarray(fe.dof_of_node)
    rows, cols = d.ravel(), d[mate].ravel()
    vals = np.tile([1.0, 1.0, -1.0], len(X))
    return sp.csr_matrix((vals, (rows, cols)), shape=(fe.n_dof, fe.n_dof))


def _fe_newton(fe, fixed, F, n_iter=8):
    """Full-FE Newton from the linear solution, iterates projected onto the mirror-symmetric
    (in-plane) subspace ``(u + S u) / 2``.  K_ff of this 2 mm thick strip has a condition
    number ~1e13: every solve leaves ~1e-3 |u| of round-off in the soft antisymmetric
    (out-of-plane bending, torsion) directions, which the projection removes."""
    free = np.setdiff1d(np.arange(fe.n_dof), fixed)
    S = _mirror_z(fe)
    u = np.zeros(fe.n_dof)
    u[free] = spla.spsolve(fe.K[free][:, free].tocsc(), F[free])
    u = 0.5 * (u + S @ u)
    u_lin = u.copy()
    for _ in range(n_iter):
        r = green_lagrange_internal_force(fe, u) - F
        du = np.zeros(fe.n_dof)
        du[free] = spla.spsolve(green_lagrange_tangent(fe, u)[free][:, free].tocsc(), -r[free])
        du = 0.5 * (du + S @ du)
        u += du
        if np.abs(du).max() < 1e-5 * np.abs(u).max():
            return u_lin, u
    raise AssertionError(f"full-FE Newton: no convergence, last |du| = {np.abs(du).max():.3g}")


def _reduced_newton(K_e, K2, K3, f, n_iter=30):
    q = np.linalg.solve(K_e, f)
    for _ in range(n_iter):
        dq = np.linalg.solve(h_e_tangent(K_e, K2, K3, q), f - h_e(K_e, K2, K3, q))
        q += dq
        if np.abs(dq).max() < 1e-10 * np.abs(q).max():
            return q
    raise AssertionError("reduced Newton: no convergence")


def test_quadratic_force_is_the_symmetric_bilinear_part():
    """``f(a) = K a + f2(a, a) + f3(a)`` with ``f3`` cubic: ``f(2a) - 2 K a - 4 f2(a, a)
    = 8 [f(a) - K a - f2(a, a)]``; and ``f2(a, b) = f2(b, a)``, ``f2(a, a + b) = f2(a, a)
    + f2(a, b)``."""
    fe, _, basis, iy = kane()
    a, b = 0.05 * basis.Phi[:, iy[0]], 0.05 * basis.Phi[:, iy[1]]
    f = green_lagrange_internal_force
    f2aa = quadratic_force(fe, a)
    cubic = f(fe, a) - fe.K @ a - f2aa
    lhs = f(fe, 2 * a) - 2 * (fe.K @ a) - 4 * f2aa
    assert np.linalg.norm(lhs - 8 * cubic) <= 1e-6 * np.linalg.norm(f2aa)
    f2ab = quadratic_force(fe, a, b)
    assert np.linalg.norm(f2ab - quadratic_force(fe, b, a)) <= 1e-9 * np.linalg.norm(f2ab)
    assert np.linalg.norm(quadratic_force(fe, a, a + b) - f2aa - f2ab) \
        <= 1e-7 * np.linalg.norm(f2aa)


def test_quadratic_force_by_quadrature_equals_polarisation():
    """Two formulations of ``f2(a, b)``: the closed bilinear form integrated element by
    element (``quadratic_force_elements``, what a distributed run sums rank by rank) and
    the polarisation of scikit-fem's full Green--Lagrange force (``quadratic_force``)."""
    from flexmbs.reduction.derivatives import quadratic_force_elements
    fe, _, basis, iy = kane()
    a, b = basis.Phi[:, iy[0]], basis.Phi[:, iy[1]]
    C = fe.material.C
    for x, y in ((a, None), (a, b), (b, a + 0.3 * b)):
        ref = quadratic_force(fe, x, y)
        got = quadratic_force_elements(fe.basis, C, x, y)
        assert np.linalg.norm(got - ref) <= 1e-10 * np.linalg.norm(ref)   # measured 6e-15
    # partial sums over a split of the elements add up to the whole
    E = fe.basis.n_elements
    halves = [fe.basis.restricted(np.arange(E)[k::2]) for k in (0, 1)]
    whole = quadratic_force_elements(fe.basis, C, a, b)
    parts = sum(quadratic_force_elements(h, C, a, b) for h in halves)
    assert np.linalg.norm(parts - whole) <= 1e-12 * np.linalg.norm(whole)


def test_modal_derivatives_normalised_clamped_and_deduplicated():
    fe, fixed, basis, iy = kane()
    Phi = basis.Phi
    solve = constrained_solver(fe, fixed)
    pairs = derivative_pairs(iy[:2])                      # (a,a), (a,b), (b,b)
    T = modal_derivatives(fe, Phi, pairs, fixed_dofs=fixed, K_factor=solve)
    assert T.shape == (fe.n_dof, 3)
    assert np.allclose(np.einsum("ik,ik->k", T, fe.M @ T), 1.0, atol=1e-12)
    assert np.abs(T[fixed]).max() == 0.0
    # K_c theta_ij = -f2(phi_i, phi_j) on the free dofs (up to the normalisation)
    free = np.setdiff1d(np.arange(fe.n_dof), fixed)
    f2 = quadratic_force(fe, Phi[:, iy[0]])
    r = fe.K @ T[:, 0]
    c = -(r[free] @ f2[free]) / (f2[free] @ f2[free])
    assert np.linalg.norm(r[free] + c * f2[free]) <= 1e-8 * np.linalg.norm(r[free])
    # the derivative of a y-bending pair is axial (the inextensional shortening)
    x = np.asarray(fe.dof_of_node)[:, 0]
    assert T[x, 0] @ (fe.M @ T[:, 0])[x] > 0.95
    # repeated pairs are near-duplicates and dropped; the same factor gives the same fields
    # (to the round-off that the soft out-of-plane bending of the strip amplifies)
    T2 = modal_derivatives(fe, Phi, [*pairs, pairs[0]], fixed_dofs=fixed, K_factor=solve)
    assert T2.shape[1] == 3
    D = T2 - T
    assert np.einsum("ik,ik->k", D, fe.M @ D).max() < 1e-10


def test_enriched_basis_is_orthonormal_ritz_and_deterministic():
    fe, fixed, basis, iy = kane()
    Phi, omega = enriched()
    n_q = basis.Phi.shape[1]
    assert Phi.shape[1] == n_q + 6                       # 3 modes -> 6 pairs, all kept
    assert np.allclose(Phi.T @ (fe.M @ Phi), np.eye(Phi.shape[1]), atol=1e-10)
    Kr = Phi.T @ (fe.K @ Phi)
    assert np.allclose(Kr, np.diag(omega**2), atol=1e-8 * omega.max() ** 2)
    assert np.abs(Phi[fixed]).max() < 1e-12
    assert np.all(np.abs(Phi).max(axis=0) == Phi.max(axis=0))     # sign-normalised
    # the original space is kept: span(Phi_plain) is inside span(Phi)
    R = basis.Phi - Phi @ (Phi.T @ (fe.M @ basis.Phi))
    assert np.einsum("ik,ik->k", R, fe.M @ R).max() < 1e-16
    Phi2, omega2 = enrich_basis(fe, basis.Phi, list(iy), fixed_dofs=fixed)
    assert np.array_equal(Phi2, Phi) and np.array_equal(omega2, omega)


def test_tip_load_no_locking_with_modal_derivatives():
    """Transverse tip load P = 3 E I (0.015 L) / L^3 (0.40 N) on the clamped strip.
    Full-FE Newton: 0.11963 m (linear 0.11964, Euler--Bernoulli 0.12).  Plain basis with
    K2/K3: 0.024 m (5x too stiff, membrane locking); enriched with the 6 derivatives of
    the 3 lowest in-plane bending vectors: 0.11916 m (-0.4 %)."""
    fe, fixed, basis, _ = kane()
    tip = fe.mesh.node_set("tip")
    tip_y = np.asarray(fe.dof_of_node)[tip, 1]
    delta = 0.015 * L
    F = np.zeros(fe.n_dof)
    F[tip_y] = 3 * E * I * delta / L**3 / len(tip)
    u_lin, u = _fe_newton(fe, fixed, F)
    ref = u[tip_y].mean()
    assert u_lin[tip_y].mean() == pytest.approx(delta, rel=0.01)       # Euler--Bernoulli
    assert ref == pytest.approx(u_lin[tip_y].mean(), rel=1e-3)         # mildly nonlinear
    out = {}
    for name, Phi in (("plain", basis.Phi), ("enriched", enriched()[0])):
        K_e, K2, K3 = _tensors(fe, Phi)
        out[name] = (Phi @ _reduced_newton(K_e, K2, K3, Phi.T @ F))[tip_y].mean()
    assert out["plain"] < 0.3 * ref                                      # locked
    assert out["enriched"] == pytest.approx(ref, rel=0.01)


def test_centrifugal_stiffening_kept():
    """Spin Omega = w1 (first in-plane bending frequency, 2.91 rad/s) about the z axis
    through the section centre (0, h/2): the reduced static axial stretch equals the
    full-FE one (static modes in the basis), and the stiffened out-of-plane and in-plane
    first frequencies equal the full-FE tangent eigenvalues (2.963 and 4.303 rad/s, FE)
    within 0.5 % for the plain and the enriched basis; Southwell's first-order
    ``sqrt(w0^2 + 1.193 Omega^2)`` (3.18, 4.31 rad/s) bounds them from above."""
    fe, fixed, basis, _ = kane()
    free = np.setdiff1d(np.arange(fe.n_dof), fixed)
    h = np.asarray(fe.mesh.points)[:, 1].max()
    A = inertial_loads(fe.mesh.points, fe.dof_of_node, fe.M)
    f_cf = -(A[:, 11] + 0.5 * h * A[:, 1])            # rho Omega^2 (x, y - h/2, 0) per Omega^2
    w1 = basis.omega[dominant_axis_modes(fe, basis.Phi, 1, 1)[0]]
    Om2 = w1**2
    Mff = fe.M[free][:, free].tocsc()
    u = np.zeros(fe.n_dof)
    u[free] = spla.spsolve(fe.K[free][:, free].tocsc(), Om2 * f_cf[free])
    KT = green_lagrange_tangent(fe, u)[free][:, free].tocsc()
    w_fe = np.sqrt(np.sort(spla.eigsh(KT, k=2, M=Mff, sigma=0, which="LM")[0]))
    w0 = np.sqrt(np.sort(spla.eigsh(fe.K[free][:, free].tocsc(), k=4, M=Mff, sigma=0,
                                    which="LM")[0]))
    southwell = np.sqrt(w0[[0, 3]] ** 2 + 1.193 * Om2)
    assert np.all(w_fe <= southwell * 1.001) and w_fe[1] > 1.4 * w0[3]   # strong stiffening
    tip_x = np.asarray(fe.dof_of_node)[fe.mesh.node_set("tip"), 0]
    for Phi in (basis.Phi, enriched()[0]):
        K_e, K2, K3 = _tensors(fe, Phi)
        q = np.linalg.solve(K_e, Om2 * (Phi.T @ f_cf))
        assert (Phi @ q)[tip_x].mean() == pytest.approx(u[tip_x].mean(), rel=1e-6)
        lam = sla.eigh(h_e_tangent(K_e, K2, K3, q), Phi.T @ (fe.M @ Phi), eigvals_only=True)
        assert np.sqrt(lam[:2]) == pytest.approx(w_fe, rel=5e-3)


def test_kane_spinup_quasi_static_with_enriched_pipeline(monkeypatch):
    """The strict-xfail case of tests/scenarios/flexible/test_spinup_beam.py, with the enrichment
    wired into ``reduce_model`` (``compute_basis`` wrapped; the proposed
    ``ReductionSettings.modal_derivatives`` switch): quasi-static in-plane tip deflection
    at t = 2 s of the spin-up (hub rate 0.09 rad/s) with K2/K3 against Euler--Bernoulli
    ``-11 q0 L^4 / (120 E I)``, ``q0 = m thetadd L``: -141.6 mm.  Measured: enriched
    -141.1 mm, linear -141.2 mm; the plain basis gives -27.3 mm."""
    import dataclasses

    import flexmbs as fm
    import flexmbs.reduction.reduce as reduce_mod
    from flexmbs.bodies.flexible import FlexibleBody
    from flexmbs.constraints.drives import AngleDrive, SpinUp
    from flexmbs.post import steady_state
    from flexmbs.reduction import ReductionSettings, reduce_model

    plain = reduce_mod.compute_basis

    def with_derivatives(fe, itfs, n_modes, frame, **kw):
        b = plain(fe, itfs, n_modes, frame, **kw)
        fixed = next(i for i in itfs if frame == f"interface:{i.name}").dofs.ravel()
        Phi, omega = enrich_basis(fe, b.Phi, dominant_axis_modes(fe, b.Phi, 1, 3),
                                  fixed_dofs=fixed)
        return dataclasses.replace(b, Phi=Phi, omega=omega)

    monkeypatch.setattr(reduce_mod, "compute_basis", with_derivatives)
    fe = kane()[0]
    body = reduce_model(fe, ReductionSettings(6, (InterfaceSpec("clamp"),), "interface:clamp",
                                              static_modes=True), name="kane")
    P = np.asarray(body.points)
    tip = int(np.argmin(np.linalg.norm(P - [L, P[:, 1].max() / 2, P[:, 2].max() / 2], axis=1)))
    beam = FlexibleBody("beam", body, damping=False, stiffening=True)
    model = fm.System(name="kane")
    model.add(fm.Revolute("hub", fm.ground, beam["clamp"], axis="z"))
    model.drives.append(AngleDrive("spin", joint="hub", angle=SpinUp(Omega=6.0, T=15.0)))
    t, c = 2.0, 15.0 / (2 * np.pi)
    d = steady_state(model.assemble(), t=t).q[7:] @ np.asarray(body.modes[tip, 1])
    m = KANE.rho * 7.2968e-5
    thetadd = 6.0 / 15.0 * (1 - np.cos(t / c))
    assert d == pytest.approx(-11 * m * thetadd * L * L**4 / (120 * E * I), rel=0.01)
