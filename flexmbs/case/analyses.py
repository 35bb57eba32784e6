"""The ``[analysis]`` of a case instead of a time simulation: ``type = "static"`` (the
static equilibrium under the loads, :func:`static`) and ``type = "modal"`` (eigenvalues of
the linearised system, :func:`modal`).  Both start from the model as prepared for the DOF
report (:func:`flexmbs.simulate.prepare`) and report through ``say(kind, text)``."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from flexmbs.errors import CaseError, ConvergenceError
from flexmbs.integrate.settings import DEFAULTS


def modal(built, spec, out: Path, prepared, say: Callable[..., None]):
    """Linearise about the initial or steady state; report and save the eigenvalues
    (:func:`write_modes`).  Returns the :class:`~flexmbs.post.linearize` modes."""
    from flexmbs.post.linearize import equilibrium, linearize, modes, steady_state
    an, t0 = spec.analysis, spec.solver.get("t0", DEFAULTS.t0)
    asm = prepared.asm
    # the linearisation takes every constraint row (its null space of G comes from an
    # SVD, where redundant rows are harmless), not only those the rank test kept
    asm.active = np.ones_like(asm.active)
    try:
        state = steady_state(asm, t=t0) if an["state"] == "steady" else equilibrium(asm, t=t0)
    except ConvergenceError as exc:
        raise CaseError(f"{spec.path}: analysis.state: no {an['state']} state found: "
                        f"{exc}") from None
    lin = linearize(asm, state)
    res = modes(lin, n_modes=an["n_modes"])
    out.mkdir(parents=True, exist_ok=True)
    say("analysis", f"modal analysis about the {an['state']} state: {lin.n_dof} independent "
        "coordinates")
    if len(res.frequencies) == 0:
        raise CaseError(f"{spec.path}: analysis: no oscillatory mode about the "
                        f"{an['state']} state ({lin.n_dof} independent coordinates): the "
                        f"linearised system has only real eigenvalues, i.e. the state is "
                        f"not a stable equilibrium (a body that falls or drifts); model a "
                        f"state at rest under its loads, or use state = \"steady\" for "
                        f"a steadily driven model")
    write_modes(built, asm, res, out, spec.name, say)
    return res


def static(built, spec, out: Path, prepared, say: Callable[..., None]):
    """``[analysis] type = "static"``: the static equilibrium ``r(q, 0, 0, lam, t0) = 0``,
    ``g(q, t0) = 0`` from the initial poses (:func:`flexmbs.simulate.static_equilibrium`).
    Reports and writes ``<name>_static.csv`` (joint reactions [N, N m] in the joint frames,
    joint coordinates [rad | m]) and, per flexible body, an XDMF of the deformed state
    (``<name>_<body>_static.xdmf``: displacement, elastic displacement, von Mises).
    Returns the :class:`~flexmbs.simulate.Equilibrium`."""
    from flexmbs.simulate import static_equilibrium
    an, t0 = spec.analysis, spec.solver.get("t0", DEFAULTS.t0)
    try:
        eq = static_equilibrium(built.system, t=t0, load_steps=an["load_steps"],
                                petsc_options=dict(spec.solver["petsc_options"]) or None,
                                assembled=prepared)
    except ConvergenceError as exc:
        raise CaseError(f"{spec.path}: analysis: no static equilibrium found from the "
                        f"initial poses: {exc} (a mechanism with a free degree of freedom "
                        f"has none under its loads; lock it, or raise load_steps)") from None
    out.mkdir(parents=True, exist_ok=True)
    lines = ["joint,Fx_N,Fy_N,Fz_N,Mx_Nm,My_Nm,Mz_Nm,coordinates"]
    say("analysis", f"static equilibrium at t = {t0:g} s (reactions on the second body, "
        "joint frame)")
    say("analysis", f"{'joint':<16s} {'Fx [N]':>11s} {'Fy [N]':>11s} {'Fz [N]':>11s} "
        f"{'Mx [N m]':>11s} {'My [N m]':>11s} {'Mz [N m]':>11s}")
    for name, r in eq.reactions.items():
        c = " ".join(f"{v:.10g}" for v in np.atleast_1d(eq.joint_coordinates.get(name, [])))
        say("analysis", f"{name:<16s} " + " ".join(f"{v:11.5g}" for v in r))
        lines.append(f"{name}," + ",".join(f"{v:.10g}" for v in r) + f",{c}")
    csv = out / f"{spec.name}_static.csv"
    csv.write_text("\n".join(lines) + "\n")
    say("output", f"reactions: {csv}")
    if spec.output["xdmf"] and built.flexible:
        from flexmbs.io.xdmf import write_time_series
        from flexmbs.post.interface_loads import corrected_markers, stress_wrenches
        from flexmbs.post.recovery import (
            deformed_positions, elastic_displacements, von_mises_stress,
        )
        for name, fb in built.flexible.items():
            body, q = fb.body, eq.body_q(name)
            X = np.asarray(body.points)
            W = (stress_wrenches(prepared.asm if prepared is not None
                                 else built.system.assemble(), fb, eq.q, eq.lam, t0)
                 if corrected_markers(body) else {})
            path = write_time_series(
                out / f"{spec.name}_{name}_static", X, body.cells, body.cell_type, [t0],
                lambda i, body=body, q=q, X=X, W=W: {
                    "displacement": deformed_positions(body, q) - X,
                    "elastic_displacement": elastic_displacements(body, q[7:]),
                    "von_mises": von_mises_stress(body, q[7:], W)})
            say("output", f"deformed state of '{name}': {path}")
    return eq


def write_modes(built, asm, res, out: Path, name: str, say: Callable[..., None]) -> None:
    """Report the modes and write ``<name>_modes.csv`` (frequency, damping, the body that
    moves and along which axis, :mod:`flexmbs.post.mode_shapes`), the complex mode
    shapes in ``q`` (``<name>_modes.h5``) and, per flexible body, an XDMF series whose
    steps are the modes (``<name>_<body>_modes.xdmf``, field ``mode_shape``, max 1)."""
    import h5py

    from flexmbs.io.xdmf import write_time_series
    from flexmbs.post.mode_shapes import label, shape_fields
    labels = [label(asm, res.shapes[:, k]) for k in range(res.shapes.shape[1])]
    csv = out / f"{name}_modes.csv"
    lines = ["mode,frequency_Hz,damping_ratio,damped_frequency_Hz,body,kind,axis,axis_share"]
    say("analysis", f"{'mode':>4s} {'f [Hz]':>12s} {'zeta':>10s} {'f_d [Hz]':>12s}  shape")
    for k, (f, z, fd, lab) in enumerate(zip(res.frequencies, res.damping_ratios,
                                             res.damped_frequencies, labels), 1):
        say("analysis", f"{k:4d} {f:12.5f} {z:10.3g} {fd:12.5f}  {lab}")
        lines.append(f"{k},{f:.10g},{z:.6g},{fd:.10g},{lab.body},{lab.kind},{lab.axis},"
                     f"{lab.share:.4f}")
    csv.write_text("\n".join(lines) + "\n")
    say("output", f"eigenvalues: {csv}")
    h5 = out / f"{name}_modes.h5"
    with h5py.File(h5, "w") as f:
        f["frequencies"] = res.frequencies
        f["frequencies"].attrs["unit"] = "Hz"
        f["damping_ratios"] = res.damping_ratios
        f["shapes_real"], f["shapes_imag"] = res.shapes.real, res.shapes.imag
        f.attrs["coordinates"] = [str(c) for c in asm.coordinate_labels]
    say("output", f"mode shapes (in q): {h5}")
    for bname, fb in built.flexible.items():
        s = asm.body_slices[bname]
        body = fb.body
        path = write_time_series(
            out / f"{name}_{bname}_modes", np.asarray(body.points), body.cells,
            body.cell_type, np.arange(1, res.shapes.shape[1] + 1, dtype=float),
            lambda i, s=s, body=body: {"mode_shape": shape_fields(body,
                                                                  res.shapes[s, i][7:])})
        say("output", f"mode shapes of '{bname}' (step k = mode k): {path}")
