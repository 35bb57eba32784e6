"""Arguments of the compiled (numba) kernels, and the helpers of compiled C callbacks.

numba compiles one machine-code version per argument signature, and a read-only or
non-contiguous array is a different type from a writable C-contiguous one.  Every kernel
argument goes through :func:`arg`, so each kernel has exactly one signature: it is
compiled once (about 5-30 s, cached in ``__pycache__`` next to its module) and loaded
from the cache by every later process.

For C callbacks (numba ``cfunc``s that PETSc calls directly): :class:`Table` (the
addresses and shapes of a callback's arrays, its one context pointer), the readers
``f1`` ... ``i2`` of its rows, and ``call_c2``/``call_c3`` (a C function by address).

The kernel boundary.  Each compiled kernel module ``<name>_kernel.py`` has its numpy
reference beside it, and one switch chooses between them for the whole package: the
environment variable ``FLEXMBS_KERNELS`` = ``compiled`` (default) or ``reference``, read
once at import into :data:`KERNELS`; :func:`use_compiled` is what every choice asks.
"""
from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np
from llvmlite import ir
from numba import carray, cfunc, njit, types
from numba.core import event
from numba.extending import intrinsic, register_jitable

_F8 = np.dtype(float)

#: ``compiled`` or ``reference``: the backend of every kernel (module docstring)
KERNELS = os.environ.get("FLEXMBS_KERNELS", "compiled").strip().lower() or "compiled"
#: what is wrong with ``FLEXMBS_KERNELS`` ("" if nothing): the command line refuses to run
#: (one line, exit 2), the Python API raises at the first choice of a kernel
KERNELS_PROBLEM = "" if KERNELS in ("compiled", "reference") else (
    f"environment variable FLEXMBS_KERNELS: expected 'compiled' or 'reference', got "
    f"{KERNELS!r}")


def use_compiled() -> bool:
    """Whether the compiled kernels run (``FLEXMBS_KERNELS`` is not ``reference``)."""
    if KERNELS_PROBLEM:
        raise ValueError(KERNELS_PROBLEM)
    return KERNELS == "compiled"


def backend(kernel, reference):
    """``kernel`` if :func:`use_compiled`, else ``reference``: the choice between a kernel
    module ``<name>_kernel`` and its reference ``<name>_reference`` (same function names,
    same arguments), e.g. ``backend(ffrf_kernel, ffrf_reference).ffrf_residual(...)``.
    Asked at each call, so that changing :data:`KERNELS` in a running process (a test)
    switches every caller that uses it."""
    return kernel if use_compiled() else reference


def arg(x) -> np.ndarray:
    """``x`` as a writable, C-contiguous float64 array (no copy when it already is one)."""
    if type(x) is np.ndarray and x.dtype == _F8 and x.flags.c_contiguous \
            and x.flags.writeable:
        return x
    return np.array(x, dtype=float, order="C")


def state(who: str, n: int, q, qd, qdd, gravity) -> tuple:
    """``(q, qd, qdd, gravity)`` through :func:`arg`, after checking their shapes (the
    kernels do not check indices: a short vector would be read past its end)."""
    out = tuple(arg(x) for x in (q, qd, qdd, gravity))
    for name, x, shape in zip(("q", "qd", "qdd", "gravity"), out, ((n,), (n,), (n,), (3,))):
        if x.shape != shape:
            raise ValueError(f"{who}: {name} must have shape {shape}, got {x.shape}")
    return out


# --- native callbacks ---------------------------------------------------------------
# PETSc calls a solver's residual and convergence test through C function pointers.  A
# numba ``cfunc`` is such a pointer: PETSc then calls the compiled code directly, with no
# Python frame per call (petsc4py's Python callbacks cost several microseconds each).
# The cfunc gets its data as one C context pointer: the address of an int64 *table* whose
# rows ``[address, s0, s1, s2, s3]`` describe the arrays it works on (kept alive by the
# Python object that made the table), and calls PETSc's C functions (``VecGetArray``...)
# by addresses stored in the table too (so the compiled code holds no process-specific
# address and is cached like every kernel).

_I8P = ir.IntType(8).as_pointer()


