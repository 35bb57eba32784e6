"""The files made from the result of a case run, next to it in the output folder.

``DIR/<case>_<body>.xdmf`` (+ ``.h5``) per flexible body, ``DIR/<case>_mechanism.xdmf``
(+ ``.h5``: every body, joint marker and sensor in one file, :mod:`flexmbs.post.scene`),
``DIR/<case>.csv`` (sensors and hot spots, :func:`write_table`) and the PNG plots in
``DIR/plots/<case>/``; they are listed in the result file, so that the next run of the
case removes exactly those before it writes its own (:func:`made_from`,
:func:`write_outputs`).  The hot-spot histories go into the result file itself
(``/hotspots``, :func:`write_hotspots`).  :func:`kept` says what a run that did not
complete left.
"""
from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from flexmbs.case.report import hotspot_line
from flexmbs.case.signals import StopOnSignal
from flexmbs.errors import OutputError
from flexmbs.io.results import list_outputs, listed_outputs, status_path, steps_in


def write_xdmf(built, result, out: Path, dt: float | None, check=None,
               loads=None) -> list[Path]:
    """One XDMF time series per flexible body: point fields ``displacement`` (total,
    inertial: reference geometry + displacement = current position), ``elastic_displacement``
    (``Phi q_e``, body frame) and ``von_mises`` [Pa] (with the static correction of the
    interface loads for a body preprocessed with ``residual_flexibility``, docs/stresses.md).
    ``check()`` is called before each frame (it may raise ``KeyboardInterrupt``: the
    series being written is dropped); ``loads``: :func:`interface_loads` (made here if
    not given)."""
    from flexmbs.io.xdmf import write_time_series
    from flexmbs.post.recovery import deformed_positions, elastic_displacements, von_mises_stress
    paths = []
    t = np.asarray(result.t)
    idx = subsample(t, dt)
    loads = interface_loads(built, result) if loads is None else loads
    for name, fb in built.flexible.items():
        body = fb.body
        q = result.body_q(name)[idx]
        X = np.asarray(body.points)
        W = {k: v[idx] for k, v in loads.get(name, {}).items()}

        def fields(i, q=q, body=body, X=X, W=W):
            if check is not None:
                check()
            qe = q[i, 7:]
            return {"displacement": deformed_positions(body, q[i]) - X,
                    "elastic_displacement": elastic_displacements(body, qe),
                    "von_mises": von_mises_stress(body, qe, {k: v[i] for k, v in W.items()})}
        paths.append(write_time_series(out / f"{built.case.name}_{name}", X, body.cells,
                                       body.cell_type, t[idx], fields))
    return paths


def interface_loads(built, result) -> dict[str, dict[str, np.ndarray]]:
    """``{body: {marker: W (n, 6)}}`` [N, N m]: the body-frame interface loads at every
    result row, at the markers of each flexible body that carry residual stress modes,
    for the static correction of its stresses
    (:func:`flexmbs.post.interface_loads.stress_wrenches`, docs/stresses.md).  Bodies
    without such markers are left out; the system is assembled once, and only if one
    has them."""
    from flexmbs.post.interface_loads import corrected_markers, stress_wrenches
    bodies = {n: fb for n, fb in built.flexible.items() if corrected_markers(fb.body)}
    if not bodies:
        return {}
    asm = built.system.assemble()
    out = {}
    for name, fb in bodies.items():
        per_row = [stress_wrenches(asm, fb, result.q[k], result.lam[k], result.t[k],
                                   result.qd[k]) for k in range(len(result.t))]
        names = set().union(*per_row) if per_row else set()
        if names and all(set(W) == names for W in per_row):   # else none is corrected
            out[name] = {m: np.array([W[m] for W in per_row]) for m in sorted(names)}
    return out


def mechanism_name(name: str) -> str:
    """The file name (without suffix) of the XDMF of the whole mechanism of case ``name``."""
    return f"{name}_mechanism"


def write_mechanism(spec, built, result, out: Path, dt: float | None, check=None,
                    loads=None) -> Path:
    """The XDMF of the whole mechanism (:mod:`flexmbs.post.scene`) at the output times
    ``dt`` [s] apart; its flexible grids carry ``von_mises_max`` [Pa] and
    ``time_of_max`` [s], the maximum over every output step (:mod:`flexmbs.post.extrema`);
    ``loads``: :func:`interface_loads` (made here if not given)."""
    from flexmbs.case.post_items import solids
    from flexmbs.io.xdmf_collection import write_collection
    from flexmbs.post import scene
    from flexmbs.post.extrema import von_mises_maximum
    t = np.asarray(result.t)
    idx = subsample(t, dt)
    system = built.system
    loads = interface_loads(built, result) if loads is None else loads

    def q_of(body):
        return result.body_q(body.name)[idx]
    grids = []
    shapes = solids(spec, built)
    for b in system.bodies:
        q = result.body_q(b.name)
        if b.name in built.flexible:
            body = built.flexible[b.name].body
            W = loads.get(b.name, {})
            peak = von_mises_maximum(body, t, q[:, 7:], W)
            grids.append(scene.flexible_grid(
                b.name, body, q[idx], check=check, static={
                    "von_mises_max": peak.value, "time_of_max": peak.time},
                wrenches={k: v[idx] for k, v in W.items()}))
        else:
            grids.append(scene.body_grids(b.name, q[idx], shapes.get(b.name)))
    if system.joints:
        grids.append(scene.joint_grid(system.joints, q_of, len(idx)))
    values = {k: np.asarray(v)[idx] for k, v in result.sensors.items()}
    grids += scene.sensor_grids(system.sensors, values, q_of)
    return write_collection(out / mechanism_name(built.case.name), t[idx], grids, check)


