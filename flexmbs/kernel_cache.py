"""Whether numba's cache holds the compiled kernels: the cold start of an installation.

numba compiles each kernel module's functions (``flexmbs/**/<name>_kernel.py``; the
helpers of :mod:`flexmbs.compiled` are compiled into them) when first needed and writes
the machine code beside the module, ``__pycache__/<name>.<function>-<line>.py<ver>.nbi``
and ``.nbc`` (or under ``$NUMBA_CACHE_DIR`` when that is set).  Every later process loads
it.  A module with no index file there has never been compiled: the first
``import flexmbs`` then spends a minute or more compiling (the C callbacks that PETSc
calls are compiled at import, the other kernels by the ``warm()`` of their module),
which :class:`ColdStart` says before it starts, and how long it took after.

This module imports nothing heavy, so that it can answer before numba is loaded.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


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


def _module_name(src: Path) -> str:
    """``flexmbs.a.b_kernel`` of the file ``src``."""
    return ".".join(("flexmbs", *src.relative_to(PACKAGE).with_suffix("").parts))


class ColdStart:
    """Says on ``stream`` (stderr) that the kernels are compiled, and how long it took:
    ``with ColdStart(): import ...``.  Silent when the cache holds them all."""

    def __init__(self, stream=None):
        self.stream = sys.stderr if stream is None else stream
        self.cold = cold_kernel_modules()
        self.seconds = 0.0

    def __enter__(self) -> ColdStart:
        self._t0 = time.perf_counter()
        if self.cold:
            self.stream.write(
                f"flexmbs: compiling the numerical kernels once for this installation "
                f"({len(self.cold)} modules have no compiled code yet; about 1-2 minutes on "
                f"2 cores, later imports load them in about 2 s) ...\n")
            self.stream.flush()
        return self

    def __exit__(self, *exc) -> None:
        if self.cold and exc[0] is None:
            for src in kernel_modules():
                module = sys.modules.get(_module_name(src))
                if module is not None and hasattr(module, "warm"):
                    module.warm()
        self.seconds = time.perf_counter() - self._t0
        if self.cold and exc[0] is None:
            self.stream.write(f"flexmbs: kernels compiled in {self.seconds:.0f} s\n")
            self.stream.flush()
