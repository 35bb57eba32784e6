"""Campbell diagram: natural frequencies of the linearised system against a parameter.

For each parameter value ``p`` (typically a drive speed ``Omega``), the model
``model_factory(p)`` is assembled, its reference state found (by default the relative
equilibrium :func:`~flexmbs.post.linearize.steady_state`), linearised and its lowest
``n_modes`` oscillatory modes computed (:func:`~flexmbs.post.linearize.modes`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from flexmbs.post.linearize import linearize, modes, steady_state

__all__ = ["CampbellTable", "campbell", "plot_campbell"]


@dataclass(frozen=True)
class CampbellTable:
    """``frequencies[i, k]`` [Hz] and ``damping_ratios[i, k]`` of mode ``k`` at
    ``parameter[i]`` (NaN where fewer modes exist)."""

    parameter: np.ndarray
    frequencies: np.ndarray
    damping_ratios: np.ndarray
    name: str = "parameter"

    def __post_init__(self):
        for k in ("parameter", "frequencies", "damping_ratios"):
            a = np.array(getattr(self, k), dtype=float)
            a.flags.writeable = False
            object.__setattr__(self, k, a)

    def rows(self) -> list[list[float]]:
        """``[p, f_1, ..., f_n]`` per parameter value (for printing)."""
        return [[float(p), *map(float, f)] for p, f in zip(self.parameter, self.frequencies)]


def campbell(model_factory: Callable[[float], object], parameter_values: Sequence[float], *,
             n_modes: int = 6, state: Callable | None = None, t: float = 0.0,
             name: str = "parameter") -> CampbellTable:
    """Frequencies [Hz] of the lowest ``n_modes`` oscillatory modes for each parameter.

    Parameters
    ----------
    model_factory : ``p -> System``
    parameter_values : the values of ``p``
    n_modes : number of modes per value
    state : ``(asm, t) -> State`` reference state (default :func:`steady_state`)
    t : time of the reference state [s]
    """
    values = np.asarray(list(parameter_values), dtype=float)
    freq = np.full((values.size, n_modes), np.nan)
    zeta = np.full((values.size, n_modes), np.nan)
    find = state or (lambda asm, tt: steady_state(asm, t=tt))
    for i, p in enumerate(values):
        asm = model_factory(float(p)).assemble()
        res = modes(linearize(asm, find(asm, t)), n_modes=n_modes)
        k = res.frequencies.size
        freq[i, :k] = res.frequencies
        zeta[i, :k] = res.damping_ratios
    return CampbellTable(values, freq, zeta, name)


def plot_campbell(table: CampbellTable, *, ax=None, excitation_orders: Sequence[float] = (1.0,),
                  parameter_in_rad_s: bool = True, labels: Sequence[str] | None = None):
    """Plot ``table`` (frequencies vs parameter) with the excitation lines
    ``f = k Omega / 2 pi`` (if the parameter is a speed in rad/s). Returns the axes."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for k in range(table.frequencies.shape[1]):
        lab = labels[k] if labels is not None and k < len(labels) else f"mode {k + 1}"
        ax.plot(table.parameter, table.frequencies[:, k], "o-", ms=3, label=lab)
    if parameter_in_rad_s:
        p = np.array([table.parameter.min(), table.parameter.max()])
        for order in excitation_orders:
            ax.plot(p, order * p / (2 * np.pi), "k--", lw=0.8, label=f"{order:g} x rev")
    ax.set_xlabel(table.name)
    ax.set_ylabel("frequency [Hz]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax
