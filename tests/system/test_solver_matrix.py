"""The default solver finishes every healthy model and says so when a model is not healthy.

Every cell runs with the default settings of ``flexmbs.simulate``.  References:
* the pendulum: the exact elliptic-function solution (Lawden 1989, §5.2) and the order 2
  of generalized-α (Arnold & Brüls 2007), fitted over halvings of ``dt``;
* the balanced disc: uniform rotation ``phi = omega t`` (no load), and its multipliers 0;
* the damped disc: ``I phi'' = -d phi'``, so ``phi(t) = omega0 tau (1 - exp(-t/tau))``,
  ``tau = I/d``;
* the closed hanging loop: conservation of ``T + V`` (no dissipation but the integrator's,
  O(dt^2) at rho_inf = 0.9) and its constraints;
* the toggle chain, conflicting drives and the unstiffened spin-up beam: the errors.
"""
import h5py
import numpy as np
import pytest
from trust_models import (
    conflicting_drives, disc, hanging_loop, pendulum, pendulum_angle, toggle_chain,
)

import flexmbs as fm
from flexmbs.errors import ModelError, SingularConfigurationError

THETA0 = np.deg2rad(60.0)


def _pendulum_error(h, rho_inf, t_end):
    model, rod = pendulum(THETA0)
    res = fm.simulate(model, t_end, h, rho_inf=rho_inf)
    assert res.t[-1] == pytest.approx(t_end)
    theta = THETA0 + res.joint_coordinates["pin"][-1, 0]
    return abs(theta - pendulum_angle(rod, THETA0, 1.0, t_end))


