"""Whether numba's cache holds the compiled kernels: the cold start of an installation.

numba compiles each kernel module's functions (``flexmbs/**/<name>_kernel.py``; the
helpers of :mod:`flexmbs.compiled` are compiled into them) when first needed and writes
the machine code beside the module, ``__pycache__/<name>.<function>-<line>.py<ver>.nbi``
and ``.nbc`` (or under ``$NUMBA_CACHE_DIR`` when that is set).  Every later process loads
it.  A module with no index file there has never been compiled: the first
``import flexmbs`` then compiles the *core*, which :class:`ColdStart` says before it
starts, and how long it took after.  The core is what every run of a rigid or flexible
model needs (the residual, the Newton matrix, the bodies' tangents, the step loop, the
outputs); the kernels of some models only (:data:`FEATURES`: the sparse constraint rows
and the spring elements of systems above the stacked rows' size, joint friction and the
spring elements in the compiled step) compile at their first use in a run, which :class:`flexmbs.compiled.FirstCompile` says in one line
before it starts (a few seconds each); so do a few small kernels that Python calls
directly and no entry point compiles (e.g. ``bodies_residual`` and the frames'
``label_rows`` in the demo case, ``fill_frame`` and ``label_hessian_sum`` with gears).

The compile runs in two processes (on a machine with two cores or more).  Its *entry
points* (:func:`entry_points`, without the :data:`FEATURES`) are the C callbacks that
PETSc calls (:class:`flexmbs.compiled.NativeFunction`, compiled with every kernel they
call) and the ``warm()`` of the modules whose kernels are called from Python only.  :func:`partition`
splits them by their measured compile time (:data:`COST`): the longest first, each to the
process with the least so far, the entry points that share a chain of kernels
(:data:`TOGETHER`) as one.  A second process imports the kernel modules alone
(:func:`import_bare`) and writes numba's cache, while the first compiles the rest; the
import then loads everything from the cache.  A kernel both need (e.g. the constraint
rows) is compiled by each, a few seconds.

This module imports nothing heavy, so that it can answer before numba is loaded.
"""
from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path
from typing import NoReturn

PACKAGE = Path(__file__).resolve().parent

