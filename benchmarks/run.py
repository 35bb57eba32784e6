"""flexmbs benchmarks: steps per second and solver effort, printed as a table and JSON.

    python benchmarks/run.py [--models rigid_pendulum,rigid_fourbar] [--json out.json]
                             [--petsc "-fmbs_pc_factor_mat_solver_type umfpack"]

Each model runs at h = 1e-3 s over 1 s (generalized-alpha, rho_inf = 0.9, the default
direct LU) in a fresh subprocess, so the peak memory (max RSS) is the model's own.
Exudyn 1.13.6 figures (C++, 2-core machine of the same kind, PEER_EXUDYN.md) are
printed beside ours for comparison; they are not re-measured here.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXUDYN = {"rigid_pendulum": 86361, "rigid_fourbar": 23059, "cantilever_10": 8789,
          "flexible_pendulum_8": 3140, "flexible_slider_crank_12": 1993}


def build(name):
    """The benchmark models (same definitions as the peer's table)."""
    import numpy as np

    import flexmbs as fm
    if name == "rigid_pendulum":
        rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
        return fm.System(gravity=(0, -9.81, 0), name=name).add(
            fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))
    if name == "rigid_fourbar":
        sys.path.insert(0, os.path.join(HERE, "..", "tests", "system"))
        from fourbar import build as fourbar
        model, _ = fourbar(np.deg2rad(30.0), 6.0, "RRRR")
        return model
    flex = os.path.join(HERE, "flexible_steps.py")
    if os.path.exists(flex):
        sys.path.insert(0, HERE)
        import flexible_steps
        return flexible_steps.build(name)
    raise SystemExit(f"unknown benchmark model '{name}'")


def run_one(name, t_end=1.0, h=1e-3, petsc=""):
    import logging
    logging.disable(logging.WARNING)
    import flexmbs as fm
    if petsc:
        from flexmbs.integrate import petsc_options_from_args
        petsc_options_from_args(petsc.split())
    model = build(name)
    t0 = time.perf_counter()
    res = fm.simulate(model, t_end, h, rho_inf=0.9, output_dt=t_end)
    wall = time.perf_counter() - t0
    st = res.stats
    steps = st.steps
    return {"model": name, "steps": steps, "wall_s": wall, "steps_per_s": steps / wall,
            "newton_per_step": st.newton_iterations / steps,
            "jacobians": st.jacobian_evaluations,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "n_q": int(res.q.shape[1]), "exudyn_steps_per_s": EXUDYN.get(name)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="rigid_pendulum,rigid_fourbar")
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--petsc", default="", help="PETSc options for the solver, e.g. "
                    "'-fmbs_pc_factor_mat_solver_type umfpack' (quote them)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one, petsc=args.petsc)))
        return 0
    rows = []
    for name in args.models.split(","):
        out = subprocess.run([sys.executable, __file__, "--one", name, f"--petsc={args.petsc}"],
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(f"{name}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
            continue
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    head = (f"{'model':28s} {'n_q':>5s} {'steps/s':>9s} {'Newton/step':>11s} {'Jacobians':>9s} "
            f"{'peak MB':>8s} {'Exudyn steps/s':>14s} {'ratio':>6s}")
    print(head)
    print("-" * len(head))
    for r in rows:
        ex = r["exudyn_steps_per_s"]
        ratio = f"{r['steps_per_s'] / ex:6.3f}" if ex else "     -"
        print(f"{r['model']:28s} {r['n_q']:5d} {r['steps_per_s']:9.1f} {r['newton_per_step']:11.2f} "
              f"{r['jacobians']:9d} {r['peak_rss_mb']:8.0f} {ex or '-':>14} {ratio}")
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=2)
    print(f"\nwritten {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
