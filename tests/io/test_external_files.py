"""Readers and writers of other FE codes' matrices: Matrix Market folder with its
manifest (flexmbs.io.matrix_market), Abaqus *MATRIX INPUT text (flexmbs.io.abaqus_mtx),
Nastran OUTPUT4 (flexmbs.io.op4).

References: IEEE 754 doubles printed with 17 significant digits read back exactly; the
Abaqus Keywords Reference (*MATRIX INPUT: a symmetric matrix as its lower triangle, its
upper triangle or in full); pyNastran's OP4 reader as the second implementation of
the OUTPUT4 format.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from flexmbs.io.abaqus_mtx import read_matrix
from flexmbs.io.external import ExternalInterface, ExternalModel, ExternalModelError
from flexmbs.io.matrix_market import read_model, write_model
from flexmbs.io.op4 import read_op4_matrix, write_op4


def _model(rng) -> ExternalModel:
    n = 5
    A = sp.random(3 * n, 3 * n, density=0.3, random_state=1)
    M = (A + A.T + 3 * n * sp.eye(3 * n)).tocsr()
    return ExternalModel(
        name="part", source="memory", points=rng.standard_normal((n, 3)), M=M, K=2.0 * M,
        Phi=rng.standard_normal((3 * n, 2)) * np.pi, frame="interface:a",
        interfaces=(ExternalInterface("a", np.array([0, 2, 4]), "rbe3",
                                      np.array([0.25, 0.5, 0.25])),),
        material={"E": 2.1e11, "nu": 0.3, "rho": 7850.0, "name": "steel"})


@pytest.mark.parametrize("matrices", ["mtx", "op4"])
def test_written_model_reads_back_bit_for_bit(tmp_path, matrices):
    ref = _model(np.random.default_rng(0))
    write_model(tmp_path, ref, matrices=matrices)
    got = read_model(tmp_path)
    np.testing.assert_array_equal(got.points, ref.points)
    np.testing.assert_array_equal(got.Phi, ref.Phi)
    for k in ("M", "K"):
        assert abs(sp.csr_matrix(getattr(got, k)) - getattr(ref, k)).max() == 0.0, k
    (itf,) = got.interfaces
    np.testing.assert_array_equal(itf.nodes, [0, 2, 4])
    np.testing.assert_array_equal(itf.weights, [0.25, 0.5, 0.25])
    assert (itf.kind, got.frame, got.material, got.name) == ("rbe3", "interface:a",
                                                             ref.material, "part")
    assert got.stress_modes is None and got.cells.shape == (0, 4)


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('version = 1', 'version = 2'), "expected format = 'flexmbs-external'"
                                                        " and version = 1, got"),
    (lambda t: t.replace('[files]', '[files]\nmass = "M.mtx"'), "unknown key(s) ['mass']"),
    (lambda t: t.replace('M = "M.mtx"', 'M = 3'), "key 'files.M' must be a file name"),
    (lambda t: t.replace('kind = "rbe3"', 'kind = "rbe5"'), "'interfaces.a.kind' must be"),
    (lambda t: t.replace('[files]', '[files'), "not valid TOML"),
    (lambda t: t.replace('M = "M.mtx"', 'M = "gone.mtx"'), "gone.mtx' not found"),
    (lambda t: t.replace('M = "M.mtx"', 'M = "M.op4:M"'), "M.op4' not found"),
    (lambda t: t.replace('name = "part"', 'name = "part"\ndofs_per_node = 4'),
     "'dofs_per_node' must be 3 or 6"),
])
def test_manifest_mistakes_are_one_line(tmp_path, edit, message):
    write_model(tmp_path, _model(np.random.default_rng(0)))
    manifest = tmp_path / "model.toml"
    manifest.write_text(edit(manifest.read_text()))
    with pytest.raises(ExternalModelError) as info:
        read_model(tmp_path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_missing_manifest_and_op4_matrix_named(tmp_path):
    with pytest.raises(ExternalModelError, match=r"expected a folder with 'model\.toml'"):
        read_model(tmp_path)
    write_op4(tmp_path / "a.op4", {"KGG": np.eye(3)})
    with pytest.raises(ExternalModelError, match=r"no matrix 'MGG'; found \['KGG'\]"):
        read_op4_matrix(tmp_path / "a.op4", "MGG")


def _abaqus(path, A, labels, part):
    """``A`` in the *MATRIX INPUT format: 'lower', 'upper' or 'full'."""
    C = sp.coo_matrix({"lower": sp.tril(A), "upper": sp.triu(A), "full": A}[part])
    lines = ["** matrix written in the Abaqus *MATRIX INPUT format"]
    lines += [f"{labels[i // 3]}, {i % 3 + 1}, {labels[j // 3]}, {j % 3 + 1}, {v!r}"
              for i, j, v in zip(C.row, C.col, C.data, strict=True)]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("part", ["lower", "upper", "full"])
def test_abaqus_symmetric_matrix_in_any_of_its_three_forms(tmp_path, part):
    """Node labels in any order (here 40, 10, 30, 20) map to the *NODE order."""
    A = sp.random(12, 12, density=0.4, random_state=2)
    A = (A + A.T).tocsr()
    labels = np.array([40, 10, 30, 20])
    _abaqus(tmp_path / "K.mtx", A, labels, part)
    got = read_matrix(tmp_path / "K.mtx", labels)
    assert abs(got - A).max() == 0.0
