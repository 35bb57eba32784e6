"""``flexmbs run CASE.toml [--out DIR] [PETSc options...]``: a case from file to results.

1. validate the case; preprocess (or take from the cache) every flexible body;
2. assemble, print the DOF summary and redundant constraints;
3. simulate with a progress bar on stderr, writing ``DIR/<case>.h5`` step by step;
4. write ``DIR/<case>_<body>.xdmf`` (+ ``.h5``) per flexible body, PNG plots in
   ``DIR/plots/``, and print a summary.

SIGINT (Ctrl-C) or SIGTERM stops the run after the current output step: the result
file then holds every step computed so far with status "interrupted", and the exit
status is 130 (SIGINT) or 143 (SIGTERM).  A second signal stops at once.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

import numpy as np

from flexmbs.errors import FlexmbsError


class RunError(FlexmbsError):
    """Invalid command-line arguments of ``flexmbs run``."""


def add_case_arguments(p) -> None:
    """Arguments shared by ``flexmbs run`` and ``flexmbs sweep``: the case, the output
    folder and the overrides of the case's solver/output settings."""
    p.add_argument("case", help="case file (TOML)")
    p.add_argument("--out", default=None, help="output folder (default: [output] directory "
                   "of the case, 'results' next to the case file)")
    p.add_argument("--t-end", type=float, default=None, help="override [solver] t_end [s]")
    p.add_argument("--dt", type=float, default=None, help="override [solver] dt [s]")
    p.add_argument("--output-dt", type=float, default=None, help="override [output] dt [s]")
    p.add_argument("--body-dir", default=None, help="cache folder of reduced flexible bodies "
                   "(default: bodies/ next to the case file)")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="simulate a case file and write results, XDMF and plots",
        description="Simulate CASE.toml: preprocess flexible bodies (cached), check the "
                    "model, integrate with a progress bar, write DIR/<case>.h5, an XDMF "
                    "time series per flexible body and PNG plots.  Unknown arguments are "
                    "PETSc options, e.g. -fmbs_pc_factor_mat_solver_type mumps.")
    add_case_arguments(p)
    p.add_argument("--no-xdmf", action="store_true", help="skip the XDMF time series")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


