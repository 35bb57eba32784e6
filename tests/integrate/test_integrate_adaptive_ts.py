"""Adaptive generalized-α, and the PETSc TS (GGL, BDF) cross-check."""
import numpy as np
import pytest
from int_models import Oscillator, Pendulum, RotatingRail
from scipy.integrate import solve_ivp
from test_integrate_genalpha import pendulum_reference

from flexmbs.integrate import integrate

W = 2.0 * np.pi


def pulse(t):
    """A sudden load decaying within 10 ms: the fast transient at the start."""
    return np.array([2000.0 * np.exp(-t / 0.01)])


def test_adaptive_fewer_steps_for_fast_transient():
    """Oscillator hit by a force decaying in 10 ms; reference: scipy DOP853 at rtol 1e-12.
    The adaptive run meets the accuracy with fewer steps than a uniform one."""
    w = 1.0
    dae = Oscillator([[1.0]], [[w * w]], force=pulse)
    t_end = 2.0
    sol = solve_ivp(lambda t, y: [y[1], pulse(t)[0] - w * w * y[0]], [0, t_end], [0.0, 0.0],
                    method="DOP853", rtol=1e-12, atol=1e-12, first_step=1e-5)
    q_ref = sol.y[0, -1]
    amp = np.max(np.abs(sol.y[0]))
    ad = integrate(dae, [0.0], [0.0], t_end, h=1e-4, adaptive=True, rtol=1e-5, atol=1e-7)
    err_ad = abs(ad.q[-1, 0] - q_ref) / amp
    n_ad = ad.stats.steps
    # uniform steps: the same accuracy needs h resolving the transient everywhere
    fx = integrate(dae, [0.0], [0.0], t_end, h=t_end / (4 * n_ad))
    err_fx = abs(fx.q[-1, 0] - q_ref) / amp
    print(f"adaptive: {n_ad} steps ({ad.stats.rejected_steps} rejected), rel err {err_ad:.2e};"
          f" uniform with 4x as many steps: rel err {err_fx:.2e}")
    assert err_ad < 2e-3
    assert err_fx > 5 * err_ad
    dt = np.diff(ad.t)
    assert dt.min() < 0.1 * dt.max()  # small steps in the pulse, large ones elsewhere


@pytest.mark.parametrize("method", ["genalpha", "ts"])
def test_rotating_rail_rheonomic(method):
    """Mass on a rail rotating at Omega: r(t) = r0 cosh(Omega t) (closed form), uses g_t and
    gamma of the rheonomic constraint; qd0 = 0 is projected to (0, Omega r0)."""
    Om, r0, t_end = 1.0, 0.5, 1.0
    tr = integrate(RotatingRail(Omega=Om), [r0, 0.0], [0.0, 0.0], t_end, h=1e-3,
                   method=method, rtol=1e-8, atol=1e-10, output_times=[0.5, 1.0])
    for t, q in zip(tr.t, tr.q):
        r = r0 * np.cosh(Om * t)
        np.testing.assert_allclose(q, [r * np.cos(Om * t), r * np.sin(Om * t)], atol=2e-6)


def test_ts_against_genalpha_pendulum():
    """Two schemes (GGL/BDF on PETSc TS with its own steps, index-3 gen-α with fixed h)
    agree with each other and with the minimal-coordinate reference."""
    outs = [0.25, 0.5, 0.75, 1.0]
    q0 = [np.sin(1.0), -np.cos(1.0)]
    q_ref, lam_ref = pendulum_reference(1.0, np.array(outs))
    ts = integrate(Pendulum(), q0, [0.0, 0.0], 1.0, method="ts", h=1e-4, rtol=1e-8,
                   atol=1e-8, output_times=outs)
    ga = integrate(Pendulum(), q0, [0.0, 0.0], 1.0, h=1.25e-3, output_times=outs)
    np.testing.assert_allclose(ts.t, outs)
    d_q = np.max(np.abs(ts.q - ga.q))
    d_lam = np.max(np.abs(ts.lam - ga.lam))
    print(f"TS ({ts.stats.steps} steps) vs gen-alpha: |dq| {d_q:.2e}, |dlam| {d_lam:.2e}; "
          f"TS vs ref {np.max(np.abs(ts.q - q_ref)):.2e}")
    assert d_q < 2e-5
    assert d_lam < 2e-4
    assert np.max(np.abs(ts.q - q_ref)) < 2e-5
    assert np.max(np.abs(ts.lam[:, 0] - lam_ref)) < 2e-4
    # the GGL form keeps the velocity constraint exactly (to Newton tolerance)
    assert np.max(np.abs(np.sum(ts.q * ts.qd, axis=1))) < 1e-8
