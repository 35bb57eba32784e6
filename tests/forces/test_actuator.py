"""Force elements with internal states: the linear actuator with a first-order lag
(flexmbs.forces.actuator, flexmbs.forces.states)."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.forces.actuator import LinearActuator
from flexmbs.kinematics.time_functions import Sine

from .statecheck import check_tangent, slope

M_KG, F_CMD, TAU = 2.0, 10.0, 0.05


def actuated_mass(command=F_CMD, F0=0.0):
    mass = fm.PointMass("m", M_KG, r0=(1.0, 0.0, 0.0))
    model = fm.System(gravity=(0.0, 0.0, 0.0))
    model.add(mass, LinearActuator("act", fm.ground.marker("o"), mass, command=command,
                                   tau=TAU, F0=F0))
    return model


def closed_form(t, F0=0.0):
    """``F = F_c + (F0 - F_c) e^{-t/tau}`` and ``x = 1 + (1/m) int int F`` (x(0) = 1 m,
    v(0) = 0)."""
    F = F_CMD + (F0 - F_CMD) * np.exp(-t / TAU)
    x = 1.0 + (F_CMD * t**2 / 2 + (F0 - F_CMD) * TAU * (t - TAU * (1 - np.exp(-t / TAU)))) / M_KG
    return F, x


def test_tangent_against_central_differences():
    check_tangent(actuated_mass(command=Sine(amplitude=3.0, omega=7.0)),
                  np.random.default_rng(0))


def test_initial_rate_is_consistent():
    """``Fd(0) = (F_c - F0) / tau`` and ``Fdd(0) = -Fd(0) / tau`` (the lag's derivatives)."""
    init = fm.simulate(actuated_mass(F0=4.0), t_end=1e-3, dt=1e-3).initial
    assert init.qd[3] == pytest.approx((F_CMD - 4.0) / TAU, rel=1e-12)
    assert init.qdd[3] == pytest.approx(-(F_CMD - 4.0) / TAU**2, rel=1e-6)
    assert init.qdd[0] == pytest.approx(4.0 / M_KG, rel=1e-12)


def test_lag_and_motion_converge_at_order_two():
    """Errors of ``F`` and ``x`` at t = 0.2 s against the closed form fall as dt^2
    (generalized-alpha, second order for the second- and first-order rows alike)."""
    dts = 0.2 / 2.0 ** np.arange(5, 9)
    eF, ex = [], []
    for dt in dts:
        r = fm.simulate(actuated_mass(F0=4.0), t_end=0.2, dt=dt)
        F, x = closed_form(r.t, F0=4.0)
        eF.append(np.abs(r.states("act")[:, 0] - F).max())
        ex.append(np.abs(r.q[:, 0] - x).max())
    assert slope(dts, eF) == pytest.approx(2.0, abs=0.1)
    assert slope(dts, ex) == pytest.approx(2.0, abs=0.1)
    assert eF[-1] < 1e-4 * F_CMD


def test_bad_time_constant_is_one_line():
    msg = r"LinearActuator 'act': time constant tau must be > 0 \[s\], got 0"
    with pytest.raises(fm.ModelError, match=msg):
        m = fm.System()
        mass = fm.PointMass("m", 1.0, r0=(1.0, 0.0, 0.0))
        m.add(mass, LinearActuator("act", fm.ground.marker("o"), mass, tau=0.0))
        m.assemble()


def test_static_equilibrium_puts_the_states_at_steady_state():
    """Static equilibrium solves ``f(z, q) = 0`` with the forces: the lag settles at
    ``F = F_cmd`` and a spring k against it at ``x = l0 + F_cmd / k`` (Hooke)."""
    b = fm.RigidBody("b", M_KG, np.eye(3) * 0.01, r0=(1.0, 0.0, 0.0))
    model = fm.System(gravity=(0.0, 0.0, 0.0))
    model.add(b, fm.Prismatic("guide", fm.ground, b, at=(1.0, 0.0, 0.0), axis="x"),
              LinearActuator("act", fm.ground.marker("o"), b, command=F_CMD, tau=TAU),
              fm.PointToPointSpringDamper("k", fm.ground.marker("o2"), b, k=100.0, l0=1.0))
    eq = fm.static_equilibrium(model)
    assert eq.q[0] == pytest.approx(1.0 + F_CMD / 100.0, rel=1e-10)
    assert eq.q[-1] == pytest.approx(F_CMD, rel=1e-10)
