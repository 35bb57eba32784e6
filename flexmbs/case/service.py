"""Run a case: :func:`run` takes a validated case (:class:`~flexmbs.case.loader.CaseSpec`)
from its model to its files, for ``flexmbs run``, ``flexmbs sweep`` and scripts.

1. apply the overrides (:class:`Overrides`), check the output folder, insert the PETSc
   options of the run and lock the output folder for this case
   (:class:`~flexmbs.io.results.OutputLock`: a second run of it there stops with one line);
2. build the model (preprocess, or take from the cache, every flexible body);
3. prepare it once (:func:`flexmbs.simulate.prepare`: assembly, consistent initial state,
   rank test of the constraint Jacobian) and report its inventory and degrees of freedom;
4. the ``[analysis]`` of the case (:mod:`flexmbs.case.analyses`), or a simulation of the
   prepared model to ``DIR/<case>.h5`` (written as ``<case>.running.h5`` step by step,
   renamed when complete, else ``<case>.interrupted.h5``, ``.failed.h5``,
   ``.diverged.h5``: a previous complete result is kept);
5. remove the files made from the previous result, write the XDMF series and plots of
   this one and list them in it (:mod:`flexmbs.case.files`); the run summary.

Everything a run reports is a :class:`Message`, handed to ``on_message`` as it happens
and kept in the returned :class:`Report`.  SIGINT or SIGTERM stops a simulation at the
next call of its progress callback, at most about 0.05 s of wall time later
(:class:`~flexmbs.case.signals.StopOnSignal`): the result file holds the output steps so far with status "interrupted", and ``Report.exit_status`` is
``128 + signal number``.  Errors are raised (:class:`~flexmbs.errors.FlexmbsError`), the
files so far kept (docs/errors.md).
"""
from __future__ import annotations

import contextlib
import dataclasses
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexmbs.case import analyses, files, folders
from flexmbs.case.loader import CaseSpec
from flexmbs.case.report import dof_text, inventory, preprocess_line, summary
from flexmbs.case.signals import StopOnSignal
from flexmbs.errors import (
    CaseError, ConvergenceError, DivergenceError, FlexmbsError, OutputError,
)
from flexmbs.io.results import OutputLock, steps_in


class RunError(FlexmbsError):
    """Invalid arguments of a run (its PETSc options)."""


@dataclass(frozen=True)
class Overrides:
    """Values that replace the case's own: ``t_end`` and ``dt`` of ``[solver]``,
    ``output_dt`` (``[output] dt``), all [s]; ``None`` keeps the case's value.  (They are
    the ``--t-end``, ``--dt`` and ``--output-dt`` of ``flexmbs run``.)"""

    t_end: float | None = None
    dt: float | None = None
    output_dt: float | None = None


@dataclass(frozen=True)
class Message:
    """One thing a run reports, in order: ``kind`` is one of :data:`KINDS`; ``stderr``:
    progress and problems, which a command prints on its error stream."""

    kind: str
    text: str
    stderr: bool = False


#: the kinds of :class:`Message`
KINDS = ("start", "preprocess", "inventory", "dof", "warning", "results", "output",
         "analysis", "summary", "stopped")


@dataclass(frozen=True)
class Report:
    """What a run reported: every :class:`Message` in order, and the same by topic."""

    out: Path
    messages: tuple = ()
    inventory: str = ""
    dof: object = None              # flexmbs.system.dof.DofReport
    warnings: tuple = ()
    notes: tuple = ()
    outputs: tuple = ()             # the files and folders written
    summary: str = ""
    exit_status: int = 0            # 0, or 128 + the number of the signal that stopped it

    def text(self, kind: str) -> list[str]:
        """The texts of the messages of ``kind``."""
        return [m.text for m in self.messages if m.kind == kind]


@dataclass(frozen=True)
class CaseRun:
    """The outcome of :func:`run`: ``result`` (:class:`~flexmbs.simulate.Result`, the
    :class:`~flexmbs.simulate.Equilibrium` of a static analysis, the modes of a modal one;
    ``None`` for a stopped run) and its :class:`Report`."""

    result: object
    report: Report


#: ``progress(t0, t_end) -> step``: made when the simulation starts; ``step(t, t_end,
#: stats) -> stop?`` is called after every step (see :func:`flexmbs.simulate.simulate`)
ProgressFactory = Callable[[float, float], Callable]


