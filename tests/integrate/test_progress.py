"""``simulate(progress=...)``: called at a wall-time cadence (at least every
``PROGRESS_SECONDS`` of wall time, the compiled time loop's calls sized to it) and once
after the last step, not after every step; a true return value stops the run there with
the output steps so far kept.

References: the step count ``t_end / h`` of a fixed-step run, the wall clock around the
calls, and the unstopped run of the same model (its output rows, to the last bit).
"""
import time

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.integrate import genalpha
from flexmbs.io.results import read_results


def _pendulum():
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    return fm.System(gravity=(0, -9.81, 0)).add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))


def test_progress_is_called_at_a_wall_time_cadence_and_after_the_last_step():
    calls = []
    t_end, h = 4.0, 1e-4

    def progress(t, t_end_, stats):
        calls.append((t, time.perf_counter(), stats.steps))
        return False
    start = time.perf_counter()
    res = fm.simulate(_pendulum(), t_end, h, output_dt=0.1, progress=progress)
    wall = time.perf_counter() - start
    steps = round(t_end / h)
    assert res.stats.steps == steps
    t, clock, counted = (np.array(c) for c in zip(*calls))
    # far fewer calls than steps, in order, the last one after the last step, once
    assert 2 <= len(calls) < steps / 50
    assert np.all(np.diff(t) > 0) and np.all(np.diff(counted) > 0)
    assert t[-1] == t_end and counted[-1] == steps and np.sum(t == t_end) == 1
    # at the cadence: the typical gap is the cadence (the machine's load aside), and the
    # calls cover the run's wall time
    gaps = np.diff(np.concatenate([[start], clock]))
    P = genalpha.PROGRESS_SECONDS
    assert 0.25 * P <= np.median(gaps[:-1]) <= 4.0 * P
    assert len(calls) >= wall / (4.0 * P)


def test_cadence_zero_calls_progress_after_every_step(monkeypatch):
    monkeypatch.setattr(genalpha, "PROGRESS_SECONDS", 0.0)
    times = []
    res = fm.simulate(_pendulum(), 0.05, 1e-3, output_dt=0.01,
                      progress=lambda t, t_end, stats: times.append(t) or False)
    assert res.stats.steps == 50
    np.testing.assert_allclose(times, 1e-3 * np.arange(1, 51), rtol=0, atol=1e-12)
    assert len(res.t) == 6                      # t0 and the five output times


@pytest.mark.parametrize("output_dt", [0.01, None])
def test_progress_returning_true_stops_the_run_where_it_was_called(tmp_path, output_dt,
                                                                    monkeypatch):
    """Stopped at the third call: the rows so far are the unstopped run's, to the bit,
    up to the time the callback saw; the file says that time.  (A cadence of 2 ms: at
    the default 0.05 s the whole run, ~0.15 s on an idle machine, could end before the
    third call.)"""
    monkeypatch.setattr(genalpha, "PROGRESS_SECONDS", 0.002)
    t_end, h = 3.0, 1e-4
    full = fm.simulate(_pendulum(), t_end, h, output_dt=output_dt)
    seen = []

    def third(t, t_end_, stats):
        seen.append(t)
        return len(seen) == 3
    res = fm.simulate(_pendulum(), t_end, h, output_dt=output_dt, progress=third,
                      output=str(tmp_path / "p.h5"))
    t_stop = seen[-1]
    assert len(seen) == 3 and t_stop < t_end
    assert res.stats.steps == round(t_stop / h)
    n = len(res.t)
    assert res.t[-1] <= t_stop and full.t[n] > t_stop   # every output up to t_stop
    np.testing.assert_array_equal(res.t, full.t[:n])
    np.testing.assert_array_equal(res.q, full.q[:n])
    np.testing.assert_array_equal(res.qd, full.qd[:n])
    data = read_results(res.path)
    assert data["attrs"]["status"] == "interrupted"
    assert data["attrs"]["message"] == \
        f"stopped by the progress callback at t = {t_stop:.6g} s"


def test_step_callback_of_the_integrator_is_still_called_after_every_step():
    """``GeneralizedAlpha.run``'s ``step_callback`` keeps its contract (every step); its
    ``progress_callback`` (cadence 0: a compiled call per step) changes no bit of the
    final state of the run without either."""
    asm = _pendulum().assemble()
    init = fm.integrate.consistent_initial_conditions(asm, asm.initial_q(),
                                                      asm.initial_qd(), 0.0)

    def run(**kw):
        integ = genalpha.GeneralizedAlpha(asm, rho_inf=0.9)
        try:
            integ.run(init.q, init.qd, init.qdd, init.lam, 0.0, 0.2, h=1e-3,
                      output_times=[0.1], store=False, **kw)
            return integ.final_state
        finally:
            integ.destroy()
    times = []
    every = run(step_callback=lambda t, stats: times.append(t) or False)
    np.testing.assert_allclose(times, 1e-3 * np.arange(1, 201), rtol=0, atol=1e-12)
    plain = run()
    mp = pytest.MonkeyPatch()
    mp.setattr(genalpha, "PROGRESS_SECONDS", 0.0)
    calls = []
    try:
        paced = run(progress_callback=lambda t, stats: calls.append(t) or False)
    finally:
        mp.undo()
    assert len(calls) == 200
    for s in (every, paced):
        assert s.t == plain.t
        np.testing.assert_array_equal(s.q, plain.q)
        np.testing.assert_array_equal(s.qd, plain.qd)
