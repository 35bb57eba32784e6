"""Cantilever 1.0 x 0.1 x 0.1 m steel beam: frequency, gravity sag, convergence.

References (see beam_reference.py): Euler-Bernoulli closed forms
``f1 = 1.87510^2/(2 pi) sqrt(EI/(rho A L^4)) = 83.552 Hz`` and
``w_tip = q L^4 / (8 E I) = 5.5006e-5 m`` (Timoshenko & Gere), and the Timoshenko beam
(Cowper shear coefficient) ``f1 = 82.904 Hz``, ``w_tip = 5.5567e-5 m``.
The 3D solid with a fully clamped end face lies between the two beam theories:
the clamp also blocks warping and Poisson contraction, which stiffens it slightly.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse.linalg import LinearOperator, eigsh, splu

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.io.mesh import read_mesh

from .beam_reference import (f1_euler_bernoulli, f1_timoshenko, sag_euler_bernoulli,
                             sag_timoshenko)

MESHES = Path(__file__).resolve().parents[2] / "meshes"
L, B, H = 1.0, 0.1, 0.1
G = 9.81


def _mat(nu):
    return Material(E=210e9, nu=nu, rho=7850.0, name=f"steel(nu={nu})")


def cantilever(mesh, material, n_modes=3):
    """Frequencies [Hz] with all dofs of the 'clamp' nodes fixed, and the mean vertical
    tip deflection [m] under gravity -z (consistent load M g)."""
    fe = assemble(mesh, material)
    fixed = fe.dof_of_node[mesh.node_set("clamp")].ravel()
    free = np.setdiff1d(np.arange(fe.n_dof), fixed)
    K = fe.K[free][:, free].tocsc()
    M = fe.M[free][:, free].tocsc()
    lu = splu(K)
    op = LinearOperator(K.shape, matvec=lu.solve, dtype=float)
    lam = np.sort(eigsh(K, n_modes, M, sigma=0.0, which="LM", OPinv=op)[0])
    g = np.zeros(fe.n_dof)
    g[fe.dof_of_node[:, 2]] = -G
    u = np.zeros(fe.n_dof)
    u[free] = lu.solve((fe.M @ g)[free])
    sag = -u[fe.dof_of_node[mesh.node_set("tip"), 2]].mean()
    return np.sqrt(lam) / (2 * np.pi), sag


@functools.lru_cache(maxsize=None)
def solved(name: str, nu: float = 0.3):
    return cantilever(read_mesh(MESHES / name), _mat(nu))


F_EB = f1_euler_bernoulli(210e9, 7850.0, L, B, H)
F_T = f1_timoshenko(210e9, 0.3, 7850.0, L, B, H)
SAG_EB = sag_euler_bernoulli(210e9, 7850.0, L, B, H, G)
SAG_T = sag_timoshenko(210e9, 0.3, 7850.0, L, B, H, G)


@pytest.mark.parametrize("name", ["beam_hex27_40x4x4.msh", "beam_tet10_40x4x4.msh",
                                  "beam_hex8_80x8x8.msh"])
def test_first_frequency(name):
    """f1 within 1% of Euler-Bernoulli (83.552 Hz) and of Timoshenko (82.904 Hz).
    Measured: hex27 83.313, tet10 83.343, hex8 83.699 Hz."""
    f, _ = solved(name)
    if "hex" in name:  # square section, symmetric mesh: degenerate bending pair
        assert f[0] == pytest.approx(f[1], rel=1e-8)
    assert f[0] == pytest.approx(F_EB, rel=0.01)
    assert f[0] == pytest.approx(F_T, rel=0.01)


def test_first_frequency_tet4_locks():
    """Linear tetrahedra lock in bending: on the finest shipped tet4 mesh (80x8x8 cells,
    6561 nodes) f1 = 85.1 Hz, still 1.9% above Euler-Bernoulli. Asserted honestly: within
    3% and above the converged 3D value (hex27, 83.3 Hz), i.e. too stiff."""
    f, _ = solved("beam_tet4_80x8x8.msh")
    assert f[0] == pytest.approx(F_EB, rel=0.03)
    assert f[0] > solved("beam_hex27_40x4x4.msh")[0][0]


@pytest.mark.parametrize("name", ["beam_hex27_40x4x4.msh", "beam_tet10_40x4x4.msh"])
def test_gravity_sag(name):
    """Tip sag under self-weight within 1% of q L^4 / (8 E I) = 5.5006e-5 m, and not
    above Timoshenko's (5.5567e-5 m, which adds free shear deformation)."""
    _, sag = solved(name)
    assert sag == pytest.approx(SAG_EB, rel=0.01)
    assert sag < SAG_T


def _observed_order(values):
    """Observed convergence order from three meshes, h halved each time (Roache):
    p = log2((f_1 - f_2) / (f_2 - f_3))."""
    f1, f2, f3 = values
    return np.log2((f1 - f2) / (f2 - f3))


SERIES = {cell: [f"beam_{cell}_{n}.msh" for n in ns] for cell, ns in (
    ("hex27", ["10x1x1", "20x2x2", "40x4x4"]), ("tet10", ["10x1x1", "20x2x2", "40x4x4"]),
    ("hex8", ["20x2x2", "40x4x4", "80x8x8"]), ("tet4", ["20x2x2", "40x4x4", "80x8x8"]))}


def test_convergence_quadratic():
    """Eigenvalue error of degree-p Lagrange elements is O(h^(2p)) for smooth solutions
    (Strang & Fix, ch. 6), i.e. 4 for hex27/tet10. With nu = 0.3 the fully clamped face
    has edge singularities (measured rate 1.7 for hex27), so the rate is checked with
    nu = 0, where the clamp is singularity-free: hex27 measures 3.87 (asserted 4 +- 0.3).
    tet10 measures 3.51 on the shipped structured series (pre-asymptotic; asserted
    3.2..4.3 and reported as such)."""
    p_hex = _observed_order([solved(n, 0.0)[0][0] for n in SERIES["hex27"]])
    p_tet = _observed_order([solved(n, 0.0)[0][0] for n in SERIES["tet10"]])
    assert abs(p_hex - 4.0) < 0.3, p_hex
    assert 3.2 < p_tet < 4.3, p_tet


@pytest.mark.parametrize("cell", ["hex8", "tet4"])
def test_convergence_linear(cell):
    """O(h^2) eigenvalue convergence of linear elements (2p = 2) on the three finest
    meshes; measured hex8 1.87, tet4 1.74 (nu = 0.3)."""
    p = _observed_order([solved(n)[0][0] for n in SERIES[cell]])
    assert abs(p - 2.0) < 0.3, p


@pytest.mark.parametrize("name", ["beam_hex27_10x1x1.msh", "beam_tet10_10x1x1.msh"])
def test_rigid_motion_invariance(name):
    """Frequencies are invariant under a rigid rotation + translation of the mesh."""
    mesh = read_mesh(MESHES / name)
    rng = np.random.default_rng(5)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    Q *= np.sign(np.linalg.det(Q))
    moved = mesh.translated_rotated(Q, rng.normal(size=3))
    f0, _ = cantilever(mesh, _mat(0.3), n_modes=6)
    f1, _ = cantilever(moved, _mat(0.3), n_modes=6)
    np.testing.assert_allclose(f1, f0, rtol=1e-8)
