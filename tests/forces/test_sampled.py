"""Sampled controllers with a zero-order hold (flexmbs.forces.sampled): the hold changes
exactly at the ticks, and the motion equals the exact discretisation of the loop."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.forces.sampled import CallbackController, DiscreteStateSpaceController
from flexmbs.sensors.translation import PositionSensor

M_KG, KP, KD, PERIOD, X_REF = 2.0, 50.0, 8.0, 0.0137, 0.1


def slider(controller):
    """A block on a prismatic joint along x, its position and velocity fed back."""
    block = fm.RigidBody("block", M_KG, np.eye(3) * 0.01)
    guide = fm.Prismatic("guide", fm.ground, block, at=(0.0, 0.0, 0.0), axis="x")
    pos = PositionSensor("pos", block)
    model = fm.System(gravity=(0.0, 0.0, 0.0))
    model.add(block, guide, pos, controller(guide, pos))
    return model


def exact_zoh(n, x0=0.0, v0=0.0):
    """``x_{k+1} = x_k + v_k T + u_k T^2 / (2 m)``, ``v_{k+1} = v_k + u_k T / m``,
    ``u_k = Kp (r - x_k)``: the motion under a force held over each period (exact)."""
    x, v, out = x0, v0, []
    for _ in range(n):
        u = KP * (X_REF - x)
        out.append((x, v, u))
        x, v = x + v * PERIOD + u * PERIOD**2 / (2 * M_KG), v + u * PERIOD / M_KG
    return np.array(out)


def run(controller, dt=0.005, t_end=0.2):
    return fm.simulate(slider(controller), t_end=t_end, dt=dt, rho_inf=1.0)


def test_hold_changes_exactly_at_the_ticks():
    """Steps land on every tick ``k T`` (T = 13.7 ms, dt = 5 ms: incommensurate); the held
    force is constant between ticks and takes ``Kp (r - x(t_k))`` at each."""
    r = run(lambda g, p: CallbackController("cb", joint=g, feeds=((p, 0),), period=PERIOD,
                                            function=lambda t, y: KP * (X_REF - y[0])))
    tk = PERIOD * np.arange(int(0.2 / PERIOD) + 1)
    i = np.array([np.argmin(np.abs(r.t - t)) for t in tk])
    np.testing.assert_allclose(r.t[i], tk, atol=1e-12)
    u = r.states("cb")[:, 0]
    changed = np.flatnonzero(np.diff(u) != 0.0) + 1
    assert set(changed) <= set(i)                    # changes only at ticks
    np.testing.assert_allclose(u[i], KP * (X_REF - r.q[i, 0]), rtol=1e-12)
    ref = exact_zoh(len(tk))
    np.testing.assert_allclose(r.q[i, 0], ref[:, 0], atol=1e-10)
    np.testing.assert_allclose(u[i], ref[:, 2], atol=1e-8)


def test_discrete_state_space_integrator_counts_the_error_sum():
    """``x_{k+1} = x_k + w_k`` (the sum of the sampled errors), ``u_k = Kp w_k``: with the
    exact loop above, ``x_k = sum_{j<k} (r - x_j)``."""
    r = run(lambda g, p: DiscreteStateSpaceController(
        "ss", joint=g, feeds=((p, 0),), period=PERIOD, references=(X_REF,),
        A_d=[[1.0]], B_d=[[1.0]], C_d=[[0.0]], D_d=[[KP]]))
    tk = PERIOD * np.arange(int(0.2 / PERIOD) + 1)
    i = np.array([np.argmin(np.abs(r.t - t)) for t in tk])
    ref = exact_zoh(len(tk))
    z = r.states("ss")
    np.testing.assert_allclose(r.q[i, 0], ref[:, 0], atol=1e-10)
    sums = np.cumsum(X_REF - ref[:, 0])
    np.testing.assert_allclose(z[i, 0], sums, atol=1e-9)


def test_callback_returning_nan_is_one_line():
    with pytest.raises(ValueError, match=r"CallbackController 'cb': function returned nan "
                                         r"at t = 0 s, expected a finite number"):
        run(lambda g, p: CallbackController("cb", joint=g, feeds=((p, 0),), period=PERIOD,
                                            function=lambda t, y: float("nan")))


def test_ts_integrator_is_refused_in_one_line():
    with pytest.raises(fm.ModelError, match=r"simulate: sampled controller 'cb' needs the "
                                              r"generalized-alpha integrator .* got method 'ts'"):
        fm.simulate(slider(lambda g, p: CallbackController(
            "cb", joint=g, feeds=((p, 0),), period=PERIOD, function=lambda t, y: 0.0)),
            t_end=0.01, dt=1e-3, method="ts")
