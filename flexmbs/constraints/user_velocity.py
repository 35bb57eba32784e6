"""A velocity constraint given by the user as two callbacks (THEORY §4):

    A(q, t) qd + a(q, t) = 0,

with ``q`` the coordinates of the listed ``bodies`` one after the other (rigid body
``[x, y, z, e0, e1, e2, e3]``, point mass ``[x, y, z]``, in the order given), ``A(q, t)``
returning a ``(k, len(q))`` array and ``a(q, t)`` a ``(k,)`` array (None: zero).  Units:
those of the velocities the rows combine (m/s for rows on positions).  Example, the
Chaplygin sleigh's runner at the body origin, blade along the body x axis, on the
plane z = 0 (the sideways velocity ``(-sin th, cos th, 0) . rd`` with ``x_B = A(e) e_x``)::

    def A(q, t):
        x_B = rotation(q[3:7])[:, 0]          # flexmbs.constraints.velocity.rotation
        return np.array([[-x_B[1], x_B[0], 0, 0, 0, 0, 0]])

    fm.UserVelocityConstraint("runner", bodies=(sleigh,), A=A, labels=("no side slip",))

The derivative ``d(A qd + a)/dq`` the integrators need is taken by central differences
(step ``1e-7 (1 + |q|)``), so ``A`` and ``a`` should be smooth.  The multipliers
``mu`` act as the generalized forces ``-A^T mu``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from flexmbs.bodies.marker import Marker
from flexmbs.constraints.velocity import VelocityConstraint


@dataclass(frozen=True, eq=False)
class UserVelocityConstraint(VelocityConstraint):
    """``A(q, t) qd + a(q, t) = 0`` on the coordinates of ``bodies`` (see module doc)."""

    bodies: tuple = ()
    A: Callable | None = None
    a: Callable | None = None
    labels: tuple = ("user row",)
    kind = None
    complex_safe = False          # A and a are taken as real functions only

    def markers(self) -> tuple:
        return tuple(Marker(f"{self.name}.{k}", b) for k, b in enumerate(self.bodies))

    def problems(self) -> list[str]:
        out = super().problems()
        if not callable(self.A):
            out.append(f"{self.title}: 'A' must be a callable A(q, t) -> (k, n) array, "
                       f"got {self.A!r}")
        if self.a is not None and not callable(self.a):
            out.append(f"{self.title}: 'a' must be a callable a(q, t) -> (k,) array or None, "
                       f"got {self.a!r}")
        if not self.bodies:
            out.append(f"{self.title}: give the bodies whose coordinates A acts on")
        return out

    def local_rates(self, x, xd, t, slices, markers) -> np.ndarray:
        """``A(x, t) xd + a(x, t)`` on the local coordinates ``x`` of the bodies."""
        k = len(self.labels)
        A = np.asarray(self.A(x, t), dtype=float)
        if A.shape != (k, len(x)):
            raise ValueError(f"{self.title}: A(q, t) must have shape ({k}, {len(x)}), "
                             f"got {A.shape}")
        c = A @ xd
        if self.a is not None:
            c = c + np.asarray(self.a(x, t), dtype=float).reshape(k)
        return c
