"""Abaqus elements read as Abaqus means them: C3D4, C3D10, C3D8 (B-bar), C3D20 and
C3D20R (reduced integration) element
matrices against a reference implementation written from the textbook formulas
(tests/fe/element_reference.py), the row-sum lumped mass, and what B-bar does to a
cantilever (Euler-Bernoulli, beam_reference.py; converged hex27 as the 3D solid).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.io.mesh import read_mesh

from . import element_reference as ref
from .beam_reference import f1_euler_bernoulli
from .test_cantilever import cantilever

MESHES = Path(__file__).resolve().parents[2] / "meshes"
E, NU, RHO = 210e9, 0.3, 7850.0


def write_deck(path: Path, X: np.ndarray, abaqus_type: str, *, unit_mm: bool = True,
               material: bool = True) -> Path:
    """One-element Abaqus deck (nodes 1..n, element 1) in N-mm-t units (E in MPa, rho in
    t/mm^3) with a *SOLID SECTION and a *MATERIAL STEEL."""
    k = 1e3 if unit_mm else 1.0
    lines = ["*HEADING", "one element", "*NODE"]
    lines += [f"{i + 1}, {x * k:.17g}, {y * k:.17g}, {z * k:.17g}" for i, (x, y, z) in
              enumerate(X)]
    lines += [f"*ELEMENT, TYPE={abaqus_type}, ELSET=PART",
              "1, " + ", ".join(str(i + 1) for i in range(len(X)))]
    if material:
        lines += ["*SOLID SECTION, ELSET=PART, MATERIAL=STEEL", "*MATERIAL, NAME=STEEL",
                  "*ELASTIC", f"{E / k ** 2:.17g}, {NU}", "*DENSITY", f"{RHO / k ** 4:.17g}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _hex8_nodes(rng) -> np.ndarray:
    return ((ref.HEX_CORNERS + 1) / 2 * [0.03, 0.01, 0.02]
            + 0.002 * rng.uniform(-1, 1, (8, 3)))


def _tet_corners(rng) -> np.ndarray:
    return np.array([[0, 0, 0], [0.02, 0, 0], [0, 0.015, 0], [0, 0, 0.01]]) \
        + 0.002 * rng.uniform(-1, 1, (4, 3))


def _tet10_nodes(rng) -> np.ndarray:
    c = _tet_corners(rng)
    return np.vstack([c] + [0.5 * (c[i] + c[j]) for i, j in ref.TET10_EDGES])


def _hex20_nodes(rng) -> np.ndarray:
    """Distorted corners, mid-edge nodes off their edge midpoints (curved edges)."""
    c = _hex8_nodes(rng)
    mids = np.array([0.5 * (c[a] + c[b]) for a, b in ref.HEX20_EDGES])
    return np.vstack([c, mids + 0.0005 * rng.uniform(-1, 1, mids.shape)])


CASES = {"C3D4": (lambda r: _tet_corners(r), ref.tet4),
         "C3D10": (_tet10_nodes, ref.tet10),
         "C3D8": (_hex8_nodes, lambda X, *a: ref.hex8(X, *a, bbar=True)),
         "C3D20": (_hex20_nodes, ref.hex20),
         "C3D20R": (_hex20_nodes, lambda X, *a: ref.hex20(X, *a, reduced=True))}
FORMULATION = {"C3D8": "bbar", "C3D20R": "reduced"}


def _matrices(mesh, mass="consistent"):
    """flexmbs's (K, M) as dense arrays in the deck's node order, dofs 3 a + i."""
    fe = assemble(mesh, Material(mesh.material.E, mesh.material.nu, mesh.material.rho),
                  mass=mass)
    d = fe.dof_of_node.ravel()
    return fe.K.toarray()[np.ix_(d, d)], fe.M.toarray()[np.ix_(d, d)]


@pytest.mark.parametrize("abaqus_type", list(CASES))
def test_element_matrices_equal_reference(tmp_path, abaqus_type):
    """K and M of a distorted C3D4, C3D10, C3D8, C3D20 and C3D20R element read from an
    Abaqus deck (mm, MPa, t/mm^3) equal the textbook element (C3D8: B-bar; C3D20R: K
    with 2 x 2 x 2 points, M with 3 x 3 x 3) to 1e-13.  Measured (largest entry
    difference / largest entry): K 1.3e-15, 4.8e-16, 1.2e-15; M 9.7e-16, 1.1e-15,
    2.2e-15 for C3D4, C3D10, C3D8; K 7.3e-16, 1.0e-15, M 9.9e-16 for C3D20, C3D20R."""
    nodes, formula = CASES[abaqus_type]
    X = nodes(np.random.default_rng(7))
    mesh = read_mesh(write_deck(tmp_path / "e.inp", X, abaqus_type), scale=1e-3)
    assert mesh.formulation == FORMULATION.get(abaqus_type, "full")
    K, M = _matrices(mesh)
    K_ref, M_ref = formula(X, E, NU, RHO)
    np.testing.assert_allclose(K, K_ref, rtol=0, atol=1e-13 * np.abs(K_ref).max())
    np.testing.assert_allclose(M, M_ref, rtol=0, atol=1e-13 * np.abs(M_ref).max())


def test_c3d8_is_not_the_fully_integrated_hex8(tmp_path):
    """The B-bar correction matters: on a distorted element the fully integrated hex8
    stiffness differs from the B-bar one by more than 10% (largest entry)."""
    X = _hex8_nodes(np.random.default_rng(7))
    K_bbar, _ = ref.hex8(X, E, NU, RHO, bbar=True)
    K_full, _ = ref.hex8(X, E, NU, RHO, bbar=False)
    assert np.abs(K_full - K_bbar).max() > 0.1 * np.abs(K_bbar).max()
    mesh = read_mesh(write_deck(tmp_path / "e.inp", X, "C3D8"), scale=1e-3)
    K, _ = _matrices(dataclasses.replace(mesh, formulation="full"))
    np.testing.assert_allclose(K, K_full, rtol=0, atol=1e-13 * np.abs(K_full).max())


@pytest.mark.parametrize("abaqus_type", ["C3D4", "C3D8"])
def test_lumped_mass_row_sums(tmp_path, abaqus_type):
    """``--mass lumped``: diagonal, each entry the row sum of the consistent mass, total
    rho V = the consistent total (first-order elements, as Abaqus/Standard)."""
    X = CASES[abaqus_type][0](np.random.default_rng(3))
    mesh = read_mesh(write_deck(tmp_path / "e.inp", X, abaqus_type), scale=1e-3)
    _, M = _matrices(mesh)
    _, M_l = _matrices(mesh, mass="lumped")
    np.testing.assert_array_equal(M_l, np.diag(np.diag(M_l)))
    np.testing.assert_allclose(np.diag(M_l), M.sum(axis=1), rtol=1e-13)
    V = ref.tet4(X, E, NU, RHO)[1].sum() / 3 / RHO if abaqus_type == "C3D4" else None
    if V is not None:
        assert M_l.sum() / 3 == pytest.approx(RHO * V, rel=1e-13)


def test_lumped_mass_refused_for_quadratic_elements(tmp_path):
    """Row sums of a tet10 are negative at the corners: refused in one line."""
    X = _tet10_nodes(np.random.default_rng(3))
    M = ref.tet10(X, E, NU, RHO)[1]
    assert (M.sum(axis=1)[:12] < 0).all()           # the reason, from the formula
    mesh = read_mesh(write_deck(tmp_path / "e.inp", X, "C3D10"), scale=1e-3)
    with pytest.raises(ValueError, match=r"lumped .row-sum. mass needs first-order .*tet10"):
        assemble(mesh, Material(E, NU, RHO), mass="lumped")


@pytest.mark.parametrize("nu", [0.3, 0.49])
def test_bbar_cantilever_closer_to_converged(nu):
    """Hex8 20x2x2 cantilever: the B-bar first frequency lies closer to the converged 3D
    solid (hex27 20x2x2, 83.40 Hz, 0.11% above hex27 40x4x4 at nu = 0.3) than the fully
    integrated hex8, and within 1% of it.  Measured (Hz): nu = 0.3: full 89.11, B-bar
    84.03, hex27 83.40; nu = 0.49: full 107.77, B-bar 85.52, hex27 85.27 (volumetric
    locking of the full hex8: +26%).  Euler-Bernoulli: 83.55 Hz."""
    mat = Material(E, nu, RHO)
    hex8 = read_mesh(MESHES / "beam_hex8_20x2x2.msh")
    f_full = cantilever(hex8, mat)[0][0]
    f_bbar = cantilever(dataclasses.replace(hex8, formulation="bbar"), mat)[0][0]
    f_ref = cantilever(read_mesh(MESHES / "beam_hex27_20x2x2.msh"), mat)[0][0]
    assert abs(f_bbar - f_ref) < abs(f_full - f_ref) / 5
    assert f_bbar == pytest.approx(f_ref, rel=0.01)
    if nu == 0.3:
        assert f_bbar == pytest.approx(f1_euler_bernoulli(E, RHO, 1.0, 0.1, 0.1), rel=0.01)


def test_c3d20r_cantilever():
    """C3D20R (2 x 2 x 2 stiffness) on the hex20 20x2x2 beam: softer than C3D20 (fewer
    constraints in the integration), still without spurious modes in the clamped beam
    (the lowest frequency is the bending pair), and within 1% of Euler-Bernoulli.
    Measured: C3D20 83.479 Hz, C3D20R 83.426 Hz (-0.15% EB)."""
    mat = Material(E, NU, RHO)
    mesh = read_mesh(MESHES / "beam_hex20_20x2x2.msh")
    f_full = cantilever(mesh, mat)[0]
    f_red = cantilever(dataclasses.replace(mesh, formulation="reduced"), mat)[0]
    assert f_red[0] < f_full[0]
    assert f_red[0] == pytest.approx(f_red[1], rel=1e-8)            # the bending pair
    assert f_red[0] == pytest.approx(f1_euler_bernoulli(E, RHO, 1.0, 0.1, 0.1), rel=0.01)



def test_c3d8_nodal_stress_uses_the_bbar_strain(tmp_path):
    """The nodal stress of a B-bar element is ``C B_bar(X_node) u`` (one element: no
    averaging), with B_bar from the reference implementation; for the same random ``u``
    the plain strain would differ (a volumetric part that varies over the element)."""
    from flexmbs.fe.stress import nodal_stress_operator

    X = _hex8_nodes(np.random.default_rng(11))
    mesh = read_mesh(write_deck(tmp_path / "e.inp", X, "C3D8"), scale=1e-3)
    fe = assemble(mesh, Material(E, NU, RHO))
    u = 1e-4 * np.random.default_rng(12).normal(size=24)          # dofs 3 a + i
    U = np.zeros(fe.n_dof)
    U[fe.dof_of_node.ravel()] = u
    s = (nodal_stress_operator(fe) @ U).reshape(8, 6)
    C = ref.elasticity(E, NU)
    bmean = ref.hex8_bmean(X)
    for a, xi in enumerate(ref.HEX_CORNERS):
        B = ref.strain_matrix(ref.hex8_gradients(X, xi))
        B_bar = B + np.outer([1, 1, 1, 0, 0, 0.0], bmean - B[:3].sum(axis=0)) / 3
        np.testing.assert_allclose(s[a], C @ B_bar @ u, rtol=0, atol=1e-10 * np.abs(s).max())
        assert np.abs(C @ B @ u - s[a]).max() > 1e-3 * np.abs(s).max()
