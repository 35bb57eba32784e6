"""All rigid and floating-frame bodies of a system packed for one compiled call.

:func:`flexmbs.bodies.ffrf_kernel.bodies_residual` evaluates every body's residual in one
call (a rigid body is the floating frame with ``n_q = 0``), instead of one Python call
per body.  The constant arrays of each body's :func:`~flexmbs.bodies.ffrf_kernel.
ffrf_residual` are flattened and concatenated; ``ptr[b]`` holds where body ``b``'s nine
arrays start.  The tangents of all bodies come the same way, through the C function
:func:`~flexmbs.bodies.ffrf_kernel.bodies_newton_values_c` and the pack's table
(:meth:`BodyPack.table`), which the compiled Newton matrix calls by its address too.
"""
from __future__ import annotations

import numpy as np

from typing import Protocol, runtime_checkable

from flexmbs.bodies import ffrf_kernel, ffrf_reference
from flexmbs.capability import Capability
from flexmbs.compiled import Table, arg, backend, use_compiled


@runtime_checkable
class FloatingFrameBody(Protocol, metaclass=Capability):
    """A body the packed kernels evaluate: a floating frame (a rigid body has ``n_q = 0``)
    that lays out its constants for :func:`~flexmbs.bodies.ffrf_kernel.ffrf_residual`
    (``kernel_args``) and :func:`~flexmbs.bodies.ffrf_kernel.ffrf_tangent`
    (``tangent_args``)."""

    n_coords: int

    def kernel_args(self) -> tuple: ...

    def tangent_args(self) -> tuple: ...


def _cat(parts) -> np.ndarray:
    """The flat arrays of all bodies end to end (one body's array as it is, no copy: the
    stiffening tensors of a single body can be hundreds of MB)."""
    if not parts:
        return np.zeros(0)
    return arg(parts[0]) if len(parts) == 1 else arg(np.concatenate(parts))


class BodyPack:
    """The bodies of a system (each with ``kernel_args``) at their coordinate offsets."""

    def __init__(self, bodies, offsets):
        args = [b.kernel_args() for b in bodies]
        self.off = np.array(offsets, dtype=np.int64)
        self.nq = np.array([b.n_coords - 7 for b in bodies], dtype=np.int64)
        self.m = np.array([a[0] for a in args], dtype=float)
        # int64 flags: the type the C callbacks pass, so the kernels have one signature
        self.stiff = np.array([bool(a[10]) for a in args], dtype=np.int64)
        flats = [[np.ravel(a[k]) for a in args] for k in range(1, 10)]
        sizes = np.array([[len(f[b]) for f in flats] for b in range(len(bodies))],
                         dtype=np.int64).reshape(len(bodies), 9)
        self.ptr = np.zeros((len(bodies) + 1, 9), dtype=np.int64)
        np.cumsum(sizes, axis=0, out=self.ptr[1:])
        self.flats = tuple(_cat(f) for f in flats)
        #: the arguments of ``bodies_residual`` after the state and gravity
        self.args = (self.off, self.nq, self.m, self.stiff, self.ptr, *self.flats)
        self._bodies = list(bodies)
        self._targs = None
        self._table: Table | None = None
        #: the number of coordinates the bodies span (``q[:n_b]``)
        self.n_b = int(max((o + 7 + n for o, n in zip(self.off, self.nq)), default=0))
        #: the number of values of :meth:`newton_values` (each body's block)
        self.n_values = int(sum((7 + n) ** 2 for n in self.nq))

    def tangent_pack(self) -> tuple:
        """``(tptr, 12 flats)`` of the tangents' own arrays (made on first use)."""
        if self._targs is None:
            args = [b.tangent_args()[:12] for b in self._bodies]
            flats = [[np.ravel(a[k]) for a in args] for k in range(12)]
            sizes = np.array([[len(f[b]) for f in flats] for b in range(len(args))],
                             dtype=np.int64).reshape(len(args), 12)
            tptr = np.zeros((len(args) + 1, 12), dtype=np.int64)
            np.cumsum(sizes, axis=0, out=tptr[1:])
            self._targs = (tptr, *(_cat(f) for f in flats))
        return self._targs

    def table(self) -> Table:
        """The context of :func:`~flexmbs.bodies.ffrf_kernel.bodies_newton_values_c`
        (rows :data:`~flexmbs.bodies.ffrf_kernel.N_PACK_TABLE`; made on first use)."""
        if self._table is None:
            tab = Table()
            tab.add_value(self.n_b)
            for a in (*self.args[:5], *self.flats[:5], *self.tangent_pack()):
                tab.add(a)
            if len(tab) != ffrf_kernel.N_PACK_TABLE:     # pragma: no cover - a layout change
                raise RuntimeError(f"BodyPack: table of {len(tab)} rows, the C function "
                                   f"expects {ffrf_kernel.N_PACK_TABLE}")
            self._table = tab
        return self._table

    def newton_values(self, q, qd, qdd, gravity, c_K, c_C, c_M) -> np.ndarray:
        """``c_K K + c_C C + c_M M`` of every body's tangent, blocks row-major, in body
        order (:func:`~flexmbs.bodies.ffrf_kernel.bodies_newton_values`; compiled: by its
        C function :func:`~flexmbs.bodies.ffrf_kernel.bodies_newton_values_c`)."""
        q, qd, qdd, gravity = (arg(x) for x in (q, qd, qdd, gravity))
        if not use_compiled():
            return ffrf_reference.bodies_newton_values(
                q, qd, qdd, gravity, float(c_K), float(c_C), float(c_M), *self.args[:5],
                *self.flats[:5], *self.tangent_pack())
        nb = self.n_b
        for name, x in (("q", q), ("qd", qd), ("qdd", qdd)):
            if x.ndim != 1 or x.shape[0] < nb:
                raise ValueError(f"BodyPack.newton_values: {name} must have at least {nb} "
                                 f"entries, got shape {x.shape}")
        if gravity.shape != (3,):
            raise ValueError(f"BodyPack.newton_values: gravity must have shape (3,), got "
                             f"{gravity.shape}")
        s = np.concatenate((q[:nb], qd[:nb], qdd[:nb], gravity, (c_K, c_C, c_M)))
        vals = np.full(self.n_values, np.nan)     # stays NaN if the kernel stops early
        ffrf_kernel.bodies_newton_values_c.compile().ctypes(
            vals.ctypes.data, s.ctypes.data, self.table().address)
        return vals

    @staticmethod
    def supports(bodies) -> bool:
        """Whether every body has a compiled floating-frame residual."""
        return bool(bodies) and all(isinstance(b, FloatingFrameBody) for b in bodies)

    def residual(self, q, qd, qdd, gravity) -> np.ndarray:
        """All body residuals stacked like ``q``."""
        return backend(ffrf_kernel, ffrf_reference).bodies_residual(
            arg(q), arg(qd), arg(qdd), arg(gravity), *self.args)
