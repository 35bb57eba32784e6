"""The pair form of ``K3 : q q q`` (``flexmbs.reduction.stiffening``, module docstring):

    (K3 : q q q)_k = 1/2 sum_a q_a [H_p pi(q)]_(a,k),   H_p = pair Gram matrix (n_p x n_p),

against the full tensor ``K3`` (second formulation: ``h_e``, ``h_e_tangent`` with the
``n_q^4`` einsum products) on reduced bodies from real meshes, the tangent against
central differences, and bad shapes refused.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.reduction import InterfaceSpec, h_e, h_e_tangent
from flexmbs.reduction.interfaces import resolve_interface
from flexmbs.reduction.modes import compute_basis
from flexmbs.reduction.stiffening import (
    h3_pairs, h3_pairs_tangent, pair_gram, pair_index, pair_vector, stiffening_tensors,
)

from .conftest import STEEL, beam_fe, box_fe


def _tensors(fe, clamp, n_modes):
    itf = resolve_interface(InterfaceSpec(clamp), fe.mesh, fe.dof_of_node)
    Phi = compute_basis(fe, (itf,), n_modes, f"interface:{clamp}", static_modes=False).Phi
    return stiffening_tensors(fe.basis, STEEL.C, Phi)


@pytest.fixture(scope="module", params=[("hex27", (8, 2, 2), "x0", 10),
                                        ("tet10", (6, 2, 2), "x0", 8),
                                        ("beam", None, "clamp", 16)],
                ids=["hex27-box-10", "tet10-box-8", "shipped-beam-16"])
def K3(request):
    kind, n, clamp, n_modes = request.param
    fe = beam_fe("hex27", (20, 2, 2)) if kind == "beam" else box_fe(kind, n)
    return _tensors(fe, clamp, n_modes)[1]


def _full(K3, q, tangent=False):
    """``K3 : q q q`` (or its tangent) by the full-tensor functions, K_e = K2 = 0."""
    n = q.shape[0]
    f = h_e_tangent if tangent else h_e
    return f(np.zeros((n, n)), np.zeros((n, n, n)), K3, q)


def test_pair_form_equals_full_tensor(K3):
    """``h3_pairs`` and ``h3_pairs_tangent`` equal the ``n_q^4`` products with ``K3`` to
    1e-13 of the largest entry at five random ``q`` (measured 2.5e-16 to 4.1e-16)."""
    H_p = pair_gram(K3)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.standard_normal(K3.shape[0])
        for tangent, got in ((False, h3_pairs(H_p, q)), (True, h3_pairs_tangent(H_p, q))):
            ref = _full(K3, q, tangent)
            assert np.abs(got - ref).max() <= 1e-13 * np.abs(ref).max()


def test_pair_gram_is_a_gram_matrix(K3):
    """``H_p[p, r] = int P_p . C P_r dV`` is symmetric positive semi-definite (eigenvalues
    above -1e-12 of the largest), so the quartic energy ``q . (K3:qqq) / 4 = pi^T H_p pi
    / 8`` is non-negative; it equals the full tensor's ``q . (K3:qqq) / 4``."""
    H_p = pair_gram(K3)
    assert np.array_equal(H_p, H_p.T)
    lam = np.linalg.eigvalsh(H_p)
    assert lam.min() >= -1e-12 * lam.max()
    q = np.random.default_rng(5).standard_normal(K3.shape[0])
    pi = pair_vector(q)
    assert pi @ H_p @ pi / 8.0 == pytest.approx(q @ _full(K3, q) / 4.0, rel=1e-13)


def test_tangent_against_central_differences(K3):
    """The pair-form tangent against central differences of ``h3_pairs`` (a cubic: the
    difference error is ``h^2 / 6`` times the third derivative), to 1e-7 relative
    (measured 3e-11 to 2e-10)."""
    H_p = pair_gram(K3)
    q = np.random.default_rng(11).standard_normal(K3.shape[0])
    h = 1e-5
    E = np.eye(q.shape[0])
    fd = np.stack([(h3_pairs(H_p, q + h * e) - h3_pairs(H_p, q - h * e)) / (2 * h) for e in E],
                  axis=1)
    T = h3_pairs_tangent(H_p, q)
    assert np.abs(T - fd).max() <= 1e-7 * np.abs(T).max()


def test_pair_index_order():
    """Pairs in row-major upper-triangle order: ``p(a, b) = a n - a (a - 1) / 2 + b - a``
    (the index the compiled kernel computes), ``pair`` symmetric."""
    n = 7
    ia, ib, pair = pair_index(n)
    for a in range(n):
        for b in range(a, n):
            p = a * n - a * (a - 1) // 2 + b - a
            assert (ia[p], ib[p]) == (a, b) and pair[a, b] == pair[b, a] == p


def test_bad_shapes_refused():
    """Shapes that do not fit: one line naming the array, the expected and the found shape."""
    with pytest.raises(ValueError,
                       match=r"K3: expected shape \(n_q, n_q, n_q, n_q\), got \(3, 3, 3\)"):
        pair_gram(np.zeros((3, 3, 3)))
    with pytest.raises(ValueError, match=r"K3: .*got \(3, 3, 3, 2\)"):
        pair_gram(np.zeros((3, 3, 3, 2)))
    with pytest.raises(ValueError, match=r"H_p: expected shape \(6, 6\) for q of shape \(3,\), "
                                         r"got H_p \(9, 9\)"):
        h3_pairs(np.zeros((9, 9)), np.ones(3))
    with pytest.raises(ValueError, match=r"H_p: .*q \(3, 1\)"):
        h3_pairs_tangent(np.zeros((6, 6)), np.ones((3, 1)))
