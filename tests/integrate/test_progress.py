"""``simulate(progress=...)``: called once after every step (the CLI's progress bar), and
a true return value stops the run with the output steps so far kept.

Reference: the step count ``t_end / h`` of a fixed-step run, and the stop step.
"""
import numpy as np

import flexmbs as fm


def _pendulum():
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    return fm.System(gravity=(0, -9.81, 0)).add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))


def test_progress_is_called_after_every_step():
    times = []
    res = fm.simulate(_pendulum(), 0.05, 1e-3, output_dt=0.01,
                      progress=lambda t, t_end, stats: times.append(t) or False)
    assert res.stats.steps == 50
    assert len(times) == 50
    np.testing.assert_allclose(times, 1e-3 * np.arange(1, 51), rtol=0, atol=1e-12)
    assert len(res.t) == 6                      # t0 and the five output times


def test_progress_returning_true_stops_the_run():
    res = fm.simulate(_pendulum(), 0.05, 1e-3, output_dt=0.01,
                      progress=lambda t, t_end, stats: t >= 0.02 - 1e-12)
    assert res.stats.steps == 20
    np.testing.assert_allclose(res.t, [0.0, 0.01, 0.02], rtol=0, atol=1e-12)


def test_long_run_estimate_is_shown_once():
    """After ESTIMATE_AFTER seconds a run whose projected wall time exceeds LONG_RUN says
    so once: projected = elapsed * (t_end - t0) / (t - t0)."""
    import io

    from flexmbs.cli.run import ProgressBar
    from flexmbs.integrate.trajectory import Stats

    out = io.StringIO()
    bar = ProgressBar(0.0, 100.0, stream=out)
    bar.start -= 3.0                     # 3 s elapsed at t = 1 s of 100 s: about 300 s
    bar(1.0, 100.0, Stats(steps=1000))
    bar(2.0, 100.0, Stats(steps=2000))
    text = out.getvalue()
    assert text.count("estimated run time") == 1 and "about 1e+05 steps" in text
    assert "estimated run time 5 min" in text
    quick = io.StringIO()
    bar = ProgressBar(0.0, 1.0, stream=quick)
    bar.start -= 3.0                     # 3 s at t = 0.5 of 1 s: 6 s in all, nothing said
    bar(0.5, 1.0, Stats(steps=10))
    assert "estimated" not in quick.getvalue()
