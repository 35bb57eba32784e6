"""Generalized-α: convergence order, energy, numerical damping (THEORY §8.2)."""
import numpy as np
import pytest
from int_models import Oscillator, Pendulum, PendulumAngle
from scipy.integrate import solve_ivp

from flexmbs.integrate import GeneralizedAlpha, integrate
from flexmbs.integrate.genalpha import State


def slope(hs, errs):
    return np.polyfit(np.log(hs), np.log(errs), 1)[0]


def test_order_linear_oscillator():
    """Exact solution q = q0 cos(wt) + (qd0/w) sin(wt) of m qdd + k q = 0; slope 2
    (Chung & Hulbert 1993: second order for all rho_inf)."""
    w = 2.0 * np.pi
    dae = Oscillator([[1.0]], [[w * w]])
    q0, qd0, t_end = 1.0, 0.5, 1.0
    hs = [1 / 20, 1 / 40, 1 / 80, 1 / 160]
    errs = []
    for h in hs:
        tr = integrate(dae, [q0], [qd0], t_end, h=h, rho_inf=0.9)
        exact = q0 * np.cos(w * tr.t) + qd0 / w * np.sin(w * tr.t)
        errs.append(np.max(np.abs(tr.q[:, 0] - exact)))
    assert abs(slope(hs, errs) - 2.0) < 0.2, errs


def pendulum_reference(theta0, t):
    """Second formulation: minimal coordinate theta'' = -g/L sin(theta), tension
    T = m (g cos(theta) + L theta'^2) = 2 L lam, by scipy DOP853 at rtol 1e-13."""
    sol = solve_ivp(lambda _t, y: [y[1], -9.81 * np.sin(y[0])], [0, max(t)], [theta0, 0.0],
                    method="DOP853", rtol=1e-13, atol=1e-13, dense_output=True)
    th, om = sol.sol(t)
    q = np.stack([np.sin(th), -np.cos(th)], axis=-1)
    lam = (9.81 * np.cos(th) + om ** 2) / 2.0
    return q, lam


def test_order_pendulum_q_and_lambda():
    """Arnold & Brüls (2007): order 2 in q and lam with consistent initial accelerations."""
    theta0 = 1.0
    dae = Pendulum()
    hs = [0.01, 0.005, 0.0025, 0.00125]
    outs = [0.25, 0.5, 0.75, 1.0]
    q_ref, lam_ref = pendulum_reference(theta0, np.array(outs))
    eq, el = [], []
    for h in hs:
        tr = integrate(dae, [np.sin(theta0), -np.cos(theta0)], [0.0, 0.0], 1.0, h=h,
                       output_times=outs)
        np.testing.assert_allclose(tr.t, outs)
        eq.append(np.max(np.abs(tr.q - q_ref)))
        el.append(np.max(np.abs(tr.lam[:, 0] - lam_ref)))
    sq, sl = slope(hs, eq), slope(hs, el)
    print(f"pendulum slopes: q {sq:.3f}, lam {sl:.3f}; errors q {eq}, lam {el}")
    assert abs(sq - 2.0) < 0.2
    assert abs(sl - 2.0) < 0.2


def test_energy_bounded_rho_one():
    """Undamped pendulum at rho_inf = 1: T + V has a bounded oscillation and no trend
    over ~23 periods (conservation law).  Minimal-coordinate form: in the Cartesian
    index-3 form rho_inf = 1 puts the spurious root -rho_inf of the multiplier recursion
    on the unit circle (Arnold & Brüls 2007 need rho_inf < 1) and lam drifts; see the
    damped Cartesian check below."""
    dae = PendulumAngle()
    theta0 = 1.0
    tr = integrate(dae, [theta0], [0.0], 50.0, h=0.02, rho_inf=1.0)
    E = np.array([dae.energy(q, qd) for q, qd in zip(tr.q, tr.qd)])
    E0 = dae.energy([theta0], [0.0])
    dev = (E - E0) / abs(E0)
    trend = np.polyfit(tr.t, dev, 1)[0] * tr.t[-1]
    print(f"energy rho_inf=1: max rel deviation {np.max(np.abs(dev)):.2e}, trend {trend:.2e}")
    assert np.max(np.abs(dev)) < 2e-3
    assert abs(trend) < 1e-4
    # the damped scheme, in contrast, loses energy (sanity check of the measure)
    tr6 = integrate(dae, [theta0], [0.0], 50.0, h=0.02, rho_inf=0.6)
    E6 = dae.energy(tr6.q[-1], tr6.qd[-1])
    assert (E6 - E0) / abs(E0) < -10 * abs(trend)


def test_energy_cartesian_pendulum_damped():
    """Cartesian index-3 pendulum at rho_inf = 0.9: energy decays monotonically-ish and
    slowly (numerical dissipation O(h^3 omega^4)), constraint satisfied to Newton tol."""
    dae = Pendulum()
    tr = integrate(dae, [np.sin(1.0), -np.cos(1.0)], [0.0, 0.0], 20.0, h=0.02, rho_inf=0.9,
                   project_velocity=True)
    E = np.array([dae.energy(q, qd) for q, qd in zip(tr.q, tr.qd)])
    dev = (E - E[0]) / abs(E[0])
    print(f"energy Cartesian rho_inf=0.9 over 20 s: {dev[-1]:.2e}")
    assert -5e-2 < dev[-1] <= 1e-6
    assert np.max(np.abs(np.sum(tr.q ** 2, axis=1) - 1.0)) < 1e-9


