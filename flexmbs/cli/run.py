"""``flexmbs run CASE.toml [--out DIR] [PETSc options...]``: a case from file to results.

1. validate the case; lock the output folder for this case (:class:`OutputLock`: a
   second run of it into the same folder stops with one line, exit status 2);
   preprocess (or take from the cache) every flexible body;
2. assemble, print the DOF summary and redundant constraints;
3. simulate with a progress bar on stderr, writing ``DIR/<case>.running.h5`` step by
   step, renamed ``DIR/<case>.h5`` when complete (else ``<case>.interrupted.h5``,
   ``.failed.h5``, ``.diverged.h5``: a previous complete result is kept);
4. remove the files made from the previous result (listed in it), write
   ``DIR/<case>_<body>.xdmf`` (+ ``.h5``) per flexible body and PNG plots in
   ``DIR/plots/<case>/``, list them in the result file, and print a summary.

SIGINT (Ctrl-C) or SIGTERM stops the run after the current output step: the result
file then holds every step computed so far with status "interrupted", and the exit
status is 130 (SIGINT) or 143 (SIGTERM).  A second signal stops at once.  ``--restart
FILE`` continues a run from the last step saved in FILE.  A file that cannot be written
ends the run with exit status 4, the results so far kept (docs/errors.md).
"""
from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import sys
import time
from pathlib import Path

import numpy as np

from flexmbs.case import folders
from flexmbs.errors import EXIT_CODES, FlexmbsError, OutputError
from flexmbs.io.results import OutputLock, list_outputs, listed_outputs, status_path, steps_in


class RunError(FlexmbsError):
    """Invalid command-line arguments of ``flexmbs run``."""


def add_case_arguments(p) -> None:
    """Arguments shared by ``flexmbs run`` and ``flexmbs sweep``: the case, the output
    folder and the overrides of the case's solver/output settings."""
    p.add_argument("case", help="case file (TOML)")
    p.add_argument("--out", default=None, help="output folder (default: [output] directory "
                   "of the case, else 'results' in the working directory)")
    p.add_argument("--t-end", type=float, default=None, help="override [solver] t_end [s]")
    p.add_argument("--dt", type=float, default=None, help="override [solver] dt [s]")
    p.add_argument("--output-dt", type=float, default=None, help="override [output] dt [s]")
    p.add_argument("--body-dir", default=None, help="cache folder of reduced flexible bodies "
                   "(default: $FLEXMBS_BODY_CACHE, else ~/.cache/flexmbs/bodies)")


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
    p.add_argument("--restart", default=None, metavar="RESULT.h5",
                   help="continue the run saved in RESULT.h5 (killed, interrupted, failed "
                   "or complete, of this case) from its last saved step to t_end")
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
        self.estimated = False

    #: a run expected to take longer than this [s] says so once, after ESTIMATE_AFTER s
    LONG_RUN, ESTIMATE_AFTER = 60.0, 2.0

    def __call__(self, t: float, t_end: float, stats) -> bool:
        now = time.perf_counter()
        if not self.estimated and now - self.start >= self.ESTIMATE_AFTER and t > self.t0:
            self.estimated = True
            total = (now - self.start) * (self.t_end - self.t0) / (t - self.t0)
            if total > self.LONG_RUN:
                steps = getattr(stats, "steps", 0)
                n = steps * (self.t_end - self.t0) / (t - self.t0)
                self.stream.write(("\n" if self.shown and self.tty else "")
                                  + f"estimated run time {_duration(total)} (about {n:.3g} "
                                  f"steps at {steps / (now - self.start):.0f} steps/s); "
                                  f"Ctrl-C stops and keeps the steps so far\n")
                self.stream.flush()
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


