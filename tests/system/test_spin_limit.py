"""A constrained body spinning fast: generalized-α's spurious multiplier mode (root
``-rho_inf`` of the index-3 recursion) grows when ``rho_inf (1 + Omega h) > 1``
(flexmbs.system.health).  Reference: the integrator itself on the heavy top of
``cases/heavy_top`` (spin 200 rad/s on a spherical joint): the raw scheme diverges (a
failed Newton solve within t_end) exactly when the step is above the limit, and
:func:`flexmbs.simulate`, which divides such a step, completes every run with its energy
(no damper, drive or external work) kept to 1e-4 of the kinetic energy (what the
numerical damping of rho_inf < 1 takes; a diverging run loses all digits).
"""
import logging
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.case import build, load_case
from flexmbs.system import health

CASE = Path(__file__).resolve().parents[2] / "cases" / "heavy_top" / "case.toml"


@pytest.fixture(scope="module")
def top():
    return build(load_case(CASE)).system


def test_the_limit_in_closed_form():
    assert health.spin_step_limit(0.9, 200.0) == pytest.approx(0.1 / 180.0)
    assert health.spin_step_limit(1.0, 200.0) == 0.0
    assert health.spin_step_limit(0.9, 0.0) == float("inf")
    assert health.spin_step_limit(0.0, 200.0) == float("inf")    # spurious root -rho_inf = 0


def test_rho_inf_zero_has_no_limit(top):
    """rho_inf = 0: the multipliers' spurious root is 0, so a step above the limit of
    rho_inf = 0.9 (5.6e-4 s) neither diverges nor is divided (a division by rho_inf ended
    this run in a ZeroDivisionError before)."""
    from flexmbs.integrate.genalpha import GeneralizedAlpha
    from flexmbs.simulate import prepare
    prep = prepare(top)
    s = prep.initial
    integ = GeneralizedAlpha(prep.asm, rho_inf=0.0)
    try:
        integ.run(s.q, s.qd, s.qdd, s.lam, 0.0, 0.5, h=1e-3, store=False)
    finally:
        integ.destroy()
    res = fm.simulate(top, 0.5, 1e-3, rho_inf=0.0, output_dt=0.01)
    assert res.t[-1] == pytest.approx(0.5)


def test_only_a_spin_axis_that_can_turn_counts(top):
    """A body on a spherical joint has 3 rotational freedoms; the crank of the flexible
    slider-crank (on a revolute, and driven: the drive's row takes the last one) has 0:
    its 150 rad/s at h = 1e-3 s, rho_inf = 0.9 (1.35
    times the limit) is no reason to divide the step."""
    import sys
    sys.path.insert(0, str(CASE.parents[2] / "benchmarks"))
    from run import build as benchmark_model
    from flexmbs.simulate import prepare, spin_step
    prep = prepare(top)
    s = prep.initial
    assert health.rotation_freedoms(prep.asm, s.q, 0.0, ["top"]) == {"top": 3}
    crank = prepare(benchmark_model("flexible_slider_crank_12"))
    c = crank.initial
    assert health.fastest_spin(crank.asm, c.q, c.qd) == ("crank", pytest.approx(150.0))
    assert health.rotation_freedoms(crank.asm, c.q, 0.0, ["crank"]) == {"crank": 0}
    assert spin_step(crank.asm, c.q, c.qd, 0.0, 0.9, 1e-3, False).dt == 1e-3


def test_the_spin_of_the_top(top):
    asm = top.assemble()
    name, Omega = health.fastest_spin(asm, asm.initial_q(), asm.initial_qd())
    # omega0 = spin 200 rad/s about the figure axis + precession about the vertical
    assert name == "top" and Omega == pytest.approx(
        np.linalg.norm([0.0, -99.31188331, 173.60236511]), rel=1e-9)


def _energy_kept(E, T):
    """No damper, drive or external work: E = T + V kept to what rho_inf < 1 damps."""
    return np.abs(E - E[0]).max() < 1e-4 * T.max()


#: (rho_inf, dt [s], t_end [s], above the limit): the scheme diverges exactly above it
RUNS = [
    (0.9, 5e-4, 0.5, False), (0.9, 1e-3, 0.5, True),          # limit 5.6e-4 s
    (0.95, 1e-4, 0.5, False), (0.95, 5e-4, 0.5, True),        # limit 2.6e-4 s
    (0.99, 2.5e-5, 0.5, False), (0.99, 1e-4, 2.0, True),      # limit 5.1e-5 s
]


@pytest.mark.parametrize(("rho_inf", "dt", "t_end", "above"), RUNS)
def test_the_scheme_diverges_exactly_above_the_limit(top, rho_inf, dt, t_end, above):
    """The raw integrator at the requested step: the evidence for the limit."""
    from flexmbs.integrate.genalpha import GeneralizedAlpha
    from flexmbs.simulate import prepare
    prep = prepare(top)
    s = prep.initial
    integ = GeneralizedAlpha(prep.asm, rho_inf=rho_inf)
    try:
        integ.run(s.q, s.qd, s.qdd, s.lam, 0.0, t_end, h=dt, store=False)
        diverged = False
    except fm.ConvergenceError:
        diverged = True
    finally:
        integ.destroy()
    assert diverged == above
    assert above == (dt > health.spin_step_limit(rho_inf, health.fastest_spin(
        prep.asm, s.q, s.qd)[1]))


@pytest.mark.parametrize(("rho_inf", "dt", "t_end", "above"), RUNS)
def test_simulate_completes_every_run(top, caplog, rho_inf, dt, t_end, above):
    """With its defaults, simulate divides a step above the limit and says so in one
    line; every run completes and keeps its energy."""
    with caplog.at_level(logging.WARNING, logger="flexmbs.simulate"):
        res = fm.simulate(top, t_end, dt, rho_inf=rho_inf, output_dt=0.01)
    noted = [r.getMessage() for r in caplog.records if "steps of" in r.getMessage()]
    assert len(noted) == int(above)
    assert res.t[-1] == pytest.approx(t_end, abs=1e-12)
    assert _energy_kept(res.energy["total"], res.energy["kinetic"])


def test_no_damping_is_warned_and_diverges(top, caplog):
    """rho_inf = 1 has no step limit: warned before the run, which then fails."""
    with caplog.at_level(logging.WARNING, logger="flexmbs.simulate"):
        with pytest.raises(fm.ConvergenceError):
            fm.simulate(top, 0.5, 2.5e-5, rho_inf=1.0, output_dt=0.01)
    assert any("grows at any dt" in r.getMessage() for r in caplog.records)


def test_an_adaptive_run_is_bounded_by_the_limit(top):
    """The adaptive step stays below 0.95 h_lim and the run completes; its energy error
    is the local error control's (rtol = 1e-4 here), not the growth of a diverging run."""
    res = fm.simulate(top, 0.5, 1e-3, rho_inf=0.9, adaptive=True, rtol=1e-4,
                      output_dt=0.01)
    h_lim = health.spin_step_limit(0.9, health.fastest_spin(
        res.extra["model"].assemble(), res.initial.q, res.initial.qd)[1])
    assert res.stats.steps >= 0.5 / (0.95 * h_lim)
    E, T = res.energy["total"], res.energy["kinetic"]
    assert np.abs(E - E[0]).max() < 1e-3 * T.max()