@intrinsic
def call_c2(typingctx, fn, a, b):  # pragma: no cover - compiled
    """``((int32 (*)(void *, void *)) fn)(a, b)``: a C function by its address."""
    sig = types.int32(types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        f, x, y = args
        fnty = ir.FunctionType(ir.IntType(32), [_I8P, _I8P])
        ptr = builder.inttoptr(f, fnty.as_pointer())
        return builder.call(ptr, [builder.inttoptr(x, _I8P), builder.inttoptr(y, _I8P)])
    return sig, codegen


@intrinsic
def call_c3(typingctx, fn, a, b, c):  # pragma: no cover - compiled
    """``((int32 (*)(void *, void *, void *)) fn)(a, b, c)``."""
    sig = types.int32(types.intp, types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        f, x, y, z = args
        fnty = ir.FunctionType(ir.IntType(32), [_I8P, _I8P, _I8P])
        ptr = builder.inttoptr(f, fnty.as_pointer())
        return builder.call(ptr, [builder.inttoptr(v, _I8P) for v in (x, y, z)])
    return sig, codegen


def _pointer_intrinsic(numba_type, llvm_type):
    @intrinsic
    def to_pointer(typingctx, address):  # pragma: no cover - compiled
        sig = types.CPointer(numba_type)(types.intp)

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], llvm_type.as_pointer())
        return sig, codegen
    return to_pointer


f8_pointer = _pointer_intrinsic(types.float64, ir.DoubleType())
i8_pointer = _pointer_intrinsic(types.int64, ir.IntType(64))
i4_pointer = _pointer_intrinsic(types.int32, ir.IntType(32))


@register_jitable
def f1(tab, k):  # pragma: no cover - compiled
    """Row ``k`` of a table as a 1-d float64 array (``f2``...: 2-d..., ``i1``, ``i2``: int64).
    ``register_jitable`` (an overload): compiled once, for an int64 ``k``, and linked
    into each caller (a ``njit`` kernel would compile once per literal ``k``; with
    ``inline="always"`` numba copied its IR at each of the kernels' ~170 calls)."""
    return carray(f8_pointer(tab[k, 0]), tab[k, 1])


@register_jitable
def f2(tab, k):  # pragma: no cover - compiled
    return carray(f8_pointer(tab[k, 0]), (tab[k, 1], tab[k, 2]))


@register_jitable
def f3(tab, k):  # pragma: no cover - compiled
    return carray(f8_pointer(tab[k, 0]), (tab[k, 1], tab[k, 2], tab[k, 3]))


@register_jitable
def f4(tab, k):  # pragma: no cover - compiled
    return carray(f8_pointer(tab[k, 0]), (tab[k, 1], tab[k, 2], tab[k, 3], tab[k, 4]))


@register_jitable
def i1(tab, k):  # pragma: no cover - compiled
    return carray(i8_pointer(tab[k, 0]), tab[k, 1])


@register_jitable
def i2(tab, k):  # pragma: no cover - compiled
    return carray(i8_pointer(tab[k, 0]), (tab[k, 1], tab[k, 2]))


class NativeFunction:
    """A C callback: the numba ``cfunc`` of ``signature`` (cached like every kernel),
    compiled when first needed, at the first :attr:`address` or by :meth:`compile`.  Made
    by the decorator :func:`native`, so that importing a kernel module compiles nothing
    and the warm-up (:mod:`flexmbs.kernel_cache`) can compile each callback in the process
    of its choice."""

    def __init__(self, signature, py_func):
        self.signature = signature
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self._compiled = None

    def compile(self):
        """The numba ``CFunc`` (compiled now or loaded from numba's cache, once; a compile
        during a run is said in one line by :data:`FIRST_COMPILE`, as for ``njit``)."""
        if self._compiled is None:
            self._compiled = FIRST_COMPILE.native(
                self.py_func, lambda: cfunc(self.signature, cache=True)(self.py_func))
        return self._compiled

    @property
    def address(self) -> int:
        """The address of the compiled C function."""
        return self.compile().address


def native(signature):
    """``@native(sig)``: the function as a :class:`NativeFunction` of ``sig``."""
    return lambda py_func: NativeFunction(signature, py_func)


