"""The reduction on the hex20 and wedge6 elements: mass, first and second moments of the
shipped 1 x 0.1 x 0.1 m steel beams against the closed forms of a box, ``m = rho V``,
``s0 = m c``, ``J0 = int X X^T dm`` with ``int x^2 dm = m L^2 / 3`` and
``int x y dm = m L b / 4`` (origin at a corner); the body keeps the element kind and
finite stress modes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.io.mesh import read_mesh
from flexmbs.reduction import ReductionSettings, reduce_model

MESHES = Path(__file__).resolve().parents[2] / "meshes"
STEEL = Material(E=210e9, nu=0.3, rho=7850.0, name="steel")
L, B, H = 1.0, 0.1, 0.1


def _check_box_moments(body) -> None:
    """m, s0 and J0 of the steel box [0, L] x [0, B] x [0, H] (closed forms)."""
    m = STEEL.rho * L * B * H
    size = np.array([L, B, H])
    assert body.m == pytest.approx(m, rel=1e-12)
    np.testing.assert_allclose(body.s0, m * size / 2, rtol=1e-12)
    J0 = m * np.outer(size, size) / 4
    J0[np.diag_indices(3)] = m * size ** 2 / 3
    np.testing.assert_allclose(body.J0, J0, rtol=1e-11)


@pytest.mark.parametrize("name", ["beam_hex20_10x1x1.msh", "beam_wedge6_40x4x4.msh"])
def test_invariants_of_new_element_kinds(name):
    body = reduce_model(assemble(read_mesh(MESHES / name), STEEL),
                        ReductionSettings(n_modes=4), name="beam")
    _check_box_moments(body)
    assert body.cell_type == read_mesh(MESHES / name).cell_type
    assert np.isfinite(body.stress_modes).all()


MIXED = "beam_hex8_wedge6_20x2x2.msh"      # hex8 in the lower half, wedge6 in the upper


def test_mixed_mesh_body(tmp_path):
    """A hex8 + wedge6 mesh reduced block by block: the box's m, s0, J0; the body file
    keeps both blocks (padded cells, cell_type "hex8+wedge6") through save and load; the
    stress modes equal those of the nodal stress operator summed over the blocks."""
    from flexmbs.fe.stress import nodal_stress_operator
    from flexmbs.io.bodyfile import load_body, save_body
    from flexmbs.io.cell_types import cell_blocks

    mesh = read_mesh(MESHES / MIXED, mixed=True)
    fe = assemble(mesh, STEEL)
    body = reduce_model(fe, ReductionSettings(n_modes=4), name="mixed")
    _check_box_moments(body)
    save_body(tmp_path / "b.h5", body)
    back = load_body(tmp_path / "b.h5")
    assert back.cell_type == "hex8+wedge6"
    blocks = cell_blocks(back.cell_type, back.cells)
    assert [k for k, _ in blocks] == ["hex8", "wedge6"]
    for (_, c), b in zip(blocks, mesh.blocks):
        np.testing.assert_array_equal(c, b.cells)
    Phi = np.zeros((fe.n_dof, body.modes.shape[2]))
    Phi[fe.dof_of_node.ravel()] = body.modes.reshape(-1, body.modes.shape[2])
    S = (nodal_stress_operator(fe) @ Phi).reshape(-1, 6, Phi.shape[1])
    np.testing.assert_allclose(body.stress_modes, S, atol=1e-9 * np.abs(S).max())


def test_mixed_mesh_rotation_modes_of_a_rigid_rotation():
    """``Psi`` of the rigid rotation field ``u = w x X`` is ``w`` at every node, across the
    hex8 and wedge6 blocks (1/2 curl of a linear field, exact on both kinds)."""
    from types import SimpleNamespace

    from flexmbs.bodies.flexible import nodal_rotation_modes

    mesh = read_mesh(MESHES / MIXED, mixed=True)
    w = np.array([0.3, -1.1, 0.7])
    modes = np.cross(w, mesh.points)[:, :, None]
    body = SimpleNamespace(points=mesh.points, cells=mesh.cells, cell_type=mesh.cell_type,
                           modes=modes)
    Psi = nodal_rotation_modes(body)
    np.testing.assert_allclose(Psi[:, :, 0], np.broadcast_to(w, (mesh.n_nodes, 3)),
                               atol=1e-12)


def test_mixed_mesh_xdmf(tmp_path):
    """The XDMF series of a mixed mesh holds both blocks (read back by meshio)."""
    import meshio

    from flexmbs.io.xdmf import write_time_series

    mesh = read_mesh(MESHES / MIXED, mixed=True)
    path = write_time_series(tmp_path / "s.xdmf", mesh.points, mesh.cells, mesh.cell_type,
                             [0.0], lambda i: {"u": mesh.points})
    with meshio.xdmf.TimeSeriesReader(str(path)) as reader:
        _, cells = reader.read_points_cells()
    assert [c.type for c in cells] == ["hexahedron", "wedge"]
    for c, b in zip(cells, mesh.blocks):
        np.testing.assert_array_equal(c.data, b.cells)


def test_preprocess_command_on_a_mixed_mesh(tmp_path, capsys):
    """`flexmbs preprocess` takes the mixed mesh; the body's mass is rho V."""
    from flexmbs.cli.main import main
    from flexmbs.io.bodyfile import load_body

    out = tmp_path / "mixed.h5"
    rc = main(["preprocess", str(MESHES / MIXED), "--material", "steel", "--modes", "3",
               "--interface", "clamp", "-o", str(out)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "hex8+wedge6 mesh" in cap.out
    body = load_body(out)
    assert body.m == pytest.approx(STEEL.rho * L * B * H, rel=1e-12)
