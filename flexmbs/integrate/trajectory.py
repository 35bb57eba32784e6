"""Results of a time integration: :class:`Stats`, :class:`Trajectory` and the recorder."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

__all__ = ["Callback", "Stats", "Trajectory"]

#: ``callback(t, q, qd, qdd, lam, stats) -> bool | None``; a true return value stops.
Callback = Callable[[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, "Stats"],
                    "bool | None"]


@dataclasses.dataclass(frozen=True)
class Stats:
    """Work counters of an integration (cumulative up to the moment they are reported)."""

    steps: int = 0              # accepted steps
    rejected_steps: int = 0     # rejected by the error test or by a failed Newton solve
    newton_iterations: int = 0
    jacobian_evaluations: int = 0
    linear_solves: int = 0
    wall_time: float = 0.0      # [s]
    step_cuts: int = 0          # steps halved after a failed Newton solve
    min_step: float = float("nan")   # the smallest accepted step [s]

    def replace(self, **kw) -> Stats:
        return dataclasses.replace(self, **kw)


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    a.flags.writeable = False
    return a


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """States at the recorded times, arrays read-only.

    ``t`` (n_t,), ``q``/``qd``/``qdd`` (n_t, n_q), ``lam`` (n_t, n_lam), and ``stats``.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    stats: Stats

    def __post_init__(self):
        for f in ("t", "q", "qd", "qdd", "lam"):
            object.__setattr__(self, f, _readonly(np.array(getattr(self, f), dtype=float)))


class Recorder:
    """Collects states into lists of chunks (memory linear in the number of records): a
    row at a time (``__call__``) or a block of ``k`` rows with one copy of each array
    (:meth:`extend`); :meth:`trajectory` joins them in order."""

    KEYS = ("t", "q", "qd", "qdd", "lam")

    def __init__(self, n_q: int, n_lam: int):
        self.n_q, self.n_lam = n_q, n_lam
        self.rows: dict[str, list] = {k: [] for k in self.KEYS}

    def __call__(self, t, q, qd, qdd, lam) -> None:
        for k, v in zip(self.KEYS, (t, q, qd, qdd, lam)):
            self.rows[k].append(np.array(v, dtype=float, copy=True)[None])

    def extend(self, t, q, qd, qdd, lam) -> None:
        """Record ``k`` rows at once: ``t`` (k,), ``q``/``qd``/``qdd`` (k, n_q), ``lam``
        (k, n_lam), each copied once (the same rows as ``k`` calls)."""
        for key, v in zip(self.KEYS, (t, q, qd, qdd, lam)):
            self.rows[key].append(np.array(v, dtype=float, copy=True))

    def trajectory(self, stats: Stats) -> Trajectory:
        r = self.rows
        shape = {"q": self.n_q, "qd": self.n_q, "qdd": self.n_q, "lam": self.n_lam}
        arrs = {k: (np.concatenate(r[k]) if r[k] else np.zeros((0, shape[k])))
                for k in shape}
        return Trajectory(t=np.concatenate(r["t"]) if r["t"] else np.zeros(0), stats=stats,
                          **arrs)
