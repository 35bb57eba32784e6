"""Bodies from another code's matrices (flexmbs.reduction.external) and their export.

Reference: the native body of the same mesh (``reduce_model``: invariants by element
quadrature), a second formulation of the same physics: the imported body gets its
invariants from the mass matrix (exact sums for isoparametric elements) and its basis
from the files.
"""
from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest
import scipy.sparse as sp

from flexmbs.fe.assemble import assemble
from flexmbs.io.abaqus_mtx import read_abaqus
from flexmbs.io.bodyfile import load_body, save_body
from flexmbs.io.external import ExternalModelError
from flexmbs.io.matrix_market import read_model, write_model
from flexmbs.io.mesh import read_mesh
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model
from flexmbs.reduction.export import exported_model, node_major
from flexmbs.reduction.external import external_body, mass_shape_integrals, scalar_mass
from flexmbs.reduction.quadrature import shape_integrals

from .conftest import MESHES, STEEL, box_fe

INVARIANTS = ("m", "s0", "C_t", "J0", "J1", "J2", "M_e", "I0", "I1", "I2", "C_r0", "C_r1",
              "O_e0", "O_e1")
TIP_FORCE = np.array([0.0, 1.0e3, 2.0e3])          # N, at the tip marker


@cache
def native_beam():
    """Shipped hex8 cantilever 1.0 x 0.1 x 0.1 m, steel, Craig--Bampton: clamp (RBE2,
    the frame) + tip (RBE3, equal weights so that an Abaqus node set reproduces it)."""
    fe = assemble(read_mesh(MESHES / "beam_hex8_10x1x1.msh"), STEEL)
    s = ReductionSettings(n_modes=8, interfaces=(InterfaceSpec("clamp", weights="equal"),
                                                 InterfaceSpec("tip", "rbe3", "equal")),
                          frame="interface:clamp", stiffening=False)
    return fe, reduce_model(fe, s, name="beam")


def tip_response(body) -> np.ndarray:
    """Static tip-marker displacement [m] under TIP_FORCE: ``K_e q = Phi_tip^T F``."""
    Phi = body.marker("tip").Phi
    return Phi @ np.linalg.solve(body.K_e, Phi.T @ TIP_FORCE)


def tip_stress(body) -> np.ndarray:
    """Nodal stresses (N, 6) [Pa] of the static state of :func:`tip_response`."""
    Phi = body.marker("tip").Phi
    return body.stress_modes @ np.linalg.solve(body.K_e, Phi.T @ TIP_FORCE)


def assert_same_body(got, ref, rtol=1e-10, invariants=True):
    np.testing.assert_allclose(got.omega, ref.omega, rtol=rtol, atol=0)
    u_ref, s_ref = tip_response(ref), tip_stress(ref)
    assert np.abs(tip_response(got) - u_ref).max() <= rtol * np.abs(u_ref).max()
    assert np.abs(tip_stress(got) - s_ref).max() <= rtol * np.abs(s_ref).max()
    for k in INVARIANTS if invariants else ():
        a, b = np.asarray(getattr(got, k)), np.asarray(getattr(ref, k))
        assert np.abs(a - b).max() <= rtol * max(np.abs(b).max(), 1e-300), k


@pytest.mark.parametrize("cell_type", ["hex27", "tet10"])
def test_mass_matrix_shape_integrals_equal_element_quadrature(cell_type):
    """THEORY §2.8.2 two ways: sums over the consistent mass matrix equal the element
    quadrature to 1e-12 (tet10 included, whose corner nodes have negative lumped mass)."""
    fe = box_fe(cell_type, (3, 2, 2))
    rng = np.random.default_rng(3)
    Phi = rng.standard_normal((fe.n_dof, 4))
    ref = shape_integrals(fe.basis, STEEL.rho, Phi)
    m = scalar_mass(node_major(fe.M, fe.dof_of_node), "test")
    got = mass_shape_integrals(m, fe.mesh.points, Phi[np.asarray(fe.dof_of_node).ravel()])
    for k in ("m", "s0", "S", "J0", "J1", "J2"):
        a, b = np.asarray(getattr(got, k)), np.asarray(getattr(ref, k))
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max(), k


@pytest.mark.parametrize("matrices", ["mtx", "op4"])
def test_cantilever_exported_and_imported_back_equals_native(tmp_path, matrices):
    """Must show: the cantilever exported (Matrix Market, or M, K, Phi in Nastran OP4)
    and imported back has the native frequencies, tip response and every invariant to
    1e-10, through a body file written and read again."""
    _, ref = native_beam()
    write_model(tmp_path, exported_model(ref), matrices=matrices)
    body = external_body(read_model(tmp_path))
    save_body(tmp_path / "imported.h5", body)
    got = load_body(tmp_path / "imported.h5")
    assert_same_body(got, ref)
    assert got.frame == "interface:clamp" and got.method == "craig_bampton"
    np.testing.assert_array_equal(got.stress_modes, ref.stress_modes)
    np.testing.assert_allclose(got.marker("tip").R, ref.marker("tip").R, rtol=1e-14)


