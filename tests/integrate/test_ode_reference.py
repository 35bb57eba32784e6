"""The index-1 ODE reference of a DAE (:mod:`flexmbs.integrate.ode_reference`) on the
Cartesian pendulum, against closed forms: its period ``4 K(k) sqrt(L / g)``
(``k = sin(theta0 / 2)``, ``K`` the complete elliptic integral of the first kind), the
tension at the turning point and at the bottom (``2 L lam = m (g cos(theta) + L
thetad^2)``, ``thetad^2 = 2 g (cos(theta) - cos(theta0)) / L``), and the energy."""
import numpy as np
from int_models import Pendulum
from scipy.special import ellipk

from flexmbs.integrate.ode_reference import ode_reference

THETA0 = 1.0
G = 9.81


def test_pendulum_period_tension_and_energy():
    dae = Pendulum()
    period = 4.0 * ellipk(np.sin(THETA0 / 2.0) ** 2) / np.sqrt(G)
    t = np.array([0.0, period / 4.0, period / 2.0, period])
    q0 = np.array([np.sin(THETA0), -np.cos(THETA0)])
    ref = ode_reference(dae, q0, np.zeros(2), t, rtol=1e-12, atol=1e-13)
    bottom = np.array([0.0, -1.0])
    turn = np.array([-np.sin(THETA0), -np.cos(THETA0)])
    err_q = max(np.abs(ref.q[1] - bottom).max(), np.abs(ref.q[2] - turn).max(),
                np.abs(ref.q[3] - q0).max())
    lam_turn = G * np.cos(THETA0) / 2.0
    lam_bottom = (G + 2.0 * G * (1.0 - np.cos(THETA0))) / 2.0
    err_lam = max(abs(ref.lam[0, 0] - lam_turn), abs(ref.lam[1, 0] - lam_bottom),
                  abs(ref.lam[2, 0] - lam_turn), abs(ref.lam[3, 0] - lam_turn))
    energy = np.array([dae.energy(q, qd) for q, qd in zip(ref.q, ref.qd)])
    print(f"positions {err_q:.1e}, tension {err_lam:.1e}, energy "
          f"{np.ptp(energy):.1e}, drift {ref.drift.max():.1e}, {ref.evaluations} evaluations")
    assert err_q < 1e-9 and err_lam < 1e-8
    assert np.ptp(energy) < 1e-10
    assert ref.drift.max() < 1e-10 and ref.drift[0] == 0.0


def test_tighter_tolerance_converges_and_projection_holds_the_constraints():
    """The error at the period falls as rtol tightens; with ``project`` the recorded
    states satisfy ``g = 0`` and ``G qd = 0`` to round-off."""
    dae = Pendulum()
    period = 4.0 * ellipk(np.sin(THETA0 / 2.0) ** 2) / np.sqrt(G)
    q0 = np.array([np.sin(THETA0), -np.cos(THETA0)])
    err = []
    for rtol in (1e-6, 1e-9, 1e-12):
        ref = ode_reference(dae, q0, np.zeros(2), [0.0, period], rtol=rtol,
                            atol=rtol / 10.0)
        err.append(np.abs(ref.q[-1] - q0).max())
    print("errors at the period:", err)
    assert err[0] > 100.0 * err[1] > 1e4 * err[2]
    ref = ode_reference(dae, q0, np.zeros(2), np.linspace(0.0, period, 5), rtol=1e-6,
                        atol=1e-7, project=True)
    assert ref.drift.max() > 1e-9                       # drifted before the projection
    g = [abs(dae.constraint(q, 0.0)[0]) for q in ref.q]
    gd = [abs(2.0 * q @ qd) for q, qd in zip(ref.q, ref.qd)]
    assert max(g) < 1e-12 and max(gd) < 1e-12
