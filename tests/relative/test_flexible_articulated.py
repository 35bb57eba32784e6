"""The articulated-body factorisation of a flexible tree's Newton matrix
(flexmbs.relative.flexible_articulated) against dense solves.

References (independent of the recursion):

* ``numpy.linalg.solve`` of the dense ``W_0' = [[c_M Mbar + Delta_e, G^T], [G, 0]]``
  with ``Mbar`` of the composite bodies and of the non-recursive formalism (``T^T M_b
  T``), ``Delta_e = c_K K_e + c_C D_e`` laid on each flexible body's modal coordinates
  from the body's own matrices and ``G`` the DAE's constraint Jacobian (Euler
  normalisations, cut joints, drives): random trees mixing rigid bodies and damped
  flexible rods (every joint kind, spherical and free joints, joints on the rods'
  elastic interfaces) at random deformed states, and the flexible slider-crank (cut joint
  and drive);
* the kept terms are the tangent's body-local constant part: at an undeformed state at
  rest without gravity, the full tangent of the descriptor form carried through ``T``
  (flexmbs.relative.flexible_tangent) is ``K = blockdiag(K_e)``, ``C = blockdiag(D_e)``,
  so the full Newton matrix's dense solve equals the factor's there (Rayleigh, modal, the
  body file's and no damping; rods with ``K2, K3``, whose tangent vanishes at ``q_e =
  0``); deformed, the factor's modal blocks take the elastic force's tangent at
  ``q_e``, so the two are equal there too (the stiffening's tangent checked by central
  differences of the body's elastic force less ``K_e q_e``);
* runs: the generalized-alpha run of the flexible slider-crank by the factor equals the
  run by the dense full Newton matrix, and the non-recursive formalism's run.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies.damping import ModalDamping, RayleighDamping
from flexmbs.integrate import GeneralizedAlpha, consistent_initial_conditions
from flexmbs.relative.dae import RelativeDAE
from tests.relative.test_flexible_recursive import mixed_tree, random_state
from tests.relative.test_flexible_tree import rod  # noqa: F401  (the fixture)
from tests.scenarios.flexible.flexcase_models import (STEEL, box_beam_mesh, reduce_cb,
                                                       slider_crank_model)


#: the Newton coefficients of a step (generalized-alpha at h = 1 ms, order of magnitude)
C_K, C_C, C_M = 2.5e-1, 6e2, 1.0


def damped_tree(rod, seed: int, n: int, gravity=(0.3, -9.81, 0.5), **flexible) -> fm.System:
    """``n`` bodies, each rigid or a flexible rod with Rayleigh damping (or the
    ``FlexibleBody`` keywords ``flexible``) (at random), hung on the ground or an earlier
    body by a random joint kind (or free); a joint on a rod sits at one of its interfaces
    (``hole_B`` deforms and turns elastically)."""
    return mixed_tree(rod, seed, n, gravity, "damped", **(
        flexible or {"structural_damping": RayleighDamping(1.0, 2e-5)}))


def modal_terms(dae) -> np.ndarray:
    """``Delta_e`` (n_beta, n_beta): ``c_K K_e + c_C D_e`` on each flexible body's
    modal coordinates, from the bodies' own matrices."""
    out = np.zeros((dae.n_q, dae.n_q))
    for tj, body in zip(dae.tree.joints, dae.tree.bodies, strict=True):
        if body.kind == "flexible":
            out[tj.qe, tj.qe] = C_K * body.body.K_e + C_C * body.D_e
    return out


def dense_W0(dae, beta, Mbar, t=0.0) -> np.ndarray:
    G = dae.constraint_jacobian(beta, t).toarray()
    n, m = dae.n_q, dae.n_lam
    W = np.zeros((n + m, n + m))
    W[:n, :n] = C_M * Mbar + modal_terms(dae)
    W[:n, n:], W[n:, :n] = G.T, G
    return W


def factor_of(dae, beta, t=0.0):
    """The articulated factor of the modified Newton matrix at ``beta``."""
    return dae._flexible_factor(beta, t, C_K, C_C, C_M)