def write_hotspots(spec, built, result, loads=None) -> list:
    """The stress histories of the case's hot spots
    (:class:`~flexmbs.post.hotspots.HotSpotHistory`), written into the result file as
    ``/hotspots/<name>/stress``, ``von_mises``, ``principal`` [Pa] (attributes ``nodes``,
    ``body`` and, with an S-N curve, ``damage``); ``loads``: :func:`interface_loads` (made
    here if not given)."""
    from flexmbs.case.post_items import hotspots
    from flexmbs.io.results import add_rows
    from flexmbs.post.hotspots import stress_history
    out = []
    spots = hotspots(spec, built)
    if spots and loads is None:
        loads = interface_loads(built, result)
    for spot in spots:
        q = result.body_q(spot.body)
        h = stress_history(spot, built.flexible[spot.body].body, result.t, q[:, 7:],
                           loads.get(spot.body, {}))
        attrs = {"nodes": spot.nodes, "body": spot.body}
        if h.damage is not None:
            attrs.update(damage=h.damage, sn_C=spot.sn_curve.C, sn_m=spot.sn_curve.m)
        add_rows(result.path, f"hotspots/{spot.name}", {
            "stress": (h.stress, "Pa"), "von_mises": (h.von_mises, "Pa"),
            "principal": (h.principal, "Pa")}, attrs)
        out.append(h)
    return out


def write_peak_stress(built, result, loads) -> dict[str, np.ndarray]:
    """The largest von Mises stress over each flexible body's nodes at every output step
    (:func:`flexmbs.post.extrema.von_mises_peak`), written into the result file as
    ``/stress/<body>/von_mises_peak`` [Pa] and ``/stress/<body>/node`` (the node that
    carries it); returns ``{body: peak}``."""
    from flexmbs.io.results import add_rows
    from flexmbs.post.extrema import von_mises_peak
    out = {}
    for name, fb in built.flexible.items():
        p, i = von_mises_peak(fb.body, result.body_q(name)[:, 7:], loads.get(name, {}))
        add_rows(result.path, f"stress/{name}", {"von_mises_peak": (p, "Pa"),
                                                 "node": (i.astype(float), "1")}, {})
        out[name] = p
    return out


def write_table(built, result, histories, out: Path) -> Path:
    """``DIR/<case>.csv``: time [s], every sensor column in its unit, and per hot spot the
    largest von Mises stress, the largest first and the smallest third principal stress
    over its nodes [Pa] at each output step."""
    from flexmbs.io.csv_table import write_csv
    names, units, cols = ["time"], ["s"], [np.asarray(result.t)]
    for s in built.system.sensors:
        v = np.asarray(result.sensors[s.name]).reshape(len(result.t), -1)
        labels = list(s.columns) if len(s.columns) == v.shape[1] else \
            [f"{s.name}.{k}" for k in range(v.shape[1])]
        names += labels
        units += [s.unit or "-"] * v.shape[1]
        cols += list(v.T)
    for h in histories:
        n = h.spot.name
        names += [f"{n}.von_mises_max", f"{n}.s1_max", f"{n}.s3_min"]
        units += ["Pa"] * 3
        cols += [h.von_mises.max(axis=1), h.principal[..., 0].max(axis=1),
                 h.principal[..., 2].min(axis=1)]
    return write_csv(out / f"{built.case.name}.csv", names, units, cols)


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
    for stem in [*(f"{name}_{body}" for body in built.flexible), mechanism_name(name)]:
        files += [out / f"{stem}.xdmf", out / f"{stem}.h5"]
    files.append(out / f"{name}.csv")
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
    loads = interface_loads(built, result)
    try:
        with StopOnSignal() as stop:
            if spec.output["xdmf"] and built.flexible and xdmf:
                for p in write_xdmf(built, result, out, spec.output["xdmf_dt"], stop.check,
                                    loads):
                    written.append(Path(p))
                    # named from the output folder as given, like every path the run prints
                    say("output", f"XDMF time series: {out / Path(p).name}")
            if spec.output["xdmf"] and xdmf:
                p = write_mechanism(spec, built, result, out, spec.output["xdmf_dt"],
                                    stop.check, loads)
                written.append(p)
                say("output", f"XDMF of the whole mechanism: {out / p.name}")
            stop.check()
            histories = write_hotspots(spec, built, result, loads)
            peaks = write_peak_stress(built, result, loads)
            for body, p in peaks.items():
                k = int(np.argmax(p))
                say("output", f"peak von Mises stress of '{body}': {p[k] / 1e6:.4g} MPa at "
                    f"t = {result.t[k]:.4g} s (/stress/{body}/von_mises_peak)")
            for h in histories:
                say("output", hotspot_line(h))
            p = write_table(built, result, histories, out)
            written.append(p)
            say("output", f"CSV of sensors and hot spots: {out / p.name}")
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
    for stem in [*(f"{name}_{body}" for body in built.flexible), mechanism_name(name)]:
        xdmf = out / f"{stem}.xdmf"
        if xdmf.is_file():
            made += [xdmf.name, heavy_data(xdmf).name]
    if (out / f"{name}.csv").is_file():
        made.append(f"{name}.csv")
    plots = out / "plots" / name
    if plots.is_dir():
        made += [f"plots/{name}/{p.name}" for p in sorted(plots.glob("*.png"))]
    list_outputs(h5, made)
    return made
