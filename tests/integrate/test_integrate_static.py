"""Static equilibrium of a hanging spring chain against the closed form."""
import numpy as np
import pytest
from int_models import HangingChain

from flexmbs.errors import ConvergenceError
from flexmbs.integrate import solve_static


def closed_form(ch):
    """Spring j carries the weight (N-1-j) m g: length l0 + (N-1-j) m g / k."""
    lengths = ch.l0 + (ch.N - 1 - np.arange(ch.N - 1)) * ch.m * ch.grav / ch.k
    y = -np.concatenate([[0.0], np.cumsum(lengths)])
    return np.stack([np.zeros(ch.N), y], axis=1).ravel()


@pytest.mark.parametrize("load_steps", [1, 4])
def test_hanging_chain(load_steps):
    ch = HangingChain(N=6)
    rng = np.random.default_rng(1)
    q0 = closed_form(HangingChain(N=6, grav=0.0)) + 0.2 * rng.standard_normal(12)
    sol = solve_static(ch, q0, load_steps=load_steps)
    np.testing.assert_allclose(sol.q, closed_form(ch), atol=1e-10)
    # reaction at the support carries the total weight: lam = (0, -N m g) (r = ... + G^T lam)
    np.testing.assert_allclose(sol.lam, [0.0, -ch.N * ch.m * ch.grav], atol=1e-8)
    assert sol.stats.newton_iterations >= load_steps


def test_static_failure_reports_load_step():
    ch = HangingChain(N=6)
    q0 = closed_form(HangingChain(N=6, grav=0.0)) + 0.3
    with pytest.raises(ConvergenceError, match="load step 1 of 2"):
        solve_static(ch, q0, load_steps=2, petsc_options={"snes_max_it": 1})