def amplification_matrix(ga, omega, h):
    """One step of the linear 1-DOF oscillator is linear in (q, qd, a); columns from the
    unit states, with qdd = -omega^2 q (equilibrium at t_n)."""
    cols = []
    for e in np.eye(3):
        s = State(0.0, e[:1].copy(), e[1:2].copy(), -omega ** 2 * e[:1], e[2:].copy(),
                  np.zeros(0))
        s1, _, _ = ga.step(s, h)
        cols.append([s1.q[0], s1.qd[0], s1.a[0]])
    return np.array(cols).T


@pytest.mark.parametrize("rho_inf", [0.0, 0.5, 0.8])
def test_high_frequency_damping(rho_inf):
    """Chung & Hulbert (1993): spectral radius -> rho_inf for h omega -> inf, so the stiff
    mode is scaled by rho_inf^N after N steps; the low mode (h omega = 0.063) keeps
    |eig| = 1 - O((h omega)^4).  At infinity the root -rho_inf is triple, so at finite
    h omega the eigenvalues split by O((h omega)^(-2/3)) ~ 2e-5 here."""
    h, N = 0.01, 20
    w_low, w_high = 2.0 * np.pi, 1e9  # h omega = 1e7
    dae = Oscillator(np.eye(2), np.diag([w_low ** 2, w_high ** 2]))
    ga = GeneralizedAlpha(Oscillator([[1.0]], [[w_high ** 2]]), rho_inf=rho_inf,
                          jacobian_reuse=False)
    rho_high = max(abs(np.linalg.eigvals(amplification_matrix(ga, w_high, h))))
    ga_low = GeneralizedAlpha(Oscillator([[1.0]], [[w_low ** 2]]), rho_inf=rho_inf)
    rho_low = max(abs(np.linalg.eigvals(amplification_matrix(ga_low, w_low, h))))
    print(f"rho_inf {rho_inf}: rho(A) high {rho_high:.6f}, low {rho_low:.8f}; after N = {N}: "
          f"{rho_high ** N:.3e} vs rho_inf^N {rho_inf ** N:.3e}")
    assert abs(rho_high - rho_inf) < 1e-4
    if rho_inf > 0:
        assert rho_high ** N == pytest.approx(rho_inf ** N, rel=1e-2)
    assert 1.0 - rho_low < 1e-4
    # the two-frequency system: stiff mode gone after N steps, the low mode preserved
    tr = integrate(dae, [1.0, 1.0], [0.0, 0.0], N * h, h=h, rho_inf=rho_inf)
    assert abs(tr.q[-1, 0] - np.cos(w_low * N * h)) < 2e-3
    if rho_inf < 1.0:  # Jordan block: |A^N| <= C N^2 rho^N
        assert abs(tr.q[-1, 1]) < 10 * N ** 2 * rho_inf ** N + 1e-6
    ga.destroy()
    ga_low.destroy()


def test_callback_stop_and_stats():
    dae = Pendulum()
    seen = []

    def cb(t, q, qd, qdd, lam, stats):
        seen.append((t, stats.steps, stats.newton_iterations))
        return t >= 0.5 - 1e-12

    tr = integrate(dae, [0.6, -0.8], [0.0, 0.0], 2.0, h=0.05, callback=cb)
    assert seen[0][:2] == (0.0, 0)
    assert seen[-1][0] == pytest.approx(0.5)
    assert [s[1] for s in seen] == list(range(len(seen)))
    assert tr.t.shape == (1,) and tr.t[0] == pytest.approx(0.5)  # callback consumed the states
    assert tr.stats.steps == 10 and tr.stats.jacobian_evaluations >= 1
    assert tr.stats.newton_iterations >= tr.stats.steps
    with pytest.raises(ValueError):
        tr.q[0, 0] = 1.0  # read-only


@pytest.mark.parametrize("gap", [1e-13, 5e-12])
def test_output_times_closer_than_the_tolerance_are_one_output(gap):
    """Two output times within the time tolerance (1e-9 h) of each other: one output, the
    run the same as with the single time (a step of 1e-13 s between them ended in a
    ConvergenceError: 1 / (beta h^2) near 1e26 in the Newton matrix)."""
    theta0 = 1.0
    q0 = [np.sin(theta0), -np.cos(theta0)]
    one = integrate(Pendulum(), q0, [0.0, 0.0], 0.5, h=0.01, output_times=[0.25, 0.5])
    two = integrate(Pendulum(), q0, [0.0, 0.0], 0.5, h=0.01,
                    output_times=[0.25, 0.25 + gap, 0.5])
    np.testing.assert_array_equal(two.t, one.t)
    np.testing.assert_array_equal(two.q, one.q)
    np.testing.assert_array_equal(two.lam, one.lam)


def test_output_times_just_beyond_the_tolerance_are_two_outputs():
    """1e-10 s apart (ten times the tolerance 1e-9 h): two outputs, a step of 1e-10 s
    between them, and the state there is the state at 0.25 to O(gap)."""
    theta0 = 1.0
    q0 = [np.sin(theta0), -np.cos(theta0)]
    tr = integrate(Pendulum(), q0, [0.0, 0.0], 0.5, h=0.01,
                   output_times=[0.25, 0.25 + 1e-10, 0.5])
    assert len(tr.t) == 3 and tr.t[1] - tr.t[0] > 5e-11
    assert np.abs(tr.q[1] - tr.q[0]).max() < 1e-9
