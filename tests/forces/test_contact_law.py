"""Normal contact laws (flexmbs.forces.contact_law) and the friction law interface.

References: Hunt & Crossley (J. Appl. Mech. 42, 1975) for the limit ``a -> 3 (1 - e)/2``
as ``e -> 1``; the dimensionless impact ODE integrated by a second scheme (fixed-step
RK4, here) for the restitution of the inverted damping number; Coulomb/Stribeck closed
forms for the friction coefficient.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.forces.contact_law import ContactLaw, damping_number
from flexmbs.forces.friction_law import FrictionLaw


def rk4_restitution(a: float, n: float, dt: float = 2e-4) -> float:
    """Exit speed of ``u'' = -max(0, u^n (1 + a u'))`` from ``u = 0, u' = 1`` by RK4."""
    def f(y):
        u, v = y
        return np.array([v, -max(0.0, max(u, 0.0) ** n * (1.0 + a * v))])
    y = np.array([0.0, 1.0])
    while True:
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y1 = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if y1[0] <= 0.0 and y[1] < 0:
            return -float(y1[1])
        y = y1


@pytest.mark.parametrize("e", [0.9, 0.6, 0.3])
def test_damping_number_gives_the_restitution(e):
    a = damping_number(e, 1.5)
    assert rk4_restitution(a, 1.5) == pytest.approx(e, rel=1e-4)


def test_damping_number_tends_to_hunt_crossley_for_nearly_elastic_impacts():
    e = 0.999
    assert damping_number(e, 1.5) == pytest.approx(1.5 * (1.0 - e), rel=2e-3)
    assert damping_number(1.0, 1.5) == 0.0


def test_hertz_law_and_its_derivatives():
    law = ContactLaw(K=2e9, n=1.5)
    F, F_d, F_dd, F_v = law.force(1e-4, 0.3, 1.0)
    assert F == pytest.approx(2e9 * 1e-6)
    assert F_d == pytest.approx(1.5 * 2e9 * 1e-2)
    assert (F_dd, F_v) == (0.0, 0.0)
    assert law.force(-1e-4, 0.3, 1.0) == (0.0, 0.0, 0.0, 0.0)


def test_hunt_crossley_derivatives_against_central_differences():
    law = ContactLaw(K=1e7, n=1.5, e=0.7)
    x = np.array([2e-4, 0.4, 1.5])
    _, *dF = law.force(*x)
    for k in range(3):
        h = 1e-7 * max(1.0, abs(x[k])) if k else 1e-9
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        fd = (law.force(*xp)[0] - law.force(*xm)[0]) / (2 * h)
        assert dF[k] == pytest.approx(fd, rel=1e-6)
    assert law.force(2e-4, -1e3, 1.0)[0] == 0.0         # never pulls


def test_law_problems_name_the_element():
    probs = ContactLaw(K=-1.0, n=5.0, e=1.5).problems("SpherePlaneContact 'c'")
    assert len(probs) == 3 and all(p.startswith("SpherePlaneContact 'c': ") for p in probs)


def test_friction_law_closed_forms():
    """The interface's mu(|v|) = mu_k + (mu_s - mu_k) exp(-(|v|/v_s)^2) and its slope."""
    law = FrictionLaw(mu_s=0.5, mu_k=0.3, v_s=0.01)
    v = 0.02
    mu, dmu = law.mu(v)
    assert mu == pytest.approx(0.3 + 0.2 * np.exp(-4.0))
    assert dmu == pytest.approx((law.mu(v + 1e-8)[0] - law.mu(v - 1e-8)[0]) / 2e-8, rel=1e-6)
    assert law.mu(-v) == law.mu(v)
    # without a Stribeck curve: mu_k while sliding, mu_s in the limit at rest (where a
    # joint decides sticking; a regularised contact force is zero there anyway)
    assert FrictionLaw(0.5, 0.3).mu(1e-9)[0] == 0.3 and FrictionLaw(0.5, 0.3).mu(0.0)[0] == 0.5
