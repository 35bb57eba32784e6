"""Rolling disc (THEORY §4, §7 items 18-25): a uniform disc rolling without slip on the
plane z = 0 (:class:`flexmbs.constraints.rolling.Rolling`), against closed forms.

With ``A`` (diametral) and ``C`` (axial) moments of inertia, mass ``m``, radius ``R``:

* steady motion: tilt ``theta`` (``Z . u = sin theta``, ``u`` the disc axis) and heading
  rate ``Omega`` constant when the axial angular velocity ``omega_u`` satisfies the
  angular-momentum balance about the centre (derived in docs/nonholonomic.md)

      A Omega^2 sin(theta) cos(theta) - (C + m R^2) Omega omega_u cos(theta)
          - m g R sin(theta) = 0;

* upright straight rolling at spin ``omega`` is stable exactly when
  ``omega^2 > A m g R / (C (C + m R^2))`` (``g / (3 R)`` for a uniform disc;
  Neimark & Fufaev, *Dynamics of nonholonomic systems*, ch. III);
* energy: the contact forces do no work, ``T + V`` is conserved;
* the contact point has no velocity.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.analysis import integrability
from flexmbs.constraints.velocity import angular_velocity, rotation

R, M, GRAV = 0.3, 2.0, 9.81
A_D, C_D = M * R * R / 4.0, M * R * R / 2.0
OMEGA_CRIT = np.sqrt(A_D * M * GRAV * R / (C_D * (C_D + M * R * R)))


def disc_model(theta: float, Omega: float, omega_u: float, omega_tilt: float = 0.0):
    """A disc touching the origin, travelling along x, tilt ``theta``, heading rate
    ``Omega``, axial angular velocity ``omega_u`` (and a small tilt rate to perturb)."""
    t = np.array([1.0, 0.0, 0.0])
    n_h, Z = np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0])
    u = np.cos(theta) * n_h + np.sin(theta) * Z
    k = np.cos(theta) * Z - np.sin(theta) * n_h
    R0 = np.column_stack([t, np.cross(u, t), u])
    omega = Omega * Z + (omega_u - Omega * np.sin(theta)) * u + omega_tilt * t
    disc = fm.RigidBody("disc", M, np.diag([A_D, A_D, C_D]), r0=R * k, R0=R0,
                        v0=R * omega_u * t, omega0=omega)
    model = fm.System(gravity=(0.0, 0.0, -GRAV), name="rolling_disc")
    model.add(disc, fm.Rolling("roll", plane=fm.ground.marker("floor"),
                               disc=disc.marker("centre"), radius=R))
    return model


def axis_height(res) -> np.ndarray:
    """``Z . u`` along the run (sine of the tilt)."""
    return np.array([rotation(e)[2, 2] for e in res.q[:, 3:7]])


def precession_rate(q, qd) -> float:
    """Turning rate of the horizontal part ``h`` of the axis ``u``: ``(h x hd) . Z /
    |h|^2`` with ``ud = omega x u``."""
    u = rotation(q[3:7])[:, 2]
    ud = np.cross(angular_velocity(q[3:7], qd[3:7]), u)
    h, hd = u[:2], ud[:2]
    return float((h[0] * hd[1] - h[1] * hd[0]) / (h @ h))


def steady_omega_u(theta: float, Omega: float) -> float:
    s, c = np.sin(theta), np.cos(theta)
    return (A_D * Omega**2 * s * c - M * GRAV * R * s) / ((C_D + M * R * R) * Omega * c)


def test_steady_circular_motion_stays_steady():
    theta, Omega = -0.4, 3.0
    w_u = steady_omega_u(theta, Omega)
    res = fm.simulate(disc_model(theta, Omega, w_u), t_end=1.0, dt=2e-3, rho_inf=0.9)
    drift = np.abs(axis_height(res) - np.sin(theta)).max()
    heading_rate = [precession_rate(q, qd) for q, qd in zip(res.q, res.qd)]
    assert drift < 1e-5
    assert np.abs(np.array(heading_rate) - Omega).max() < 1e-4 * Omega
    # off the condition (10 % more spin) the tilt changes: the check can fail
    res_off = fm.simulate(disc_model(theta, Omega, 1.1 * w_u), t_end=0.5, dt=2e-3,
                          rho_inf=0.9)
    assert np.abs(axis_height(res_off) - np.sin(theta)).max() > 100 * drift


@pytest.mark.slow
@pytest.mark.parametrize("factor, stays_up", [(1.15, True), (0.85, False)])
def test_upright_rolling_stability_limit(factor, stays_up):
    w = factor * OMEGA_CRIT
    res = fm.simulate(disc_model(0.0, 0.0, w, omega_tilt=0.02), t_end=3.0, dt=4e-3,
                      rho_inf=0.95)
    tilt = np.abs(axis_height(res)).max()
    if stays_up:
        assert tilt < 0.01          # bounded (5.1e-3 at 1.15 x the limit)
    else:
        assert tilt > 0.3           # falls over far (0.56 at 0.85 x the limit)


def test_energy_conserved_and_contact_point_at_rest():
    """Unsteady rolling (30 % off the steady spin): ``T + V`` changes only by the
    integrator's O(h^2) error (halving dt divides it by ~4), so the contact forces do no
    work; the contact point's velocity is zero."""
    model = disc_model(-0.4, 3.0, 1.3 * steady_omega_u(-0.4, 3.0))
    drift = []
    for dt in (4e-3, 2e-3):
        res = fm.simulate(model, t_end=0.6, dt=dt, rho_inf=1.0)
        E = res.energy["total"]
        drift.append(np.abs(E - E[0]).max() / abs(E[0]))
    assert drift[1] < 1e-5
    assert drift[0] / drift[1] > 3.0          # order 2: the drift is the integrator's
    asm = disc_model(0.0, 0.0, 0.0).assemble()
    c = np.array([asm.velocity_constraint(q, qd, t) for t, q, qd in zip(res.t, res.q, res.qd)])
    assert np.abs(c).max() < 1e-10
    # and its normal velocity: the contact row's rate
    gd = np.array([asm.constraint_jacobian(q, t) @ qd for t, q, qd in zip(res.t, res.q, res.qd)])
    assert np.abs(gd).max() < 1e-8


def test_contact_force_balances_gravity_when_rolling_straight():
    """Upright straight rolling: the contact carries the weight m g (normal contact
    joint) and no friction (rolling rows): exactly in the consistent start (index-1
    saddle system), to the integrator's multiplier error along the run."""
    res = fm.simulate(disc_model(0.0, 0.0, 2.0 * OMEGA_CRIT), t_end=0.05, dt=1e-3)
    roll = res.reactions["roll"]
    assert np.abs(roll[0]).max() < 1e-10 * M * GRAV
    assert np.abs(roll).max() < 1e-5 * M * GRAV
    f_contact = res.reactions["roll.contact"][:, :3]
    assert np.linalg.norm(f_contact, axis=1) == pytest.approx(M * GRAV, rel=1e-6)


def test_rolling_constraint_is_nonintegrable():
    """Frobenius on the disc's velocity rows (normalisation, normal contact, two rolling
    rows) at a tilted state: a bracket leaves the distribution, and the reachable set is
    5-dimensional (7 coordinates minus the two position constraints)."""
    asm = disc_model(-0.3, 1.0, 0.5).assemble()
    rep = integrability(asm.velocity_constraint_matrix, points=[asm.initial_q()])
    assert not rep.holonomic
    assert rep.reachable == 5
    assert any(b.leaves for b in rep.brackets)
