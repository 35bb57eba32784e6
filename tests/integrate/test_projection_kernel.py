"""The compiled velocity projection of an output point (:mod:`flexmbs.integrate.
projection_kernel`) against its numpy reference (:func:`flexmbs.integrate.consistent.
projected_dense`, LAPACK's Cholesky) and against the SVD least squares (a second
formulation: the minimum-norm change onto ``G qd = -g_t``), on random rows of full rank,
rows with a drive's ``g_t``, and bad inputs: dependent rows, rows nearly dependent
(the ratio test), a zero row, no rows, non-finite entries."""
import numpy as np
import pytest

import flexmbs.compiled
from flexmbs.integrate import consistent, projection_kernel
from flexmbs.integrate.consistent import CHOLESKY_RATIO, lstsq, projected_dense


def _by_svd(G, g_t, qd):
    return qd - lstsq(G, G @ qd + g_t)


@pytest.mark.parametrize("m,n", [(1, 2), (6, 7), (7, 17), (20, 21), (30, 60)])
def test_kernel_equals_reference_and_least_squares(m, n):
    rng = np.random.default_rng(m * 100 + n)
    G = rng.normal(size=(m, n)) * rng.uniform(0.1, 10.0, size=(m, 1))
    g_t, qd = rng.normal(size=m), rng.normal(size=n)
    qd0 = qd.copy()
    got, ok = projection_kernel.projected_dense(G, g_t, qd, CHOLESKY_RATIO)
    ref, ok_ref = projected_dense(G, g_t, qd, CHOLESKY_RATIO)
    assert ok and ok_ref
    scale = np.abs(qd).max() + np.abs(ref).max()
    assert np.abs(got - ref).max() <= 1e-13 * scale
    assert np.abs(got - _by_svd(G, g_t, qd)).max() <= 1e-11 * scale
    assert np.abs(G @ got + g_t).max() <= 1e-12 * np.abs(G @ qd + g_t).max()
    assert np.array_equal(qd, qd0)       # (the input is not changed)


def _bad_rows():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(4, 9))
    near = A.copy()
    near[3] = A[1] + 1e-9 * rng.normal(size=9)       # sigma ratio ~1e-9: below the test
    zero = A.copy()
    zero[2] = 0.0
    return {"repeated": np.vstack([A, A[1]]), "nearly dependent": near, "zero row": zero}


@pytest.mark.parametrize("which", ["repeated", "nearly dependent", "zero row"])
def test_both_refuse_rows_they_cannot_factor(which):
    G = _bad_rows()[which]
    m, n = G.shape
    g_t, qd = np.ones(m), np.arange(n, dtype=float)
    assert not projection_kernel.projected_dense(G, g_t, qd, CHOLESKY_RATIO)[1]
    assert not projected_dense(G, g_t, qd, CHOLESKY_RATIO)[1]


def test_no_rows_and_non_finite_entries():
    qd = np.arange(3.0)
    for fn in (projection_kernel.projected_dense, projected_dense):
        out, ok = fn(np.zeros((0, 3)), np.zeros(0), qd, CHOLESKY_RATIO)
        assert ok and np.array_equal(out, qd) and out is not qd
        G = np.array([[1.0, np.nan, 0.0]])
        assert not fn(G, np.zeros(1), qd, CHOLESKY_RATIO)[1] or \
            not np.isfinite(fn(G, np.zeros(1), qd, CHOLESKY_RATIO)[0]).all()


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_project_velocities_falls_back_to_least_squares(backend, monkeypatch):
    """Through :func:`project_velocities`' route (either backend): rows the factor
    refuses give the least squares, rows it takes the minimum-norm change."""
    monkeypatch.setattr(flexmbs.compiled, "KERNELS", backend)
    assert flexmbs.compiled.use_compiled() == (backend == "compiled")
    for G in [*_bad_rows().values(), np.random.default_rng(1).normal(size=(4, 9))]:
        g_t, qd = np.linspace(1, 2, G.shape[0]), np.linspace(-1, 1, G.shape[1])
        got = consistent._projected(G, g_t, qd)
        s = np.linalg.svd(G, compute_uv=False)
        if got[1]:
            assert s.min() > 1e-3 * s.max()
            assert np.abs(got[0] - _by_svd(G, g_t, qd)).max() <= 1e-12
        else:           # (refused: project_velocities takes the least squares)
            assert s.min() < 1e-6 * s.max()


def test_large_rows_take_the_numpy_route(monkeypatch):
    """Above ``_KERNEL_MAX`` (m^2 n) the LAPACK reference (same bits as minimum_norm's
    route), below it the kernel (counted calls)."""
    monkeypatch.setattr(flexmbs.compiled, "KERNELS", "compiled")
    calls = []
    kernel = projection_kernel.projected_dense
    monkeypatch.setattr(projection_kernel, "projected_dense",
                        lambda *a: calls.append(a[0].shape) or kernel(*a))
    rng = np.random.default_rng(3)
    big = rng.normal(size=(48, 189))
    assert 48 ** 2 * 189 > consistent._KERNEL_MAX
    g_t, qd = rng.normal(size=48), rng.normal(size=189)
    got, ok = consistent._projected(big, g_t, qd)
    assert ok and not calls
    assert np.array_equal(got, qd - consistent.minimum_norm(big, big @ qd + g_t))
    small = rng.normal(size=(6, 7))
    assert consistent._projected(small, rng.normal(size=6), rng.normal(size=7))[1]
    assert calls == [(6, 7)]
