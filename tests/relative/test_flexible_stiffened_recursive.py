"""The recursive formulation runs the flexible slider-crank with geometric stiffening
(the model of ``benchmarks/relative_flexible.py``: crank driven at 150 rad/s, steel rod
0.4 x 0.01 x 0.01 m hex27 20x1x1 with 6 fixed-interface modes and ``K2, K3``, prismatic
cut joint; generalized-alpha, rho_inf = 0.9, h = 1 ms).

Its modified Newton matrix once kept the rod's linear stiffness ``K_e`` alone on the
modal coordinates; the stiffening's tangent ``d(K2:qq + K3:qqq)/dq_e`` changed the
modal stiffness by up to 70 % at t = 2 ms, the first modified increment of step 3 overshot
(|I - W_0'^-1 W| = 78), and the run diverged at t = 3.9 ms after halving the step to
3.9 us.  Reference: the non-recursive formulation (``"relative"``, the full projected
tangent), the same equations by another route.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from tests.scenarios.flexible.flexcase_models import (STEEL, box_beam_mesh, reduce_cb,
                                                       slider_crank_model)

H, T_END = 1e-3, 0.02


@pytest.fixture(scope="module")
def stiffened_slider_crank(tmp_path_factory):
    mesh = box_beam_mesh(tmp_path_factory.mktemp("rod") / "rod.msh", (0.4, 0.01, 0.01),
                         (20, 1, 1), faces=("hole_A", "hole_B"))
    rod = reduce_cb(mesh, STEEL, 6, interfaces=("hole_A", "hole_B"), static_modes=False,
                    name="rod", stiffening=True)
    return slider_crank_model(rod)


def run(model, formulation, **options):
    model.formulation = formulation
    return fm.simulate(model, T_END, H, rho_inf=0.9, output_dt=H,
                       integrator_options=options or None)


def test_the_recursive_form_runs_the_stiffened_slider_crank(stiffened_slider_crank):
    """With default settings the recursive run reaches t_end without a failed or halved
    step; with Newton to 1e-10 its slider position and modal coordinates equal the
    non-recursive run's to 1e-12 and 1e-8 of their largest values (measured 2.3e-14 m of
    0.4 m, 1.0e-12 of the largest |q_e| 5e-4; with the default 1e-5, 1.4e-11 m and 4.8e-9,
    the Newton tolerance's)."""
    model = stiffened_slider_crank
    assert model.body("rod").uses_stiffening
    res = run(model, "recursive")
    assert res.t[-1] == pytest.approx(T_END)
    assert res.stats.step_cuts == 0 and res.stats.rejected_steps == 0
    a, b = run(model, "relative", newton_rtol=1e-10), run(model, "recursive", newton_rtol=1e-10)
    x_a, x_b = a.body_q("slider")[:, 0], b.body_q("slider")[:, 0]
    q_a, q_b = a.body_q("rod")[:, 7:], b.body_q("rod")[:, 7:]
    dx, dq = np.abs(x_a - x_b).max(), np.abs(q_a - q_b).max()
    print(f"recursive vs relative over {T_END * 1e3:g} ms: slider x {dx:.1e} m, "
          f"rod q_e {dq:.1e} (largest |q_e| {np.abs(q_a).max():.1e})")
    assert b.stats.step_cuts == 0 and b.stats.rejected_steps == 0
    assert dx < 1e-12 * np.abs(x_a).max()
    assert dq < 1e-8 * np.abs(q_a).max()