# -- progress ---------------------------------------------------------------------------------
class ProgressBar:
    """Plain-text progress on ``stream``, at most every ``interval`` seconds."""

    def __init__(self, t0: float, t_end: float, stream=sys.stderr, interval: float = 0.25,
                 width: int = 30):
        self.t0, self.t_end, self.stream, self.width = t0, t_end, stream, width
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.interval = interval if self.tty else 5.0
        self.start = time.perf_counter()
        self.last = -1e9
        self.shown = False

    def __call__(self, t: float, t_end: float, stats) -> bool:
        now = time.perf_counter()
        if now - self.last < self.interval and t < self.t_end:
            return False
        self.last = now
        frac = min(max((t - self.t0) / (self.t_end - self.t0), 0.0), 1.0)
        n = int(round(frac * self.width))
        steps = getattr(stats, "steps", 0)
        newton = getattr(stats, "newton_iterations", 0)
        rate = steps / max(now - self.start, 1e-9)
        line = (f"[{'#' * n}{'.' * (self.width - n)}] t = {t:.5g}/{self.t_end:.5g} s  "
                f"{steps} steps  {rate:.0f} steps/s  Newton {newton / max(steps, 1):.2f}/step")
        self.stream.write(("\r" + line) if self.tty else (line + "\n"))
        self.stream.flush()
        self.shown = True
        return False

    def close(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


class StopOnSignal:
    """SIGINT/SIGTERM -> stop after the current output step (raise KeyboardInterrupt from
    the progress callback, so the step being written is complete); twice -> at once."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.received: int | None = None
        self.saved = {}

    def __enter__(self):
        for s in self.SIGNALS:
            self.saved[s] = signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc):
        for s, h in self.saved.items():
            signal.signal(s, h)
        return False

    def _handler(self, signum, frame):
        if self.received is not None:
            raise KeyboardInterrupt(signal.Signals(signum).name)
        self.received = signum

    def check(self) -> None:
        if self.received is not None:
            raise KeyboardInterrupt(signal.Signals(self.received).name)


# -- post-processing ----------------------------------------------------------------------------
def write_xdmf(built, result, out: Path, dt: float | None) -> list[Path]:
    """One XDMF time series per flexible body: point fields ``displacement`` (total,
    inertial: reference geometry + displacement = current position), ``elastic_displacement``
    (``Phi q_e``, body frame) and ``von_mises`` [Pa]."""
    from flexmbs.io.xdmf import write_time_series
    from flexmbs.post.recovery import deformed_positions, elastic_displacements, von_mises_stress
    paths = []
    t = np.asarray(result.t)
    idx = _subsample(t, dt)
    for name, fb in built.flexible.items():
        body = fb.body
        q = result.body_q(name)[idx]
        X = np.asarray(body.points)

        def fields(i, q=q, body=body, X=X):
            qe = q[i, 7:]
            return {"displacement": deformed_positions(body, q[i]) - X,
                    "elastic_displacement": elastic_displacements(body, qe),
                    "von_mises": von_mises_stress(body, qe)}
        paths.append(write_time_series(out / f"{built.case.name}_{name}", X, body.cells,
                                       body.cell_type, t[idx], fields))
    return paths


def _subsample(t: np.ndarray, dt: float | None) -> np.ndarray:
    if dt is None or len(t) == 0:
        return np.arange(len(t))
    keep, next_t = [], t[0]
    for i, ti in enumerate(t):
        if ti >= next_t - 1e-12 * max(1.0, abs(ti)):
            keep.append(i)
            next_t = ti + dt
    if keep[-1] != len(t) - 1:
        keep.append(len(t) - 1)
    return np.array(keep)


def summary(result, wall: float, model=None) -> str:
    """Final time, steps, Newton iterations, wall time; the energy line of
    :func:`flexmbs.post.energy.energy_summary` (how well a conservative ``model`` kept
    ``E = T + V``, else which of its parts exchange energy; ``model`` defaults to
    ``result.extra["model"]``); the maximum joint reactions."""
    from flexmbs.post.energy import energy_summary
    st = result.stats
    steps = getattr(st, "steps", len(result.t))
    lines = [f"final time {result.t[-1]:.6g} s, {steps} steps "
             f"({getattr(st, 'rejected_steps', 0)} rejected), "
             f"{getattr(st, 'newton_iterations', 0)} Newton iterations, wall time {wall:.2f} s, "
             f"{steps / max(wall, 1e-9):.0f} steps/s"]
    cuts = getattr(st, "step_cuts", 0)
    h_min = getattr(st, "min_step", float("nan"))
    if np.isfinite(h_min):
        lines.append(f"step size: {cuts} cuts after failed Newton solves, smallest step "
                     f"{h_min:.3g} s")
    extra = getattr(result, "extra", {}) or {}
    ratio, t_c, row = extra.get("conditioning", (1.0, 0.0, ""))
    if row:
        lines.append(f"constraint rows: smallest conditioning sigma_min/sigma_max = "
                     f"{ratio:.2e} at t = {t_c:.6g} s ({row})")
    lines.extend(f"note: {n}" for n in extra.get("notes", ()))
    E = result.energy.get("total")
    if E is not None and len(E):
        if model is None:
            model = getattr(result, "extra", {}).get("model")
        lines.append(energy_summary(result.energy, model))
    for name, r in result.reactions.items():
        r = np.asarray(r)
        if r.size:
            lines.append(f"joint {name:<12s} max |F| = {np.linalg.norm(r[:, :3], axis=1).max():.4g} N,"
                         f" max |M| = {np.linalg.norm(r[:, 3:], axis=1).max():.4g} N m")
    return "\n".join(lines)


def _apply_overrides(spec, args) -> None:
    from flexmbs.errors import CaseError
    for opt, section, key in (("t_end", spec.solver, "t_end"), ("dt", spec.solver, "dt"),
                              ("output_dt", spec.output, "dt")):
        val = getattr(args, opt)
        if val is None:
            continue
        if not (np.isfinite(val) and val > 0):
            raise CaseError(f"--{opt.replace('_', '-')}: expected a positive time [s], got {val}")
        section[key] = val
    if spec.solver["t_end"] <= spec.solver["t0"]:
        raise CaseError(f"--t-end: expected t_end > t0 = {spec.solver['t0']} s, "
                        f"got {spec.solver['t_end']}")


def run(args: argparse.Namespace) -> int:
    from flexmbs.case import build, load_case
    from flexmbs.cli.check import dof_text, initial_report, inventory, preprocess_printer
    from flexmbs.errors import CaseError, ConvergenceError, DivergenceError

    wall0 = time.perf_counter()
    spec = load_case(args.case)
    _apply_overrides(spec, args)
    out = Path(args.out) if args.out else spec.folder / spec.output["directory"]
    from flexmbs.integrate.options import petsc_options_from_args
    try:
        petsc_options_from_args(args.petsc_args)
    except ValueError as exc:
        raise RunError(f"PETSc options: {exc}") from None
    print(f"flexmbs run {args.case} -> {out}", file=sys.stderr)
    built = build(spec, body_dir=Path(args.body_dir) if args.body_dir else None,
                  progress=preprocess_printer)
    print(inventory(built))
    sv = spec.solver
    try:
        _, report, _, moved = initial_report(built.system, sv["t0"])
    except ConvergenceError as exc:
        raise CaseError(f"{spec.path}: initial assembly failed: {exc}") from None
    print(dof_text(report, moved))
    if spec.analysis is not None:
        return run_modal(built, spec, out)
    out.mkdir(parents=True, exist_ok=True)
    h5 = out / f"{spec.name}.h5"
    bar = ProgressBar(sv["t0"], sv["t_end"]) if not args.quiet else None
    from flexmbs.simulate import simulate
    t_sim = time.perf_counter()
    with StopOnSignal() as stop:
        def progress(t, t_end, stats):
            stop.check()
            return bar(t, t_end, stats) if bar else False
        try:
            result = simulate(built.system, sv["t_end"], sv["dt"], t0=sv["t0"],
                              rho_inf=sv["rho_inf"], method=sv["integrator"],
                              adaptive=sv["adaptive"], rtol=sv["rtol"], atol=sv["atol"],
                              output=str(h5), output_dt=spec.output["dt"],
                              petsc_options=dict(sv["petsc_options"]) or None,
                              progress=progress)
        except KeyboardInterrupt:
            if bar:
                bar.close()
            signum = stop.received or signal.SIGINT
            n, t_last = _steps_in(h5)
            print(f"flexmbs run: interrupted by {signal.Signals(signum).name} at t = "
                  f"{t_last:.6g} s; {n} output steps saved in {h5} (status 'interrupted')",
                  file=sys.stderr)
            return 128 + int(signum)
        except ConvergenceError as exc:
            if bar:
                bar.close()
            n, t_last = _steps_in(h5)
            raise type(exc)(f"{exc}; {n} output steps up to t = {t_last:.6g} s saved in "
                            f"{h5} (status 'failed')") from None
        except DivergenceError as exc:
            if bar:
                bar.close()
            n, t_last = _steps_in(h5)
            raise DivergenceError(f"{exc}; {n} output steps up to t = {t_last:.6g} s saved "
                                  f"in {h5} (status 'diverged')") from None
        except ValueError as exc:
            raise CaseError(f"{spec.path}: {exc}") from None
    if bar:
        bar.close()
    wall_sim = time.perf_counter() - t_sim
    print(f"results: {h5}")
    if spec.output["xdmf"] and built.flexible and not args.no_xdmf:
        for p in write_xdmf(built, result, out, spec.output["xdmf_dt"]):
            print(f"XDMF time series: {p}")
    if spec.output["plots"] and not args.no_plots:
        from flexmbs.post.plots import plot_results
        pngs = plot_results(h5, out / "plots")
        print(f"plots: {len(pngs)} PNG files in {out / 'plots'}")
    print(summary(result, wall_sim))
    print(f"total wall time {time.perf_counter() - wall0:.2f} s")
    return 0


def _steps_in(h5: Path) -> tuple[int, float]:
    import h5py
    try:
        with h5py.File(h5, "r") as f:
            t = f["time"][()] if "time" in f else np.zeros(0)
        return len(t), float(t[-1]) if len(t) else float("nan")
    except OSError:
        return 0, float("nan")


# -- [analysis] type = "modal" -------------------------------------------------------------------
def run_modal(built, spec, out: Path) -> int:
    """Linearise about the initial or steady state; print and save the eigenvalues."""
    from flexmbs.errors import CaseError, ConvergenceError
    from flexmbs.post.linearize import equilibrium, linearize, modes, steady_state
    an, t0 = spec.analysis, spec.solver.get("t0", 0.0)
    asm = built.system.assemble()
    try:
        state = steady_state(asm, t=t0) if an["state"] == "steady" else equilibrium(asm, t=t0)
    except ConvergenceError as exc:
        raise CaseError(f"{spec.path}: analysis.state: no {an['state']} state found: "
                        f"{exc}") from None
    lin = linearize(asm, state)
    res = modes(lin, n_modes=an["n_modes"])
    out.mkdir(parents=True, exist_ok=True)
    csv = out / f"{spec.name}_modes.csv"
    lines = ["mode,frequency_Hz,damping_ratio,damped_frequency_Hz"]
    print(f"modal analysis about the {an['state']} state: {lin.n_dof} independent "
          "coordinates")
    print(f"{'mode':>4s} {'f [Hz]':>12s} {'zeta':>10s} {'f_d [Hz]':>12s}")
    for k, (f, z, fd) in enumerate(zip(res.frequencies, res.damping_ratios,
                                        res.damped_frequencies), 1):
        print(f"{k:4d} {f:12.5f} {z:10.3g} {fd:12.5f}")
        lines.append(f"{k},{f:.10g},{z:.6g},{fd:.10g}")
    csv.write_text("\n".join(lines) + "\n")
    print(f"eigenvalues: {csv}")
    return 0