#: CPU seconds of each entry point's compile from an empty cache, one after the other
#: in one process in the order of :func:`entry_points` (``benchmarks/compile_cost.py``,
#: ``docs/performance.md``, "Cold start", after rounds 14 and 15: one run at load ~2,
#: 2026-11-28): what :func:`partition` balances.  A kernel that several entry points
#: link is counted in the first (e.g. the friction chain in ``friction_kernel.warm``,
#: which the step's friction callbacks link too)
COST = {
    "flexmbs.bodies.ffrf_kernel:bodies_newton_values_c": 14.5,
    "flexmbs.integrate.step_kernel:newton_dense_c": 9.6,
    "flexmbs.integrate.step_kernel:table_residual_c": 8.4,
    "flexmbs.system.local_rows_kernel:warm": 8.6,
    "flexmbs.forces.friction_kernel:warm": 6.1,
    "flexmbs.forces.spring_kernel:warm": 4.5,
    "flexmbs.integrate.steps_kernel:warm": 3.8,
    "flexmbs.forces.spring_local_kernel:warm": 3.2,
    "flexmbs.bodies.flexible_set_kernel:warm": 1.4,
    "flexmbs.integrate.increments_kernel:increment_test_c": 1.3,
    "flexmbs.integrate.step_forces_kernel:friction_newton_c": 1.2,
    "flexmbs.integrate.step_forces_kernel:friction_residual_c": 1.2,
    "flexmbs.integrate.step_forces_kernel:spring_newton_c": 0.8,
    "flexmbs.integrate.step_forces_kernel:spring_residual_c": 0.6,
    "flexmbs.integrate.genalpha_kernel:warm": 0.4,
    "flexmbs.system.output_point_kernel:warm": 0.4,
    "flexmbs.integrate.projection_kernel:warm": 1.0,
    "flexmbs.bodies.rigid_set_kernel:warm": 0.4,
    "flexmbs.integrate.jacobian_kernel:dense_jacobian_c": 0.3,
    "flexmbs.integrate.step_kernel:affine_residual_c": 0.1,
}
#: the entry points that serve some models only, with what needs them: not compiled by
#: the first import (the *core* is every other entry point), but at their first use in a
#: run, which :class:`flexmbs.compiled.FirstCompile` says in one line before it starts.
#: The compiled step's residual and Newton matrix call joint friction and the springs
#: by the addresses of their own C functions (``step_forces_kernel``, round 14), so the
#: core links neither chain.
FEATURES = {
    "flexmbs.system.local_rows_kernel:warm":
        "the sparse constraint rows of a system above the stacked rows' size "
        "(flexmbs.system.stacked.MAX_N coordinates)",
    "flexmbs.integrate.step_forces_kernel:friction_residual_c":
        "joint friction in the compiled step's residual",
    "flexmbs.integrate.step_forces_kernel:friction_newton_c":
        "joint friction in the compiled step's Newton matrix",
    "flexmbs.integrate.step_forces_kernel:spring_residual_c":
        "spring-dampers, bushings, point forces and stops in the compiled step's residual",
    "flexmbs.integrate.step_forces_kernel:spring_newton_c":
        "spring-dampers, bushings, point forces and stops in the compiled step's Newton "
        "matrix",
    "flexmbs.forces.spring_kernel:warm":
        "spring-dampers, bushings, point forces and stops evaluated from Python",
    "flexmbs.forces.friction_kernel:warm":
        "joint friction evaluated from Python",
    "flexmbs.forces.spring_local_kernel:warm":
        "spring-dampers, bushings, point forces and stops of a system above the "
        "stacked rows' size",
}
#: the cost of an entry point missing from :data:`COST`
DEFAULT_COST = 1.0
#: entry points compiled in the same process, in this order (the later ones link the
#: kernels the first compiled: in another process they would compile them again); none
#: now: the callbacks call each other by address (``affine_residual_c`` calls
#: ``table_residual_c``, the Newton matrix ``ffrf_kernel.bodies_newton_values_c``)
TOGETHER: tuple[tuple[str, ...], ...] = ()


def kernel_modules() -> list[Path]:
    """The source files of the compiled kernels: every ``*_kernel.py`` of the package."""
    return sorted(PACKAGE.rglob("*_kernel.py"))


def feature_modules() -> list[Path]:
    """The kernel modules whose entry points are all :data:`FEATURES` (compiled at their
    first use, not by the first import)."""
    names = {entry.split(":")[0] for entry in FEATURES}
    return [src for src in kernel_modules() if module_name(src) in names]


def core_modules() -> list[Path]:
    """The kernel modules that the first import compiles: all but :func:`feature_modules`
    (including those with no entry point of their own, compiled as parts of others)."""
    features = set(feature_modules())
    return [src for src in kernel_modules() if src not in features]


def cold_kernel_modules(cache_dir: str | None = None, features: bool = False) -> list[str]:
    """The core kernel modules (:func:`core_modules`; with ``features``, every kernel
    module) with no cached machine code, as paths relative to the package: what the first
    import has to compile.  A feature module not compiled yet is not a cold start: it
    compiles at its first use.

    ``cache_dir``: numba's ``NUMBA_CACHE_DIR`` (default: that environment variable;
    unset or empty: the ``__pycache__`` beside each module).  A module whose
    ``__pycache__`` cannot be written (numba then caches elsewhere) is not reported."""
    cache_dir = os.environ.get("NUMBA_CACHE_DIR", "") if cache_dir is None else cache_dir
    cold = []
    for src in kernel_modules() if features else core_modules():
        pattern = f"{src.stem}.*.nbi"
        if cache_dir:
            found = any(Path(cache_dir).rglob(pattern))
        else:
            cache = src.parent / "__pycache__"
            if not os.access(cache if cache.exists() else src.parent, os.W_OK):
                continue
            found = any(cache.glob(pattern))
        if not found:
            cold.append(str(src.relative_to(PACKAGE)))
    return cold


