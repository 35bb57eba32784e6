"""The part shared by the packs of force elements for the compiled whole step
(:class:`~flexmbs.system.spring_pack.SpringPack`, :class:`~flexmbs.system.friction_pack.
FrictionPack`): their force blocks and names, whether a block is one of theirs, and the
checks of a kernel's inputs (the kernels do not check indices: a short array would be
read past its end).  Each pack's integer table holds an element's two markers in its
columns 1 and 2.
"""
from __future__ import annotations

import numpy as np

from flexmbs.compiled import arg
from flexmbs.system.stacked import check_frames


def check_vectors(who: str, vectors) -> list:
    """The arrays of ``vectors`` ``[(name, array, shape)]`` through
    :func:`~flexmbs.compiled.arg`, in order, each checked to have its ``shape``
    (``ValueError`` naming ``who``)."""
    out = []
    for name, a, shape in vectors:
        a = arg(a)
        if a.shape != shape:
            raise ValueError(f"{who}: {name} must have shape {shape}, got {a.shape}")
        out.append(a)
    return out


def check_residual(who: str, r, n: int) -> None:
    """Raise ``ValueError`` naming ``who`` unless ``r`` is a C-contiguous float array
    (n,), the residual a kernel writes in place."""
    if r.shape != (n,) or r.dtype != float or not r.flags.c_contiguous:
        raise ValueError(f"{who}: r must be a C-contiguous float array of shape ({n},), "
                         f"got {r.dtype} {r.shape}")


class ElementPack:
    """The force blocks ``blocks`` of a pack whose integer table is ``table`` (k, ...)
    over ``n_q`` coordinates; errors name the pack by its class and element names."""

    def __init__(self, table: np.ndarray, blocks, n_q: int):
        self.blocks = tuple(blocks)
        self.names = tuple(fb.element.name for fb in blocks)
        self.n_q = n_q
        self._table = table

    def __len__(self) -> int:
        return len(self.names)

    def covers(self, fb) -> bool:
        """Whether force block ``fb`` is one of the pack's."""
        return any(fb is b for b in self.blocks)

    @property
    def who(self) -> str:
        """The pack in an error message: its class and its elements' names."""
        return f"{type(self).__name__} {self.names}"

    def checked(self, vectors, C, D) -> tuple:
        """``(*vectors, C, D)`` through :func:`~flexmbs.compiled.arg` after checking
        ``vectors`` ``[(name, array, shape)]`` in order, then the stacked frames ``C``,
        ``D`` for the markers the table reads (:func:`~flexmbs.system.stacked.
        check_frames`)."""
        out = check_vectors(self.who, vectors)
        C, D = arg(C), arg(D)
        M = int(self._table[:, 1:3].max()) + 1 if len(self) else 0
        check_frames(self.who, C, D, M, self.n_q)
        return (*out, C, D)

    def check_residual(self, r) -> None:
        """Raise ``ValueError`` unless ``r`` is a C-contiguous float array (n_q,), the
        residual a kernel writes in place (:func:`check_residual`)."""
        check_residual(self.who, r, self.n_q)