def _duration(seconds: float) -> str:
    """``"3 min 20 s"``, ``"2 h 05 min"``, ``"45 s"``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


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
def write_xdmf(built, result, out: Path, dt: float | None, check=None) -> list[Path]:
    """One XDMF time series per flexible body: point fields ``displacement`` (total,
    inertial: reference geometry + displacement = current position), ``elastic_displacement``
    (``Phi q_e``, body frame) and ``von_mises`` [Pa].  ``check()`` is called before each
    frame (it may raise ``KeyboardInterrupt``: the series being written is dropped)."""
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
            if check is not None:
                check()
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


def _mpi_world() -> tuple[int, int]:
    """``(rank, size)`` of the MPI job this process was started in (from the launcher's
    environment, without initialising MPI), ``(0, 1)`` outside ``mpiexec``."""
    import os
    for size_key, rank_key in (("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),
                               ("PMI_SIZE", "PMI_RANK")):
        if os.environ.get(size_key, "").isdigit():
            return int(os.environ.get(rank_key, "0") or 0), int(os.environ[size_key])
    return 0, 1


def run(args: argparse.Namespace) -> int:
    from flexmbs.case import load_case

    rank, size = _mpi_world()
    # started by mpiexec as a plain command (a program that set MPI up itself, e.g. a
    # script handing runs to its ranks, has mpi4py loaded and decides for itself)
    if size > 1 and not getattr(args, "in_sweep", False) and "mpi4py.MPI" not in sys.modules:
        if rank:
            return EXIT_CODES["user error"]     # rank 0 says why
        raise RunError(f"a run is one process, but this one was started on {size} MPI "
                       f"ranks (mpiexec -n {size}): each would simulate the same case into "
                       f"the same files; run it without mpiexec, or use 'mpiexec -n {size} "
                       f"flexmbs sweep' (variants on the ranks) or 'mpiexec -n {size} "
                       f"flexmbs preprocess' (a big mesh)")
    wall0 = time.perf_counter()
    spec = load_case(args.case)
    _apply_overrides(spec, args)
    out = Path(args.out) if args.out else folders.output_folder(spec.path,
                                                               spec.output["directory"])
    from flexmbs.io.paths import writable_dir
    writable_dir(out, "--out" if args.out else f"{spec.path}: output.directory"
                 if spec.output["directory"] else "the default output folder")
    from flexmbs.integrate.options import petsc_options_inserted
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(petsc_options_inserted(args.petsc_args))
        except ValueError as exc:
            raise RunError(f"PETSc options: {exc}") from None
        print(f"flexmbs run {args.case} -> {out}", file=sys.stderr)
        with OutputLock(out, spec.name):
            return _run_locked(args, spec, out, wall0)


def _run_locked(args, spec, out: Path, wall0: float) -> int:
    """``run`` while holding the output folder's lock for this case."""
    from flexmbs.case import build
    from flexmbs.cli.check import dof_text, initial_report, inventory, preprocess_printer
    from flexmbs.errors import CaseError, ConvergenceError, DivergenceError

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
        if spec.analysis["type"] == "static":
            return run_static(built, spec, out)
        return run_modal(built, spec, out)
    h5 = out / f"{spec.name}.h5"
    previous = _made_from(h5, spec.name, built)
    from flexmbs.post.sampling import aliasing_warnings
    for line in aliasing_warnings(built.system, spec.output["dt"] or sv["dt"]):
        print(f"warning: {line}", file=sys.stderr)
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
                              progress=progress, restart=getattr(args, "restart", None))
        except KeyboardInterrupt as exc:
            if bar:
                bar.close()
            signum = stop.received or signal.SIGINT
            path = getattr(exc, "result_path", None)
            t_last = steps_in(path)[1] if path else float("nan")
            print(f"flexmbs run: interrupted by {signal.Signals(signum).name} at t = "
                  f"{t_last:.6g} s; {_kept(path, h5, 'interrupted', until=False)}",
                  file=sys.stderr)
            return 128 + int(signum)
        except (ConvergenceError, DivergenceError) as exc:
            if bar:
                bar.close()
            status = "diverged" if isinstance(exc, DivergenceError) else "failed"
            kept = _kept(getattr(exc, "result_path", None), h5, status)
            raise type(exc)(f"{exc}; {kept}") from None
        except OutputError as exc:
            if bar:
                bar.close()
            raise exc.keeping(_kept(getattr(exc, "result_path", None), h5, "failed")) \
                from None
        except ValueError as exc:
            raise CaseError(f"{spec.path}: {exc}") from None
    if bar:
        bar.close()
    wall_sim = time.perf_counter() - t_sim
    if result.path != str(h5):          # stopped early by the progress callback
        print(f"flexmbs run: stopped at t = {result.t[-1]:.6g} s; "
              f"{_kept(result.path, h5, 'interrupted')}", file=sys.stderr)
        return 128 + int(signal.SIGINT)
    print(f"results: {result.path}")
    code = _write_outputs(args, spec, built, result, out, previous)
    if code:
        return code
    print(summary(result, wall_sim))
    print(f"total wall time {time.perf_counter() - wall0:.2f} s")
    return 0


def _kept(path, h5: Path, status: str, until: bool = True) -> str:
    """What a run that ended with ``status`` kept (``until``: and up to which time), and
    that the previous result stays."""
    n, t_last = steps_in(path) if path else (0, float("nan"))
    if n:
        upto = f" up to t = {t_last:.6g} s" if until else ""
        text = f"{n} output steps{upto} saved in {path} (status '{status}')"
    else:
        text = "no output step saved"
    if h5.is_file() and path != str(h5):
        text += f"; the previous complete result {h5} is unchanged"
    return text


