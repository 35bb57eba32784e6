"""The files made from the result of a case run, next to it in the output folder.

``DIR/<case>_<body>.xdmf`` (+ ``.h5``) per flexible body and the PNG plots in
``DIR/plots/<case>/``; they are listed in the result file, so that the next run of the
case removes exactly those before it writes its own (:func:`made_from`,
:func:`write_outputs`).  :func:`kept` says what a run that did not complete left.
"""
from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from flexmbs.case.signals import StopOnSignal
from flexmbs.errors import OutputError
from flexmbs.io.results import list_outputs, listed_outputs, status_path, steps_in


def write_xdmf(built, result, out: Path, dt: float | None, check=None) -> list[Path]:
    """One XDMF time series per flexible body: point fields ``displacement`` (total,
    inertial: reference geometry + displacement = current position), ``elastic_displacement``
    (``Phi q_e``, body frame) and ``von_mises`` [Pa] (with the static correction of the
    interface loads for a body preprocessed with ``residual_flexibility``, docs/stresses.md).
    ``check()`` is called before each frame (it may raise ``KeyboardInterrupt``: the
    series being written is dropped)."""
    from flexmbs.io.xdmf import write_time_series
    from flexmbs.post.interface_loads import corrected_markers, stress_wrenches
    from flexmbs.post.recovery import deformed_positions, elastic_displacements, von_mises_stress
    paths = []
    t = np.asarray(result.t)
    idx = subsample(t, dt)
    asm = (built.system.assemble()
           if any(corrected_markers(fb.body) for fb in built.flexible.values()) else None)
    for name, fb in built.flexible.items():
        body = fb.body
        q = result.body_q(name)[idx]
        X = np.asarray(body.points)

        def fields(i, q=q, body=body, X=X, fb=fb):
            if check is not None:
                check()
            qe = q[i, 7:]
            W = {} if asm is None else stress_wrenches(
                asm, fb, result.q[idx[i]], result.lam[idx[i]], t[idx[i]], result.qd[idx[i]])
            return {"displacement": deformed_positions(body, q[i]) - X,
                    "elastic_displacement": elastic_displacements(body, qe),
                    "von_mises": von_mises_stress(body, qe, W)}
        paths.append(write_time_series(out / f"{built.case.name}_{name}", X, body.cells,
                                       body.cell_type, t[idx], fields))
    return paths


def subsample(t: np.ndarray, dt: float | None) -> np.ndarray:
    """Indices of the times ``t`` at least ``dt`` [s] apart, the first and the last kept
    (all of them if ``dt`` is None)."""
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


def kept(path, h5: Path, status: str, until: bool = True) -> str:
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


def made_from(h5: Path, name: str, built) -> list[Path]:
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


def write_outputs(spec, built, result, out: Path, previous: list[Path], *, xdmf: bool,
                  plots: bool, say: Callable[..., None]) -> tuple[int, list[Path]]:
    """Remove the files made from the previous result, write the XDMF series
    (``xdmf`` and the case's ``[output] xdmf``) and the plots (``plots`` and ``[output]
    plots``) of this one and list them in it.  ``say(kind, text, stderr=False)`` reports.

    Returns ``(0 or the exit status of a signal, the files and folders written)``."""
    h5 = Path(result.path)
    for f in previous:
        try:
            f.unlink(missing_ok=True)
        except OSError as exc:
            raise OutputError.from_exception(exc, f).keeping(
                f"the results are complete in {h5}") from None
    for f in out.glob(f".{spec.name}_*.xdmf.partial"):    # left by a killed run
        shutil.rmtree(f, ignore_errors=True)
    written: list[Path] = []
    try:
        with StopOnSignal() as stop:
            if spec.output["xdmf"] and built.flexible and xdmf:
                for p in write_xdmf(built, result, out, spec.output["xdmf_dt"], stop.check):
                    written.append(Path(p))
                    # named from the output folder as given, like every path the run prints
                    say("output", f"XDMF time series: {out / Path(p).name}")
            stop.check()
            if spec.output["plots"] and plots:
                from flexmbs.post.plots import plot_results
                folder = out / "plots" / spec.name
                pngs = plot_results(h5, folder)
                written.append(folder)
                say("output", f"plots: {len(pngs)} PNG files in {folder}")
            stop.check()
    except KeyboardInterrupt:
        made = list_made(h5, spec.name, built)
        say("stopped", f"flexmbs run: interrupted by {stop.signal_name()} while writing "
            f"the XDMF series and plots ({len(made)} files written, listed in {h5}); "
            f"the results are complete in {h5}", stderr=True)
        return stop.exit_status(), written
    except OutputError as exc:
        with contextlib.suppress(OutputError):
            list_made(h5, spec.name, built)
        raise exc.keeping(f"the results are complete in {h5}") from None
    list_made(h5, spec.name, built)
    return 0, written


def list_made(h5: Path, name: str, built) -> list[str]:
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
