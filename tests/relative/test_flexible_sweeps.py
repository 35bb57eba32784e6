"""The shortcuts of the flexible sweeps (flexmbs/relative/flexible_kinematics.py)
against their references: the scalar elastic rotation against its matrix form, and the
sweep of only the bodies a coordinate moves against the full sweep (the same numbers,
and a full sweep's other bodies do not change with that coordinate)."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.relative.dae import RelativeDAE
from flexmbs.relative.flexible_kinematics import (
    elastic_rotation,
    elastic_rotation_reference,
    moved_bodies,
    poses_and_jacobians,
)
from tests.relative.test_flexible_tangent import closed_crank
from tests.relative.test_flexible_tree import in_plane_state, open_crank_chain, pendulum
from tests.relative.test_flexible_tree import rod as rod  # noqa: F401 (the fixture)


@pytest.mark.parametrize("second", [False, True])
def test_scalar_elastic_rotation_equals_its_matrix_form(second):
    rng = np.random.default_rng(3)
    for _ in range(200):
        a = rng.normal(size=3)
        a /= np.linalg.norm(a)
        theta = rng.normal(0.0, 0.3, 3)
        e, de = elastic_rotation(a, theta, second)
        e_ref, de_ref = elastic_rotation_reference(a, theta, second)
        assert np.allclose(e, e_ref, rtol=0.0, atol=1e-14)
        assert np.allclose(de, de_ref, rtol=0.0, atol=1e-14)


@pytest.mark.parametrize("make", [pendulum, open_crank_chain, closed_crank])
def test_sweep_of_the_moved_bodies_equals_the_full_sweep(rod, make):
    rng = np.random.default_rng(5)
    dae = RelativeDAE(make(rod).validate())
    beta = in_plane_state(dae, rng)[0]
    base = poses_and_jacobians(dae.tree, beta)
    for k in range(dae.n_q):
        x = beta.copy()
        x[k] += 1e-3
        moved = moved_bodies(dae.tree, k)
        full = poses_and_jacobians(dae.tree, x)
        part = poses_and_jacobians(dae.tree, x, moved, base)
        for i in range(dae.tree.n):
            for f, p, b in zip(full, part, base, strict=True):
                assert np.array_equal(f[i], p[i])
                if not moved[i]:                  # the full sweep: unchanged by x_k
                    assert np.array_equal(f[i], b[i])
