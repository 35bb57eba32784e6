"""The increment test may not accept an iterate whose residual grew by orders of magnitude.

Reproduction: ``F(x) = x`` (solution ``x* = 0``, closed form) from ``x_0 = 1e-3`` with a
Newton matrix that is poor in the way of a matrix missing a stiffening term: at the start
it is ``-1e-9`` (the first increment throws the iterate to ``x_1 = 1e6``, the residual up
by ``1e9``), away from it twice the true derivative (the iteration then contracts by
``rho = 1/2`` per iteration: ``x_k = 1e6 / 2^(k-1)``).  The increment criterion
``eta d_k <= kappa d_1`` (``eta = rho / (1 - rho) = 1``) measures the increments
``d_k = x_{k-1} / 2`` against the huge ``d_1``: with ``kappa = 1e-2`` it holds from
``k = 8`` on, where ``|F_8| = 7.8e3 = 7.8e6 |F_0|`` -- a wrong state.  With the guard
(``|F_k| <= GROWTH max(|F_0|, F_floor)``, GROWTH = 1e3) the iteration goes on and needs
``1e6 / 2^(k-1) <= 1``, ``k >= 21 > snes_max_it = 20``: the solve fails (a time step
would be halved).  Both forms of the test (the C convergence test and the Python
reference) give the same decisions; the decision itself is checked at its boundary.
"""
import math

import numpy as np
import pytest

from flexmbs.compiled import use_compiled
from flexmbs.integrate import _newton
from flexmbs.integrate._newton import NewtonFailure, NewtonSolver
from flexmbs.integrate.increments_kernel import GROWTH, decide

KAPPA = 1e-2
X0 = 1e-3
J0 = -1e-9          # the matrix at the start: x_1 = x_0 - x_0 / J0 = 1e6 + 1e-3


def F(x):
    return x.copy()


def J(x):
    """The poor Newton matrix: ``J0`` at the start point, else twice ``dF/dx = 1``."""
    return np.array([[J0 if abs(x[0]) < 1.0 else 2.0]])


def closed_form():
    """The iterates, increments and the first ``k`` the unguarded test accepts."""
    x = [X0, X0 - X0 / J0]
    while len(x) < 40:
        x.append(x[-1] / 2.0)
    x = np.array(x)
    d = np.abs(np.diff(x))                    # d_k = |x_k - x_{k-1}|, k = 1, 2, ...
    for k in range(2, len(x)):
        rho = abs(x[k]) / abs(x[k - 1])
        if rho / (1.0 - rho) * d[k - 1] <= KAPPA * d[0]:
            return x, k
    raise AssertionError("no acceptance")


def solver(native):
    return NewtonSolver(1, prefix=f"fmbs_growth_{int(native)}_", increment_rtol=KAPPA,
                        native_test=native)


def forms():
    return [False, True] if use_compiled() else [False]


def test_the_unguarded_increment_criterion_accepts_a_huge_residual():
    """The reproduction itself (closed form): the plain criterion holds at an iterate
    whose residual is millions of times the start's, far above the guard."""
    x, k = closed_form()
    assert k == 8
    assert abs(x[k]) / X0 > 1e6 > GROWTH
    # ... and the guarded iteration would need more than snes_max_it = 20 iterations
    assert 1 + np.argmax(np.abs(x[1:]) <= GROWTH * X0) == 21


@pytest.mark.parametrize("native", forms())
def test_the_guard_refuses_it_and_the_solve_fails(native):
    ns = solver(native)
    with pytest.raises(NewtonFailure, match="DIVERGED_MAX_IT") as err:
        ns.solve(np.array([X0]), F, J)
    x, _ = closed_form()
    assert err.value.iterations == 20
    assert err.value.residual == pytest.approx(abs(x[20]), rel=1e-12)
    # what the diagnosis of a failed step reports: |F_20| / |F_0| = 1.9e3 > GROWTH
    assert ns.last_growth() == pytest.approx(abs(x[20]) / X0, rel=1e-12)
    assert ns.last_growth() > GROWTH
    ns.destroy()


