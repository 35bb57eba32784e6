"""The text a case run reports: the model inventory, the degrees of freedom and the
initial assembly, the run summary, a preprocessing step (what ``flexmbs run`` and
``flexmbs check`` print; :mod:`flexmbs.case.service` hands it over as messages)."""
from __future__ import annotations

import numpy as np


def preprocess_line(msg: str, seconds: float) -> str:
    """One preprocessing step of a flexible body and its wall time [s]."""
    return f"  preprocess {msg:<55s} {seconds:7.2f} s"


def inventory(built) -> str:
    """Bodies (type, mass [kg], coordinates), joints (equations), drives and the body
    files of a built case (:class:`~flexmbs.case.builder.BuiltCase`)."""
    s = built.system
    lines = [f"model '{s.name}': {len(s.bodies)} bodies, {len(s.joints)} joints, "
             f"{len(s.drives)} drives, {len(s.forces)} force elements, {len(s.sensors)} sensors"]
    for b in s.bodies:
        kind = type(b).__name__
        extra = f", n_q = {b.n_q}" if hasattr(b, "n_q") else ""
        lines.append(f"  body   {b.name:<16s} {kind}, m = {b.m:.6g} kg{extra}")
    for j in s.joints:
        lines.append(f"  joint  {j.name:<16s} {type(j).__name__}, {len(j.labels)} equations")
    for d in s.drives:
        fed = getattr(d, "feed", None)
        fed = "" if fed is None else \
            f", fed by {fed[0].columns[fed[1]]} x {d.ratio:g}"
        lines.append(f"  drive  {d.name:<16s} {type(d).__name__} on '{d.joint}'{fed}")
    for c in getattr(s, "constraints", ()):
        lines.append(f"  velocity constraint {c.name:<16s} {type(c).__name__}, "
                     f"{len(c.labels)} velocity rows (not in the position count below)")
    for name, (path, how) in built.body_files.items():
        lines.append(f"  body file of '{name}': {path} ({how})")
    return "\n".join(lines)


def dof_text(report, moved: tuple[float, float]) -> str:
    """The rank test's :class:`~flexmbs.system.dof.DofReport` (degrees of freedom,
    redundant rows) and how far the initial assembly moved positions and velocities."""
    lines = [report.summary()]
    lines.append(f"initial assembly: positions moved by at most {moved[0]:.3g}, "
                 f"velocities by at most {moved[1]:.3g} (SI units) to satisfy the constraints")
    if report.mobility <= 0:
        lines.append("note: the model has no degree of freedom left (fully driven or locked)")
    return "\n".join(lines)


def summary(result, wall: float, model=None) -> str:
    """Final time, steps, Newton iterations, wall time; the energy line of
    :func:`flexmbs.post.energy.energy_summary` (how well a conservative ``model`` kept
    ``E = T + V``, else which of its parts exchange energy; ``model`` defaults to
    ``result.extra["model"]``); the maximum joint reactions; the impacts of each contact
    (:func:`impact_lines`)."""
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
    lines.extend(impact_lines(getattr(result, "impacts", ())))
    return "\n".join(lines)


def impact_lines(impacts) -> list[str]:
    """Per contact with impacts: their number, the largest peak normal force [N] (when
    and at what approach speed) and the first impact time."""
    out = []
    for name in dict.fromkeys(i.contact for i in impacts):
        mine = [i for i in impacts if i.contact == name]
        top = max(mine, key=lambda i: i.peak_force)
        out.append(f"contact {name:<10s} {len(mine)} impact{'s' if len(mine) != 1 else ''} "
                   f"({' - '.join(top.bodies)}), first at t = {mine[0].t:.6g} s; peak force "
                   f"{top.peak_force:.4g} N at t = {top.t:.6g} s (approach speed "
                   f"{top.v_impact:.4g} m/s)")
    return out


def hotspot_line(h) -> str:
    """One hot spot (:class:`~flexmbs.post.hotspots.HotSpotHistory`): its largest von
    Mises stress [Pa], where and when, and its largest Miner damage sum."""
    k_t, k_n = np.unravel_index(np.argmax(h.von_mises), h.von_mises.shape)
    n = len(h.spot.nodes)
    line = (f"hot spot {h.spot.name} ({h.spot.body}, {n} node{'s' if n != 1 else ''}): max von "
            f"Mises {h.von_mises[k_t, k_n]:.4g} Pa at node {int(h.spot.nodes[k_n])}, "
            f"t = {h.t[k_t]:.6g} s")
    if h.damage is not None:
        line += f"; Miner damage {h.damage.max():.3g} (node {int(h.spot.nodes[np.argmax(h.damage)])})"
    return line
