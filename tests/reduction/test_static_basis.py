"""Selection of the inertial static modes (``modes.static_basis``): the new content of a
response is measured in the energy norm relative to the response itself.

Identities on a diagonal model ``K = diag(i^2)``, ``M = E`` whose eigenvectors are the unit
vectors, so every remainder is known in closed form."""
import numpy as np
import scipy.sparse as sp

from flexmbs.reduction.modes import STATIC_DROP_TOL, static_basis

N = 120
K = sp.diags(np.arange(1.0, N + 1) ** 2).tocsr()
M = sp.identity(N, format="csr")
V = np.eye(N)[:, :3]                                  # the "eigenmodes" e_1, e_2, e_3


def e(i):
    return np.eye(N)[:, i - 1]


def responses():
    # e_1 + 5e-5 e_100: new share 5e-5 in the mass norm, 100 * 5e-5 = 5e-3 in the energy
    # norm (the stress-carrying remainder of a slender beam's centrifugal response)
    s1 = e(1) + 5e-5 * e(100)
    s2 = s1 + e(2)                                    # nothing new once s1 is kept
    s3 = e(3) + 1e-7 * e(60)                          # energy share 2e-6: negligible
    return np.column_stack([s1, s2, s3])


def test_energy_norm_keeps_the_stress_carrying_remainder():
    S = static_basis(responses(), M, K, against=V)
    assert S.shape == (N, 1)
    assert np.allclose(np.abs(S[:, 0]), e(100), atol=1e-12)
    assert 100 * 5e-5 / np.sqrt(1 + (100 * 5e-5) ** 2) > STATIC_DROP_TOL > 60 * 1e-7


def test_result_is_m_orthonormal_to_the_modes_and_independent_of_the_order():
    R = responses()
    R[:, 2] += 1e-2 * e(70)                           # a second genuine remainder
    a = static_basis(R, M, K, against=V)
    b = static_basis(R[:, ::-1], M, K, against=V)
    assert a.shape == b.shape == (N, 2)
    assert np.allclose(a.T @ (M @ a), np.eye(2), atol=1e-12)
    assert np.abs(V.T @ (M @ a)).max() < 1e-12
    assert np.allclose(a @ a.T, b @ b.T, atol=1e-12)   # same span


def test_tiny_drop_tol_keeps_every_independent_response():
    assert static_basis(responses(), M, K, against=V, drop_tol=1e-12).shape[1] == 2
