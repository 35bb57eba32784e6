"""The sorted CSR form of a dense Newton matrix's nonzeros (the pattern the Newton
solver sets up from) against scipy.sparse's conversion."""
import numpy as np
import scipy.sparse as sp

from flexmbs.integrate._petsc import csr_of_dense


def test_same_pattern_and_values_as_scipy():
    rng = np.random.default_rng(5)
    for _ in range(100):
        A = rng.standard_normal((rng.integers(0, 15), rng.integers(0, 15)))
        A[rng.random(A.shape) < 0.5] = 0.0
        if A.size:
            A.flat[rng.integers(A.size)] = np.nan       # a non-finite entry is a nonzero
        ref = sp.csr_matrix(A)
        c = csr_of_dense(A)
        assert np.array_equal(c.indptr, ref.indptr)
        assert np.array_equal(c.indices, ref.indices)
        assert np.array_equal(c.data, ref.data, equal_nan=True)
        assert c.shape == ref.shape