def test_without_the_guard_the_python_test_accepts_the_wrong_state(monkeypatch):
    """The Python test with the guard switched off gives the old result: accepted at
    ``k = 8`` with ``x_8 = 7.8e3`` (``x* = 0``)."""
    monkeypatch.setattr(_newton, "GROWTH", math.inf)
    ns = solver(False)
    xs, info = ns.solve(np.array([X0]), F, J)
    x, k = closed_form()
    assert info.iterations == k
    assert xs[0] == pytest.approx(x[k], rel=1e-12)
    ns.destroy()


def test_a_healthy_solve_is_untouched(monkeypatch):
    """Full Newton on ``F(x) = x + x^2 / 10`` from ``x_0 = 0.5`` (root ``x* = 0``): the
    residual falls, the guard never acts -- the same iterates as without it (the Python
    form of the test, whose guard can be switched off: the C form has ``GROWTH``
    compiled in)."""
    native = False
    def Fh(x):
        return x + 0.1 * x * x

    def Jh(x):
        return np.array([[1.0 + 0.2 * x[0]]])

    def run():
        ns = solver(native)
        xs, info = ns.solve(np.array([0.5]), Fh, Jh)
        ns.destroy()
        return xs[0], info.iterations
    guarded = run()
    monkeypatch.setattr(_newton, "GROWTH", math.inf)   # (the Python form's guard off)
    assert guarded == run()
    assert abs(guarded[0]) <= KAPPA * 0.5 and guarded[1] >= 2   # error <= kappa d_1


def run_decide(fn, d, d1, f_floor, its=3, decider=decide, f_grow=None):
    """``decide`` on crafted norms: one block, no algebraic rows; the reason's name."""
    R = _newton._Reason
    ints = np.array([20, -1, 0, 0, len(fn), R.ITERATING, R.CONVERGED_FNORM_ABS,
                     R.CONVERGED_SNORM_RELATIVE, R.DIVERGED_FNORM_NAN, R.DIVERGED_MAX_IT],
                    dtype=np.int64)
    reals = np.array([KAPPA, 1e-12, 64 * np.finfo(float).eps, f_floor,
                      f_floor if f_grow is None else f_grow])
    fn = np.array(fn, dtype=float)
    reason = decider(its, fn[-1], fn, len(fn) - 1, np.array([d]), np.array([d1]), 1.0, 0.0,
                     False, d / d1, ints, reals)
    return {R.ITERATING: "iterating", R.CONVERGED_SNORM_RELATIVE: "converged",
            R.DIVERGED_MAX_IT: "max_it"}[int(reason)]


@pytest.mark.parametrize("decider", [decide, decide.py_func])
def test_the_decision_at_the_guard(decider):
    """The increment criterion holds (rho = 1/2, eta d = d1 * 1e-3 <= kappa d1); the
    residual at ``GROWTH |F_0|`` passes, one ulp above does not; a start below the
    residual floor measures the growth from the floor; ``snes_max_it`` ends a refused
    solve as a failure."""
    f0 = 0.25
    top = GROWTH * f0
    above = np.nextafter(top, np.inf)
    assert run_decide([f0, 2 * top, top], 1e-3, 1.0, 0.0, decider=decider) == "converged"
    assert run_decide([f0, 2 * above, above], 1e-3, 1.0, 0.0, decider=decider) == "iterating"
    assert run_decide([f0, 2 * above, above], 1e-3, 1.0, 0.0, its=20,
                      decider=decider) == "max_it"
    # |F_0| = 1e-20 below the floor 1e-12: the guard is GROWTH * floor
    assert run_decide([1e-20, 1e-9, 5e-10], 1e-3, 1.0, 1e-12,
                      decider=decider) == "converged"
    assert run_decide([1e-20, 4e-9, 2e-9], 1e-3, 1.0, 1e-12, decider=decider) == "iterating"


def test_the_failure_names_the_grown_residual():
    """The one-line diagnosis of a failed step names the residual's growth: the solve of
    the reproduction, handed to the integrator's diagnosis, gives |F_20| / |F_0| =
    1e6 / 2^19 / 1e-3 = 1.9e3."""
    from flexmbs.integrate.genalpha import GeneralizedAlpha
    from int_models import Oscillator
    ga = GeneralizedAlpha(Oscillator([[1.0]], [[1.0]]), rho_inf=0.9,
                          options_prefix="fmbs_growth_diag_")
    ns = solver(use_compiled())
    with pytest.raises(NewtonFailure) as err:
        ns.solve(np.array([X0]), F, J)
    ga._newton = ns
    text = ga._diagnose(err.value)
    assert f"the residual grew to {1e6 / 2 ** 19 / X0:.1e} times the step's start" in text
    ns.destroy()


