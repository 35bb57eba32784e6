"""Cost and agreement of a flexible body as a tree member (formulation "relative",
docs/relative.md) against the descriptor form (absolute), in one run (not a test).

The flexible slider-crank of ``flexible_steps.py`` (rigid crank driven at 150 rad/s, rod
0.4 x 0.01 x 0.01 m hex27 20x1x1 with 6 fixed-interface modes, rigid slider, the loop
closed by the prismatic cut joint): generalized-alpha, rho_inf = 0.9, h = 1 ms over
``--t-end`` seconds after a five-step warm-up of each form (it loads the compiled
kernels).  Prints the cost per step of each form and the largest difference of the
slider position [m] and of the rod's elastic coordinates between them (each form
carries its own O(h^2) error, so the difference is of that size, not the round-off).

    .venv/bin/python benchmarks/relative_flexible.py              # 0.2 s
    .venv/bin/python benchmarks/relative_flexible.py --t-end 1.0
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import flexible_steps

import flexmbs as fm

H = 1e-3


def run(model, formulation: str, t_end: float):
    """``(result, ms per step, Newton iterations per step)`` after a warm-up."""
    model.formulation = formulation
    fm.simulate(model, 5 * H, H, rho_inf=0.9, output_dt=5 * H)
    t0 = time.perf_counter()
    res = fm.simulate(model, t_end, H, rho_inf=0.9, output_dt=t_end / 10)
    wall = time.perf_counter() - t0
    return res, 1e3 * wall / res.stats.steps, res.stats.newton_iterations / res.stats.steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=0.2, help="simulated time [s]")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        model, n_q = flexible_steps.slider_crank(tmp)
    print(f"flexible slider-crank, {n_q} modes, h = {H * 1e3:g} ms, {args.t_end:g} s, "
          f"load average {os.getloadavg()[0]:.1f}")
    out = {}
    for f in ("absolute", "relative"):
        res, ms, newton = run(model, f, args.t_end)
        out[f] = res
        print(f"| {f} | {ms:.2f} ms/step | {newton:.2f} Newton/step |")
    a, r = out["absolute"], out["relative"]
    dx = np.abs(a.body_q("slider")[:, 0] - r.body_q("slider")[:, 0]).max()
    dq = np.abs(a.body_q("rod")[:, 7:] - r.body_q("rod")[:, 7:]).max()
    print(f"slider x: max difference {dx:.2e} m; rod q_e: max difference {dq:.2e} "
          f"(largest |q_e| {np.abs(a.body_q('rod')[:, 7:]).max():.2e})")


if __name__ == "__main__":
    main()
