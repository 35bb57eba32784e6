"""Integrability of velocity constraints (flexmbs.analysis.integrability, THEORY §4).

References: the rolling wheel of THEORY §4.2 and its bracket (r sin phi, -r cos phi, 0, 0);
the Frobenius criterion of a single constraint in 3D, a . (curl a) = 0, a closed form
independent of the brackets; gradients of position constraints (holonomic by
construction); and the switching sequence of THEORY §4.5, integrated as ODEs: the net
motion after g1, g2, -g1, -g2 for a time h each is [g1, g2] h^2 + O(h^3).
"""
import numpy as np
import pytest
import sympy as s
from scipy.integrate import solve_ivp

from flexmbs.analysis import integrability

x, y, z, phi, gam, th, w = s.symbols("x y z phi gamma theta w", real=True)
r = s.Symbol("r", positive=True)
R = 0.3                                                  # m, numeric wheel radius
WHEEL_A = s.Matrix([[1, 0, 0, -r * s.cos(phi)], [0, 1, 0, -r * s.sin(phi)]])
WHEEL_G = s.Matrix([[r * s.cos(phi), 0], [r * s.sin(phi), 0], [0, 1], [1, 0]])


def wheel_numeric(q):
    return np.array([[1, 0, 0, -R * np.cos(q[2])], [0, 1, 0, -R * np.sin(q[2])]])


POINTS = np.random.default_rng(7).uniform(-1.0, 1.0, (4, 4))


def test_rolling_wheel_bracket_of_the_theory():
    res = integrability(WHEEL_A, [x, y, phi, gam], G=WHEEL_G)
    (b,) = res.brackets
    assert s.simplify(b.vector - s.Matrix([r * s.sin(phi), -r * s.cos(phi), 0, 0])) == \
        s.zeros(4, 1)
    assert b.leaves and not res.holonomic
    assert (res.g, res.reachable) == (2, 4)           # f = 4 positions, g = 2 velocities
    assert "[g_1, g_2]" in res.summary() and "nonholonomic" in res.summary()


def test_rolling_wheel_from_its_null_space_and_numerically():
    assert not integrability(WHEEL_A, [x, y, phi, gam]).holonomic
    num = integrability(wheel_numeric, points=POINTS)
    assert not num.holonomic and num.reachable == 4
    assert all(b.leaves for b in num.brackets)


def test_disc_rolling_on_a_line_is_integrable():
    """x - r theta = const: one constraint x' = r theta' on (x, theta)."""
    sym = integrability(s.Matrix([[1, -r]]), [x, th])
    num = integrability(lambda q: np.array([[1.0, -R]]), points=POINTS[:, :2])
    assert sym.holonomic and num.holonomic
    assert sym.reachable == num.reachable == 1


def test_knife_edge_is_nonholonomic():
    """Chaplygin sleigh: no sideways velocity, -sin(phi) x' + cos(phi) y' = 0."""
    A = s.Matrix([[-s.sin(phi), s.cos(phi), 0]])
    sym = integrability(A, [x, y, phi])
    num = integrability(lambda q: np.array([[-np.sin(q[2]), np.cos(q[2]), 0.0]]),
                        points=POINTS[:, :3])
    assert not sym.holonomic and not num.holonomic
    assert sym.reachable == num.reachable == 3


@pytest.mark.parametrize(("a", "exact"), [
    ((y, -x, 0), False),            # y dx - x dy: integrable (x/y), not an exact gradient
    ((-y, 0, 1), False),            # dz - y dx: the contact form, nonintegrable
    ((2 * x, 2 * y, 2 * z), True),  # d(x^2 + y^2 + z^2)
    ((y * z, x * z, x * y), True),  # d(xyz)
    ((z, 1, x * y), False),         # z dx + dy + xy dz
])
def test_one_constraint_in_3d_against_frobenius(a, exact):
    """Integrable exactly when a . curl a = 0 (THEORY §4.3, [impl. note]); the
    symmetric-Jacobian test of the seed only finds the exact gradients."""
    a = s.Matrix(a)
    X = s.Matrix([x, y, z])
    curl = s.Matrix([a[2].diff(y) - a[1].diff(z), a[0].diff(z) - a[2].diff(x),
                     a[1].diff(x) - a[0].diff(y)])
    frobenius = s.simplify(a.dot(curl)) == 0
    symmetric = s.simplify(a.T.jacobian(X) - a.T.jacobian(X).T) == s.zeros(3, 3)
    assert symmetric == exact
    res = integrability(a.T, [x, y, z])
    assert res.holonomic == frobenius
    f = s.lambdify([(x, y, z)], a.T, "numpy")
    num = integrability(lambda q: np.asarray(f(q), dtype=float), points=POINTS[:, :3])
    assert num.holonomic == frobenius
    assert res.reachable == num.reachable == (2 if frobenius else 3)


def test_gradients_of_position_constraints_are_holonomic():
    """A = dc/dy of c1 = x^2 + y^2 - 1, c2 = z - x w: integrable by construction."""
    c = s.Matrix([x**2 + y**2 - 1, z - x * w])
    A = c.jacobian([x, y, z, w])
    res = integrability(A, [x, y, z, w])
    f = s.lambdify([(x, y, z, w)], A, "numpy")
    num = integrability(lambda q: np.asarray(f(q), dtype=float), points=POINTS + 0.5)
    assert res.holonomic and num.holonomic
    assert res.reachable == num.reachable == 2


def _switching_net_motion(h: float) -> np.ndarray:
    """y4 - y0 after g1, g2, -g1, -g2 each for a time h (THEORY §4.5), the wheel's G."""
    g1 = lambda t, q: [R * np.cos(q[2]), R * np.sin(q[2]), 0.0, 1.0]   # noqa: E731
    g2 = lambda t, q: [0.0, 0.0, 1.0, 0.0]                               # noqa: E731
    q = np.array([0.1, 0.2, 0.7, 0.3])
    for f, sign in ((g1, 1), (g2, 1), (g1, -1), (g2, -1)):
        q = solve_ivp(lambda t, q, f=f, sign=sign: sign * np.asarray(f(t, q)), (0, h), q,
                      rtol=1e-12, atol=1e-14).y[:, -1]
    return q - np.array([0.1, 0.2, 0.7, 0.3])


def test_the_bracket_is_the_net_motion_of_the_switching_sequence():
    bracket = np.array([R * np.sin(0.7), -R * np.cos(0.7), 0.0, 0.0])
    errs = [np.linalg.norm(_switching_net_motion(h) / h**2 - bracket) for h in (1e-2, 5e-3)]
    assert errs[0] < 1e-2 * np.linalg.norm(bracket)
    assert errs[0] / errs[1] == pytest.approx(2.0, rel=0.1)        # O(h)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((WHEEL_A,), {}, "needs its coordinates"),
    ((WHEEL_A, [x, y, phi]), {}, "A has 4 columns, got 3 coordinates"),
    ((WHEEL_A, [x, y, phi, gam]), {"G": s.eye(4)[:, :2]}, "A G = 0"),
    (("rolling",), {}, "expected a sympy Matrix or a function"),
    ((wheel_numeric,), {}, "needs points"),
    ((wheel_numeric,), {"points": [[0.0, 0.0, 0.0]]}, "the points have 3 coordinates"),
])
def test_mistakes_are_named(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        integrability(*args, **kwargs)
