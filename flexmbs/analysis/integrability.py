"""Integrability of velocity constraints ``A(y) yd = 0`` (THEORY §4): holonomic or not.

The constraints leave the velocities ``yd = G(y) z``, ``A G = 0``: the columns ``g_i`` of
``G`` span the admissible directions (a *distribution*).  The Lie bracket of two of them,

    [g_i, g_j] = (dg_j/dy) g_i - (dg_i/dy) g_j,

is the net motion, of order ``h^2``, of the switching sequence ``g_i, g_j, -g_i, -g_j``
(each for a time ``h``, THEORY §4.5).  **Frobenius:** the constraints are holonomic
(integrable to ``k`` position constraints ``c(y) = 0``) exactly when the distribution is
involutive, every bracket in ``span{g}``, i.e. ``A [g_i, g_j] = 0`` (``A`` annihilates
exactly that span).  A bracket that leaves it is a direction the constraints block for
the velocity but not for the position.  Repeating the brackets (Chow) gives the
dimension ``f`` of the positions reachable from ``y``: ``f = n`` for a rolling wheel
(``n`` coordinates, ``g = n - k`` velocities).

Two routes, one result (:class:`Integrability`):

* **symbolic**, ``A`` a ``sympy.Matrix`` in the symbols ``coordinates``: ``G`` is its
  null space (or the ``G`` given), the brackets are exact expressions, ``A [g_i, g_j]``
  is simplified to zero or not;
* **numeric**, ``A`` a function ``A(y) -> (k, n)`` and points ``y``: at each point
  ``g_i(y) = P(y) G0 e_i`` with the projector ``P = E - A^+ A`` onto the null space and
  ``G0`` an orthonormal null-space basis at that point (smooth near it while ``A`` keeps
  its rank), the brackets by central differences of step ``eps``; a bracket leaves the
  distribution where ``|A [g_i, g_j]| > tol |A| |g|^2 / size``.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla


@dataclass(frozen=True)
class Bracket:
    """``[g_i, g_j]`` (columns ``i``, ``j`` of ``G``, 0-based), what ``A`` makes of it,
    ``A [g_i, g_j]`` (zero: in the distribution), and whether it ``leaves`` it.  Symbolic:
    sympy expressions; numeric: arrays at the first point that shows it leaving (else the
    first point)."""

    i: int
    j: int
    vector: object
    residual: object
    leaves: bool


@dataclass(frozen=True)
class Integrability:
    """The verdict: ``holonomic`` (involutive), the brackets, the velocity freedoms ``g``,
    and the dimension ``reachable`` of the positions reachable (Chow: the rank of the
    distribution with its repeated brackets; ``n - k`` when holonomic)."""

    holonomic: bool
    n: int
    k: int
    G: object
    brackets: tuple[Bracket, ...] = field(default_factory=tuple)
    reachable: int = 0

    @property
    def g(self) -> int:
        return self.n - self.k

    def summary(self) -> str:
        """One paragraph: the verdict and the brackets that leave the distribution."""
        head = (f"{self.k} velocity constraint(s) on {self.n} coordinates: "
                f"{'holonomic (integrable)' if self.holonomic else 'nonholonomic'}; "
                f"velocity freedoms {self.g}, reachable positions {self.reachable}")
        out = [f"  [g_{b.i + 1}, g_{b.j + 1}] = {_text(b.vector)} leaves span(G): "
               f"A [g_{b.i + 1}, g_{b.j + 1}] = {_text(b.residual)}"
               for b in self.brackets if b.leaves]
        return "\n".join([head, *out])


def _text(v) -> str:
    if isinstance(v, np.ndarray):
        return np.array2string(v, precision=4)
    return str(list(v)) if hasattr(v, "tolist") else str(v)


def integrability(A, coordinates: Sequence | None = None, *, G=None,
                  points: Sequence | None = None, eps: float = 1e-6,
                  tol: float = 1e-6) -> Integrability:
    """Whether ``A(y) yd = 0`` is holonomic (module docstring).

    ``A``: a ``sympy.Matrix`` (k, n) in the symbols ``coordinates`` (symbolic route,
    ``G`` optional: a sympy (n, n - k) basis of the admissible velocities), or a function
    ``A(y) -> (k, n)`` (numeric route, ``points`` (m, n): where to test, at least one).
    ``ValueError`` naming what is wrong for inputs that do not fit."""
    if hasattr(A, "free_symbols") and hasattr(A, "nullspace"):
        if coordinates is None:
            raise ValueError("integrability: a symbolic A needs its coordinates (the "
                             "sympy symbols of y, in the order of A's columns)")
        return _symbolic(A, list(coordinates), G)
    if not callable(A):
        raise ValueError(f"integrability: expected a sympy Matrix or a function A(y) -> "
                         f"(k, n), got {type(A).__name__}")
    if points is None or len(np.atleast_2d(points)) == 0:
        raise ValueError("integrability: a numeric A(y) needs points=[y, ...] to test at")
    return _numeric(A, np.atleast_2d(np.asarray(points, dtype=float)), eps, tol)


# -- symbolic -------------------------------------------------------------------------------
def _symbolic(A, y: list, G) -> Integrability:
    import sympy as s
    A = s.Matrix(A)
    k, n = A.shape
    if len(y) != n:
        raise ValueError(f"integrability: A has {n} columns, got {len(y)} coordinates")
    if G is None:
        G = s.Matrix.hstack(*A.nullspace(simplify=True))
    G = s.Matrix(G)
    if G.shape[0] != n or s.simplify(A * G) != s.zeros(k, G.shape[1]):
        raise ValueError(f"integrability: G must be ({n}, g) with A G = 0")
    Y = s.Matrix(y)
    cols = [G[:, c] for c in range(G.shape[1])]
    brackets = []
    for i, j in itertools.combinations(range(len(cols)), 2):
        b = s.simplify(cols[j].jacobian(Y) * cols[i] - cols[i].jacobian(Y) * cols[j])
        r = s.simplify(A * b)
        brackets.append(Bracket(i, j, b, r, any(e != 0 for e in r)))
    reachable = _symbolic_reachable(cols, Y, n)
    return Integrability(not any(b.leaves for b in brackets), n, k, G, tuple(brackets),
                         reachable)


def _symbolic_reachable(cols: list, Y, n: int) -> int:
    """Rank of the distribution closed under brackets (at generic symbol values)."""
    import sympy as s
    fields = list(cols)
    frontier = list(cols)
    while frontier:
        new = []
        for a, b in itertools.product(cols, frontier):
            v = s.simplify(b.jacobian(Y) * a - a.jacobian(Y) * b)
            if s.Matrix.hstack(*fields, v).rank(simplify=True) > len(fields):
                fields.append(v)
                new.append(v)
        if len(fields) >= n:
            break
        frontier = new
    return s.Matrix.hstack(*fields).rank(simplify=True)


# -- numeric --------------------------------------------------------------------------------
def _numeric(A: Callable, Y: np.ndarray, eps: float, tol: float) -> Integrability:
    A0 = np.atleast_2d(np.asarray(A(Y[0]), dtype=float))
    k, n = A0.shape
    if Y.shape[1] != n:
        raise ValueError(f"integrability: A(y) has {n} columns, the points have "
                         f"{Y.shape[1]} coordinates")
    found: dict[tuple[int, int], Bracket] = {}
    reachable, G_first = 0, None
    for y in Y:
        fields, G0, Ay = _fields(A, y)
        G_first = G0 if G_first is None else G_first
        m = G0.shape[1]
        size = max(1.0, float(np.abs(y).max()))
        span = [fields[c](y) for c in range(m)]
        for i, j in itertools.combinations(range(m), 2):
            b = _bracket(fields[i], fields[j], y, eps * size)
            r = Ay @ b
            scale = np.linalg.norm(Ay) * np.linalg.norm(span[i]) * np.linalg.norm(span[j])
            leaves = bool(np.linalg.norm(r) > tol * max(scale, 1e-300) / size)
            if (i, j) not in found or (leaves and not found[(i, j)].leaves):
                found[(i, j)] = Bracket(i, j, b, r, leaves)
        reachable = max(reachable, _numeric_reachable(fields, y, n, eps * size, tol))
    brackets = tuple(found[key] for key in sorted(found))
    return Integrability(not any(b.leaves for b in brackets), n, k, G_first, brackets,
                         reachable)


def _fields(A: Callable, y: np.ndarray):
    """Smooth vector fields ``g_c(x) = P(x) G0[:, c]`` spanning ``null A(x)`` near ``y``."""
    Ay = np.atleast_2d(np.asarray(A(y), dtype=float))
    G0 = sla.null_space(Ay)

    def field_c(c):
        def g(x):
            Ax = np.atleast_2d(np.asarray(A(x), dtype=float))
            return G0[:, c] - np.linalg.pinv(Ax) @ (Ax @ G0[:, c])
        return g
    return [field_c(c) for c in range(G0.shape[1])], G0, Ay


def _bracket(gi: Callable, gj: Callable, y: np.ndarray, h: float) -> np.ndarray:
    """``[g_i, g_j](y) = Dg_j g_i - Dg_i g_j`` by central differences of step ``h``."""
    a, b = gi(y), gj(y)
    return ((gj(y + h * a) - gj(y - h * a)) - (gi(y + h * b) - gi(y - h * b))) / (2.0 * h)


def _numeric_reachable(fields: list, y: np.ndarray, n: int, h: float, tol: float) -> int:
    """Rank at ``y`` of the fields and their first and second brackets."""
    vecs = [f(y) for f in fields]
    first = []
    for i, j in itertools.combinations(range(len(fields)), 2):
        first.append((lambda i=i, j=j: (lambda x: _bracket(fields[i], fields[j], x, h)))())
    vecs += [f(y) for f in first]
    if np.linalg.matrix_rank(np.array(vecs), tol=np.sqrt(tol)) < n:
        for f, b in itertools.product(fields, first):
            vecs.append(_bracket(f, b, y, np.sqrt(h)))
    return int(np.linalg.matrix_rank(np.array(vecs), tol=np.sqrt(tol)))
