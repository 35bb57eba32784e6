"""Nonlinear force laws (THEORY §5.7.1): rope, compression-only spring, springs with a
force-deflection curve.

References: tangents against central differences at seeded random states; potentials
against central differences of themselves (``Q_f = -dV/dx`` for the conservative part)
and against an independent quadrature (:func:`scipy.integrate.quad`) of the force; a
linear table against the linear :class:`PointToPointSpringDamper` (a second formulation
of the same law); the PCHIP interpolant of monotone data stays monotone and within the
data (Fritsch & Carlson 1980); linear extrapolation continues value and slope.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from constraints.jetcheck import Layout, check_contribution, context, fd_gradient, pair, random_xd
from scipy.integrate import quad

from flexmbs.constraints.revolute import Revolute
from flexmbs.forces.curves import CallableCurve, TabulatedCurve
from flexmbs.forces.nonlinear_spring import NonlinearRotationalSpring, NonlinearSpring
from flexmbs.forces.one_sided import CompressionSpring, Rope
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.spring_damper import PointToPointSpringDamper

TABLE = ((-0.5, -0.1, 0.0, 0.2, 0.6, 1.5), (-300.0, -40.0, 0.0, 50.0, 400.0, 3000.0))


def _length(element, layout, x):
    P, Q = layout.frames(x, 1)
    return float(np.linalg.norm(Q.p.v - P.p.v))


def _cubic(s, sd):
    return 40.0 * s + 300.0 * s**3 + 2.0 * sd * (1.0 + s * s)


def _cubic_derivative(s, sd):
    return 40.0 + 900.0 * s * s + 4.0 * sd * s, 2.0 * (1.0 + s * s)


def _elements(rng, with_ground, layout_x):
    """Each law on a random pair, set so that the random state is on a definite side (or
    inside the smoothing zone) of its switch."""
    a, b, at, ax = pair(rng, with_ground)
    rev = Revolute("R", a, b, at, ax)
    first, second = (a, at), (b, at + rng.normal(size=3))
    dist = layout_x(PointToPointSpringDamper("probe", first, second, k=1.0))
    return [
        Rope("taut", first, second, k=300.0, d=4.0, l0=0.5 * dist),
        Rope("zone", first, second, k=300.0, d=4.0, l0=dist - 0.02, smoothing=0.05),
        CompressionSpring("c", first, second, k=300.0, d=4.0, l0=1.5 * dist),
        CompressionSpring("cz", first, second, k=300.0, d=4.0, l0=dist + 0.01, smoothing=0.03),
        NonlinearSpring("tab", first, second, deflection=TABLE[0], force=TABLE[1], d=3.0,
                        l0=dist - 0.3),
        NonlinearSpring("out", first, second, deflection=TABLE[0], force=TABLE[1], k=5.0,
                        l0=dist - 2.0),
        NonlinearSpring("fun", first, second, law=_cubic, l0=0.8 * dist),
        NonlinearSpring("dfun", first, second, law=_cubic, derivative=_cubic_derivative,
                        l0=0.8 * dist),
        NonlinearRotationalSpring("rt", rev, angle=TABLE[0], moment=TABLE[1], d=1.0,
                                  angle0=0.1),
        NonlinearRotationalSpring("rf", rev, law=_cubic, k=3.0),
    ]


def _setup(index, with_ground, seed):
    rng = np.random.default_rng(seed * 70 + index)
    state = {}

    def layout_x(probe):
        layout = Layout(probe.resolve())
        state["layout"], state["x"] = layout, layout.random_x(rng)
        return _length(probe, layout, state["x"])

    element = _elements(rng, with_ground, layout_x)[index]
    return rng, element, state["layout"], state["x"]


@pytest.mark.parametrize("index", range(10))
@pytest.mark.parametrize("with_ground", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_tangents_against_central_differences(index, with_ground, seed):
    rng, element, layout, x = _setup(index, with_ground, seed)
    assert element.problems() == []
    check_contribution(element, layout, x, random_xd(rng, layout), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("index", range(10))
@pytest.mark.parametrize("seed", [1, 2])
def test_gradient_of_potential_is_minus_force_at_rest(index, seed):
    _, element, layout, x = _setup(index, False, seed)
    rest = np.append(np.zeros(layout.n - 1), 1.0)
    grad = fd_gradient(lambda y: element.potential(context(layout, y, rest, 1)), x)[:-1]
    Q = element.contribution(context(layout, x, rest, 1)).Q
    np.testing.assert_allclose(Q[:-1], -grad, rtol=0, atol=1e-6 * max(1.0, np.abs(grad).max()))


def test_slack_rope_and_open_compression_spring_apply_nothing():
    rng = np.random.default_rng(5)
    a, b, at, _ = pair(rng)
    first, second = (a, at), (b, at + rng.normal(size=3))
    for el in (Rope("r", first, second, k=300.0, d=4.0, l0=1e3),
               CompressionSpring("c", first, second, k=300.0, d=4.0, l0=1e-3)):
        layout = Layout(el.resolve())
        x = layout.random_x(rng)
        c = el.contribution(context(layout, x, random_xd(rng, layout), 2))
        assert not np.any(c.Q) and not np.any(c.dQ_dx) and not np.any(c.dQ_dxd)
        assert el.potential(context(layout, x, random_xd(rng, layout), 1)) == 0.0
        assert not el.engaged(_length(el, layout, x))


def test_linear_table_is_the_linear_spring():
    """PCHIP reproduces linear data exactly; outside the table it continues linearly."""
    rng = np.random.default_rng(8)
    a, b, at, _ = pair(rng)
    first, second = (a, at), (b, at + rng.normal(size=3))
    k = 250.0
    s = (-0.3, -0.1, 0.0, 0.25, 0.4)
    lin = PointToPointSpringDamper("lin", first, second, k=k, d=2.0, l0=0.3)
    tab = NonlinearSpring("tab", first, second, deflection=s, force=tuple(k * v for v in s),
                          d=2.0, l0=0.3)
    fun = NonlinearSpring("fun", first, second, law=lambda u, ud: k * u, rate_independent=True,
                          d=2.0, l0=0.3)
    layout = Layout(lin.resolve())
    for _ in range(5):
        x, xd = layout.random_x(rng), random_xd(rng, layout)
        ref = lin.contribution(context(layout, x, xd, 2))
        for el in (tab, fun):
            c = el.contribution(context(layout, x, xd, 2))
            scale = np.abs(ref.dQ_dx).max()
            np.testing.assert_allclose(c.Q, ref.Q, rtol=1e-12, atol=1e-9 * scale)
            np.testing.assert_allclose(c.dQ_dx, ref.dQ_dx, rtol=1e-6, atol=1e-6 * scale)
            np.testing.assert_allclose(c.dQ_dxd, ref.dQ_dxd, rtol=1e-6, atol=1e-9)
            ctx = context(layout, x, xd, 1)
            assert el.potential(ctx) == pytest.approx(lin.potential(ctx), rel=1e-9)


def test_table_interpolant_monotone_c1_and_exact_potential():
    s = np.array([0.0, 0.1, 0.2, 0.3, 0.5, 1.0])
    F = np.array([0.0, 10.0, 11.0, 11.0, 40.0, 41.0])          # a plateau: cubic splines overshoot
    curve = TabulatedCurve(tuple(s), tuple(F))
    grid = np.linspace(-0.5, 1.5, 4001)
    vals = np.array([curve(u)[0] for u in grid])
    assert np.all(np.diff(vals) >= -1e-12)                     # monotone
    inside = (grid >= 0) & (grid <= 1)
    assert vals[inside].min() >= 0.0 and vals[inside].max() <= 41.0 + 1e-12
    assert np.all(vals[(grid >= 0.2) & (grid <= 0.3)] == pytest.approx(11.0, abs=1e-12))
    np.testing.assert_allclose([curve(v)[0] for v in s], F, atol=1e-12)
    for end in (0.0, 1.0):                                     # C1 through the table ends
        for k in (0, 1):
            lo, hi = curve(end - 1e-9)[k], curve(end + 1e-9)[k]
            assert hi == pytest.approx(lo, rel=1e-6, abs=1e-6)
    f_end, df_end = curve(1.0)[:2]
    assert curve(1.4)[0] == pytest.approx(f_end + 0.4 * df_end, rel=1e-12)   # linear outside
    for u in (-0.4, 0.05, 0.37, 1.0, 1.3):
        ref = quad(lambda v: curve(v)[0], 0.0, u, points=[0.0, 1.0], epsabs=1e-13,
                   epsrel=1e-13, limit=200)[0]
        assert curve.integral(u) == pytest.approx(ref, rel=1e-10, abs=1e-12)


def test_callable_derivatives_and_potential():
    law = CallableCurve(_cubic)
    exact = CallableCurve(_cubic, _cubic_derivative)
    for s, sd in ((0.3, -1.2), (-2.0, 0.5), (0.0, 0.0)):
        F, F_s, F_sd = law(s, sd)
        assert (F, F_s, F_sd) == pytest.approx(exact(s, sd), rel=1e-8, abs=1e-8)
    # V = 20 s^2 + 75 s^4 (the rate part stores nothing)
    assert law.integral(0.7) == pytest.approx(20 * 0.49 + 75 * 0.7**4, rel=1e-12)


def test_potentials_and_energy_exchange():
    rng = np.random.default_rng(4)
    a, b, at, ax = pair(rng)
    rev = Revolute("R", a, b, at, ax)
    assert Rope("r", a, b, k=1.0).energy_exchange() is None
    assert "damping" in Rope("r", a, b, k=1.0, d=1.0).energy_exchange()
    assert NonlinearSpring("t", a, b, deflection=(0, 1), force=(0, 1)).energy_exchange() is None
    assert "rate" in NonlinearSpring("t", a, b, law=_cubic).energy_exchange()
    assert NonlinearSpring("t", a, b, law=_cubic, rate_independent=True).energy_exchange() is None
    assert NonlinearRotationalSpring("t", rev, angle=(0, 1), moment=(0, 1)).energy_exchange() \
        is None
    # the rotational deflection is the linear spring's (same wrap)
    lin = RotationalSpringDamper("lin", rev, k=7.0, angle0=0.4)
    tab = NonlinearRotationalSpring("tab", rev, angle=(-4, 4), moment=(-28, 28), angle0=0.4)
    layout = Layout(rev.resolve())
    x = layout.random_x(rng)
    ctx = context(layout, x, random_xd(rng, layout), 1)
    assert tab.potential(ctx) == pytest.approx(lin.potential(ctx), rel=1e-12)


def test_problems_name_the_element_and_the_key():
    rng = np.random.default_rng(6)
    a, b, _, _ = pair(rng)
    assert NonlinearSpring("t", a, b).problems() == [
        "NonlinearSpring 't': give a force-deflection table or a law f(deflection, rate)"]
    assert NonlinearSpring("t", a, b, deflection=(0, 1), force=(0, 1), law=_cubic).problems() \
        == ["NonlinearSpring 't': give a table or a law, not both"]
    assert "increase strictly" in NonlinearSpring("t", a, b, deflection=(0, 0), force=(0, 1)
                                                  ).problems()[0]
    assert "got 3 and 2" in NonlinearSpring("t", a, b, deflection=(0, 1, 2), force=(0, 1)
                                            ).problems()[0]
    assert Rope("r", a, b, k=-1.0).problems() == [
        "Rope 'r': stiffness k must be >= 0 [N/m], got -1.0"]
    assert CompressionSpring("c", a, b, smoothing=-1.0).problems() == [
        "CompressionSpring 'c': smoothing must be >= 0 [m], got -1.0"]
    assert dataclasses.replace(Rope("r", a, b), k=2.0).k == 2.0
