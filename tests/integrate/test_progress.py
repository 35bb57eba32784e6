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