def apply_overrides(spec: CaseSpec, overrides: Overrides | None) -> CaseSpec:
    """``spec`` with ``overrides`` applied (a new spec; :class:`CaseError` for a time
    that is not positive, or a ``t_end`` not after ``t0``)."""
    if overrides is None:
        return spec
    solver, output = dict(spec.solver), dict(spec.output)
    for opt, section, key in (("t_end", solver, "t_end"), ("dt", solver, "dt"),
                              ("output_dt", output, "dt")):
        val = getattr(overrides, opt)
        if val is None:
            continue
        if not (np.isfinite(val) and val > 0):
            raise CaseError(f"--{opt.replace('_', '-')}: expected a positive time [s], got {val}")
        section[key] = val
    if solver["t_end"] <= solver["t0"]:
        raise CaseError(f"--t-end: expected t_end > t0 = {solver['t0']} s, "
                        f"got {solver['t_end']}")
    return dataclasses.replace(spec, solver=solver, output=output)


class _Messages:
    """Collects the messages of a run and hands each to the listener at once."""

    def __init__(self, listener: Callable[[Message], None] | None):
        self.listener, self.items = listener, []

    def __call__(self, kind: str, text: str, stderr: bool = False) -> None:
        m = Message(kind, text, stderr)
        self.items.append(m)
        if self.listener is not None:
            self.listener(m)


def run(spec: CaseSpec, overrides: Overrides | None = None, out: str | Path | None = None,
        *, body_dir: str | Path | None = None, petsc_args=(), restart: str | None = None,
        xdmf: bool = True, plots: bool = True, progress: ProgressFactory | None = None,
        on_message: Callable[[Message], None] | None = None, label: str | None = None,
        started: float | None = None) -> CaseRun:
    """Run the case ``spec`` into the folder ``out`` (default: its ``[output] directory``,
    else ``results/`` in the working directory); see the module doc.

    Parameters
    ----------
    overrides : replaced times of the case
    body_dir : cache folder of reduced flexible bodies (default
        :func:`~flexmbs.case.folders.body_cache`)
    petsc_args : command-line PETSc options (``["-fmbs_ksp_type", "gmres"]``), inserted
        for this run only; they win over the case's ``[solver] petsc_options``
    restart : a result file of this case: continue its run from its last saved step
    xdmf, plots : ``False`` skips the XDMF series / the PNG plots the case asks for
    progress : :data:`ProgressFactory` of the simulation's progress callback
    on_message : called with every :class:`Message` as it happens
    label : the case as named in the first message (default: its file)
    started : ``time.perf_counter()`` at the start of the run (default: now), for the
        total wall time
    """
    started = time.perf_counter() if started is None else started
    spec = apply_overrides(spec, overrides)
    folder = Path(out) if out else folders.output_folder(spec.path, spec.output["directory"])
    from flexmbs.io.paths import writable_dir
    writable_dir(folder, "--out" if out else f"{spec.path}: output.directory"
                 if spec.output["directory"] else "the default output folder")
    if restart is not None:                 # before preprocessing, which may take minutes
        from flexmbs.io.results import check_restart_file
        check_restart_file(restart, spec.name)
    from flexmbs.integrate.options import petsc_options_inserted
    from flexmbs.integrate.unread import OptionsReport
    say = _Messages(on_message)
    with contextlib.ExitStack() as stack:
        try:
            given = stack.enter_context(petsc_options_inserted(list(petsc_args)))
        except ValueError as exc:
            raise RunError(f"PETSc options: {exc}") from None
        # options no solver read: one warning line each when the run ends (before the
        # command line's are removed again); a new case-file run repeats them
        unread = stack.enter_context(OptionsReport(
            method=spec.solver.get("integrator", "genalpha"), reset=True,
            emit=lambda line: say("warning", f"warning: {line}", stderr=True)))
        unread.watch(given, "command line", prefix="", in_db=True)
        unread.source(spec.solver.get("petsc_options") or {},
                      f"{spec.path}: solver.petsc_options")
        say("start", f"flexmbs run {label or spec.path} -> {folder}", stderr=True)
        with OutputLock(folder, spec.name):
            return _Run(spec, folder, say, started).run(
                body_dir=body_dir, restart=restart, xdmf=xdmf, plots=plots,
                progress=progress)