def test_imported_matrices_without_modes_are_reduced_by_flexmbs(tmp_path):
    """Without recovery modes flexmbs reduces the imported M, K itself: the frequencies,
    the tip response and its stresses (stress modes computed from the imported cells and
    material) equal the native Craig--Bampton body to 1e-10 (the basis spans the same
    space; degenerate bending pairs may be rotated, so invariants that depend on the
    basis vectors themselves are not compared).  Without cells the stresses read zero,
    and the provenance says so."""
    _, ref = native_beam()
    model = dataclasses.replace(exported_model(ref), Phi=None, stress_modes=None)
    got = external_body(model, n_modes=8)
    assert_same_body(got, ref, invariants=False)
    assert got.m == pytest.approx(ref.m, rel=1e-12)
    np.testing.assert_allclose(got.J0, ref.J0, rtol=1e-12)
    assert got.provenance["stress_modes"] == "computed"
    bare = dataclasses.replace(model, cells=np.zeros((0, 4), dtype=np.int64))
    assert external_body(bare, n_modes=8).provenance["stress_modes"] == "none"


def _write_abaqus(folder, fe, labels):
    """The beam as Abaqus writes it: input file (*NODE with labels, C3D8 elements,
    *NSET) and *MATRIX GENERATE files in the *MATRIX INPUT format, lower triangle."""
    pts, cells = fe.mesh.points, fe.mesh.cells
    lines = ["*HEADING", "** written by the flexmbs test suite", "*NODE"]
    lines += [f"{labels[i]}, {x!r}, {y!r}, {z!r}" for i, (x, y, z) in enumerate(pts)]
    lines.append("*ELEMENT, TYPE=C3D8, ELSET=BEAM")
    lines += [f"{e + 1}, " + ", ".join(str(labels[n]) for n in c) for e, c in enumerate(cells)]
    for name in ("clamp", "tip"):
        ids = [str(labels[n]) for n in fe.mesh.node_sets[name]]
        lines.append(f"*NSET, NSET={name}")
        lines += [", ".join(ids[i:i + 8]) for i in range(0, len(ids), 8)]
    (folder / "beam.inp").write_text("\n".join(lines) + "\n")
    for tag, A in (("MASS1", fe.M), ("STIF1", fe.K)):
        L = sp.tril(node_major(A, fe.dof_of_node)).tocoo()
        rows = ["** ASSEMBLED " + tag + " MATRIX, lower triangle"]
        rows += [f"{labels[i // 3]},{i % 3 + 1}, {labels[j // 3]},{j % 3 + 1}, {v!r}"
                 for i, j, v in zip(L.row, L.col, L.data, strict=True)]
        (folder / f"beam_{tag}.mtx").write_text("\n".join(rows) + "\n")


def test_abaqus_matrix_generate_files_give_the_native_body(tmp_path):
    """Abaqus *MATRIX GENERATE files (node labels 1001, 1003, ..., lower triangle) of the
    cantilever, with the input file's node sets as interfaces and the material given:
    frequencies, tip response and its stresses of the native body to 1e-10."""
    fe, ref = native_beam()
    labels = 1001 + 2 * np.arange(len(fe.mesh.points))
    _write_abaqus(tmp_path, fe, labels)
    model = read_abaqus(tmp_path / "beam.inp", tmp_path / "beam_MASS1.mtx",
                        tmp_path / "beam_STIF1.mtx",
                        interfaces=(InterfaceSpec("clamp"), InterfaceSpec("tip", "rbe3")))
    got = external_body(model, n_modes=8, frame="interface:clamp", material=STEEL)
    assert_same_body(got, ref, invariants=False)
    assert got.m == pytest.approx(ref.m, rel=1e-12)


def _refused(model, match, **kw):
    with pytest.raises(ExternalModelError, match=match) as info:
        external_body(model, **kw)
    assert "\n" not in str(info.value)


def test_missing_or_inconsistent_pieces_are_refused_in_one_line():
    _, ref = native_beam()
    full = exported_model(ref)
    _refused(dataclasses.replace(full, M=None), r"missing M \(the mass matrix for m, s0")
    _refused(dataclasses.replace(full, points=None), r"missing points \(node coordinates")
    _refused(dataclasses.replace(full, K=None), r"missing K \(the elastic stiffness")
    _refused(dataclasses.replace(full, Phi=None, stress_modes=None),
             r"number of modes to compute must be given")
    _refused(dataclasses.replace(full, Phi=full.Phi[:-3]), r"Phi must have shape \(132, n_q\)")
    _refused(full, r"frame 'mean_axis' needs modes M-orthogonal", frame="mean_axis")
    _refused(full, r"frame must be 'mean_axis' or 'interface:NAME'", frame="interface:x")
    _refused(full, r"frame 'interface:tip' needs modes that leave that interface at rest",
             frame="interface:tip")
    M = full.M.tolil()
    M[0, 1] = M[1, 0] = 1.0                                    # rotary / offset mass
    _refused(dataclasses.replace(full, M=M.tocsr()), r"must act alike on x, y and z")
    rigid = np.zeros((full.Phi.shape[0], 1))
    rigid[0::3] = 1.0                                           # a translation in x
    _refused(dataclasses.replace(full, Phi=np.hstack([full.Phi, rigid]), stress_modes=None),
             r"Phi holds rigid-body motion")