def test_its_poor_contractions_are_the_nonlinearitys_not_the_factors(stiffened_slider_crank,
                                                                      monkeypatch):
    """The run's Newton iterations contract poorly (increment ratios 0.5 to 2 between
    fresh factors), but the fresh articulated factor's own contraction along its
    increment, ``|W_0^-1 W x - x| / |x|``, is below THETA at each such point: against
    the dense full matrix (the tangent by central differences) it is the same number,
    so no solve takes GMRES (it once took 24 of 42 matrices over these 20 ms at no
    fewer Newton iterations)."""
    from flexmbs.relative import dae as relative_dae
    checked, daes = [], []
    contraction = relative_dae._contraction

    def measured(full, x):
        value = contraction(full, x)
        W = full._dense()
        checked.append((value, np.linalg.norm(full.P(W @ x) - x) / np.linalg.norm(x)))
        return value
    newton_factor = relative_dae.RelativeDAE.newton_factor

    def recorded(self, *a):
        daes.append(self)
        return newton_factor(self, *a)
    monkeypatch.setattr(relative_dae, "_contraction", measured)
    monkeypatch.setattr(relative_dae.RelativeDAE, "newton_factor", recorded)
    res = run(stiffened_slider_crank, "recursive")
    assert res.t[-1] == pytest.approx(T_END) and res.stats.step_cuts == 0
    counts = daes[-1].newton_counts
    assert checked and counts["checked"] == len(checked) and counts["krylov"] == 0, counts
    value, dense = np.array(checked).T
    print(f"{len(checked)} checks: contraction {value.min():.1e} .. {value.max():.1e}, "
          f"dense apart {np.abs(value - dense).max():.1e}")
    assert dense.max() <= relative_dae.THETA
    assert np.abs(value - dense).max() <= 1e-2 * relative_dae.THETA


class _Schur:
    """A fake articulated factor whose increment has the norm ``norm``."""

    def __init__(self, norm):
        self.norm = norm

    def solve(self, rhs):
        return np.full(len(rhs), self.norm / np.sqrt(len(rhs)))


class _Full:
    """A fake full matrix with ``W_0^-1 W = (1 + c) I``: the factor's own contraction is
    ``|W_0^-1 W x - x| / |x| = c`` exactly."""

    def __init__(self, c):
        self.c = c
        self.iterations, self.dense_solves = [], 0

    def apply(self, x):
        return (1.0 + self.c) * x

    def P(self, v):
        return v

    def solve(self, rhs):
        return np.zeros(len(rhs))


def _switch(norms, contractions):
    """Feed one Newton solve fresh factors whose increments have ``norms`` and whose own
    contractions are ``contractions``: the iteration at which it takes the full matrix
    (None: stays modified), and the counts."""
    from flexmbs.relative import dae as D
    counts = dict.fromkeys(("articulated", "krylov", "gmres", "dense", "checked"), 0)
    run, q = D._NewtonSolve((0.0, 1.0, 1.0, 1.0)), np.zeros(4)
    for k, (norm, c) in enumerate(zip(norms, contractions)):
        f = D._WatchedFactor(run, q, _Schur(norm), lambda c=c: _Full(c), counts)
        f.solve(np.ones(4))
        q = f.at
        if run.full:
            return k, counts
    return None, counts


def test_the_switch_rule_on_fake_factors():
    """The GMRES switch of the recursive route (relative/dae.py): increments that shrink
    by 0.1 never switch; a poor ratio (0.9) with the factor's own contraction 0.1 stays
    modified (the nonlinearity's); one good measure does not vouch for later factors
    whose own contraction is 0.9 (they switch at the first, measured again); after a good
    measure an increment that does not shrink at all switches without a measure."""
    k, counts = _switch(0.1 ** np.arange(8), [0.9] * 8)
    assert k is None and counts["checked"] == 0
    k, counts = _switch(0.9 ** np.arange(12), [0.1] * 12)
    assert k is None and counts["checked"] == 11
    k, counts = _switch(0.9 ** np.arange(12), [0.1, 0.1, 0.1, 0.9] + [0.9] * 8)
    assert k == 3 and counts["checked"] == 3
    k, counts = _switch([1.0, 0.9, 0.95], [0.1, 0.1, 0.1])
    assert k == 2 and counts["checked"] == 1