def rel_err(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize(("seed", "n"), [(0, 4), (3, 7), (5, 12)])
def test_the_factor_solves_the_dense_matrix_on_random_flexible_trees(rod, seed, n):
    model = damped_tree(rod, seed, n).validate()
    rec, rel = RelativeDAE(model, "recursive"), RelativeDAE(model, "relative")
    kinds = {b.kind for b in rec.tree.bodies}
    assert rec.factored and kinds == {"rigid", "flexible"}
    assert np.abs(modal_terms(rec)).max() > 0
    assert any(tj.motion.e_slice is not None for tj in rec.tree.joints)   # Euler rows
    rng = np.random.default_rng(200 + seed)
    for _ in range(2):
        beta, _ = random_state(rec, rng)
        rhs = rng.normal(size=(rec.n_q + rec.n_lam, 3))
        F = factor_of(rec, beta)
        for Mbar in (rec.mass_matrix(beta), rel.mass_matrix(beta)):
            x_ref = np.linalg.solve(dense_W0(rec, beta, Mbar), rhs)
            err = rel_err(F.solve(rhs), x_ref)
            print(f"seed {seed}, n {n}: {err:.1e}")
            assert err < 1e-10
        assert rel_err(F.solve(rhs[:, 0]), x_ref[:, 0]) < 1e-10      # one column


def test_the_factor_solves_the_slider_crank_with_cut_joint_and_drive(rod):
    model = slider_crank_model(rod)
    rec = RelativeDAE(model.validate(), "recursive")
    assert len(rec.cut_rows) and rec.tree.flexible
    rng = np.random.default_rng(3)
    beta = rec.initial_q()
    for tj in rec.tree.joints:
        beta[tj.qe] = rng.normal(0.0, 1e-5, tj.qe.stop - tj.qe.start)
    rhs = rng.normal(size=rec.n_q + rec.n_lam)
    x_ref = np.linalg.solve(dense_W0(rec, beta, rec.mass_matrix(beta)), rhs)
    err = rel_err(factor_of(rec, beta).solve(rhs), x_ref)
    print(f"slider-crank: {err:.1e}")
    assert err < 1e-10


@pytest.fixture(scope="module")
def stiff_rod(tmp_path_factory):
    """The rod of ``rod`` reduced with its geometric stiffening ``K2, K3`` and a damping
    ratio of 0.02 in the body file."""
    mesh = box_beam_mesh(tmp_path_factory.mktemp("stiff_rod") / "rod.msh", (0.4, 0.01, 0.01),
                         (20, 1, 1), faces=("hole_A", "hole_B"))
    return reduce_cb(mesh, STEEL, 2, interfaces=("hole_A", "hole_B"), static_modes=True,
                     name="rod", damping=0.02, stiffening=True)


#: the rods' damping and stiffening: (rod fixture, ``FlexibleBody`` keywords)
BODY_MODELS = {
    "rayleigh": ("rod", {"structural_damping": RayleighDamping(1.0, 2e-5)}),
    "modal": ("rod", {"structural_damping": ModalDamping(lambda f: 0.01 + 1e-5 * f)}),
    "body_file": ("stiff_rod", {"stiffening": False}),
    "undamped": ("rod", {"damping": False}),
    "stiffening": ("stiff_rod", {"stiffening": True}),
}


def at_rest_tree(request, case: str) -> RelativeDAE:
    """The recursive DAE of the tree of 6 bodies (seed 1) without gravity, its rods of
    ``BODY_MODELS[case]``."""
    rod_name, kw = BODY_MODELS[case]
    model = damped_tree(request.getfixturevalue(rod_name), 1, 6, gravity=(0.0, 0.0, 0.0),
                        **kw).validate()
    rec = RelativeDAE(model, "recursive")
    flexible = [b for b in model.bodies if isinstance(b, fm.FlexibleBody)]
    assert flexible and all(b.uses_stiffening == (case == "stiffening") for b in flexible)
    assert all((np.abs(b.D_e).max() > 0) == (case != "undamped") for b in flexible)
    return rec


def full_newton_matrix(rec, beta) -> np.ndarray:
    """``[[c_K K + c_C C + c_M M, G^T], [G, 0]]`` at ``beta``, at rest, ``lam = 0``, the
    full tangent by the DAE's central differences."""
    z, zl = np.zeros(rec.n_q), np.zeros(rec.n_lam)
    K, C, M = (x.toarray() for x in rec.tangent(beta, z, z, zl, 0.0))
    assert np.abs(K).max() > 0
    G = rec.constraint_jacobian(beta, 0.0).toarray()
    n = rec.n_q
    W = np.zeros((n + rec.n_lam,) * 2)
    W[:n, :n] = C_K * K + C_C * C + C_M * M
    W[:n, n:], W[n:, :n] = G.T, G
    return W


@pytest.mark.parametrize("case", list(BODY_MODELS))
def test_the_kept_terms_are_the_whole_tangent_at_rest_undeformed(request, case):
    """Undeformed, at rest, no gravity: ``r_b`` and every velocity term vanish, and so
    does the geometric stiffening's tangent (``d(K2:qq + K3:qqq)/dq = 0`` at ``q_e =
    0``), so the full Newton matrix of the tangent is the factored one -- for Rayleigh,
    modal, the body file's and no damping, and a body with ``K2, K3``."""
    rec = at_rest_tree(request, case)
    rng = np.random.default_rng(9)
    beta, _ = random_state(rec, rng)
    for tj in rec.tree.joints:
        beta[tj.qe] = 0.0
    W = full_newton_matrix(rec, beta)
    rhs = rng.normal(size=len(W))
    err = rel_err(factor_of(rec, beta).solve(rhs), np.linalg.solve(W, rhs))
    print(f"{case}: full tangent at rest: {err:.1e}")
    assert err < 1e-8


def stiffening_tangent(body, q_e, h=1e-7) -> np.ndarray:
    """``d(K2:qq + K3:qqq)/dq_e`` of ``body`` by central differences of its elastic
    force less ``K_e q_e``."""
    def f(q):
        return body.elastic_force(q) - body.body.K_e @ q
    return np.column_stack([(f(q_e + h * e) - f(q_e - h * e)) / (2 * h)
                            for e in np.eye(len(q_e))])


def test_deformed_the_full_tangent_is_the_kept_terms_with_the_stiffening(request):
    """Deformed, at rest, no gravity: the full Newton matrix is the factored one, whose
    modal blocks carry the elastic force's tangent at ``q_e`` with the stiffening's
    ``c_K d(K2:qq + K3:qqq)/dq_e`` (central differences of the body's elastic force);
    without that term (``K_e`` alone) the solve would be off by far more."""
    rec = at_rest_tree(request, "stiffening")
    rng = np.random.default_rng(9)
    beta, _ = random_state(rec, rng)
    W = np.zeros((rec.n_q + rec.n_lam,) * 2)
    for tj, body in zip(rec.tree.joints, rec.tree.bodies, strict=True):
        if body.kind == "flexible":
            beta[tj.qe] = rng.normal(0.0, 2e-3, tj.qe.stop - tj.qe.start)
            W[tj.qe, tj.qe] = C_K * stiffening_tangent(rec.model.body(body.name), beta[tj.qe])
    assert np.abs(W).max() > 0
    W_full = full_newton_matrix(rec, beta)
    rhs = rng.normal(size=len(W))
    x = factor_of(rec, beta).solve(rhs)
    err = rel_err(x, np.linalg.solve(W_full, rhs))
    without = rel_err(np.linalg.solve(W_full - W, rhs), np.linalg.solve(W_full, rhs))
    print(f"factor vs the full matrix: {err:.1e}; the matrix without the stiffening's "
          f"tangent: {without:.1e}")
    assert err < 1e-8 and without > 1e3 * err


def integrate(model, formulation, factored, t_end=0.01, h=5e-4):
    dae = RelativeDAE(model.validate(), formulation)
    dae.factored = factored
    q0 = dae.initial_q()
    dae.drop_redundant(q0)
    init = consistent_initial_conditions(dae, q0, dae.initial_qd(), 0.0)
    integ = GeneralizedAlpha(dae, rho_inf=0.9)
    out = integ.run(init.q, init.qd, init.qdd, init.lam, 0.0, t_end, h=h)
    return dae, out


def test_a_factored_flexible_run_equals_the_dense_runs(rod, monkeypatch):
    """The factored run takes the articulated factor and no dense tangent (counted):
    with ``K_e`` kept the modified iteration contracts (a stalled one would take the
    full matrix by GMRES, :func:`test_the_krylov_solve_of_a_flexible_tree_is_the_dense_
    solve`); it equals the dense runs to Newton's tolerance."""
    calls = {"factor": 0, "tangent": 0}
    for name in ("_flexible_factor", "tangent"):
        def counted(self, *a, _orig=getattr(RelativeDAE, name), _key=name.strip("_")):
            calls[_key.replace("flexible_", "")] += 1
            return _orig(self, *a)
        monkeypatch.setattr(RelativeDAE, name, counted)
    runs = {("recursive", True): integrate(slider_crank_model(rod), "recursive", True)}
    print(calls)
    assert calls["factor"] > 0 and calls["tangent"] == 0
    monkeypatch.undo()
    runs.update({key: integrate(slider_crank_model(rod), *key)
                 for key in [("recursive", False), ("relative", False)]})
    q = {key: np.asarray(r[1].q) for key, r in runs.items()}
    ref = q[("recursive", False)]
    for key in [("recursive", True), ("relative", False)]:
        err = np.abs(q[key] - ref).max() / np.abs(ref).max()
        print(f"{key}: {err:.1e} from the dense recursive run")
        assert err < 1e-8


def test_the_modified_iteration_contracts_with_the_elastic_stiffness(rod):
    """The spectral radius of ``I - W_0'^-1 W`` (``W`` the full Newton matrix of the
    tangent) at the slider-crank's consistent start, generalized-alpha-like coefficients
    at h = 0.5 ms: small with ``K_e`` kept; without it about ``(omega_e h)^2``, hundreds
    (the modified iteration would diverge)."""
    from flexmbs.relative import flexible_articulated
    dae = RelativeDAE(slider_crank_model(rod).validate(), "recursive")
    q0 = dae.initial_q()
    dae.drop_redundant(q0)
    s = consistent_initial_conditions(dae, q0, dae.initial_qd(), 0.0)
    h = 5e-4
    c_K, c_C = 0.28 * h * h, 0.55 * h
    K, C, M = (x.toarray() for x in dae.tangent(s.q, s.qd, s.qdd, s.lam, 0.0))
    G = dae.constraint_jacobian(s.q, 0.0).toarray()
    n = dae.n_q
    W = np.zeros((n + dae.n_lam,) * 2)
    W[:n, :n] = c_K * K + c_C * C + M
    W[:n, n:], W[n:, :n] = G.T, G
    rates = []
    for keep in (True, False):
        with pytest.MonkeyPatch.context() as mp:
            if not keep:
                block = flexible_articulated.modal_block
                mp.setattr(flexible_articulated, "modal_block",
                           lambda body, c_K, c_C, q_e=None: block(body, 0.0, c_C))
            F = dae._flexible_factor(s.q, 0.0, c_K, c_C, 1.0)
            rates.append(max(abs(np.linalg.eigvals(np.eye(len(W)) - F.solve(W)))))
    print(f"contraction rate with K_e {rates[0]:.2e}, without {rates[1]:.2e}")
    assert rates[0] < 0.05 < 10 < rates[1]


def test_the_krylov_solve_of_a_flexible_tree_is_the_dense_solve(rod):
    """When the modified iteration stalls, the full Newton matrix of a flexible tree is
    solved by GMRES preconditioned by the flexible articulated factor
    (:class:`~flexmbs.relative.newton_factor.KrylovFactor`, ``W v`` by directional
    differences of the residual): at a moving state it equals numpy's solve of the dense
    matrix (the projected analytic tangent), which the preconditioner alone does not."""
    from flexmbs.integrate.genalpha import GenAlphaParameters
    from flexmbs.relative.newton_factor import KrylovFactor
    h = 5e-4
    dae, traj = integrate(slider_crank_model(rod), "recursive", True, t_end=0.005, h=h)
    t = float(traj.t[-1])
    q, qd, qdd, lam = traj.q[-1], traj.qd[-1], traj.qdd[-1], traj.lam[-1]
    p = GenAlphaParameters.from_rho_inf(0.9)
    c_K, c_C, c_M = 1.0 / p.beta_prime(h), p.gamma_prime(h) / p.beta_prime(h), 1.0
    W = dae._dense_newton(q, qd, qdd, lam, t, c_K, c_C, c_M)    # the analytic tangent
    schur = dae._flexible_factor(q, t, c_K, c_C, c_M)
    kf = KrylovFactor(dae._newton_product(q, qd, qdd, lam, t, c_K, c_C, c_M, schur.G_c),
                      schur, lambda: W, len(W))
    rhs = np.random.default_rng(2).standard_normal(len(W))
    x, x_ref = kf.solve(rhs), np.linalg.solve(W, rhs)
    err, err_0 = (np.linalg.norm(y - x_ref) / np.linalg.norm(x_ref)
                  for y in (x, schur.solve(rhs)))
    res = np.linalg.norm(W @ x - rhs) / np.linalg.norm(rhs)
    print(f"GMRES {kf.iterations} iterations: {err:.1e} (residual {res:.1e}, cond "
          f"{np.linalg.cond(W):.1e}); the preconditioner alone {err_0:.1e}")
    assert kf.dense_solves == 0
    assert err < 1e-6 and err_0 > 1e3 * err
