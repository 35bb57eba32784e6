"""Cost of one time step of the five side-by-side models, flexmbs alone (not a test).

    .venv/bin/python benchmarks/step_cost.py [--models cantilever_10,flexible_pendulum_8]
        [--seconds 8] [--petsc "-fmbs_newton_mat_type aij"] [--python-callbacks]
        [--log-view] [--outputs] [--api]

Each model (``benchmarks/exudyn/flexmbs_models.py``: h = 1e-3 s, rho_inf = 0.9) is built,
warmed up (five steps: the compiled kernels are loaded), then simulated for 0.2 s again
and again for ``--seconds``; the table gives the *fastest* run's cost per step (the
machine's noise only ever adds time), its steps/s, Newton iterations and Newton matrices
per step.  ``--outputs``: the cost of an output point too, the fastest run with an
output at every step minus the fastest with one output, per step (all datasets recorded:
the velocity projection, reactions, joint coordinates, energies, health checks).
``--api`` (with ``--outputs``): also the cost of an output point of the integrator alone,
``flexmbs.integrate.integrate`` (``GeneralizedAlpha.run``) storing the states (time,
``q``, projected ``qd``, ``qdd``, ``lam``) at every step against one output, no
callback.  To
compare two states of the code on the same machine in the same hour, run
the script of this tree against the other checkout's package:
``PYTHONPATH=/path/to/other/checkout .venv/bin/python benchmarks/step_cost.py``.

``--python-callbacks``: PETSc calls the Python forms of the residual, the convergence
test and the Jacobian instead of the compiled C callbacks (round 4 of
docs/performance.md).  ``--log-view``: the fastest of ten more 0.2 s runs with PETSc's logging on, its
wall time and PETSc's event times per step (``SNESSolve``, residual and Jacobian
callbacks, ``KSPSolve``, factorisations); the whole step minus ``SNESSolve`` is the
Python around the solves.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
T_RUN, H = 0.2, 1e-3
LOG_RUNS = 10
EVENTS = ("SNESSolve", "SNESFunctionEval", "SNESJacobianEval", "KSPSolve", "PCSetUp")


def python_callbacks() -> None:
    """Make PETSc call the Python callbacks (the compiled ones' reference forms)."""
    from flexmbs.integrate import _newton
    from flexmbs.integrate.affine_step import AffineStep
    AffineStep.native = property(lambda self: False)
    init = _newton.NewtonSolver.__init__

    def python_test(self, *a, **k):
        init(self, *a, native_test=False, **k)
    _newton.NewtonSolver.__init__ = python_test


def fastest_step(model, seconds: float, output_dt: float = T_RUN):
    """``(best cost per step [s], runs, last result)``: after a warm-up, the model run
    from 0 to ``T_RUN`` at ``H`` (outputs every ``output_dt``) again and again for
    ``seconds``, the fastest kept."""
    import flexmbs as fm
    fm.simulate(model, 5 * H, H, rho_inf=0.9, output_dt=5 * H)
    best, runs, t_start = float("inf"), 0, time.perf_counter()
    while runs == 0 or time.perf_counter() - t_start < seconds:
        t0 = time.perf_counter()
        res = fm.simulate(model, T_RUN, H, rho_inf=0.9, output_dt=output_dt)
        best = min(best, (time.perf_counter() - t0) / res.stats.steps)
        runs += 1
    return best, runs, res


def fastest_api(model, seconds: float, every: bool) -> float:
    """The fastest cost per step [s] of ``integrate`` (``GeneralizedAlpha.run``) from
    the model's consistent start to ``T_RUN``, states stored at every step or at the end
    only, run again and again for ``seconds``."""
    import importlib

    import numpy as np
    from flexmbs.integrate import integrate
    prep = importlib.import_module("flexmbs.simulate").prepare(model)
    n = int(round(T_RUN / H))
    times = np.arange(1, n + 1) * H if every else [T_RUN]

    def run():
        return integrate(prep.asm, prep.initial.q, prep.initial.qd, T_RUN, h=H,
                         rho_inf=0.9, output_times=times)
    run()
    best, t_start = float("inf"), time.perf_counter()
    while best == float("inf") or time.perf_counter() - t_start < seconds:
        t0 = time.perf_counter()
        tr = run()
        best = min(best, (time.perf_counter() - t0) / tr.stats.steps)
    return best


def measure(name: str, seconds: float, log_view: bool, outputs: bool = False,
            api: bool = False) -> dict:
    import flexmbs as fm
    import flexmbs_models
    model, _, _ = flexmbs_models.build(name, tempfile.mkdtemp())
    best, runs, res = fastest_step(model, seconds)
    st = res.stats
    row = {"model": name, "us_per_step": best * 1e6, "steps_per_s": 1.0 / best,
           "runs": runs, "newton_per_step": st.newton_iterations / st.steps,
           "jac_per_step": st.jacobian_evaluations / st.steps}
    if outputs:
        every, _, _ = fastest_step(model, seconds, output_dt=H)
        row["us_per_output"] = (every - best) * 1e6
        if api:
            one = fastest_api(model, seconds / 2, every=False)
            row["us_per_output_api"] = (fastest_api(model, seconds / 2, every=True)
                                        - one) * 1e6
    if log_view:
        from petsc4py import PETSc
        PETSc.Log.begin()
        best = None
        for _ in range(LOG_RUNS):      # the fastest of a few logged runs
            before = {e: PETSc.Log.Event(e).getPerfInfo()["time"] for e in EVENTS}
            t0 = time.perf_counter()
            res = fm.simulate(model, T_RUN, H, rho_inf=0.9, output_dt=T_RUN)
            ev = {"whole step": time.perf_counter() - t0, **{
                e: PETSc.Log.Event(e).getPerfInfo()["time"] - before[e] for e in EVENTS}}
            ev = {e: v / res.stats.steps * 1e6 for e, v in ev.items()}
            if best is None or ev["whole step"] < best["whole step"]:
                best = ev
        row["events_us_per_step"] = best
    return row


def main(argv=None) -> int:
    sys.path.insert(0, os.path.join(HERE, "exudyn"))
    from flexmbs_models import NAMES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(NAMES))
    ap.add_argument("--seconds", type=float, default=8.0, help="per model (default 8)")
    ap.add_argument("--petsc", default="", help="PETSc options, e.g. "
                    "\"-fmbs_newton_mat_type aij\"")
    ap.add_argument("--python-callbacks", action="store_true")
    ap.add_argument("--log-view", action="store_true")
    ap.add_argument("--outputs", action="store_true", help="measure an output point too")
    ap.add_argument("--api", action="store_true", help="with --outputs: an output point "
                    "of the integrator alone too (GeneralizedAlpha.run storing states)")
    args = ap.parse_args(argv)
    names = args.models.split(",")
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        ap.error(f"--models: unknown {unknown}; known: {', '.join(NAMES)}")
    logging.disable(logging.WARNING)
    if args.petsc:
        from flexmbs.integrate import petsc_options_from_args
        petsc_options_from_args(args.petsc.split())
    if args.python_callbacks:
        python_callbacks()
    print(f"{'model':26s} {'us/step':>9s} {'steps/s':>9s} {'Newton/step':>12s} "
          f"{'Jac/step':>9s} {'runs':>5s}" + (f" {'us/output':>10s}" if args.outputs else "")
          + (f" {'us/output, run':>15s}" if args.outputs and args.api else ""))
    for name in names:
        r = measure(name, args.seconds, args.log_view, args.outputs, args.api)
        print(f"{name:26s} {r['us_per_step']:9.1f} {r['steps_per_s']:9.0f} "
              f"{r['newton_per_step']:12.2f} {r['jac_per_step']:9.3f} {r['runs']:5d}"
              + (f" {r['us_per_output']:10.1f}" if args.outputs else "")
              + (f" {r['us_per_output_api']:15.1f}" if "us_per_output_api" in r else ""),
              flush=True)
        if args.log_view:
            print("    PETSc, us per step: " + ", ".join(
                f"{e} {v:.1f}" for e, v in r["events_us_per_step"].items()))
    print(f"(fastest of repeated {T_RUN} s runs, h = {H:g} s, rho_inf = 0.9; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