@pytest.mark.parametrize("rho_inf", [0.0, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("h", [1e-2, 1e-3, 1e-4, 1e-5])
def test_pendulum_cell_finishes(h, rho_inf):
    """Every (dt, rho_inf) cell finishes; the error is within the O(dt^2) bound measured
    on this pendulum (16 dt^2 at 0.5 s for rho_inf = 0, the largest) with a margin."""
    t_end = min(0.5, 2000 * h)
    err = _pendulum_error(h, rho_inf, t_end)
    assert err < 50.0 * h * h + 1e-8


@pytest.mark.parametrize("rho_inf", [0.0, 0.5, 0.9, 1.0])
def test_pendulum_order_two(rho_inf):
    """Order 2 under halving dt from 2e-3 s to 2.5e-4 s (errors 2e-5 ... 2e-7 rad; below
    that the default Newton tolerance, not the scheme, sets the error for rho_inf < 1:
    docs/solver.md).  At rho_inf = 1 down to 6.25e-5 s, where it used to stall at 1e-7
    rad: there the Newton solves are taken to round-off (GeneralizedAlpha.notes)."""
    hs = np.array([2e-3, 1e-3, 5e-4, 2.5e-4])
    if rho_inf == 1.0:
        hs = np.array([5e-4, 2.5e-4, 1.25e-4, 6.25e-5])
    errs = np.array([_pendulum_error(h, rho_inf, 0.5) for h in hs])
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert slope == pytest.approx(2.0, abs=0.2), errs


def test_pendulum_through_turning_points_for_10_s():
    """Released horizontally: the reaction vanishes at every turning point; 10 s at
    h = 5e-4 s, no step cut, and the angle on the exact solution."""
    model, rod = pendulum(np.pi / 2)
    res = fm.simulate(model, 10.0, 5e-4, output_dt=0.05)
    assert res.t[-1] == pytest.approx(10.0)
    assert res.stats.step_cuts == 0
    theta = np.pi / 2 + res.joint_coordinates["pin"][:, 0]
    exact = pendulum_angle(rod, np.pi / 2, 1.0, res.t)
    assert np.abs(theta - exact).max() < 2e-3


@pytest.mark.parametrize("omega", [0.0, 1e-3, 1e-2, 0.05, 0.1, 1.0, 10.0, 100.0, 1e3])
def test_balanced_disc(omega):
    """Uniform rotation: finishes without a cut, angle omega t (phase error of the scheme
    O((omega h)^2) per radian), zero reactions."""
    h = min(1e-3, 0.02 / omega) if omega else 1e-3
    t_end = 200 * h
    model, _ = disc(omega)
    res = fm.simulate(model, t_end, h)
    assert res.t[-1] == pytest.approx(t_end) and res.stats.step_cuts == 0
    phi = res.joint_coordinates["axle"][-1, 0]            # (wrapped to (-pi, pi])
    miss = np.angle(np.exp(1j * (phi - omega * t_end)))
    assert abs(miss) <= 1e-9 + (omega * h) ** 2 * omega * t_end
    assert np.abs(res.reactions["axle"]).max() < 1e-6


@pytest.mark.parametrize("h", [1.2e-3, 1e-2])
@pytest.mark.parametrize("omega", [0.05, 1.0])
def test_balanced_disc_seen_failing(omega, h):
    """The cells reported failing at step 1 with a residual at round-off."""
    model, _ = disc(omega)
    res = fm.simulate(model, 50 * h, h)
    assert res.joint_coordinates["axle"][-1, 0] == pytest.approx(omega * 50 * h, rel=1e-3)


def test_damped_disc_comes_to_rest():
    """tau = I/d = 0.1 s, run to 20 tau: the angle on omega0 tau (1 - exp(-t/tau))."""
    model, body = disc(1.0, damping=0.0)
    I = body.I_S[2, 2]
    model, body = disc(1.0, damping=I / 0.1)
    res = fm.simulate(model, 2.0, 1e-3)
    phi = res.joint_coordinates["axle"][:, 0]
    exact = 0.1 * (1.0 - np.exp(-res.t / 0.1))
    assert res.t[-1] == pytest.approx(2.0)
    assert np.abs(phi - exact).max() < 1e-5


@pytest.mark.parametrize("h", [2e-5, 1e-5, 5e-6])
def test_closed_loop_from_rest(h):
    """Seven bars in a closed loop, released from rest: runs (reported failing at step 2
    for these dt), keeps its constraints and T + V (no dissipation at this resolution)."""
    model, _ = hanging_loop()
    res = fm.simulate(model, 200 * h, h)
    assert res.t[-1] == pytest.approx(200 * h)
    E = res.energy["total"]
    T = res.energy["kinetic"]
    assert np.abs(E - E[0]).max() < 1e-6 * max(T.max(), 1e-3)
    asm = model.assemble()
    assert np.abs(asm.constraint(res.q[-1], res.t[-1])).max() < 1e-10


def test_closed_loop_longer_run_conserves_energy():
    """0.3 s of free swinging at dt = 1e-3 s: T + V within 1e-3 of the kinetic energy."""
    model, _ = hanging_loop()
    res = fm.simulate(model, 0.3, 1e-3)
    E, T = res.energy["total"], res.energy["kinetic"]
    assert T.max() > 0.05 and np.abs(E - E[0]).max() < 1e-3 * T.max()


def test_toggle_chain_stops_with_a_clear_error(tmp_path):
    """Rows dropped at a singular start position come apart: one error naming the joint
    and the time; the result file keeps the steps with status 'failed'."""
    out = tmp_path / "toggle.h5"
    with pytest.raises(SingularConfigurationError) as info:
        fm.simulate(toggle_chain(), 1.0, 1e-3, output=str(out))
    msg = str(info.value)
    assert "joint 'C'" in msg and "redundant" in msg and "t = " in msg
    assert info.value.t is not None and 0.0 < info.value.t < 0.1
    with h5py.File(tmp_path / "toggle.failed.h5") as f:   # docs/errors.md: file names
        assert f.attrs["status"] == "failed" and len(f["time"]) > 1


def test_conflicting_drives_are_an_error():
    with pytest.raises(ModelError) as info:
        fm.simulate(conflicting_drives(), 0.1, 1e-3)
    msg = str(info.value)
    assert "drive 'fast'" in msg and "drive 'slow'" in msg and "contradicts" in msg


def test_redundant_rows_of_a_planar_loop_are_not_an_error():
    """The closed loop's out-of-plane rows are truly redundant: dropped, no error."""
    model, _ = hanging_loop()
    res = fm.simulate(model, 0.01, 1e-3)
    assert len(res.dof.redundant) == 3 and res.dof.mobility == 5
