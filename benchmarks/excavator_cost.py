"""Cost per step of the shipped excavator arm (cases/excavator_arm: flexible boom and
stick, three PID-controlled servo cylinders): prints a table of wall time per step,
Newton iterations per step and, with ``--profile``, the share of the force elements, the
sensor feeds and the recording of outputs (cProfile cumulative times).

    .venv/bin/python benchmarks/excavator_cost.py [--t-end 1.0] [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

import flexmbs as fm
from flexmbs.case.builder import build
from flexmbs.case.loader import load_case

CASE = Path(__file__).resolve().parents[1] / "cases" / "excavator_arm" / "case.toml"

#: (label, function name in the profile) of the shares reported
SHARES = (("force elements", "contributions"), ("sensor feeds", "signals"),
          ("recording outputs", "_record"), ("Newton matrix", "newton_matrix"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=1.0, help="simulated time [s]")
    ap.add_argument("--dt", type=float, default=2e-3, help="time step [s]")
    ap.add_argument("--profile", action="store_true", help="report where the time goes")
    args = ap.parse_args()
    system = build(load_case(CASE)).system
    fm.simulate(system, t_end=5 * args.dt, dt=args.dt)              # warm-up
    prof = cProfile.Profile() if args.profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    r = fm.simulate(system, t_end=args.t_end, dt=args.dt)
    if prof:
        prof.disable()
    wall = time.perf_counter() - t0
    steps = getattr(r.stats, "steps", len(r.t) - 1)
    print(f"{'quantity':<28s} value")
    print(f"{'steps':<28s} {steps}")
    print(f"{'Newton iterations / step':<28s} {r.stats.newton_iterations / steps:.2f}")
    print(f"{'wall time [s]':<28s} {wall:.2f}")
    print(f"{'cost per step [ms]':<28s} {1e3 * wall / steps:.2f}"
          + ("  (profiled: slower)" if prof else ""))
    if prof:
        stats = pstats.Stats(prof).stats
        total = sum(v[2] for v in stats.values())        # total time over functions
        cum = {}
        for (_, _, name), v in stats.items():
            cum[name] = max(cum.get(name, 0.0), v[3])
        whole = cum.get("simulate", total)
        for label, name in SHARES:
            print(f"{'share: ' + label:<28s} {100 * cum.get(name, 0.0) / whole:.0f} %")


if __name__ == "__main__":
    main()