# -- the files made from a result ---------------------------------------------------------------
def _made_from(h5: Path, name: str, built) -> list[Path]:
    """The files made from the previous result of this case in its folder: those it lists,
    its plots folder, and the XDMF pairs of the case's flexible bodies (a result written
    before outputs were listed, or a run killed before listing them)."""
    out = h5.parent
    files = [out / p for p in listed_outputs(h5)] if h5.is_file() else []
    plots = out / "plots" / name
    if plots.is_dir():
        files += sorted(plots.glob("*.png"))
    for body in built.flexible:
        files += [out / f"{name}_{body}.xdmf", out / f"{name}_{body}.h5"]
    results = {Path(status_path(h5, s)).resolve() for s in
               ("running", "complete", "interrupted", "failed", "diverged")}
    keep = []
    for f in files:
        r = f.resolve()
        if r not in results and r.is_relative_to(out.resolve()) and r not in keep:
            keep.append(r)
    return keep


def _write_outputs(args, spec, built, result, out: Path, previous: list[Path]) -> int:
    """Remove the files made from the previous result, write the XDMF series and the
    plots of this one and list them in it; 0, or the exit status of a signal."""
    h5 = Path(result.path)
    for f in previous:
        try:
            f.unlink(missing_ok=True)
        except OSError as exc:
            raise OutputError.from_exception(exc, f).keeping(
                f"the results are complete in {h5}") from None
    for f in out.glob(f".{spec.name}_*.xdmf.partial"):    # left by a killed run
        shutil.rmtree(f, ignore_errors=True)
    try:
        with StopOnSignal() as stop:
            if spec.output["xdmf"] and built.flexible and not args.no_xdmf:
                for p in write_xdmf(built, result, out, spec.output["xdmf_dt"], stop.check):
                    print(f"XDMF time series: {p}")
            stop.check()
            if spec.output["plots"] and not args.no_plots:
                from flexmbs.post.plots import plot_results
                folder = out / "plots" / spec.name
                pngs = plot_results(h5, folder)
                print(f"plots: {len(pngs)} PNG files in {folder}")
            stop.check()
    except KeyboardInterrupt:
        signum = stop.received or signal.SIGINT
        made = _list(h5, spec.name, built)
        print(f"flexmbs run: interrupted by {signal.Signals(signum).name} while writing "
              f"the XDMF series and plots ({len(made)} files written, listed in {h5}); "
              f"the results are complete in {h5}", file=sys.stderr)
        return 128 + int(signum)
    except OutputError as exc:
        with contextlib.suppress(OutputError):
            _list(h5, spec.name, built)
        raise exc.keeping(f"the results are complete in {h5}") from None
    _list(h5, spec.name, built)
    return 0


def _list(h5: Path, name: str, built) -> list[str]:
    """List in the result file the files made from it: after the previous ones were
    removed, the case's XDMF pairs and plots that exist now (also those finished before
    an interruption)."""
    from flexmbs.io.xdmf import heavy_data
    out = h5.parent
    made = []
    for body in built.flexible:
        xdmf = out / f"{name}_{body}.xdmf"
        if xdmf.is_file():
            made += [xdmf.name, heavy_data(xdmf).name]
    plots = out / "plots" / name
    if plots.is_dir():
        made += [f"plots/{name}/{p.name}" for p in sorted(plots.glob("*.png"))]
    list_outputs(h5, made)
    return made


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
    print(f"modal analysis about the {an['state']} state: {lin.n_dof} independent "
          "coordinates")
    if len(res.frequencies) == 0:
        raise CaseError(f"{spec.path}: analysis: no oscillatory mode about the "
                        f"{an['state']} state ({lin.n_dof} independent coordinates): the "
                        f"linearised system has only real eigenvalues, i.e. the state is "
                        f"not a stable equilibrium (a body that falls or drifts); model a "
                        f"state at rest under its loads, or use state = \"steady\" for "
                        f"a steadily driven model")
    write_modes(built, asm, res, out, spec.name)
    return 0


