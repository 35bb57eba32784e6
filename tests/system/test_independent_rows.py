"""The ordered rank test of the constraint rows (flexmbs.system.dof.independent_rows)
against matrices whose dependent rows are known by construction, and against the rank
of numpy's SVD."""
import numpy as np

from flexmbs.system.dof import independent_rows


def test_rows_in_the_span_of_earlier_rows_are_dropped():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((5, 9))
    G = np.vstack([A[:2], A[0] - 2.0 * A[1], A[2:], np.zeros(9), A[3] + A[4], A[2]])
    keep = independent_rows(G)
    # row 2 = row0 - 2 row1, row 6 zero, rows 7, 8 combinations of rows kept before them
    assert keep.tolist() == [True, True, False, True, True, True, False, False, False]


def test_the_kept_rows_have_the_rank_of_the_matrix():
    rng = np.random.default_rng(4)
    for _ in range(200):
        m, n, r = rng.integers(1, 30), rng.integers(1, 40), rng.integers(1, 20)
        G = rng.standard_normal((m, r)) @ rng.standard_normal((r, n))
        keep = independent_rows(G)
        rank = np.linalg.matrix_rank(G)
        assert keep.sum() == rank
        assert np.linalg.matrix_rank(G[keep]) == rank     # the kept rows are independent
        # a dropped row lies in the span of the rows kept before it
        for i in np.flatnonzero(~keep):
            before = G[:i][keep[:i]]
            if before.size:
                assert np.linalg.matrix_rank(np.vstack([before, G[i]])) == len(before)


def test_a_row_just_above_the_tolerance_is_kept():
    e = np.eye(3)
    G = np.vstack([e[0], e[1], e[0] + 1e-7 * e[2], e[0] + 1e-11 * e[2]])
    assert independent_rows(G, tol=1e-9).tolist() == [True, True, True, False]