def module_name(src: Path) -> str:
    """``flexmbs.a.b_kernel`` of the file ``src``."""
    return ".".join(("flexmbs", *src.relative_to(PACKAGE).with_suffix("").parts))


def import_bare(name: str):
    """Import the kernel module ``name`` without running the ``__init__`` of its packages
    (which import the whole program): each package becomes an empty module whose path is
    its directory.  For a process that only compiles kernels."""
    parts = name.split(".")
    for i in range(1, len(parts)):
        pkg = ".".join(parts[:i])
        if pkg not in sys.modules:
            module = types.ModuleType(pkg)
            module.__path__ = [str(PACKAGE.joinpath(*parts[1:i]))]
            sys.modules[pkg] = module
    return importlib.import_module(name)


def entry_points(load=importlib.import_module, features: bool = True) -> list[str]:
    """``module:name`` of everything the warm-up can compile: each C callback
    (``NativeFunction``) of each kernel module, and each module's ``warm`` function;
    without ``features``, the core only (not the :data:`FEATURES`)."""
    out = []
    for src in kernel_modules():
        module = load(module_name(src))
        for key, value in vars(module).items():
            if key == "warm" or type(value).__name__ == "NativeFunction":
                entry = f"{module.__name__}:{key}"
                if features or entry not in FEATURES:
                    out.append(entry)
    return out


def partition(entries: list[str], processes: int, cost: dict | None = None) -> list[list[str]]:
    """``entries`` for each of ``processes``: the groups of :data:`TOGETHER` (the other
    entries alone) by decreasing compile time (``cost``, default :data:`COST`), each to
    the process whose share is the shortest so far (the first on a tie)."""
    cost = COST if cost is None else cost
    units, grouped = [], set()
    for group in TOGETHER:
        unit = [e for e in group if e in entries]
        if unit:
            units.append(unit)
            grouped.update(unit)
    units += [[e] for e in entries if e not in grouped]
    units.sort(key=lambda u: -sum(cost.get(e, DEFAULT_COST) for e in u))
    shares = [[] for _ in range(max(1, processes))]
    load = [0.0] * len(shares)
    for unit in units:
        k = load.index(min(load))
        shares[k] += unit
        load[k] += sum(cost.get(e, DEFAULT_COST) for e in unit)
    return shares


def compile_entries(entries: list[str], load=importlib.import_module) -> None:
    """Compile (or load from numba's cache) each ``module:name`` of ``entries``."""
    for entry in entries:
        module, name = entry.split(":")
        target = getattr(load(module), name)
        target() if name == "warm" else target.compile()


