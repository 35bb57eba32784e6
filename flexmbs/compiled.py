"""Arguments of the compiled (numba) kernels.

numba compiles one machine-code version per argument signature, and a read-only or
non-contiguous array is a different type from a writable C-contiguous one.  Every kernel
argument goes through :func:`arg`, so each kernel has exactly one signature: it is
compiled once (about 5-30 s, cached in ``__pycache__`` next to its module) and loaded
from the cache by every later process.
"""
from __future__ import annotations

import numpy as np

_F8 = np.dtype(float)


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
