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


@pytest.mark.parametrize("name", ["beam_hex20_10x1x1.msh", "beam_wedge6_40x4x4.msh"])
def test_invariants_of_new_element_kinds(name):
    body = reduce_model(assemble(read_mesh(MESHES / name), STEEL),
                        ReductionSettings(n_modes=4), name="beam")
    m = STEEL.rho * L * B * H
    size = np.array([L, B, H])
    assert body.m == pytest.approx(m, rel=1e-12)
    np.testing.assert_allclose(body.s0, m * size / 2, rtol=1e-12)
    J0 = m * np.outer(size, size) / 4
    J0[np.diag_indices(3)] = m * size ** 2 / 3
    np.testing.assert_allclose(body.J0, J0, rtol=1e-11)
    assert body.cell_type == read_mesh(MESHES / name).cell_type
    assert np.isfinite(body.stress_modes).all()