def test_abaqus_substructure_and_rotational_dofs_refused(tmp_path):
    fe, _ = native_beam()
    labels = 1 + np.arange(len(fe.mesh.points))
    _write_abaqus(tmp_path, fe, labels)
    sub = tmp_path / "sub_MASS1.mtx"
    sub.write_text("** SUBSTRUCTURE MATRIX\n1,1, 1,1, 2.0\n9999999,1, 1,1, 0.5\n")
    with pytest.raises(ExternalModelError, match=r"node 9999999 is not a \*NODE.*SUBSTRUCTURE"):
        read_abaqus(tmp_path / "beam.inp", sub, tmp_path / "beam_STIF1.mtx")
    sub.write_text("1,5, 1,5, 2.0\n")
    with pytest.raises(ExternalModelError, match=r"dof 5 found; expected the translations"):
        read_abaqus(tmp_path / "beam.inp", sub, tmp_path / "beam_STIF1.mtx")
    sub.write_text("1,1, 1,1\n")
    with pytest.raises(ExternalModelError, match=r"line 1: expected 'row node, row dof"):
        read_abaqus(tmp_path / "beam.inp", sub, tmp_path / "beam_STIF1.mtx")


def test_nastran_g_set_op4_with_six_dofs_per_grid(tmp_path):
    """Nastran OUTPUT4 g-set matrices (six dofs per GRID; the rotational rows of a solid
    model are zero) named in the manifest with dofs_per_node = 6: dofs 1-3 of each GRID
    are kept and the body equals the native one to 1e-10."""
    from flexmbs.io.op4 import write_op4
    _, ref = native_beam()
    model = exported_model(ref)
    write_model(tmp_path, dataclasses.replace(model, Phi=None, stress_modes=None))
    n = len(model.points)
    keep = (6 * np.arange(n)[:, None] + np.arange(3)).ravel()
    P = sp.csr_matrix((np.ones(3 * n), (keep, np.arange(3 * n))), shape=(6 * n, 3 * n))
    write_op4(tmp_path / "gset.op4", {"MGG": P @ model.M @ P.T, "KGG": P @ model.K @ P.T,
                                      "PHG": P @ model.Phi})
    text = (tmp_path / "model.toml").read_text()
    text = text.replace('M = "M.mtx"', 'M = "gset.op4:MGG"').replace(
        'K = "K.mtx"', 'K = "gset.op4:KGG"\nPhi = "gset.op4:PHG"')
    (tmp_path / "model.toml").write_text(text.replace('name = "beam"',
                                                      'name = "beam"\ndofs_per_node = 6'))
    assert_same_body(external_body(read_model(tmp_path)), ref)
    (tmp_path / "model.toml").write_text(text)                  # 6 dofs, not declared
    with pytest.raises(ExternalModelError,
                       match=r"M must have shape \(132, 132\), got \(264, 264\)"):
        external_body(read_model(tmp_path))


def test_imported_cantilever_swings_like_the_native_one(tmp_path):
    """Must show, in motion: the beam pinned at its clamp marker (revolute about z)
    swinging under gravity with a 2 kN tip force along -z for 50 ms (rotation and
    deformation together, so every invariant of THEORY §2.3 enters): the imported body's
    tip trajectory equals the native one to 1e-10 of the tip's travel (measured 1e-14)."""
    import flexmbs as fm
    from flexmbs.forces.external import ExternalForce
    from flexmbs.kinematics.frames import position
    _, ref = native_beam()
    write_model(tmp_path, exported_model(ref))
    tips = []
    for rb in (ref, external_body(read_model(tmp_path))):
        body = fm.FlexibleBody("beam", rb)
        model = fm.System(gravity=(0.0, -9.81, 0.0))
        model.add(body, fm.Revolute("pin", fm.ground, body["clamp"], axis="z"),
                  ExternalForce("F", at=body["tip"], force=(0.0, 0.0, -2e3)))
        res = fm.simulate(model, 0.05, 5e-4, rho_inf=0.9)
        tips.append(np.array([position(body["tip"], q) for q in res.body_q("beam")]))
    travel = np.abs(tips[0] - tips[0][0]).max()
    assert travel > 0.01                                        # it really moves [m]
    assert np.abs(tips[1] - tips[0]).max() <= 1e-10 * travel
