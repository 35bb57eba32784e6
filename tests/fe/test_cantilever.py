"""Cantilever 1.0 x 0.1 x 0.1 m steel beam: frequency, gravity sag, convergence.

References (see beam_reference.py): Euler-Bernoulli closed forms
``f1 = 1.87510^2/(2 pi) sqrt(EI/(rho A L^4)) = 83.552 Hz`` and
``w_tip = q L^4 / (8 E I) = 5.5006e-5 m`` (Timoshenko & Gere), and the Timoshenko beam
(Cowper shear coefficient) ``f1 = 82.904 Hz``, ``w_tip = 5.5567e-5 m``.
The 3D solid with a fully clamped end face lies between the two beam theories:
the clamp also blocks warping and Poisson contraction, which stiffens it slightly.

Meshes: the shipped ``meshes/beam_*.msh`` and two large ones generated on first use into
``meshes/generated/`` by ``meshes/make_meshes.py`` (:func:`ensure_mesh`): tet4 250x25x25
(1% accuracy of linear tetrahedra) and tet10 80x8x8 (convergence rate).  Problems above
:data:`DIRECT_SCIPY_MAX` dofs are solved with MUMPS (SLEPc shift-invert).
"""
from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.io.mesh import read_mesh
from flexmbs.reduction.eigen import eigh_sparse

from .beam_reference import (f1_euler_bernoulli, f1_timoshenko, sag_euler_bernoulli,
                             sag_timoshenko)

MESHES = Path(__file__).resolve().parents[2] / "meshes"
_spec = importlib.util.spec_from_file_location("make_meshes", MESHES / "make_meshes.py")
make_meshes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_meshes)
ensure_mesh = make_meshes.ensure_mesh

L, B, H = 1.0, 0.1, 0.1
G = 9.81
#: free dofs up to which the eigen/static solves use scipy's SuperLU, above: MUMPS
DIRECT_SCIPY_MAX = 20_000
#: generated mesh (meshes/generated/, made on first use), like tet10 80x8x8 in SERIES
TET4_FINE = "beam_tet4_250x25x25.msh"


def _mat(nu):
    return Material(E=210e9, nu=nu, rho=7850.0, name=f"steel(nu={nu})")


def _backend(n_dof: int) -> str:
    return "scipy" if n_dof <= DIRECT_SCIPY_MAX else "slepc"


def cantilever(mesh, material, n_modes=3, fe=None):
    """Frequencies [Hz] with all dofs of the 'clamp' nodes fixed, and the mean vertical
    tip deflection [m] under gravity -z (consistent load M g), both from one factor of
    the clamped K."""
    fe = assemble(mesh, material) if fe is None else fe
    fixed = fe.dof_of_node[mesh.node_set("clamp")].ravel()
    free = np.setdiff1d(np.arange(fe.n_dof), fixed)
    K = fe.K[free][:, free].tocsr()
    M = fe.M[free][:, free].tocsr()
    g = np.zeros(fe.n_dof)
    g[fe.dof_of_node[:, 2]] = -G
    lam, _, Y = eigh_sparse(K, M, n_modes, backend=_backend(free.size),
                            rhs=(fe.M @ g)[free])
    u = np.zeros(fe.n_dof)
    u[free] = Y
    sag = -u[fe.dof_of_node[mesh.node_set("tip"), 2]].mean()
    return np.sqrt(lam) / (2 * np.pi), sag


def free_free(mesh, material, fe=None):
    """First elastic frequency [Hz] of the unsupported beam (the 7th eigenvalue; the
    six rigid-body modes are at 0).  Shift -1e4 s^-2 keeps K - sigma M positive definite."""
    fe = assemble(mesh, material) if fe is None else fe
    lam, _ = eigh_sparse(fe.K.tocsr(), fe.M.tocsr(), 8, sigma=-1e4,
                         backend=_backend(fe.n_dof))
    assert np.all(np.abs(lam[:6]) < 1e-6 * lam[6]), lam  # six rigid-body modes
    return np.sqrt(lam[6]) / (2 * np.pi)


@functools.lru_cache(maxsize=1)
def _model(name: str, nu: float):
    """Mesh and assembled FE model; only the last one is kept (large meshes)."""
    mesh = read_mesh(ensure_mesh(name))
    return mesh, assemble(mesh, _mat(nu))


@pytest.fixture(scope="module", autouse=True)
def _release_models():
    yield
    _model.cache_clear()


@functools.lru_cache(maxsize=None)
def solved(name: str, nu: float = 0.3):
    """(frequencies [Hz], tip sag [m]) of the clamped beam."""
    mesh, fe = _model(name, nu)
    return cantilever(mesh, _mat(nu), fe=fe)


@functools.lru_cache(maxsize=None)
def solved_free(name: str, nu: float = 0.0):
    """First elastic frequency [Hz] of the free-free beam."""
    mesh, fe = _model(name, nu)
    return free_free(mesh, _mat(nu), fe=fe)


F_EB = f1_euler_bernoulli(210e9, 7850.0, L, B, H)
F_T = f1_timoshenko(210e9, 0.3, 7850.0, L, B, H)
SAG_EB = sag_euler_bernoulli(210e9, 7850.0, L, B, H, G)
SAG_T = sag_timoshenko(210e9, 0.3, 7850.0, L, B, H, G)


#: the generated tet4 mesh: ~170 s and 6 GB (assembly + MUMPS), see meshes/README.md
TET4_FINE_PARAM = pytest.param(TET4_FINE, marks=pytest.mark.slow)


