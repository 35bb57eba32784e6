"""The "best peer" column of the side by side (``run.py --exudyn --best-peer``): each code
at the loosest Newton tolerance that keeps its key output within :data:`BOUND` of its own
tight reference (the rule is stated in :mod:`compare`'s docstring).

:func:`loosest_within` is the rule as a pure function; :func:`best_tolerances` runs the
two ladders of one model (one subprocess per code) and applies it.
"""
from __future__ import annotations

import math

from compare import SideBySideError, distance

#: key-output distance [m] (2-norm) allowed from the code's tight reference
BOUND = 1e-7
#: reference candidates, tightest first: the first that completes is the reference
REFERENCE = (1e-12, 1e-11, 1e-10)
#: Exudyn's ``newton.relativeTolerance`` [-] (its default 1e-8), tightest first
EXUDYN_LADDER = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4)
#: flexmbs's ``newton_rtol`` [-] (its default 1e-5), tightest first
FLEXMBS_LADDER = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)


class ToleranceLadderError(SideBySideError):
    """No reference completed, or not even the tightest rung of a ladder is within the bound
    (the message names the code, the model, the tolerances and the distances)."""


def reference_of(rungs, what: str = "") -> tuple[float, list]:
    """``(tolerance, key)`` of the tightest rung of ``rungs`` (``[(tolerance, key or
    None)]``, ``None``: the run failed) that completed."""
    for tol, key in sorted(rungs, key=lambda r: r[0]):
        if key is not None:
            return tol, key
    raise ToleranceLadderError(f"{what}: no reference run completed at the tolerances "
                               f"{[t for t, _ in rungs]}")


def loosest_within(rungs, reference, bound: float = BOUND, what: str = "") -> tuple[float, float]:
    """``(tolerance, distance)``: the loosest rung of ``rungs`` (``[(tolerance, key or
    None)]``) reached from the tightest by rungs that all completed with a key output
    within ``bound`` [m] of ``reference``.  The walk stops at the first rung that fails
    or leaves the bound: a looser rung that lands within it again is luck, not accuracy.
    Raises :class:`ToleranceLadderError` when the tightest rung already misses."""
    best = None
    for tol, key in sorted(rungs, key=lambda r: r[0]):
        d = math.inf if key is None else distance(key, reference)
        if not d <= bound:
            break
        best = (tol, d)
    if best is None:
        if not rungs:
            raise ToleranceLadderError(f"{what}: an empty tolerance ladder")
        tol, key = min(rungs, key=lambda r: r[0])
        found = "a failed run" if key is None else f"{distance(key, reference):.2e} m"
        raise ToleranceLadderError(
            f"{what}: no Newton tolerance keeps the key output within {bound:.0e} m of the "
            f"tight reference; the tightest rung ({tol:.0e}) gives {found}")
    return best


def choose(ladder_rows, reference_tolerances, what: str) -> dict:
    """Apply the rule to the rows of one code's ``--ladder`` run (reference candidates
    and ladder together): reference, best tolerance, the distance of every rung."""
    rungs = [(r["tolerance"], r["key"]) for r in ladder_rows]
    ref_tol, ref_key = reference_of([r for r in rungs if r[0] in reference_tolerances], what)
    ladder = [r for r in rungs if r[0] not in reference_tolerances]
    tol, d = loosest_within(ladder, ref_key, what=what)
    return {"reference_tolerance": ref_tol, "reference_key": ref_key, "tolerance": tol,
            "distance": d,
            "ladder": {f"{t:.0e}": (None if k is None else distance(k, ref_key))
                       for t, k in ladder}}