# --- the round-off route obeys the same bound ---------------------------------------
#
# ``F(x) = x`` from ``x_0 = 1e-3`` with the start matrix ``J0`` (``x_1 = x_0 - x_0 / J0 =
# 1e6 + 1e-3``, ``|F_1| = 1e9 |F_0|``) and away from it a matrix ``J_STIFF = 1e30`` orders
# too stiff: the increments ``|F_k| / J_STIFF = 1e-24`` are below ``64 eps |x_k| = 1.4e-8``
# (round-off in the only block) and ``x_k - 1e-24 = x_k`` in floating point: a stall at
# ``|F| = 1e6 = 1e9 |F_0|``, far from ``x* = 0``.  Without the bound the round-off route
# accepted it at the second iteration; with it the iteration goes on and fails at
# ``snes_max_it = 20``.
J_STIFF = 1e30


def J_stall(x):
    return np.array([[J0 if abs(x[0]) < 1.0 else J_STIFF]])


def test_the_stall_is_at_round_off_with_a_grown_residual():
    """The reproduction (closed form): the second increment is round-off of ``x_1``,
    leaves ``x_1`` unchanged, and ``|F_1| / |F_0|`` is far above ``GROWTH``."""
    x1 = X0 - X0 / J0
    d2 = abs(x1) / J_STIFF
    assert d2 <= 64 * np.finfo(float).eps * abs(x1)
    assert x1 - d2 == x1
    assert abs(x1) / X0 > 1e6 * GROWTH


@pytest.mark.parametrize("native", forms())
def test_a_round_off_stall_at_a_grown_residual_is_refused(native):
    ns = solver(native)
    with pytest.raises(NewtonFailure, match="DIVERGED_MAX_IT") as err:
        ns.solve(np.array([X0]), F, J_stall)
    x1 = X0 - X0 / J0
    assert err.value.iterations == 20
    assert err.value.residual == pytest.approx(x1, rel=1e-12)   # the stall, unchanged
    assert ns.last_growth() == pytest.approx(x1 / X0, rel=1e-12)
    ns.destroy()


@pytest.mark.parametrize("native", forms())
def test_a_round_off_stall_at_the_start_residual_is_still_accepted(native):
    """The stiff matrix from the start: the first increment ``x_0 / J_STIFF`` is round-off
    of ``x_0`` and the residual has not grown (``|F_1| = |F_0|``): accepted at once, as
    before (a model at round-off of its own scale has nothing left to solve)."""
    ns = solver(native)
    xs, info = ns.solve(np.array([X0]), F, lambda x: np.array([[J_STIFF]]))
    assert info.iterations == 1
    assert xs[0] == X0 - X0 / J_STIFF
    ns.destroy()


def run_decide_roundoff(fn, f_floor, its=3, decider=decide, f_grow=None):
    """``decide`` with every block at round-off (``roundoff`` true, ratio 0)."""
    R = _newton._Reason
    ints = np.array([20, -1, 0, 0, len(fn), R.ITERATING, R.CONVERGED_FNORM_ABS,
                     R.CONVERGED_SNORM_RELATIVE, R.DIVERGED_FNORM_NAN, R.DIVERGED_MAX_IT],
                    dtype=np.int64)
    reals = np.array([KAPPA, 1e-12, 64 * np.finfo(float).eps, f_floor,
                      f_floor if f_grow is None else f_grow])
    fn = np.array(fn, dtype=float)
    reason = decider(its, fn[-1], fn, len(fn) - 1, np.array([1e-30]), np.array([1.0]), 1.0,
                     0.0, True, 0.0, ints, reals)
    return {R.ITERATING: "iterating", R.CONVERGED_SNORM_RELATIVE: "converged",
            R.DIVERGED_MAX_IT: "max_it"}[int(reason)]


