"""A constrained body spinning fast: generalized-α's spurious multiplier mode (root
``-rho_inf`` of the index-3 recursion) grows when ``rho_inf (1 + Omega h) > 1``
(flexmbs.system.health).  Reference: the integrator itself on the heavy top of
``cases/heavy_top`` (spin 200 rad/s on a spherical joint): each run is warned before it
starts exactly when it then diverges (a failed Newton solve within t_end), and the runs
within the limit keep their energy (no damper, drive or external work) to 1e-4 of the
kinetic energy (what the numerical damping of rho_inf < 1 takes; a diverging run loses
all digits).
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


def test_the_spin_of_the_top(top):
    asm = top.assemble()
    name, Omega = health.fastest_spin(asm, asm.initial_q(), asm.initial_qd())
    # omega0 = spin 200 rad/s about the figure axis + precession about the vertical
    assert name == "top" and Omega == pytest.approx(
        np.linalg.norm([0.0, -99.31188331, 173.60236511]), rel=1e-9)


@pytest.mark.parametrize(("rho_inf", "dt", "t_end", "diverges"), [
    (0.9, 5e-4, 0.5, False), (0.9, 1e-3, 0.5, True),          # limit 5.6e-4 s
    (0.95, 1e-4, 0.5, False), (0.95, 5e-4, 0.5, True),        # limit 2.6e-4 s
    (0.99, 2.5e-5, 0.5, False), (0.99, 1e-4, 2.0, True),      # limit 5.1e-5 s
    (1.0, 2.5e-5, 0.5, True),                                 # no limit: any step
])
def test_warned_exactly_when_the_run_diverges(top, caplog, rho_inf, dt, t_end, diverges):
    with caplog.at_level(logging.WARNING, logger="flexmbs.simulate"):
        try:
            res = fm.simulate(top, t_end, dt, rho_inf=rho_inf, output_dt=0.01)
            failed = False
        except fm.ConvergenceError:
            failed = True
    warned = any("spurious multiplier mode grows" in r.getMessage() for r in caplog.records)
    assert (warned, failed) == (diverges, diverges)
    if not failed:
        E, T = res.energy["total"], res.energy["kinetic"]
        assert np.abs(E - E[0]).max() < 1e-4 * T.max()