@pytest.mark.parametrize("name", ["beam_hex27_40x4x4.msh", "beam_tet10_40x4x4.msh",
                                  "beam_hex8_80x8x8.msh", TET4_FINE_PARAM])
def test_first_frequency(name):
    """f1 within 1% of Euler-Bernoulli (83.552 Hz) and of Timoshenko (82.904 Hz).
    Measured: hex27 83.313, tet10 83.343, hex8 83.699, tet4 250x25x25 83.482 Hz."""
    f, _ = solved(name)
    if "hex" in name:  # square section, symmetric mesh: degenerate bending pair
        assert f[0] == pytest.approx(f[1], rel=1e-8)
    assert f[0] == pytest.approx(F_EB, rel=0.01)
    assert f[0] == pytest.approx(F_T, rel=0.01)


@pytest.mark.parametrize("name", ["beam_hex27_40x4x4.msh", "beam_tet10_40x4x4.msh",
                                  TET4_FINE_PARAM])
def test_gravity_sag(name):
    """Tip sag under self-weight within 1% of q L^4 / (8 E I) = 5.5006e-5 m, and not
    above Timoshenko's (5.5567e-5 m, which adds free shear deformation).
    Measured sag / EB: hex27 1.0004, tet10 0.9993, tet4 250x25x25 0.9914."""
    _, sag = solved(name)
    assert sag == pytest.approx(SAG_EB, rel=0.01)
    assert sag < SAG_T


def test_tet4_too_stiff_on_shipped_meshes():
    """Linear tetrahedra lock in bending.  A conforming displacement FE model is too
    stiff (Rayleigh-Ritz: eigenvalues from above, static energy from below); on every tet4
    mesh shipped, f1 lies above and the sag below the converged 3D solid (hex27 40x4x4:
    83.313 Hz, sag 1.0004 x EB), and even the finest one (80x8x8) misses the 1% target:
    f1 +1.9%, sag -8.2% vs Euler-Bernoulli -- hence the generated 250x25x25 mesh."""
    f_ref, sag_ref = solved("beam_hex27_40x4x4.msh")
    for name in ("beam_tet4_20x2x2.msh", "beam_tet4_40x4x4.msh", "beam_tet4_80x8x8.msh"):
        f, sag = solved(name)
        assert f[0] > f_ref[0], name
        assert sag < sag_ref, name
    f, sag = solved("beam_tet4_80x8x8.msh")
    assert f[0] > 1.01 * F_EB
    assert sag < 0.99 * SAG_EB


@pytest.mark.slow
def test_tet4_sag_error_quadratic():
    """The tet4 sag error is O(h^2) (2p for p = 1): from 80x8x8 to 250x25x25 (h / 3.125) it
    drops by 3.125^p.  Error against the converged 3D solid (hex27 40x4x4, whose own error,
    ~1e-4, is 1% of the tet4 error).  Measured p = 1.95 (errors 8.2% -> 0.89%)."""
    _, sag_ref = solved("beam_hex27_40x4x4.msh")
    e = [sag_ref - solved(name)[1] for name in ("beam_tet4_80x8x8.msh", TET4_FINE)]
    p = np.log(e[0] / e[1]) / np.log(250 / 80)
    assert abs(p - 2.0) < 0.3, p


def _observed_order(values):
    """Observed convergence order from three meshes, h halved each time (Roache):
    p = log2((f_1 - f_2) / (f_2 - f_3))."""
    f1, f2, f3 = values
    return np.log2((f1 - f2) / (f2 - f3))


SERIES = {cell: [f"beam_{cell}_{n}.msh" for n in ns] for cell, ns in (
    ("hex27", ["10x1x1", "20x2x2", "40x4x4"]), ("tet10", ["20x2x2", "40x4x4", "80x8x8"]),
    ("hex8", ["20x2x2", "40x4x4", "80x8x8"]), ("tet4", ["20x2x2", "40x4x4", "80x8x8"]))}


def test_convergence_quadratic():
    """Eigenvalue error of degree-p Lagrange elements is O(h^(2p)) for smooth solutions
    (Strang & Fix, ch. 6), i.e. 4 for hex27/tet10. With nu = 0.3 the fully clamped face
    has edge singularities (measured rate 1.7 for hex27), so the rate is checked with
    nu = 0: hex27 measures 3.87 on 10/20/40 (asserted 4 +- 0.3).  tet10 measures 3.51 on
    10/20/40 and 3.54 on 20/40/80 (80x8x8 generated): the clamp still limits the rate
    (hex27 itself drops to 3.77 on 20/40/80), so tet10 is asserted 3.3..4.3 here and
    4 +- 0.3 on the singularity-free free-free beam below."""
    p_hex = _observed_order([solved(n, 0.0)[0][0] for n in SERIES["hex27"]])
    p_tet = _observed_order([solved(n, 0.0)[0][0] for n in SERIES["tet10"]])
    assert abs(p_hex - 4.0) < 0.3, p_hex
    assert 3.3 < p_tet < 4.3, p_tet


@pytest.mark.parametrize("cell", ["tet10", "hex27"])
def test_convergence_quadratic_free_free(cell):
    """Without the clamp (free-free beam, nu = 0: no edge singularity) the first elastic
    frequency converges at the full rate 2p = 4: measured tet10 3.83 on 20/40/80 (3.58 on
    10/20/40, pre-asymptotic), hex27 3.94 on 10/20/40 (3.97 on 20/40/80).  Asserted
    4 +- 0.3.  Finest mesh first: it reuses the model assembled for the clamped rate."""
    f = [solved_free(n) for n in SERIES[cell][::-1]][::-1]
    p = _observed_order(f)
    assert abs(p - 4.0) < 0.3, p


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
