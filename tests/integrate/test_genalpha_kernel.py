"""The compiled predictor and update of a generalized-α step (``genalpha_kernel``)
against their numpy reference (``genalpha_reference``): the same formulas, so equal to
round-off."""
import numpy as np

from flexmbs.integrate import genalpha_kernel, genalpha_reference
from flexmbs.integrate.genalpha import GenAlphaParameters


def test_predict_and_update_equal_the_reference():
    rng = np.random.default_rng(11)
    n, m, h = 9, 4, 1e-3
    p = GenAlphaParameters.from_rho_inf(0.8)
    bp = p.beta_prime(h)
    q, qd, qdd, a = (rng.normal(size=n) for _ in range(4))
    lam = rng.normal(size=m)
    dx = 1e-6 * rng.normal(size=n + m)
    out = {}
    for name, mod in (("kernel", genalpha_kernel), ("reference", genalpha_reference)):
        q0, v0, w0, x0 = np.empty(n), np.empty(n), np.empty(n), np.empty(n + m)
        mod.predict(q, qd, qdd, a, lam, h, p.alpha_m, p.alpha_f, p.beta, p.gamma, bp,
                    q0, v0, w0, x0)
        x = x0 + dx
        out[name] = (q0, v0, w0, x0) + tuple(
            mod.update(x, q, qd, qdd, a, h, p.alpha_m, p.alpha_f, p.beta, p.gamma, bp))
    for k, r in zip(out["kernel"], out["reference"]):
        assert np.allclose(k, r, rtol=1e-13, atol=1e-13 * np.abs(r).max())


def test_update_into_the_state_equals_the_reference():
    """The compiled loop's update written over the state (``update_into``, no arrays
    made) against the reference's ``update``: the same formulas, so equal to round-off."""
    rng = np.random.default_rng(12)
    n, m, h = 9, 4, 1e-3
    p = GenAlphaParameters.from_rho_inf(0.8)
    bp = p.beta_prime(h)
    state = [rng.normal(size=n) for _ in range(4)] + [rng.normal(size=m)]
    x = rng.normal(size=n + m)
    ref = genalpha_reference.update(x, *state[:4], h, p.alpha_m, p.alpha_f, p.beta,
                                    p.gamma, bp)
    genalpha_kernel.update_into(x, *state, h, p.alpha_m, p.alpha_f, p.beta, p.gamma, bp)
    for k, r in zip(state, ref):
        assert np.allclose(k, r, rtol=1e-13, atol=1e-13 * np.abs(r).max())
