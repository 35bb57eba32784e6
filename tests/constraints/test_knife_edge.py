"""Chaplygin sleigh (THEORY §4): a rigid body on the plane z = 0 with a knife edge at
``P``, a distance ``a`` behind its centre of mass ``G`` on the blade.

With ``v`` the forward velocity of ``P`` along the blade and ``omega`` the turning rate,
the equations of motion are (Bloch, *Nonholonomic mechanics and control*, §1.7)

    vd = a omega^2,     omega_d = -m a v omega / (I + m a^2),

with the energy ``E = m v^2 / 2 + (I + m a^2) omega^2 / 2``; eliminating ``omega``,
``vd = a m (v_inf^2 - v^2) / (I + m a^2)``, ``v_inf = sqrt(2 E / m)``, so

    v(t) = v_inf tanh(k t + atanh(v_0 / v_inf)),    k = a m v_inf / (I + m a^2):

the sleigh ends up moving straight along its blade at ``v_inf``, ``omega -> 0``.  The
runner's lateral force (Newton-Euler in the body frame: ``m (a omega_d + v omega) = F``)
is ``F = m I v omega / (I + m a^2)`` along the body y axis.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.constraints.velocity import angular_velocity, rotation

MASS, INERTIA, A_GP = 1.5, 0.02, 0.2
V0, W0 = 0.1, 2.0


def sleigh(runner: str = "knife_edge"):
    """The sleigh; the runner as the ready-made knife edge or as a user callback."""
    body = fm.RigidBody("sleigh", MASS, np.diag([INERTIA] * 3), v0=(V0, A_GP * W0, 0.0),
                        omega0=(0.0, 0.0, W0))
    model = fm.System(gravity=(0.0, 0.0, -9.81), name="sleigh")
    model.add(body, fm.Planar("on_plane", fm.ground, body, at=(0.0, 0.0, 0.0), axis="z"))
    if runner == "knife_edge":
        model.add(fm.KnifeEdge("runner", plane=fm.ground.marker("floor"),
                               edge=body.marker("P", s=(-A_GP, 0.0, 0.0))))
    else:
        def A(q, t):
            """Sideways velocity of P = G - a x_B: n_B . (rd - a omega x x_B) with
            n_B = Z x x_B; omega = 2 G(e) ed (written out with rotation())."""
            e = q[3:7]
            x_B = rotation(e)[:, 0]
            n_B = np.array([-x_B[1], x_B[0], 0.0])
            e0, e1, e2, e3 = e
            G = np.array([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]])
            # n_B . (omega x (-a x_B)) = -a omega . (x_B x n_B) = -a omega . Z
            return np.concatenate([n_B, -A_GP * 2.0 * G[2]])[None, :]

        model.add(fm.UserVelocityConstraint("runner", bodies=(body,), A=A,
                                            labels=("no side slip",)))
    return model


def forward_speed(res) -> np.ndarray:
    x_B = np.array([rotation(e)[:, 0] for e in res.q[:, 3:7]])
    return np.einsum("ij,ij->i", res.qd[:, :3], x_B)


def closed_form(t) -> np.ndarray:
    E = 0.5 * MASS * V0**2 + 0.5 * (INERTIA + MASS * A_GP**2) * W0**2
    v_inf = np.sqrt(2.0 * E / MASS)
    k = A_GP * MASS * v_inf / (INERTIA + MASS * A_GP**2)
    return v_inf * np.tanh(k * t + np.arctanh(V0 / v_inf))


def test_sleigh_follows_closed_form_and_holds_constraint():
    model = sleigh()
    res = fm.simulate(model, t_end=6.0, dt=1e-2, rho_inf=0.9)
    v_ref = closed_form(res.t)
    assert np.abs(forward_speed(res) - v_ref).max() < 3e-5
    # asymptotic motion: straight along the blade at v_inf, no turning
    assert forward_speed(res)[-1] == pytest.approx(closed_form(1e3), rel=1e-5)
    assert abs(res.qd[-1, 3:7] @ res.qd[-1, 3:7]) < 1e-4 * W0**2
    asm = model.assemble()
    c = [asm.velocity_constraint(q, qd, t) for t, q, qd in zip(res.t, res.q, res.qd)]
    assert np.abs(c).max() < 1e-10
    # the reaction: lateral force from the multiplier against the Newton-Euler closed form
    # (exact in the consistent start; the index-3 multipliers carry 2.3e-3 at h = 10 ms)
    F = res.reactions["runner"]
    y_B = np.array([rotation(e)[:, 1] for e in res.q[:, 3:7]])
    omega = np.array([angular_velocity(q[3:7], qd[3:7])[2] for q, qd in zip(res.q, res.qd)])
    F_ref = MASS * INERTIA * forward_speed(res) * omega / (INERTIA + MASS * A_GP**2)
    F_lat = np.einsum("ij,ij->i", F[:, :3], y_B)
    assert abs(F_lat[0] - F_ref[0]) < 1e-10
    assert np.abs(F_lat - F_ref).max() < 5e-3 * np.abs(F_ref).max()
    assert np.abs(F[:, 2]).max() < 1e-12 and np.abs(F[:, 3:]).max() < 1e-12   # at the edge


def test_sleigh_converges_at_second_order():
    """The error against the closed form falls by ~4 when dt halves."""
    errs = []
    for dt in (2e-2, 1e-2):
        res = fm.simulate(sleigh(), t_end=2.0, dt=dt, rho_inf=0.9)
        errs.append(np.abs(forward_speed(res) - closed_form(res.t)).max())
    assert np.log2(errs[0] / errs[1]) == pytest.approx(2.0, abs=0.3)


def test_user_callback_equals_knife_edge():
    """The same runner written as A(q) by hand (central differences for dA/dq) follows
    the ready-made knife edge (complex-step derivatives)."""
    a = fm.simulate(sleigh(), t_end=1.0, dt=1e-2, rho_inf=0.9)
    b = fm.simulate(sleigh("user"), t_end=1.0, dt=1e-2, rho_inf=0.9)
    assert np.abs(a.q - b.q).max() < 1e-8
    assert np.abs(a.lam - b.lam).max() < 1e-6 * np.abs(a.lam).max()


@pytest.mark.slow
def test_petsc_ts_agrees_with_closed_form():
    """The second scheme (GGL index-2 form on PETSc TS, BDF2) holds the knife edge too:
    to round-off at its steps, to the interpolation error between them."""
    model = sleigh()
    res = fm.simulate(model, t_end=0.5, dt=1e-3, method="ts", rtol=1e-8, atol=1e-10)
    assert np.abs(forward_speed(res) - closed_form(res.t)).max() < 1e-4
    asm = model.assemble()
    c = [asm.velocity_constraint(q, qd, t) for t, q, qd in zip(res.t, res.q, res.qd)]
    assert np.abs(c).max() < 1e-10
