"""Cost of the cut rows in the recursive formulation (not a test): planar revolute chains
of n links (``relative_scaling.chain``), with one cut row (an angular-velocity drive on
the tip's joint) and without, at their initial state, per call [ms]:

* the articulated factor of the modified Newton matrix and one solve
  (``RelativeDAE.newton_factor``);
* the constraint Jacobian ``G = [2 e^T; G_c]``, ``G_c = C_b T`` (the cut rows of the
  descriptor form's Jacobian times the velocity map ``T``: along the touched bodies'
  paths, :mod:`flexmbs.relative.cut_rows`; in versions before it through the dense
  n_qb x n_beta ``T``);
* the residual's rows ``g = [e.e - 1; c(q_b(beta))]`` (``RelativeDAE.constraint``);
* the absolute coordinates the rows take alone: ``(q_b, qd_b, Td betad)`` body by body
  (``RelativeDAE.body_coordinates``), or ``(q_b, T)`` (``absolute_coordinates``) in
  versions without it.

A version is measured by ``PYTHONPATH=<its folder>`` (the line ``flexmbs from`` names it).

Each call is at a new point (the joint angles moved by 1e-9 rad per call), so the DAE's
memos do not answer it.  Fastest of ``--repeat`` calls; the slope of log(time) against
log(n) over the whole range and over its last doubling.

    PYTHONPATH=. .venv/bin/python benchmarks/cut_rows_cost.py [--sizes 32,64,128,256]
        [--repeat 7] [--clock wall|process]
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import flexmbs as fm  # noqa: E402
from flexmbs.relative.dae import RelativeDAE  # noqa: E402
from relative_scaling import chain  # noqa: E402


#: the clock of :func:`fastest` (``--clock process``: the process's CPU time, less
#: disturbed than the wall time on a loaded machine)
CLOCK = [time.perf_counter]


def fastest(f, repeat: int) -> float:
    clock = CLOCK[0]
    best = np.inf
    for _ in range(repeat):
        t0 = clock()
        f()
        best = min(best, clock() - t0)
    return best


def costs(n: int, cut: bool, repeat: int) -> dict:
    model = chain(n, "recursive")
    if cut:
        model.drives.append(fm.AngularVelocityDrive("drive", joint=f"J{n - 1}", omega=1.0))
    dae = RelativeDAE(model.validate(), "recursive")
    q0 = dae.initial_q()
    z, lam = np.zeros(dae.n_q), np.zeros(dae.n_lam)
    rhs = np.random.default_rng(0).normal(size=dae.n_q + dae.n_lam)
    k = itertools.count(1)

    def point():
        return q0 + 1e-9 * next(k)

    out = {"factor": fastest(lambda: dae.newton_factor(point(), z, z, lam, 0.0, 4e6, 2e3,
                                                       1.0).solve(rhs), repeat)}
    if cut:
        out["G"] = fastest(lambda: dae.constraint_jacobian(point(), 0.0), repeat)
        out["c"] = fastest(lambda: dae.constraint(point(), 0.0), repeat)
        coordinates = getattr(dae, "body_coordinates", dae.absolute_coordinates)
        out["T"] = fastest(lambda: coordinates(point()), repeat)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="32,64,128,256")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--clock", choices=("wall", "process"), default="wall")
    args = ap.parse_args(argv)
    CLOCK[0] = time.process_time if args.clock == "process" else time.perf_counter
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"flexmbs from {fm.__file__}; load average {os.getloadavg()[0]:.2f}")
    print("| n | factor + solve, one cut row | G (G_c = C_b T) | g (c(q_b)) "
          "| q_b alone | factor + solve, no cut row |")
    print("|---:|---:|---:|---:|---:|---:|")
    rows = []
    for n in sizes:
        c, f = costs(n, True, args.repeat), costs(n, False, args.repeat)
        rows.append([c["factor"], c["G"], c["c"], c["T"], f["factor"]])
        print(f"| {n} | " + " | ".join(f"{1e3 * x:.2f}" for x in rows[-1]) + " |",
              flush=True)
    t, ln = np.log(np.array(rows)), np.log(np.array(sizes, float))
    names = ("factor + solve, one cut row", "G", "g", "q_b", "factor + solve, no cut row")
    for j, name in enumerate(names if len(sizes) > 1 else ()):     # slopes of 2+ sizes
        whole = np.polyfit(ln, t[:, j], 1)[0]
        last = (t[-1, j] - t[-2, j]) / (ln[-1] - ln[-2])
        print(f"slope {name}: {whole:.2f} ({sizes[0]}..{sizes[-1]}), {last:.2f} "
              f"({sizes[-2]}..{sizes[-1]})")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