def start_worker(entries: list[str]) -> subprocess.Popen:
    """A second Python process compiling ``entries`` (kernel modules imported bare);
    its output is discarded: whatever it fails to compile, the first process compiles."""
    code = ("import sys, types; sys.path.insert(0, sys.argv[1]); "
            "sys.modules['flexmbs'] = p = types.ModuleType('flexmbs'); "
            "p.__path__ = [sys.argv[1] + '/flexmbs']; "
            "from flexmbs.kernel_cache import compile_entries, import_bare; "
            "compile_entries(sys.argv[2:], import_bare)")
    return subprocess.Popen([sys.executable, "-c", code, str(PACKAGE.parent), *entries],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


#: the exit status of a command stopped by Ctrl-C (128 + SIGINT, the shell's convention)
EXIT_INTERRUPTED = 130


def command_is_main() -> bool:
    """Whether this process is the ``flexmbs`` command: its console script (``argv[0]``
    named ``flexmbs``) or ``python -m flexmbs`` (``sys.orig_argv``; while ``-m`` imports
    the package, ``argv[0]`` is only ``-m``)."""
    if Path(sys.argv[0] if sys.argv else "").name.removesuffix(".exe") == "flexmbs":
        return True
    orig = list(getattr(sys, "orig_argv", ()))
    return any(a == "-m" and b in ("flexmbs", "flexmbs.cli.main")
               for a, b in zip(orig, orig[1:]))


def end_interrupted_import() -> NoReturn:
    """The end of the ``flexmbs`` command stopped by Ctrl-C while ``import flexmbs`` ran
    (the kernels' cold compile, :class:`ColdStart`): one line on stderr and the exit
    status :data:`EXIT_INTERRUPTED`, as after a Ctrl-C in a run, not a traceback.

    The process ends here (``os._exit`` once stdout and stderr are flushed), without the
    interpreter's finalization: a compile cut short leaves llvmlite objects whose
    finalizers print "Exception ignored ... Traceback" while the interpreter tears down.
    Nothing is lost: numba writes each compiled kernel to its cache when it is compiled,
    and the command has opened no file of its own yet."""
    sys.stderr.write("flexmbs: interrupted while loading flexmbs (what was compiled is "
                     "kept; the rest compiles at the next start)\n")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(EXIT_INTERRUPTED)


class ColdStart:
    """Says on ``stream`` (stderr) that the kernels are compiled, and how long it took:
    ``with ColdStart(): import ...``.  Silent when the cache holds them all."""

    def __init__(self, stream=None, processes: int | None = None):
        self.stream = sys.stderr if stream is None else stream
        #: processes that compile (default: 2 if the machine has 2 cores or more)
        self.processes = min(2, os.cpu_count() or 1) if processes is None else processes
        self.cold = cold_kernel_modules()
        self.seconds = 0.0

    def __enter__(self) -> ColdStart:
        self._t0 = time.perf_counter()
        self._previous = None
        if self.cold:
            self.stream.write(
                f"flexmbs: compiling the numerical kernels once for this installation "
                f"({len(self.cold)} modules have no compiled code yet; {self.processes} "
                f"processes, about 25 s on 2 idle cores; later imports load them in "
                f"about 2 s) ...\n")
            self.stream.flush()
            own, *others = partition(entry_points(features=False), self.processes)
            workers = [start_worker(share) for share in others if share]
            self._end_on_interrupt(workers)
            try:
                compile_entries(own)
                for worker in workers:
                    worker.wait()
            except BaseException:       # Ctrl-C: no compile left running behind us
                for worker in workers:
                    worker.kill()
                    worker.wait()
                self._restore()
                raise
        return self

    def _end_on_interrupt(self, workers: list[subprocess.Popen]) -> None:
        """In the ``flexmbs`` command (:func:`command_is_main`, main thread), Ctrl-C during
        the cold compile ends the command at once (:func:`end_interrupted_import`, the
        workers killed) from a SIGINT handler, instead of a ``KeyboardInterrupt``: raised
        inside one of numba's ctypes callbacks, that exception is swallowed ("Exception
        ignored on calling ctypes callback function") and the compile then fails with a
        RuntimeError and a traceback.  A library caller keeps Python's
        ``KeyboardInterrupt``."""
        if not command_is_main() or threading.current_thread() is not threading.main_thread():
            return

        def interrupted(signum, frame) -> None:
            for worker in workers:
                worker.kill()
                worker.wait()
            end_interrupted_import()
        self._previous = signal.signal(signal.SIGINT, interrupted)

    def _restore(self) -> None:
        """Python's SIGINT handler again (after :meth:`_end_on_interrupt`)."""
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def __exit__(self, *exc) -> None:
        try:
            if self.cold and exc[0] is None:
                compile_entries(entry_points(features=False))   # (from the cache by now)
        finally:
            self._restore()
        self.seconds = time.perf_counter() - self._t0
        if self.cold and exc[0] is None:
            self.stream.write(f"flexmbs: kernels compiled in {self.seconds:.0f} s\n")
            self.stream.flush()
