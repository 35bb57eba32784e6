"""Whether numba's cache holds the compiled kernels: the cold start of an installation.

numba compiles each kernel module's functions (``flexmbs/**/<name>_kernel.py``; the
helpers of :mod:`flexmbs.compiled` are compiled into them) when first needed and writes
the machine code beside the module, ``__pycache__/<name>.<function>-<line>.py<ver>.nbi``
and ``.nbc`` (or under ``$NUMBA_CACHE_DIR`` when that is set).  Every later process loads
it.  A module with no index file there has never been compiled: the first
``import flexmbs`` then compiles them all, which :class:`ColdStart` says before it starts,
and how long it took after.

The compile runs in two processes (on a machine with two cores or more).  Its *entry
points* (:func:`entry_points`) are the C callbacks that PETSc calls
(:class:`flexmbs.compiled.NativeFunction`, compiled with every kernel they call) and the
``warm()`` of the modules whose kernels are called from Python only.  :func:`partition`
gives :data:`WORKER_SHARE` (the Newton matrix's callback, the longest chain) to a second
process, which imports the kernel modules alone (:func:`import_bare`) and writes numba's
cache, while the first compiles the rest; the import then loads everything from the
cache.  A kernel both need (e.g. the constraint rows) is compiled by each, a few seconds.

This module imports nothing heavy, so that it can answer before numba is loaded.
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
import types
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent

#: the entry points (:func:`entry_points`) that the second process compiles
WORKER_SHARE = ("flexmbs.integrate.step_kernel:newton_dense_c",)


def kernel_modules() -> list[Path]:
    """The source files of the compiled kernels: every ``*_kernel.py`` of the package."""
    return sorted(PACKAGE.rglob("*_kernel.py"))


def cold_kernel_modules(cache_dir: str | None = None) -> list[str]:
    """The kernel modules (paths relative to the package) with no cached machine code.

    ``cache_dir``: numba's ``NUMBA_CACHE_DIR`` (default: that environment variable;
    unset or empty: the ``__pycache__`` beside each module).  A module whose
    ``__pycache__`` cannot be written (numba then caches elsewhere) is not reported."""
    cache_dir = os.environ.get("NUMBA_CACHE_DIR", "") if cache_dir is None else cache_dir
    cold = []
    for src in kernel_modules():
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


def entry_points(load=importlib.import_module) -> list[str]:
    """``module:name`` of everything the warm-up compiles: each C callback
    (``NativeFunction``) of each kernel module, and each module's ``warm`` function."""
    out = []
    for src in kernel_modules():
        module = load(module_name(src))
        for key, value in vars(module).items():
            if key == "warm" or type(value).__name__ == "NativeFunction":
                out.append(f"{module.__name__}:{key}")
    return out


def partition(entries: list[str], processes: int) -> list[list[str]]:
    """``entries`` for each process: :data:`WORKER_SHARE` for the second, the rest for the
    first (all for the first if ``processes`` is 1)."""
    if processes < 2:
        return [list(entries)]
    return [[e for e in entries if e not in WORKER_SHARE],
            [e for e in entries if e in WORKER_SHARE]]


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
        if self.cold:
            self.stream.write(
                f"flexmbs: compiling the numerical kernels once for this installation "
                f"({len(self.cold)} modules have no compiled code yet; {self.processes} "
                f"processes, about 50 s on 2 idle cores; later imports load them in "
                f"about 2 s) ...\n")
            self.stream.flush()
            # the second process starts first: its share is the longest chain
            worker = start_worker(list(WORKER_SHARE)) if self.processes > 1 else None
            compile_entries(partition(entry_points(), self.processes)[0])
            if worker is not None:
                worker.wait()
        return self

    def __exit__(self, *exc) -> None:
        if self.cold and exc[0] is None:
            compile_entries(entry_points())     # (loaded from the cache by now)
        self.seconds = time.perf_counter() - self._t0
        if self.cold and exc[0] is None:
            self.stream.write(f"flexmbs: kernels compiled in {self.seconds:.0f} s\n")
            self.stream.flush()
