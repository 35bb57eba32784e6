"""flexmbs benchmarks: steps per second and solver effort, printed as a table and JSON.

    python benchmarks/run.py [--models rigid_pendulum,rigid_fourbar] [--json out.json]
                             [--petsc "-fmbs_pc_factor_mat_solver_type umfpack"]
    python benchmarks/run.py --exudyn [--models ...] [--repeat 2] [--exudyn-fast] [--docs]
                             [--best-peer]
    python benchmarks/run.py --stiffening-cost [--models ...] [--repeat 2] [--docs]

Each model runs at h = 1e-3 s over 1 s (generalized-alpha, rho_inf = 0.9, the default
direct LU) in a fresh subprocess, so the peak memory (max RSS) is the model's own.

``--exudyn``: side by side with Exudyn, measured in the same run.  The six models
(``benchmarks/exudyn/flexmbs_models.py``; the sixth, ``spatial_linkage_7x20``, a spatial
three-loop linkage of seven flexible links, is in ``benchmarks/exudyn/spatial_linkage.py``)
are built in flexmbs, their data (nodes, our FE M and K, interfaces, bodies, joints,
initial state) exported to ``.npz`` and rebuilt in Exudyn by
``benchmarks/exudyn/exudyn_models.py`` inside its own venv (``benchmarks/.exudyn-venv``,
made by ``benchmarks/exudyn/make_env.sh`` if missing).
Both sides run in subprocesses, interleaved model by model, ``--repeat`` times; the table
gives the better steps/s of each side, the ratio flexmbs/Exudyn, and the key output at
t_end from both codes with their difference (the proof that the models are the same).
``--best-peer`` adds a second table: Exudyn's fast module and flexmbs, each at the loosest
Newton tolerance whose key output stays within 1e-7 m of its own tight reference (the
rule: ``benchmarks/exudyn/compare.py``).

``--stiffening-cost``: flexmbs steps/s of the four flexible models of ``--exudyn`` with
geometric stiffening off (as in the side by side: Exudyn has none) and on.
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
    if name in FLEX_STEPS:
        return _flexible_steps_model(name)
    if name == SPATIAL:
        return _spatial_linkage_model()
    raise SystemExit(f"unknown benchmark model '{name}'; known: rigid_pendulum, rigid_fourbar, "
                     f"{', '.join(FLEX_STEPS)}, {SPATIAL}")


FLEX_STEPS = {"cantilever_10": "cantilever", "flexible_pendulum_8": "pendulum",
              "flexible_slider_crank_12": "slider_crank"}


SPATIAL = "spatial_linkage_7x20"


def _spatial_linkage_model():
    """The side-by-side model of ``benchmarks/exudyn/spatial_linkage.py`` (as compared
    with Exudyn: linear elastic force, gravity -y)."""
    import tempfile
    sys.path.insert(0, os.path.join(HERE, "exudyn"))
    import flexmbs_models
    with tempfile.TemporaryDirectory() as tmp:
        return flexmbs_models.build(SPATIAL, tmp)[0]


def _flexible_steps_model(name):
    """The flexible models of ``flexible_steps.py`` (stiffening on, crank at 150 rad/s)."""
    import tempfile
    sys.path.insert(0, HERE)
    import flexible_steps
    if name == "flexible_slider_crank_12":
        with tempfile.TemporaryDirectory() as tmp:
            return flexible_steps.slider_crank(tmp)[0]
    return getattr(flexible_steps, FLEX_STEPS[name])()[0]


def run_one(name, t_end=1.0, h=1e-3, petsc=""):
    import logging
    logging.disable(logging.WARNING)
    import flexmbs as fm
    if petsc:
        from flexmbs.integrate import petsc_options_from_args
        petsc_options_from_args(petsc.split())
    model = build(name)
    t0 = time.perf_counter()       # warm-up: loads the compiled kernels (reported apart)
    fm.simulate(model, 5 * h, h, rho_inf=0.9, output_dt=5 * h)
    warmup = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = fm.simulate(model, t_end, h, rho_inf=0.9, output_dt=t_end)
    wall = time.perf_counter() - t0
    st = res.stats
    steps = st.steps
    return {"model": name, "steps": steps, "wall_s": wall, "steps_per_s": steps / wall,
            "warmup_s": warmup,
            "newton_per_step": st.newton_iterations / steps,
            "jacobians": st.jacobian_evaluations,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "n_q": int(res.q.shape[1])}


def run_one_exudyn(name, export, petsc="", newton_rtol=None, ladder=None, stiffening=False):
    """The flexmbs side of ``--exudyn``: build, export the data for Exudyn, time (or, with
    ``ladder``, one run per Newton tolerance, for ``--best-peer``)."""
    import tempfile
    if petsc:
        from flexmbs.integrate import petsc_options_from_args
        petsc_options_from_args(petsc.split())
    sys.path.insert(0, os.path.join(HERE, "exudyn"))
    import flexmbs_models
    with tempfile.TemporaryDirectory() as tmp:
        if ladder:
            return flexmbs_models.ladder(name, tmp, [float(t) for t in ladder.split(",")])
        return flexmbs_models.run(name, tmp, export, newton_rtol, stiffening)


def _models(args, known, flag):
    """The ``--models`` of ``flag`` (default: all of ``known``), or None after a message."""
    names = args.models.split(",") if args.models else list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"{flag}: unknown model(s) {unknown}; known: {', '.join(known)}", file=sys.stderr)
        return None
    return names


def _written(rows, args, **docs):
    """Write the JSON results and, with ``--docs``, the generated block of
    docs/performance.md (``docs``: ``marker``, ``table`` of ``write_docs_block``)."""
    from compare import write_docs_block
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=2)
    print(f"\nwritten {args.json}")
    if args.docs:
        doc = os.path.join(HERE, "..", "docs", "performance.md")
        write_docs_block(rows, doc, "python benchmarks/run.py " + " ".join(sys.argv[1:]),
                         **docs)
        print(f"updated {os.path.normpath(doc)}")
    return 0


def _side_main(args, flag, known, compute, show, **docs):
    """Run ``compute(names)`` on the ``--models`` among ``known``, ``show`` the rows,
    write JSON (and docs); 2 with a one-line message on a bad model name or a failed run."""
    from compare import SideBySideError
    names = _models(args, known, flag)
    if names is None:
        return 2
    try:
        rows = compute(names)
    except SideBySideError as exc:
        print(f"run.py {flag}: {exc}", file=sys.stderr)
        return 2
    show(rows)
    return _written(rows, args, **docs)


def exudyn_main(args):
    sys.path.insert(0, os.path.join(HERE, "exudyn"))
    from compare import print_best_peer, print_table, side_by_side
    from flexmbs_models import NAMES

    def show(rows):
        print_table(rows)
        if args.best_peer:
            print_best_peer(rows)
    return _side_main(args, "--exudyn", NAMES,
                      lambda names: side_by_side(names, repeat=max(1, args.repeat),
                                                 petsc=args.petsc, fast=args.exudyn_fast,
                                                 best_peer=args.best_peer), show)


def stiffening_main(args):
    """``--stiffening-cost``: the flexible models of ``--exudyn``, flexmbs only."""
    sys.path.insert(0, os.path.join(HERE, "exudyn"))
    from compare import print_stiffening, stiffening_cost, stiffening_markdown
    from flexmbs_models import FLEXIBLE
    return _side_main(args, "--stiffening-cost", FLEXIBLE,
                      lambda names: stiffening_cost(names, repeat=max(1, args.repeat),
                                                    petsc=args.petsc),
                      print_stiffening, marker="stiffening:table", table=stiffening_markdown)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None, help="comma-separated (default: "
                    "rigid_pendulum,rigid_fourbar; with --exudyn: all six)")
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--petsc", default="", help="PETSc options for the solver, e.g. "
                    "'-fmbs_pc_factor_mat_solver_type umfpack' (quote them)")
    ap.add_argument("--exudyn", action="store_true",
                    help="side by side with Exudyn, measured in the same run (all six models "
                    "unless --models is given)")
    ap.add_argument("--repeat", type=int, default=2,
                    help="--exudyn: runs per side and model, interleaved; the better is shown")
    ap.add_argument("--docs", action="store_true",
                    help="--exudyn: write the table into docs/performance.md (its generated "
                    "block <!-- exudyn:table -->)")
    ap.add_argument("--exudyn-fast", action="store_true",
                    help="--exudyn: Exudyn's fast module (EXUDYN_MODULE=fast, no range checks)")
    ap.add_argument("--best-peer", action="store_true",
                    help="--exudyn: add the best-peer table: Exudyn's fast module and flexmbs, "
                    "each at the loosest Newton tolerance whose key output stays within 1e-7 m "
                    "of its own tight reference (benchmarks/exudyn/compare.py)")
    ap.add_argument("--stiffening-cost", action="store_true",
                    help="flexmbs steps/s of the flexible side-by-side models with geometric "
                    "stiffening off and on (interleaved, --repeat runs each)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--newton-rtol", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--ladder", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--stiffening", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--one-exudyn", help=argparse.SUPPRESS)
    ap.add_argument("--export", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one, petsc=args.petsc)))
        return 0
    if args.one_exudyn:
        print(json.dumps(run_one_exudyn(args.one_exudyn, args.export, petsc=args.petsc,
                                        newton_rtol=args.newton_rtol, ladder=args.ladder,
                                        stiffening=args.stiffening)))
        return 0
    if args.stiffening_cost:
        return stiffening_main(args)
    if args.exudyn:
        return exudyn_main(args)
    rows = []
    for name in (args.models or "rigid_pendulum,rigid_fourbar").split(","):
        out = subprocess.run([sys.executable, __file__, "--one", name, f"--petsc={args.petsc}"],
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(f"{name}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
            continue
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    head = (f"{'model':28s} {'n_q':>5s} {'steps/s':>9s} {'Newton/step':>11s} {'Jacobians':>9s} "
            f"{'peak MB':>8s} {'warm-up s':>9s}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['model']:28s} {r['n_q']:5d} {r['steps_per_s']:9.1f} "
              f"{r['newton_per_step']:11.2f} {r['jacobians']:9d} {r['peak_rss_mb']:8.0f} "
              f"{r['warmup_s']:9.2f}")
    print("\nsteps/s exclude the warm-up (five steps first in each process; it loads the "
          "compiled kernels)")
    print("\n(Exudyn side by side, measured in the same run: python benchmarks/run.py --exudyn)")
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=2)
    print(f"\nwritten {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
