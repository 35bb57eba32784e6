"""Is the output rate fast enough for the elastic modes?  (Shannon–Nyquist)

Output sampled every ``dt_out`` resolves frequencies below ``f_N = 1 / (2 dt_out)``.
A flexible body's elastic mode of frequency ``f > f_N`` that the motion excites shows up
in the recorded signals (joint reactions, sensors, stresses) at the alias frequency

    f_a = |f - k / dt_out|,   k = round(f dt_out),

as slow "chatter" that is not in the motion.  The integration itself is not affected (it
takes every step); only what is written is.  :func:`aliasing_warnings` names the bodies
whose lowest elastic mode lies above ``f_N`` and the output interval that resolves it
with four samples per period.
"""
from __future__ import annotations

import numpy as np


def alias_frequency(f: float, dt_out: float) -> float:
    """``f_a = |f - k / dt_out|`` with ``k = round(f dt_out)`` [Hz] (module docstring)."""
    fs = 1.0 / dt_out
    return abs(f - round(f / fs) * fs)


def aliasing_warnings(model, dt_out: float) -> list[str]:
    """One line per flexible body of ``model`` whose lowest elastic mode is above the
    Nyquist frequency of the output interval ``dt_out`` [s]."""
    if not (dt_out and np.isfinite(dt_out) and dt_out > 0):
        return []
    f_N = 0.5 / dt_out
    out = []
    for b in model.bodies:
        freqs = np.asarray(getattr(getattr(b, "body", None), "frequencies", ()), dtype=float)
        freqs = np.sort(freqs[np.isfinite(freqs) & (freqs > 0)])
        if freqs.size == 0 or freqs[0] <= f_N:
            continue
        f1 = float(freqs[0])
        out.append(
            f"output rate {1 / dt_out:.4g} Hz resolves only frequencies below {f_N:.4g} Hz, "
            f"but flexible body '{b.name}' has its lowest elastic mode at {f1:.4g} Hz "
            f"({int(np.sum(freqs > f_N))} of {freqs.size} modes above): its vibration "
            f"appears in the recorded reactions, sensors and stresses as "
            f"{alias_frequency(f1, dt_out):.4g} Hz chatter; an output dt <= "
            f"{1 / (4 * f1):.3g} s resolves it")
    return out
