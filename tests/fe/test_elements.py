"""The serendipity hex20 and linear wedge6 elements and mixed hex8 + wedge6 meshes:
cantilever, patch test, quadrature.

References: Euler-Bernoulli and Timoshenko cantilever (beam_reference.py: f1 = 83.552 Hz
and 82.904 Hz, sag q L^4 / (8 E I) = 5.5006e-5 m); the patch test (Irons; Zienkiewicz &
Taylor, *The Finite Element Method* vol. 1, ch. 9): on any mesh of isoparametric
elements, a linear displacement ``u = A x + b`` is reproduced exactly, so the stress is
``C sym(A)`` everywhere, the strain energy is ``V eps : C : eps / 2`` and the internal
nodes are in equilibrium (``(K u)_i = 0``); the wedge rule against the closed-form moments
``int x^a y^b z^c = a! b! / (a + b + 2)! / (c + 1)`` of the unit wedge.
"""
from __future__ import annotations

from math import factorial
from pathlib import Path

import numpy as np
import pytest

from flexmbs.errors import MeshError
from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.fe.stress import nodal_stress_operator
from flexmbs.io.cell_types import quadrature
from flexmbs.io.mesh import Mesh, check_jacobians, read_mesh
from flexmbs.io.mixed_mesh import MixedMesh

from .beam_reference import (f1_euler_bernoulli, f1_timoshenko, sag_euler_bernoulli,
                             sag_timoshenko)
from .test_cantilever import cantilever

MESHES = Path(__file__).resolve().parents[2] / "meshes"
STEEL = Material(E=210e9, nu=0.3, rho=7850.0, name="steel")
F_EB = f1_euler_bernoulli(210e9, 7850.0, 1.0, 0.1, 0.1)
F_T = f1_timoshenko(210e9, 0.3, 7850.0, 1.0, 0.1, 0.1)
SAG_EB = sag_euler_bernoulli(210e9, 7850.0, 1.0, 0.1, 0.1)
SAG_T = sag_timoshenko(210e9, 0.3, 7850.0, 1.0, 0.1, 0.1)


@pytest.mark.parametrize("name", ["beam_hex20_20x2x2.msh", "beam_wedge6_80x8x8.msh"])
def test_cantilever_first_frequency(name):
    """f1 within 1% of Euler-Bernoulli (83.552 Hz); the quadratic hex20 also within 1%
    of Timoshenko (82.904 Hz).  Measured: hex20 20x2x2 83.479 Hz (-0.09% EB, +0.69% T),
    wedge6 80x8x8 83.806 Hz (+0.30% EB, +1.09% T: linear prisms are stiff in bending,
    as hex8, and converge from above)."""
    mesh = read_mesh(MESHES / name)
    f, _ = cantilever(mesh, STEEL)
    assert f[0] == pytest.approx(F_EB, rel=0.01)
    if mesh.cell_type == "hex20":
        assert f[0] == pytest.approx(F_T, rel=0.01)
    else:
        assert f[0] > F_T


def test_cantilever_sag_hex20():
    """Tip sag under self-weight within 1% of q L^4 / (8 E I), and below Timoshenko's.
    Measured: hex20 20x2x2 0.9964 x EB (wedge6 80x8x8, linear: 0.987 x EB, not tested
    to 1%)."""
    _, sag = cantilever(read_mesh(MESHES / "beam_hex20_20x2x2.msh"), STEEL)
    assert sag == pytest.approx(SAG_EB, rel=0.01)
    assert sag < SAG_T


def _distorted(name: str, seed: int) -> tuple[Mesh, np.ndarray]:
    """The mesh with every node moved at random by up to 5% of the smallest element
    edge (the elements become general, curved isoparametric ones; none inverted), and the
    nodes that were inside the box before (not on its surface)."""
    mesh = read_mesh(MESHES / name)
    x = mesh.points
    inner = np.flatnonzero(((x > 1e-9) & (x < np.array([1.0, 0.1, 0.1]) - 1e-9)).all(1))
    rng = np.random.default_rng(seed)
    h = 0.1 / 4 if "wedge" in name else 0.1 / 2
    p = x + 0.05 * h * rng.uniform(-1, 1, x.shape)
    moved = Mesh(p, mesh.cells, mesh.cell_type, mesh.node_sets, mesh.facet_sets)
    check_jacobians(moved)
    return moved, inner


@pytest.mark.parametrize("name", ["beam_hex20_20x2x2.msh", "beam_wedge6_40x4x4.msh"])
def test_patch_linear_field(name):
    """Patch test on a distorted mesh: u = A x + b gives sigma = C sym(A) at every node,
    energy u^T K u / 2 = V eps : C : eps / 2 (V = mass / rho) and (K u)_i = 0 at every
    node inside the body."""
    mesh, inner = _distorted(name, 3)
    fe = assemble(mesh, STEEL)
    rng = np.random.default_rng(4)
    # b of the size of A x: a large rigid shift only adds round-off (K b = 0 to 1e-16 K)
    A, b = 1e-3 * rng.normal(size=(3, 3)), 1e-3 * rng.normal(size=3)
    u = np.zeros(fe.n_dof)
    for k in range(3):
        u[fe.dof_of_node[:, k]] = mesh.points @ A[k] + b[k]
    e = 0.5 * (A + A.T)
    eps = np.array([e[0, 0], e[1, 1], e[2, 2], 2 * e[1, 2], 2 * e[0, 2], 2 * e[0, 1]])
    sig = STEEL.C @ eps
    s = (nodal_stress_operator(fe) @ u).reshape(-1, 6)
    np.testing.assert_allclose(s, np.broadcast_to(sig, s.shape), atol=1e-9 * abs(sig).max())
    V = fe.M.sum() / 3 / STEEL.rho
    assert 0.5 * u @ (fe.K @ u) == pytest.approx(0.5 * V * eps @ sig, rel=1e-10)
    f = (fe.K @ u)[fe.dof_of_node]
    assert inner.size > 0
    assert np.abs(f[inner]).max() < 1e-9 * np.abs(f).max()


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_wedge_quadrature_moments(order):
    """The wedge rule integrates x^a y^b z^c exactly for a + b <= order, c <= order."""
    X, W = quadrature("wedge6", order)
    assert (X[0] >= 0).all() and (X[1] >= 0).all() and (X[0] + X[1] <= 1 + 1e-14).all()
    for a in range(order + 1):
        for b in range(order + 1 - a):
            for c in range(order + 1):
                exact = factorial(a) * factorial(b) / factorial(a + b + 2) / (c + 1)
                got = float(W @ (X[0] ** a * X[1] ** b * X[2] ** c))
                assert got == pytest.approx(exact, rel=1e-12)


# ------------------------------------------------------------------ mixed hex8 + wedge6

MIXED = "beam_hex8_wedge6_80x8x8.msh"


@pytest.mark.slow
def test_mixed_mesh_cantilever():
    """hex8 in the lower half of the section, wedge6 in the upper (one sweep, shared
    nodes), assembled block by block: f1 within 1% of Euler-Bernoulli; the mass is
    rho V = 78.5 kg.  Measured: 83.750 Hz (+0.24%) (all-hex8 80x8x8: 83.699 Hz, all-wedge6:
    83.806 Hz); sag 0.989 x EB.  Slow (10-15 s): SuperLU's factor of this K with the
    MMD ordering of the eigen backend takes 9.5 s (1.4 s after a reverse Cuthill-McKee
    preorder of the dofs; 0.7 s for the all-wedge mesh)."""
    mesh = read_mesh(MESHES / MIXED, mixed=True)
    assert mesh.cell_types == ("hex8", "wedge6")
    assert [b.n_cells for b in mesh.blocks] == [80 * 8 * 4, 2 * 80 * 8 * 4]
    fe = assemble(mesh, STEEL)
    assert fe.M.sum() / 3 == pytest.approx(7850.0 * 0.01, rel=1e-12)
    f, _ = cantilever(mesh, STEEL, fe=fe)
    assert f[0] == pytest.approx(F_EB, rel=0.01)


def test_mixed_mesh_patch_test():
    """A linear field on the distorted mixed mesh: energy V eps : C : eps / 2 and zero
    force at every interior node, also on the hex8-wedge6 interface (conforming)."""
    plain = read_mesh(MESHES / MIXED, mixed=True)
    x = plain.points
    inner = np.flatnonzero(((x > 1e-9) & (x < np.array([1.0, 0.1, 0.1]) - 1e-9)).all(1))
    at_interface = inner[np.isclose(x[inner, 2], 0.05)]
    assert at_interface.size > 0
    p = x + 0.05 * 0.0125 * np.random.default_rng(5).uniform(-1, 1, x.shape)
    blocks = [Mesh(p, b.cells, b.cell_type, b.node_sets) for b in plain.blocks]
    for b in blocks:
        check_jacobians(b)
    mesh = MixedMesh.of(blocks)
    fe = assemble(mesh, STEEL)
    rng = np.random.default_rng(4)
    A, b = 1e-3 * rng.normal(size=(3, 3)), 1e-3 * rng.normal(size=3)
    u = np.zeros(fe.n_dof)
    for k in range(3):
        u[fe.dof_of_node[:, k]] = p @ A[k] + b[k]
    e = 0.5 * (A + A.T)
    eps = np.array([e[0, 0], e[1, 1], e[2, 2], 2 * e[1, 2], 2 * e[0, 2], 2 * e[0, 1]])
    V = fe.M.sum() / 3 / STEEL.rho
    assert 0.5 * u @ (fe.K @ u) == pytest.approx(0.5 * V * eps @ (STEEL.C @ eps), rel=1e-10)
    f = (fe.K @ u)[fe.dof_of_node]
    assert np.abs(f[inner]).max() < 1e-9 * np.abs(f).max()


def test_mixed_mesh_refused_where_not_supported():
    """Without mixed=True, and in a reduction with modal derivatives (their St. Venant-
    Kirchhoff force takes one element kind): one line."""
    with pytest.raises(MeshError, match=r"expected a single volume element type, found "
                                         r"\['hexahedron', 'wedge'\] \(a mixed-element"):
        read_mesh(MESHES / "beam_hex8_wedge6_20x2x2.msh")
    from flexmbs.reduction import ReductionSettings, reduce_model
    fe = assemble(read_mesh(MESHES / "beam_hex8_wedge6_20x2x2.msh", mixed=True), STEEL)
    with pytest.raises(ValueError, match=r"mixed-element mesh \(hex8\+wedge6\) is reduced "
                                         "on one rank without modal derivatives only"):
        reduce_model(fe, ReductionSettings(n_modes=2, modal_derivatives=1))