@pytest.mark.parametrize("decider", [decide, decide.py_func])
def test_the_round_off_decision_at_the_guard(decider):
    """Increments at round-off: a residual at ``GROWTH |F_0|`` is accepted, one ulp above
    is not (the iteration goes on; at ``snes_max_it`` it has failed); a start below the
    residual floor is measured from the floor."""
    f0 = 0.25
    top = GROWTH * f0
    above = np.nextafter(top, np.inf)
    assert run_decide_roundoff([f0, top, top], 0.0, decider=decider) == "converged"
    assert run_decide_roundoff([f0, above, above], 0.0, decider=decider) == "iterating"
    assert run_decide_roundoff([f0, above, above], 0.0, its=20, decider=decider) == "max_it"
    assert run_decide_roundoff([1e-20, 1e-9, 1e-9], 1e-12, decider=decider) == "converged"
    assert run_decide_roundoff([1e-20, 2e-9, 2e-9], 1e-12, decider=decider) == "iterating"


# --- the growth bound's own floor (F_floor = 0 at rho_inf = 1) -----------------------
#
# ``F(x) = x + r`` with ``r`` the evaluation round-off: ``1e-30`` at the exact start
# ``x = 0`` (a model whose residual happened to cancel there), ``+-1e-15`` anywhere else
# (terms of size ~10 at eps), which no increment removes.  With ``F_floor = 0`` the bound
# ``GROWTH |F_0| = 1e-27`` refused every iterate at ``1e-15`` and the solve failed at
# ``snes_max_it``; the growth bound's floor ``F_grow = 64 eps s sqrt(n) = 1.4e-14``
# (``s = 1``) lets it end at round-off, where the grown residual of the stall above
# (``1e9 |F_0|``, ``|F_0| = 1e-3``) is still refused.


def test_the_growth_floor_is_the_round_off_of_the_scales():
    ns = NewtonSolver(2, prefix="fmbs_growth_floor_", increment_rtol=KAPPA,
                      block_sizes=(1, 1), native_test=False)
    ns.set_scales((2.0, 8.0), 0.0)
    assert ns._f_grow == 64 * np.finfo(float).eps * 8.0 * math.sqrt(2)
    ns.set_scales((2.0, 8.0), 1.0)             # a floor above it is kept
    assert ns._f_grow == 1.0
    ns.destroy()


@pytest.mark.parametrize("native", forms())
def test_a_tiny_start_with_zero_floor_converges_at_round_off(native):
    counter = iter(range(10 ** 6))

    def F_tiny(x):
        return np.array([x[0] + (1e-30 if x[0] == 0.0 else 1e-15 * (-1) ** next(counter))])

    ns = NewtonSolver(1, prefix=f"fmbs_growth_tiny_{int(native)}_", increment_rtol=1e-5,
                      native_test=native)
    ns.set_scales((1.0,), 0.0)                  # rho_inf = 1 with constraints: F_floor = 0
    xs, info = ns.solve(np.array([0.0]), F_tiny, lambda x: np.array([[1.0]]))
    assert abs(xs[0]) <= 2e-15                  # the solution at round-off
    assert info.iterations < 20
    ns.destroy()


@pytest.mark.parametrize("decider", [decide, decide.py_func])
def test_the_decision_with_zero_floor_uses_the_growth_floor(decider):
    """``F_floor = 0``, ``|F_0| = 1e-30``: at round-off ``|F_k| = 1e-15`` is accepted
    with ``F_grow = 1.4e-14`` (both routes), refused with ``F_grow = 0`` (the bound
    ``GROWTH |F_0|``); above ``GROWTH F_grow`` it is refused again."""
    g = 64 * np.finfo(float).eps
    assert run_decide_roundoff([1e-30, 1e-15], 0.0, its=2, f_grow=g,
                               decider=decider) == "converged"
    assert run_decide_roundoff([1e-30, 1e-15], 0.0, its=2, f_grow=0.0,
                               decider=decider) == "iterating"
    assert run_decide_roundoff([1e-30, 2 * GROWTH * g], 0.0, its=2, f_grow=g,
                               decider=decider) == "iterating"
    assert run_decide([1e-30, 2e-15, 1e-15], 1e-3, 1.0, 0.0, f_grow=g,
                      decider=decider) == "converged"
    assert run_decide([1e-30, 2e-15, 1e-15], 1e-3, 1.0, 0.0, f_grow=0.0,
                      decider=decider) == "iterating"