def run_static(built, spec, out: Path) -> int:
    """``[analysis] type = "static"``: the static equilibrium ``r(q, 0, 0, lam, t0) = 0``,
    ``g(q, t0) = 0`` from the initial poses (:func:`flexmbs.simulate.static_equilibrium`).
    Prints and writes ``<name>_static.csv`` (joint reactions [N, N m] in the joint frames,
    joint coordinates [rad | m]) and, per flexible body, an XDMF of the deformed state
    (``<name>_<body>_static.xdmf``: displacement, elastic displacement, von Mises)."""
    from flexmbs.errors import CaseError, ConvergenceError
    from flexmbs.simulate import static_equilibrium
    an, t0 = spec.analysis, spec.solver.get("t0", 0.0)
    try:
        eq = static_equilibrium(built.system, t=t0, load_steps=an["load_steps"],
                                petsc_options=dict(spec.solver["petsc_options"]) or None)
    except ConvergenceError as exc:
        raise CaseError(f"{spec.path}: analysis: no static equilibrium found from the "
                        f"initial poses: {exc} (a mechanism with a free degree of freedom "
                        f"has none under its loads; lock it, or raise load_steps)") from None
    out.mkdir(parents=True, exist_ok=True)
    lines = ["joint,Fx_N,Fy_N,Fz_N,Mx_Nm,My_Nm,Mz_Nm,coordinates"]
    print(f"static equilibrium at t = {t0:g} s (reactions on the second body, joint frame)")
    print(f"{'joint':<16s} {'Fx [N]':>11s} {'Fy [N]':>11s} {'Fz [N]':>11s} "
          f"{'Mx [N m]':>11s} {'My [N m]':>11s} {'Mz [N m]':>11s}")
    for name, r in eq.reactions.items():
        c = " ".join(f"{v:.10g}" for v in np.atleast_1d(eq.joint_coordinates.get(name, [])))
        print(f"{name:<16s} " + " ".join(f"{v:11.5g}" for v in r))
        lines.append(f"{name}," + ",".join(f"{v:.10g}" for v in r) + f",{c}")
    csv = out / f"{spec.name}_static.csv"
    csv.write_text("\n".join(lines) + "\n")
    print(f"reactions: {csv}")
    if spec.output["xdmf"] and built.flexible:
        from flexmbs.io.xdmf import write_time_series
        from flexmbs.post.recovery import (
            deformed_positions, elastic_displacements, von_mises_stress,
        )
        for name, fb in built.flexible.items():
            body, q = fb.body, eq.body_q(name)
            X = np.asarray(body.points)
            path = write_time_series(
                out / f"{spec.name}_{name}_static", X, body.cells, body.cell_type, [t0],
                lambda i, body=body, q=q, X=X: {
                    "displacement": deformed_positions(body, q) - X,
                    "elastic_displacement": elastic_displacements(body, q[7:]),
                    "von_mises": von_mises_stress(body, q[7:])})
            print(f"deformed state of '{name}': {path}")
    return 0


def write_modes(built, asm, res, out: Path, name: str) -> None:
    """Print the modes and write ``<name>_modes.csv`` (frequency, damping, the body that
    moves and along which axis, :mod:`flexmbs.post.mode_shapes`), the complex mode
    shapes in ``q`` (``<name>_modes.h5``) and, per flexible body, an XDMF series whose
    steps are the modes (``<name>_<body>_modes.xdmf``, field ``mode_shape``, max 1)."""
    import h5py

    from flexmbs.io.xdmf import write_time_series
    from flexmbs.post.mode_shapes import label, shape_fields
    labels = [label(asm, res.shapes[:, k]) for k in range(res.shapes.shape[1])]
    csv = out / f"{name}_modes.csv"
    lines = ["mode,frequency_Hz,damping_ratio,damped_frequency_Hz,body,kind,axis,axis_share"]
    print(f"{'mode':>4s} {'f [Hz]':>12s} {'zeta':>10s} {'f_d [Hz]':>12s}  shape")
    for k, (f, z, fd, lab) in enumerate(zip(res.frequencies, res.damping_ratios,
                                             res.damped_frequencies, labels), 1):
        print(f"{k:4d} {f:12.5f} {z:10.3g} {fd:12.5f}  {lab}")
        lines.append(f"{k},{f:.10g},{z:.6g},{fd:.10g},{lab.body},{lab.kind},{lab.axis},"
                     f"{lab.share:.4f}")
    csv.write_text("\n".join(lines) + "\n")
    print(f"eigenvalues: {csv}")
    h5 = out / f"{name}_modes.h5"
    with h5py.File(h5, "w") as f:
        f["frequencies"] = res.frequencies
        f["frequencies"].attrs["unit"] = "Hz"
        f["damping_ratios"] = res.damping_ratios
        f["shapes_real"], f["shapes_imag"] = res.shapes.real, res.shapes.imag
        f.attrs["coordinates"] = [str(c) for c in asm.coordinate_labels]
    print(f"mode shapes (in q): {h5}")
    for bname, fb in built.flexible.items():
        s = asm.body_slices[bname]
        body = fb.body
        path = write_time_series(
            out / f"{name}_{bname}_modes", np.asarray(body.points), body.cells,
            body.cell_type, np.arange(1, res.shapes.shape[1] + 1, dtype=float),
            lambda i, s=s, body=body: {"mode_shape": shape_fields(body,
                                                                  res.shapes[s, i][7:])})
        print(f"mode shapes of '{bname}' (step k = mode k): {path}")
