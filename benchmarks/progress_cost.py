"""What the progress callback costs: steps per second of a run with it and without.

    PYTHONPATH=<tree> python benchmarks/progress_cost.py models [--rounds 3]
    PYTHONPATH=<tree> python benchmarks/progress_cost.py case slider_crank [--t-end 2]

``models``: the rigid benchmark models (:mod:`run`, h = 1e-3 s over ``--t-end`` (1 s),
rho_inf = 0.9, every step an output as in the benchmarks, and ``output_dt = 0.01``)
through ``fm.simulate`` with ``progress=None`` and with ``progress=lambda *a: False``,
interleaved in one process; ``case``: a shipped case through :func:`flexmbs.case.run` as
``flexmbs run --quiet --no-plots --no-xdmf`` runs it (its progress callback checks the
stop signals), steps per second of the simulation's wall time.  One line per run.
"""
from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def models(rounds: int, t_end: float) -> None:
    sys.path.insert(0, str(HERE))
    from run import build

    import flexmbs as fm
    logging.disable(logging.WARNING)
    for name in ("rigid_pendulum", "rigid_fourbar"):
        fm.simulate(build(name), 0.05, 1e-3, rho_inf=0.9)          # compiled, warm
        for r in range(rounds):
            for out_dt, label, progress in ((None, "none", None),
                                            (None, "callback", lambda *a: False),
                                            (0.01, "none", None),
                                            (0.01, "callback", lambda *a: False)):
                res = fm.simulate(build(name), t_end, 1e-3, rho_inf=0.9, progress=progress,
                                  output_dt=out_dt)
                print(f"model {name} output_dt {out_dt} round {r} progress={label} "
                      f"steps {res.stats.steps} "
                      f"wall {res.wall_time:.4f} steps/s {res.stats.steps / res.wall_time:.0f}",
                      flush=True)


def case(name: str, t_end: float | None) -> None:
    from flexmbs.case import Overrides, load_case, run
    spec = load_case(ROOT / "cases" / name / "case.toml")
    with tempfile.TemporaryDirectory() as tmp:
        done = run(spec, Overrides(t_end=t_end), Path(tmp) / "o", plots=False, xdmf=False,
                   progress=lambda t0, t1: None, on_message=lambda m: None)
    res = done.result
    print(f"case {name} steps {res.stats.steps} wall {res.wall_time:.4f} "
          f"steps/s {res.stats.steps / res.wall_time:.0f}", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("models", "case"))
    p.add_argument("name", nargs="?")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--t-end", type=float, default=None)
    args = p.parse_args(argv)
    if args.what == "models":
        models(args.rounds, args.t_end or 1.0)
    else:
        case(args.name, args.t_end)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
