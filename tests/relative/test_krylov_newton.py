"""The full Newton matrix of the recursive formulation solved by GMRES preconditioned by
the articulated factor (:class:`~flexmbs.relative.newton_factor.KrylovFactor`), against
numpy's solve of the dense matrix (the tangent by central differences, as
``RelativeDAE.tangent``), and the integrator's runs that take it: the same trajectory
as the dense route's, without a dense matrix."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.integrate import GeneralizedAlpha, consistent_initial_conditions
from flexmbs.integrate.genalpha import GenAlphaParameters
from flexmbs.relative import dae as relative_dae
from flexmbs.relative.dae import RelativeDAE
from flexmbs.relative.kinematics import forward
from flexmbs.relative.newton_factor import KrylovFactor, SchurFactor
from tests.relative.models import four_bar, spherical_chain

H, RHO = 1e-3, 0.9


def _dae(model):
    dae = RelativeDAE(model.validate(), "recursive")
    q0 = dae.initial_q()
    dae.drop_redundant(q0)
    return dae, consistent_initial_conditions(dae, q0, dae.initial_qd(), 0.0)


def _run(dae, init, t_end, h=H, **kw):
    integ = GeneralizedAlpha(dae, rho_inf=RHO, **kw)
    try:
        return integ.run(init.q, init.qd, init.qdd, init.lam, 0.0, t_end, h=h)
    finally:
        integ.destroy()


def _coefficients(h=H):
    p = GenAlphaParameters.from_rho_inf(RHO)
    bp, gp = p.beta_prime(h), p.gamma_prime(h)
    return 1.0 / bp, gp / bp, 1.0


@pytest.mark.parametrize("make", [lambda: spherical_chain(12), four_bar],
                         ids=["spherical12", "four_bar"])
def test_krylov_solve_equals_the_dense_solve(make):
    """At a moving state (a short run's end) the GMRES solve of W equals
    numpy.linalg.solve of the dense W to ~1e-8, and W x = rhs to ~1e-9."""
    dae, init = _dae(make())
    traj = _run(dae, init, 0.02)
    t = float(traj.t[-1])
    q, qd, qdd, lam = traj.q[-1], traj.qd[-1], traj.qdd[-1], traj.lam[-1]
    c_K, c_C, c_M = _coefficients()
    W = dae._dense_newton(q, qd, qdd, lam, t, c_K, c_C, c_M)
    G_c = dae._cut_jacobian(q, t) if len(dae.cut_rows) else np.zeros((0, dae.n_q))
    schur = SchurFactor(dae.tree, forward(dae.tree, q, np.zeros(dae.n_q)), q, G_c, c_M)
    kf = KrylovFactor(dae._newton_product(q, qd, qdd, lam, t, c_K, c_C, c_M, G_c), schur,
                      lambda: W, len(W))
    rhs = np.random.default_rng(1).standard_normal(len(W))
    x, x_ref = kf.solve(rhs), np.linalg.solve(W, rhs)
    assert kf.dense_solves == 0 and kf.iterations[0] < 20
    assert np.linalg.norm(W @ x - rhs) <= 1e-7 * np.linalg.norm(rhs)
    assert np.linalg.norm(x - x_ref) <= 1e-8 * np.linalg.norm(x_ref)
    # the preconditioner alone (modified Newton) is not the solve: the test can fail
    x_0 = schur.solve(rhs)
    assert np.linalg.norm(x_0 - x_ref) > 1e-6 * np.linalg.norm(x_ref)


class _DenseAtOnce(KrylovFactor):
    """The dense route: the full matrix by central differences and LU, no GMRES."""

    def solve(self, rhs):
        if self._fallback is None:
            from flexmbs.relative.newton_factor import DenseFactor
            self._fallback = DenseFactor(self._dense())
        self.dense_solves += 1
        return self._fallback.solve(rhs)


def test_a_long_spherical_chain_runs_without_a_dense_matrix(monkeypatch):
    """32 spherical links at h = 10 ms, where the modified iteration stalls on most
    steps (the dropped ``c_K K`` grows as h^2; at h = 1 ms it contracts, no GMRES): the
    run takes GMRES (no dense matrix, no tangent), each GMRES solve to 1e-5 of its
    right-hand side at least, and equals the run whose stalled solves take the dense
    matrix, to 1e-8 (Newton converged to 1e-10 in both)."""
    steps, h = 12, 1e-2
    dae, init = _dae(spherical_chain(32))
    tangents = _counting_tangent(monkeypatch)
    residuals = []
    orig = relative_dae.KrylovFactor.solve

    def solve(self, rhs):
        x = orig(self, rhs)
        residuals.append(self.residuals[-1])
        return x
    monkeypatch.setattr(relative_dae.KrylovFactor, "solve", solve)
    krylov = _run(dae, init, steps * h, h=h, newton_rtol=1e-10)
    counts = dict(dae.newton_counts)
    assert counts["krylov"] >= steps // 2 and counts["dense"] == 0 and not tangents, counts
    assert residuals and max(residuals) <= 1e-5, residuals
    monkeypatch.setattr(relative_dae, "KrylovFactor", _DenseAtOnce)
    dae_d, init_d = _dae(spherical_chain(32))
    dense = _run(dae_d, init_d, steps * h, h=h, newton_rtol=1e-10)
    assert dae_d.newton_counts["krylov"] >= steps // 2    # the same solves stalled
    assert len(krylov.t) == len(dense.t) == steps + 1
    scale = np.abs(dense.q).max()
    assert np.abs(krylov.q - dense.q).max() <= 1e-8 * scale
    # qd follows q through the update qd ~ gamma / (beta h) dq: its bound is q's over h
    assert np.abs(krylov.qd - dense.qd).max() <= 1e-8 * scale / h


def _counting_tangent(monkeypatch):
    calls = []
    orig = RelativeDAE.tangent

    def tangent(self, *a):
        calls.append(1)
        return orig(self, *a)
    monkeypatch.setattr(RelativeDAE, "tangent", tangent)
    return calls


def test_a_matrix_every_iteration_stays_modified(monkeypatch):
    """Without Jacobian reuse the integrator asks for a matrix at every iteration, at
    the same t: while the modified iteration contracts that is not a stall, so no full
    matrix (neither GMRES nor the dense tangent) is made on a four-bar."""
    tangents = _counting_tangent(monkeypatch)
    dae, init = _dae(four_bar())
    _run(dae, init, 10 * H, jacobian_reuse=False)
    assert not tangents
    assert dae.newton_counts["articulated"] > 10 and dae.newton_counts["krylov"] == 0


def test_a_second_run_on_the_same_dae_repeats_the_first(monkeypatch):
    """Two runs of one step from the same state on one DAE object (a matrix every
    iteration): the second must not take its first matrix for a stall of the first
    run's step; both runs are equal to the last bit, no full matrix."""
    dae, init = _dae(spherical_chain(6))
    first = _run(dae, init, H, jacobian_reuse=False)
    tangents = _counting_tangent(monkeypatch)
    second = _run(dae, init, H, jacobian_reuse=False)
    assert not tangents
    assert np.array_equal(first.q, second.q) and np.array_equal(first.lam, second.lam)


def test_the_setup_factors_once(monkeypatch):
    """The Newton solver's set-up probes the matrix at the start point and its first
    iteration asks again at the same point: one articulated factor, not two."""
    made = []
    orig = relative_dae.SchurFactor

    def counted(*a):
        made.append(1)
        return orig(*a)
    monkeypatch.setattr(relative_dae, "SchurFactor", counted)
    asked = set()
    orig_nf = RelativeDAE.newton_factor

    def newton_factor(self, q, *a):
        asked.add((np.asarray(q).tobytes(), a[3]))
        return orig_nf(self, q, *a)
    monkeypatch.setattr(RelativeDAE, "newton_factor", newton_factor)
    dae, init = _dae(four_bar())
    _run(dae, init, 3 * H)
    assert len(made) == len(asked)


def test_the_run_says_when_the_modified_iteration_stalled(monkeypatch):
    """A run whose articulated (modified) Newton iteration stalls says so in one note
    of its summary, with the GMRES matrices and, when GMRES fails, the dense fallbacks
    (O(n^2) each); a run that contracts has no such note.  8 spherical links: at
    h = 50 ms the dropped ``c_K K`` stalls the iteration, at 10 ms it does not."""
    import flexmbs as fm

    def notes(dt):
        model = spherical_chain(8)
        model.formulation = "recursive"
        return [n for n in fm.simulate(model, t_end=0.1, dt=dt).extra["notes"]
                if n.startswith("recursive Newton")]
    assert notes(1e-2) == []
    stalled = notes(5e-2)
    assert len(stalled) == 1 and "by GMRES" in stalled[0] and "dense" not in stalled[0]
    # GMRES made to fail (its acceptance out of reach): the dense fallback is reported
    monkeypatch.setattr(KrylovFactor, "__init__", _init_with(accept=0.0))
    dense = notes(5e-2)
    assert len(dense) == 1 and "fell back to the dense tangent" in dense[0], dense


def _init_with(**fixed):
    orig = KrylovFactor.__init__

    def init(self, *args, **kw):
        orig(self, *args, **{**kw, **fixed})
    return init
