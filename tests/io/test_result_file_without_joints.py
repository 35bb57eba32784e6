"""A model without joints (no multipliers: an empty row of ``lam``) writes its result file
and completes; it crashed with a traceback in the result writer (a chunk of zero width).
Reference: the closed-form oscillation of a point mass standing on a linear spring."""
import h5py
import numpy as np
import pytest

import flexmbs as fm

K, M, L0, G = 100.0, 1.0, 0.5, 9.81          # N/m, kg, m, m/s^2


def test_a_model_without_joints_writes_its_results(tmp_path):
    ball = fm.PointMass("ball", m=M, r0=(0.0, 0.6, 0.0))
    model = fm.System(gravity=(0.0, -G, 0.0), name="standing").add(
        ball, fm.PointToPointSpringDamper("spring", first=fm.ground, second=ball, k=K, l0=L0))
    res = fm.simulate(model, 1.0, 1e-3, output=str(tmp_path / "hanging"))
    # the mass stands on the spring from the origin: y(t) = y_eq + (y0 - y_eq) cos(omega t),
    # y_eq = l0 - m g / k, omega = sqrt(k / m)
    omega, y_eq = np.sqrt(K / M), L0 - M * G / K
    y = y_eq + (0.6 - y_eq) * np.cos(omega * res.t)
    assert res.q[:, 1] == pytest.approx(y, abs=2e-3 * (0.6 - y_eq))
    with h5py.File(res.path) as f:
        assert f.attrs["status"] == "complete"
        assert f["restart/lam"].shape == (len(res.t), 0)
        assert f["bodies/ball/q"][:, 1] == pytest.approx(res.q[:, 1], abs=0)
