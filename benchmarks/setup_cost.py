"""The fixed cost of a ``simulate`` call (assembly, rank test, consistent initial
conditions, the compiled loop's tables, the two output records) against its steps.

    python benchmarks/setup_cost.py [--models rigid_pendulum,rigid_fourbar] [--repeat 15]

For each model of ``benchmarks/exudyn/flexmbs_models.py`` (after a five-step warm-up
that loads the compiled kernels): the best of ``--repeat`` calls of ``simulate`` over 1
step and over 1000 steps (h = 1e-3 s, rho_inf = 0.9, outputs at the start and the end,
as ``run.py --exudyn`` times it), on the same model object, and the 1-step call on a new
model object each time (checks made once per immutable object are then made again).
The 1-step time is the set-up; (1000-step - 1-step) / 999 the cost of a step.

To compare two trees, run it with each on ``PYTHONPATH`` in turn, alternating (the
machine's speed drifts by 10-15 %)::

    PYTHONPATH=<other tree> .venv/bin/python benchmarks/setup_cost.py
    .venv/bin/python benchmarks/setup_cost.py
"""
from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "exudyn"))


def best_of(fn, repeat: int) -> float:
    """The fastest of ``repeat`` calls of ``fn()`` [s]."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(name: str, repeat: int) -> dict:
    import flexmbs as fm
    import flexmbs_models as M
    tmp = tempfile.mkdtemp()
    model, _, _ = M.build(name, tmp, False)
    M._warm_up(model)

    def run(m, n):
        return fm.simulate(m, n * M.H, M.H, rho_inf=M.RHO_INF, output_dt=n * M.H)

    one = best_of(lambda: run(model, 1), repeat)
    many = best_of(lambda: run(model, 1000), repeat)
    fresh = float("inf")
    for _ in range(repeat):
        m2, _, _ = M.build(name, tmp, False)      # (built outside the clock)
        t0 = time.perf_counter()
        run(m2, 1)
        fresh = min(fresh, time.perf_counter() - t0)
    return {"model": name, "setup_ms": 1e3 * one, "run_1000_ms": 1e3 * many,
            "step_us": 1e6 * (many - one) / 999, "setup_new_object_ms": 1e3 * fresh}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="rigid_pendulum,rigid_fourbar")
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)
    import flexmbs
    print(f"flexmbs from {Path(flexmbs.__file__).parent}; best of {args.repeat} calls")
    print(f"{'model':24s} {'1 step [ms]':>12s} {'1000 steps [ms]':>16s} "
          f"{'per step [us]':>14s} {'1 step, new model [ms]':>23s}")
    for name in args.models.split(","):
        r = measure(name, args.repeat)
        print(f"{name:24s} {r['setup_ms']:12.3f} {r['run_1000_ms']:16.3f} "
              f"{r['step_us']:14.2f} {r['setup_new_object_ms']:23.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