class _Run:
    """One run of a case holding the lock of its output folder."""

    def __init__(self, spec: CaseSpec, out: Path, say: _Messages, started: float):
        self.spec, self.out, self.say, self.started = spec, out, say, started
        self.fields: dict = {}

    def report(self, exit_status: int = 0, **fields) -> Report:
        f = {**self.fields, **fields}
        return Report(self.out, tuple(self.say.items), exit_status=exit_status,
                      inventory=f.get("inventory", ""), dof=f.get("dof"),
                      warnings=tuple(f.get("warnings", ())), notes=tuple(f.get("notes", ())),
                      outputs=tuple(f.get("outputs", ())), summary=f.get("summary", ""))

    def run(self, *, body_dir, restart, xdmf, plots, progress) -> CaseRun:
        from flexmbs.case.builder import build
        from flexmbs.simulate import prepare
        spec, say = self.spec, self.say
        built = build(spec, body_dir=Path(body_dir) if body_dir else None,
                      progress=lambda msg, s: say("preprocess", preprocess_line(msg, s),
                                                  stderr=True))
        from flexmbs.case.post_items import hotspots
        hotspots(spec, built)               # an unknown node set stops the run before it starts
        self.fields["inventory"] = inventory(built)
        say("inventory", self.fields["inventory"])
        try:
            prepared = prepare(built.system, spec.solver["t0"])
        except ConvergenceError as exc:
            raise CaseError(f"{spec.path}: initial assembly failed: {exc}") from None
        self.fields["dof"] = prepared.dof
        say("dof", dof_text(prepared.dof, prepared.moved))
        if spec.analysis is not None:
            how = analyses.static if spec.analysis["type"] == "static" else analyses.modal
            return CaseRun(how(built, spec, self.out, prepared, say), self.report())
        return self.simulate(built, prepared, restart=restart, xdmf=xdmf, plots=plots,
                             progress=progress)

    def simulate(self, built, prepared, *, restart, xdmf, plots, progress) -> CaseRun:
        from flexmbs.post.sampling import aliasing_warnings
        from flexmbs.simulate import simulate
        spec, sv, say, out = self.spec, self.spec.solver, self.say, self.out
        h5 = out / f"{spec.name}.h5"
        previous = files.made_from(h5, spec.name, built)
        warnings = aliasing_warnings(built.system, spec.output["dt"] or sv["dt"])
        for line in warnings:
            say("warning", f"warning: {line}", stderr=True)
        self.fields["warnings"] = warnings
        bar = progress(sv["t0"], sv["t_end"]) if progress is not None else None
        t_sim = time.perf_counter()
        with StopOnSignal() as stop:
            def step(t, t_end, stats):
                stop.check()
                return bar(t, t_end, stats) if bar else False
            try:
                result = simulate(built.system, sv["t_end"], sv["dt"], t0=sv["t0"],
                                  rho_inf=sv["rho_inf"], method=sv["integrator"],
                                  adaptive=sv["adaptive"], rtol=sv["rtol"], atol=sv["atol"],
                                  output=str(h5), output_dt=spec.output["dt"],
                                  petsc_options=dict(sv["petsc_options"]) or None,
                                  progress=step, restart=restart, assembled=prepared)
            except KeyboardInterrupt as exc:
                path = getattr(exc, "result_path", None)
                t_last = steps_in(path)[1] if path else float("nan")
                say("stopped", f"flexmbs run: interrupted by {stop.signal_name()} at t = "
                    f"{t_last:.6g} s; {files.kept(path, h5, 'interrupted', until=False)}",
                    stderr=True)
                return CaseRun(None, self.report(stop.exit_status()))
            except (ConvergenceError, DivergenceError) as exc:
                status = "diverged" if isinstance(exc, DivergenceError) else "failed"
                kept = files.kept(getattr(exc, "result_path", None), h5, status)
                raise type(exc)(f"{exc}; {kept}") from None
            except OutputError as exc:
                raise exc.keeping(files.kept(getattr(exc, "result_path", None), h5,
                                             "failed")) from None
            except ValueError as exc:
                raise CaseError(f"{spec.path}: {exc}") from None
        wall_sim = time.perf_counter() - t_sim
        self.fields["notes"] = tuple(result.extra.get("notes", ()))
        if result.path != str(h5):          # stopped early by the progress callback
            say("stopped", f"flexmbs run: stopped at t = {result.t[-1]:.6g} s; "
                f"{files.kept(result.path, h5, 'interrupted')}", stderr=True)
            return CaseRun(result, self.report(128 + int(signal.SIGINT)))
        say("results", f"results: {result.path}")
        code, written = files.write_outputs(spec, built, result, out, previous, xdmf=xdmf,
                                            plots=plots, say=say)
        outputs = [Path(result.path), *written]
        if code:
            return CaseRun(result, self.report(code, outputs=outputs))
        text = summary(result, wall_sim)
        say("summary", text)
        say("summary", f"total wall time {time.perf_counter() - self.started:.2f} s")
        return CaseRun(result, self.report(outputs=outputs, summary=text))