class FirstCompile(event.Listener):
    """Says in one line on ``stream`` (stderr) when a kernel of flexmbs is compiled during
    a run (a kernel of a feature that the first import leaves to its first use,
    :data:`flexmbs.kernel_cache.FEATURES`, a kernel that the warm-up did not compile, or
    new argument types): ``flexmbs: compiling the kernel <module>.<name> at its first use
    ... 3.1 s``, the first part before the compile starts, so that the wait is explained.  numba announces a compile (event ``numba:compile``) only on a miss of
    its cache; the kernels it compiles inside that one are part of it."""

    #: seconds a C callback's load may take before it is said to be compiling
    NATIVE_NOTE_AFTER = 0.5

    def __init__(self, stream=None):
        self.stream = stream
        self._depth = 0
        self._t0 = None
        self.installed = False

    def _write(self, text: str) -> None:
        stream = sys.stderr if self.stream is None else self.stream
        stream.write(text)
        stream.flush()

    def native(self, py_func, make):
        """``make()``, the numba ``CFunc`` of ``py_func``, said like a kernel's compile.
        numba fires no ``numba:compile`` event for a C callback, and whether it loads from
        its cache is known only after (``cache_hits``): the line starts when the call has
        taken :attr:`NATIVE_NOTE_AFTER` seconds (a load takes milliseconds), and ends with
        the time; a compile shorter than that is said in one line after it."""
        if not self.installed or self._depth or not py_func.__module__.startswith("flexmbs."):
            return make()       # (inside another compile: part of its line)
        name = f"{py_func.__module__}.{py_func.__name__}"
        said = []

        def say():
            said.append(True)
            self._write(f"flexmbs: compiling the kernel {name} at its first use (once per "
                        f"installation) ...")
        timer = threading.Timer(self.NATIVE_NOTE_AFTER, say)
        t0 = time.perf_counter()
        timer.start()
        self._depth += 1            # the kernels compiled inside are part of this line
        res = None
        try:
            res = make()
        finally:
            self._depth -= 1
            timer.cancel()
            timer.join()
            if said and res is None:
                self._write(" failed\n")
        dt = time.perf_counter() - t0
        if said:
            self._write(f" {dt:.1f} s\n" if res.cache_hits == 0 else
                        f" loaded from the cache, {dt:.1f} s\n")
        elif res.cache_hits == 0:
            self._write(f"flexmbs: compiled the kernel {name} at its first use (once per "
                        f"installation) in {dt:.1f} s\n")
        return res

    def on_start(self, ev) -> None:
        self._depth += 1
        func = getattr(ev.data["dispatcher"], "py_func", None)
        if self._depth == 1 and getattr(func, "__module__", "").startswith("flexmbs."):
            stream = sys.stderr if self.stream is None else self.stream
            stream.write(f"flexmbs: compiling the kernel {func.__module__}.{func.__name__} "
                         f"at its first use (once per installation) ...")
            stream.flush()
            self._t0 = time.perf_counter()

    def on_end(self, ev) -> None:
        self._depth -= 1
        if self._depth == 0 and self._t0 is not None:
            stream = sys.stderr if self.stream is None else self.stream
            stream.write(f" {time.perf_counter() - self._t0:.1f} s\n")
            stream.flush()
            self._t0 = None

    def install(self) -> FirstCompile:
        """Listen to numba's compiles from now on (:meth:`remove` ends it)."""
        event.register("numba:compile", self)
        self.installed = True
        return self

    def remove(self) -> None:
        event.unregister("numba:compile", self)
        self.installed = False


#: the listener that ``import flexmbs`` installs (after its cold start, if any)
FIRST_COMPILE = FirstCompile()


#: the array-interface type strings a :class:`Table` takes (float64, int64)
_TABLE_TYPES = (np.dtype(np.float64).str, np.dtype(np.int64).str)
_PAD = ((0, 0, 0, 0), (0, 0, 0), (0, 0), (0,), ())


class Table:
    """An int64 table ``[address, s0, s1, s2, s3]`` per array, for a cfunc's context.

    ``add(a)`` appends an array (float64 or int64, C-contiguous; kept alive here) and
    returns its row; ``add_value(v)`` an integer in column 0 (e.g. a C function's
    address).  ``address`` is what the cfunc receives (valid while this object lives).
    """

    def __init__(self):
        self._rows: list[list[int]] = []
        self._keep: list[np.ndarray] = []
        self._tab: np.ndarray | None = None

    def add(self, a: np.ndarray) -> int:
        # (the array interface in one lookup: a set-up adds about a hundred arrays)
        ai = a.__array_interface__
        shape = ai["shape"]
        if ai["typestr"] not in _TABLE_TYPES or ai["strides"] is not None or len(shape) > 4:
            raise TypeError(f"Table: need a C-contiguous float64/int64 array of ndim <= 4, "
                            f"got {a.dtype} {a.shape}")
        self._keep.append(a)
        self._rows.append((ai["data"][0], *shape, *_PAD[len(shape)]))
        return len(self._rows) - 1

    def add_value(self, v: int) -> int:
        self._rows.append([int(v), 0, 0, 0, 0])
        return len(self._rows) - 1

    @property
    def address(self) -> int:
        if self._tab is None:
            self._tab = np.array(self._rows, dtype=np.int64).reshape(-1, 5)
            self._address = self._tab.ctypes.data      # (``ctypes.data`` costs µs)
        return self._address

    @property
    def array(self) -> np.ndarray:
        """The table itself, (rows, 5) int64 (for calls from Python)."""
        self.address
        return self._tab

    def __len__(self) -> int:
        return len(self._rows)
