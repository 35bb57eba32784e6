"""A trajectory with geometric stiffening in the pair form of ``K3`` (the compiled kernels,
``K3 : q q q = 1/2 sum_a q_a [H_p pi(q)]_(a,k)``) against the same model whose elastic
force and tangent use the full ``n_q^4`` tensor ``K3`` (second formulation: the numpy
reference kernels with ``reduction.stiffening.h_e`` / ``h_e_tangent`` in place of the
pair form).
"""
from __future__ import annotations

import numpy as np
from flexcases import pendulum_cb

import flexmbs as fm
import flexmbs.compiled
from flexmbs.bodies import ffrf_reference
from flexmbs.reduction import h_e, h_e_tangent

T_END, DT = 0.15, 1e-3


def _swing(rb, stiffening=True):
    """The soft pendulum rod pinned at its end, released horizontally under gravity."""
    rod = fm.FlexibleBody("rod", rb, stiffening=stiffening)
    model = fm.System(gravity=(0.0, -9.81, 0.0))
    model.add(rod, fm.Revolute("pin", fm.ground, rod["pin"], axis="z"))
    return fm.simulate(model, T_END, DT, rho_inf=0.9).body_q("rod")


def test_trajectory_agrees_with_full_tensor(monkeypatch):
    """Pendulum rod 1 x 0.02 x 0.02 m, E = steel / 10, 5 modes, K2/K3 on, 150 steps of
    1 ms: the coordinates of the pair form (compiled) and of the full tensor (reference
    kernels) agree to 1e-11 (frame coordinates in m and Euler parameters; elastic ones
    relative to their largest value; measured 4.7e-14), while leaving out the stiffening
    changes the elastic ones by more than 1e-3 (measured 0.85)."""
    rb = pendulum_cb(5, 0.1)
    K3 = np.array(rb.K3)
    n = K3.shape[0]
    assert K3.shape == (n,) * 4 and n == 5
    q_pair = _swing(rb)
    Z2, Z1 = np.zeros((n, n, n)), np.zeros((n, n))
    calls = {"force": 0, "tangent": 0}

    def full(H_p, q):
        assert H_p.shape == (n * (n + 1) // 2,) * 2
        calls["force"] += 1
        return h_e(Z1, Z2, K3, q)

    def full_tangent(H_p, q):
        assert H_p.shape == (n * (n + 1) // 2,) * 2
        calls["tangent"] += 1
        return h_e_tangent(Z1, Z2, K3, q)

    monkeypatch.setattr(flexmbs.compiled, "KERNELS", "reference")
    monkeypatch.setattr(ffrf_reference, "h3_pairs", full)
    monkeypatch.setattr(ffrf_reference, "h3_pairs_tangent", full_tangent)
    q_full = _swing(rb)
    monkeypatch.undo()
    assert calls["force"] >= 150 and calls["tangent"] >= 1     # the full tensor ran
    q_lin = _swing(rb, stiffening=False)
    # the frame coordinates (m, Euler parameters) against 1, the elastic ones against
    # their largest value
    scale = np.r_[np.ones(7), np.full(n, np.abs(q_pair[:, 7:]).max())]
    err = (np.abs(q_pair - q_full) / scale).max()
    change = (np.abs(q_pair - q_lin) / scale)[:, 7:].max()
    assert err <= 1e-11
    assert change >= 1e-3
