"""The velocity products ``ahat_i = Jd_i betad`` of a flexible tree
(``flexible_kinematics.velocity_products``: the complex step ``Im(v_i(beta + i h betad)) / h``
of the twists along the motion).

References (independent of complex arithmetic):

* an eighth-order central difference of the real sweep's twists along the motion,
  ``sum_k c_k v_i(beta + k s betad) / s`` (k = -4..4), whose truncation is O(s^8) and
  round-off ~``eps / s``: at ``s |betad|_inf = 2e-3`` both are below 1e-12 of the twists'
  rates (on the first tree the difference at 1e-2, 3e-3, 1e-3 falls as s^8, 1.5e-8,
  1.1e-12, then 3e-13 at round-off): agreement to 1e-11 on random mixed rigid/flexible
  trees (every joint kind, deformation off the joint axes);
* the descriptor form of the same model (THEORY (2.79)): the tree's joints hold along
  every motion, so its acceleration rows ``G_b qdd_b + gamma_b = 0`` hold for
  ``qdd_b = T betadd + Td betad`` at any ``betadd``, ``betadd = 0`` included:
  ``G_b Td betad = -gamma_b`` to round-off (1e-13 of ``gamma_b``; the central difference
  this replaced met it to ~1e-10).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.relative.dae import RelativeDAE
from flexmbs.relative.flexible_kinematics import local_kinematics, twists, velocity_products
from flexmbs.simulate import prepare
from tests.relative.test_flexible_recursive import mixed_tree, random_state
from tests.relative.test_flexible_tree import in_plane_state, open_crank_chain, pendulum
from tests.relative.test_flexible_tree import rod  # noqa: F401  (fixture)

#: the weights of the eighth-order central first derivative at k = 1..4
C8 = np.array([4 / 5, -1 / 5, 4 / 105, -1 / 280])


def eighth_order(tree, beta, betad, s) -> list:
    """``dv_i/ds`` along ``beta + s betad`` by the eighth-order central difference."""
    out = None
    for k, c in enumerate(C8, start=1):
        vp = twists(tree, local_kinematics(tree, beta + k * s * betad), betad)
        vm = twists(tree, local_kinematics(tree, beta - k * s * betad), betad)
        terms = [c * (a - b) / s for a, b in zip(vp, vm, strict=True)]
        out = terms if out is None else [o + x for o, x in zip(out, terms, strict=True)]
    return out


@pytest.mark.parametrize(("seed", "n"), [(0, 4), (1, 6), (3, 8)])
def test_complex_step_equals_an_eighth_order_difference(rod, seed, n):  # noqa: F811
    dae = RelativeDAE(mixed_tree(rod, seed, n).validate(), "relative")
    assert dae.tree.flexible
    rng = np.random.default_rng(seed)
    for _ in range(2):
        beta, betad = random_state(dae, rng)
        ahat = velocity_products(dae.tree, beta, betad)
        assert all(a.dtype == float for a in ahat)
        ref = eighth_order(dae.tree, beta, betad, 2e-3 / np.abs(betad).max())
        scale = max(np.abs(r).max() for r in ref)
        err = max(np.abs(a - r).max() for a, r in zip(ahat, ref, strict=True)) / scale
        print(f"seed {seed}: complex step vs eighth-order difference {err:.1e}")
        assert err < 1e-11


def test_at_rest_the_products_vanish(rod):  # noqa: F811
    dae = RelativeDAE(mixed_tree(rod, 2, 5).validate(), "relative")
    beta, _ = random_state(dae, np.random.default_rng(2))
    assert all(not a.any() for a in velocity_products(dae.tree, beta, np.zeros(dae.n_q)))


@pytest.mark.parametrize("make", [pendulum, open_crank_chain])
def test_body_accelerations_hold_the_descriptor_acceleration_rows(rod, make):  # noqa: F811
    rng = np.random.default_rng(11)
    dae = RelativeDAE(make(rod).validate())
    asm = prepare(make(rod)).asm
    for _ in range(3):
        beta, betad = in_plane_state(dae, rng)
        q_b, qd_b, T, Tdbd = dae.absolute_coordinates(beta, betad)
        gamma = asm.constraint_rates(q_b, qd_b, 0.0)[1]
        G = asm.constraint_jacobian(q_b, 0.0)
        err = np.abs(G @ Tdbd + gamma).max() / np.abs(gamma).max()
        betadd = rng.normal(size=dae.n_q)
        G_T_betadd = G @ (T @ betadd)
        err_dd = np.abs(G_T_betadd + G @ Tdbd + gamma).max() / max(
            np.abs(gamma).max(), np.abs(G.toarray()).max() * np.abs(T @ betadd).max())
        print(f"{make.__name__}: |G Td betad + gamma| / |gamma| = {err:.1e}, {err_dd:.1e}")
        assert max(err, err_dd) < 1e-13
