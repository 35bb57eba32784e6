"""Cost and agreement of a flexible body as a tree member (formulation "relative",
docs/relative.md) against the descriptor form (absolute), in one run (not a test).

The flexible slider-crank of ``flexible_steps.py`` (rigid crank driven at 150 rad/s, rod
0.4 x 0.01 x 0.01 m hex27 20x1x1 with 12 fixed-interface modes, rigid slider, the loop
closed by the prismatic cut joint): generalized-alpha, rho_inf = 0.9, h = 1 ms over
``--t-end`` seconds after a five-step warm-up of each form (it loads the compiled
kernels).  Prints the cost per step of each form, its Newton iterations per step, and
the largest difference of the slider position [m] and of the rod's elastic coordinates
between them (each form carries its own O(h^2) error, so the difference is of that
size, not the round-off).

``--converge H ...`` runs instead the agreement check of docs/relative.md: the rod with
``--modes`` (2) fixed-interface modes damped at ``--zeta`` (0.7) of critical, linear
elastic, both forms at each step ``H`` (halving) with Newton to 1e-10 relative; it
prints each form's changes between successive steps, the forms' differences at each
step and the difference of their Richardson extrapolations (order 2).

    .venv/bin/python benchmarks/relative_flexible.py              # 0.2 s
    .venv/bin/python benchmarks/relative_flexible.py --t-end 1.0
    .venv/bin/python benchmarks/relative_flexible.py --forms relative recursive
    .venv/bin/python benchmarks/relative_flexible.py --converge 1e-3 5e-4 2.5e-4 --t-end 1.0

``--agreement H`` runs the same rod UNDAMPED (``--zeta`` 0 unless given) in both forms at
``H``, ``H/2``, ``H/4`` with ``--rho-inf`` (0.9) and Newton by SNES's tests, recorded
at ``--outputs`` (10) common times, and prints per quantity (slider position x [m], the
crank pivot's reaction force J1 [N], the rod's modal coordinates q_e) each form's
changes between successive steps and their observed order, the forms' differences at
each step, and the difference of their Richardson extrapolations (order 2) from the
two finest steps, along the trajectory and at ``--t-end``.  The rod's undamped
vibration near 1.75e4 rad/s dominates each form's error (its phase error grows as
``omega^3 t h^2 / 12``), so the asymptotic order-2 range needs ``h`` of a few
microseconds over 0.02 s (docs/relative.md, "Checks"):

    .venv/bin/python benchmarks/relative_flexible.py --agreement 4e-6 --t-end 0.02

``--ode RTOL`` compares the forms' EQUATIONS rather than two discretisations: the
UNDAMPED rod with ``--modes`` (2) fixed-interface modes, each form's index-1 ODE
``(q, qd)' = (qd, qdd)``, ``qdd`` and ``lam`` of the saddle system, by DOP853 at
``rtol = RTOL`` (:func:`flexmbs.integrate.ode_reference.ode_reference`, ``atol`` RTOL
times each coordinate's scale: 1 for positions, angles and rates, 1e-3 for the modal
coordinates and their rates) from the same consistent initial state (the relative
form's, mapped to the bodies), recorded at ``--outputs`` (10) common times.  Prints each
form's cost (CPU, evaluations), its largest constraint drift ``|g|``, and the largest
differences of the slider position x [m], the crank pivot's reaction force J1 [N] and
the rod's modal coordinates q_e.  ``--ode-forms`` runs one form only and ``--ode-dir``
keeps each form's run (``ode_<form>_<modes>_<rtol>_<t_end>.npz``) and reads it back if
there, so that the two forms can run in two processes side by side:

    .venv/bin/python benchmarks/relative_flexible.py --ode 1e-12 --t-end 1.0
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import flexible_steps

import flexmbs as fm

H = 1e-3


def run(model, formulation: str, t_end: float):
    """``(result, ms per step, CPU ms per step, Newton iterations per step)`` after a
    warm-up."""
    model.formulation = formulation
    fm.simulate(model, 5 * H, H, rho_inf=0.9, output_dt=5 * H)
    t0, c0 = time.perf_counter(), time.process_time()
    res = fm.simulate(model, t_end, H, rho_inf=0.9, output_dt=t_end / 10)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return (res, 1e3 * wall / res.stats.steps, 1e3 * cpu / res.stats.steps,
            res.stats.newton_iterations / res.stats.steps)


def damped_slider_crank(tmp, n_modes: int, zeta: float):
    """The slider-crank of the agreement run: the rod of ``flexible_steps.py`` with
    ``n_modes`` fixed-interface modes, each damped at the ratio ``zeta``, linear elastic."""
    from flexcase_models import box_beam_mesh, reduce_cb, slider_crank_model

    from flexmbs.fe.material import material_from_name
    mesh = box_beam_mesh(Path(tmp) / "rod.msh", (0.4, 0.01, 0.01), (20, 1, 1),
                         faces=("hole_A", "hole_B"))
    rod = reduce_cb(mesh, material_from_name("steel"), n_modes, interfaces=("hole_A", "hole_B"),
                    static_modes=False, name="rod", damping=zeta, stiffening=False)
    return slider_crank_model(rod, stiffening=False)


def converge(model, steps: list[float], t_end: float) -> None:
    """Both forms at each step of ``steps`` (halving) with Newton to 1e-10; per form the
    changes between successive steps and their observed order, then the difference of
    the forms' Richardson extrapolations ``x(h/2) + (x(h/2) - x(h)) / 3`` (order 2)."""
    opts = {"newton_rtol": 1e-10}
    x = {}
    for f in ("absolute", "relative"):
        model.formulation = f
        for h in steps:
            t0 = time.perf_counter()
            res = fm.simulate(model, t_end, h, rho_inf=0.9, output_dt=t_end / 10,
                              integrator_options=opts)
            x[f, h] = np.column_stack([res.body_q("slider")[:, 0], res.body_q("rod")[:, 7:]])
            print(f"{f}, h = {h * 1e3:g} ms: {time.perf_counter() - t0:.0f} s")
    for f in ("absolute", "relative"):
        d = [np.abs(x[f, a] - x[f, b]).max(axis=0) for a, b in zip(steps, steps[1:])]
        print(f"| {f} | " + " | ".join(f"{e[0]:.2e} m, q_e {e[1:].max():.2e}" for e in d)
              + " | orders " + ", ".join(f"{np.log2(a[0] / b[0]):.2f} / "
                                         f"{np.log2(a[1:].max() / b[1:].max()):.2f}"
                                         for a, b in zip(d, d[1:])) + " |")
    for h in steps:
        e = np.abs(x["absolute", h] - x["relative", h]).max(axis=0)
        print(f"forms apart at h = {h * 1e3:g} ms: slider x {e[0]:.2e} m, "
              f"rod q_e {e[1:].max():.2e}")
    for a, b in zip(steps, steps[1:]):
        ext = {f: x[f, b] + (x[f, b] - x[f, a]) / 3.0 for f in ("absolute", "relative")}
        e = np.abs(ext["absolute"] - ext["relative"]).max(axis=0)
        print(f"extrapolated from h = {a * 1e3:g}, {b * 1e3:g} ms: slider x {e[0]:.2e} m, "
              f"rod q_e {e[1:].max():.2e}")


def agreement_trajectory(model, h: float, t_end: float, rho_inf: float,
                         n_out: int) -> np.ndarray:
    """Slider x, the crank pivot's reaction force (J1) and the rod's modal coordinates at
    the ``n_out + 1`` output times ``0, t_end / n_out, ...``, columns ``[x, F_J1 (3),
    q_e]``.  Newton by SNES's own tests (residual to 1e-10 of the first); the increment
    test at ``newton_rtol = 1e-10`` now gives the same agreement (1.51e-10 against 1.48e-10 m
    over 10 ms at h = 2 us; before its residual floor was scaled with the tolerance it
    stopped Newton early and left 9.9e-9 m, docs/solver.md)."""
    res = fm.simulate(model, t_end, h, rho_inf=rho_inf, output_dt=t_end / n_out,
                      integrator_options={"newton_rtol": None})
    if res.t.shape[0] != n_out + 1 or abs(res.t[-1] - t_end) > 1e-12:
        raise SystemExit(f"--agreement: expected {n_out + 1} outputs up to {t_end:g} s, "
                         f"found {res.t.shape[0]} up to {res.t[-1]:g} s")
    return np.column_stack([res.body_q("slider")[:, 0], res.reactions["J1"][:, :3],
                            res.body_q("rod")[:, 7:]])


#: the compared quantities: label, unit, columns of :func:`agreement_trajectory`
AGREEMENT_COLUMNS = (("slider x", "m", slice(0, 1)), ("crank reaction F_J1", "N", slice(1, 4)),
                     ("rod q_e", "", slice(4, None)))


def agreement(model, h: float, t_end: float, rho_inf: float, n_out: int) -> dict:
    """Both forms at ``h, h/2, h/4``; for each quantity of :data:`AGREEMENT_COLUMNS`
    the largest (over the output times and the quantity's components) change of each
    form between successive steps, its observed order ``log2(d(h) / d(h/2))``, the forms'
    differences at each step and the difference of their Richardson extrapolations
    ``x_e = x(h/4) + (x(h/4) - x(h/2)) / 3`` along the trajectory and at ``t_end``.
    Prints the table and returns the numbers."""
    steps = (h, h / 2, h / 4)
    x = {}
    for f in ("absolute", "relative"):
        model.formulation = f
        for s in steps:
            t0 = time.perf_counter()
            x[f, s] = agreement_trajectory(model, s, t_end, rho_inf, n_out)
            print(f"{f}, h = {s * 1e6:g} us: {time.perf_counter() - t0:.0f} s", flush=True)
    ext = {f: x[f, steps[2]] + (x[f, steps[2]] - x[f, steps[1]]) / 3.0
           for f in ("absolute", "relative")}
    out = {}
    print(f"\nlargest over {n_out} output times (and components); orders from h, h/2, h/4")
    print("| quantity | largest | form | x(h) - x(h/2) | x(h/2) - x(h/4) | order |")
    print("|---|---:|---|---:|---:|---:|")
    for name, unit, c in AGREEMENT_COLUMNS:
        size = np.abs(x["absolute", steps[2]][:, c]).max()
        for f in ("absolute", "relative"):
            d = [np.abs(x[f, a][:, c] - x[f, b][:, c]).max() for a, b in zip(steps, steps[1:])]
            out[name, f] = (d, np.log2(d[0] / d[1]))
            print(f"| {name} | {size:.3g} {unit} | {f} | {d[0]:.2e} | {d[1]:.2e} | "
                  f"{np.log2(d[0] / d[1]):.2f} |")
    print("\n| quantity | forms apart at h, h/2, h/4 | order | extrapolated forms apart "
          "(trajectory / t_end) | each form's own error at h/4 (x(h/2) - x(h/4)) / 3 |")
    print("|---|---|---:|---:|---:|")
    for name, unit, c in AGREEMENT_COLUMNS:
        apart = [np.abs(x["absolute", s][:, c] - x["relative", s][:, c]).max() for s in steps]
        e = np.abs(ext["absolute"][:, c] - ext["relative"][:, c])
        own = max(out[name, f][0][1] for f in ("absolute", "relative")) / 3.0
        out[name] = (apart, e.max(), e[-1].max(), own)
        print(f"| {name} | " + ", ".join(f"{a:.2e}" for a in apart)
              + f" | {np.log2(apart[1] / apart[2]):.2f} | {e.max():.2e} / {e[-1].max():.2e} "
              f"{unit} | {own:.2e} |")
    return out


def ode_form(model, formulation: str, rtol: float, t_out: np.ndarray) -> dict:
    """One form's index-1 ODE by DOP853 (module doc): columns ``[x, F_J1 (3), q_e]`` at
    ``t_out``, the largest ``|g|``, CPU seconds and evaluations.  Both forms start from
    the relative form's consistent state mapped to the bodies."""
    from flexmbs.relative.dae import RelativeDAE

    rel = RelativeDAE(model.validate())
    rel.drop_redundant(rel.initial_q())
    return ode_of(rel, formulation, rtol, t_out)


def ode_of(rel, formulation: str, rtol: float, t_out: np.ndarray) -> dict:
    """:func:`ode_form` of the relative DAE ``rel`` (its redundant rows dropped) of the
    slider-crank (also ``tests/relative/test_flexible_agreement_ode.py``)."""
    import scipy.sparse as sp

    from flexmbs.integrate.consistent import consistent_initial_conditions
    from flexmbs.integrate.ode_reference import ode_reference
    from flexmbs.relative.reactions import reactions

    init = consistent_initial_conditions(rel, rel.initial_q(), rel.initial_qd())
    asm = rel.absolute
    s_slider, s_rod = asm.body_slices["slider"], asm.body_slices["rod"]
    if formulation == "relative":
        dae, q0, qd0 = rel, init.q, init.qd
        z = np.zeros(asm.n_q), np.zeros(asm.n_lam)

        def mass_of(beta):              # T^T M_b T without the bodies' K, C
            q_b, _, T, _ = rel.absolute_coordinates(beta)
            M_b = sp.csr_matrix(asm.tangent_mass(q_b, z[0], z[0], z[1], 0.0))
            return T.T @ (M_b @ T)
        scale = np.ones(rel.n_q)
        for tj in rel.tree.joints:
            scale[tj.qe] = 1e-3
    else:
        q_b, qd_b = rel.absolute_coordinates(init.q, init.qd)[:2]
        start = consistent_initial_conditions(asm, q_b, qd_b)
        print(f"absolute start: moved {start.max_dq:.1e} m, {start.max_dqd:.1e} m/s",
              flush=True)
        dae, q0, qd0, mass_of = asm, start.q, start.qd, None
        scale = np.ones(asm.n_q)
        scale[s_rod.start + 7:s_rod.stop] = 1e-3
    atol = rtol * np.concatenate([scale, scale])
    ref = ode_reference(dae, q0, qd0, t_out, rtol=rtol, atol=atol, mass_of=mass_of)
    rows = []
    for t, q, qd, qdd, lam in zip(ref.t, ref.q, ref.qd, ref.qdd, ref.lam, strict=True):
        if formulation == "relative":
            F = reactions(rel, q, qd, qdd, lam, t)["J1"][0]
            q = rel.absolute_coordinates(q)[0]
        else:
            F = asm.reactions(q, lam, t)["J1"][0]
        rows.append(np.concatenate([[q[s_slider][0]], F, q[s_rod][7:]]))
    return {"x": np.array(rows), "drift": ref.drift.max(), "cpu": ref.cpu,
            "evaluations": ref.evaluations}


def ode_agreement(model, rtol: float, t_end: float, n_out: int, forms, directory) -> None:
    """Both forms' index-1 ODEs (module doc): cost, drift, largest differences."""
    t_out = np.linspace(0.0, t_end, n_out + 1)
    out = {}
    for f in forms:
        path = None if directory is None else \
            Path(directory) / f"ode_{f}_{args_tag(rtol, t_end, n_out)}.npz"
        if path is not None and path.exists():
            out[f] = dict(np.load(path))
        else:
            out[f] = ode_form(model, f, rtol, t_out)
            if path is not None:
                np.savez(path, **out[f])
        r = out[f]
        print(f"| {f} | {float(r['cpu']):.0f} s CPU | {int(r['evaluations'])} evaluations | "
              f"max |g| {float(r['drift']):.1e} |", flush=True)
    if len(out) < 2:
        return
    a, r = out["absolute"]["x"], out["relative"]["x"]
    print("\n| quantity | largest | forms apart (trajectory) | at t_end |")
    print("|---|---:|---:|---:|")
    for name, unit, c in AGREEMENT_COLUMNS:
        e = np.abs(a[:, c] - r[:, c])
        print(f"| {name} | {np.abs(a[:, c]).max():.3g} {unit} | {e.max():.2e} | "
              f"{e[-1].max():.2e} |")


def args_tag(rtol: float, t_end: float, n_out: int) -> str:
    return f"{rtol:g}_{t_end:g}_{n_out}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=0.2, help="simulated time [s]")
    ap.add_argument("--converge", type=float, nargs="+", metavar="H",
                    help="steps [s] (halving) of the agreement run instead of the timing")
    ap.add_argument("--agreement", type=float, metavar="H",
                    help="coarsest step [s] of the undamped agreement run (H, H/2, H/4)")
    ap.add_argument("--modes", type=int, default=2,
                    help="fixed-interface modes (--converge, --agreement)")
    ap.add_argument("--zeta", type=float,
                    help="modal damping ratio (--converge: 0.7, --agreement: 0)")
    ap.add_argument("--rho-inf", type=float, default=0.9, help="rho_inf (--agreement)")
    ap.add_argument("--outputs", type=int, default=10,
                    help="common output times (--agreement)")
    ap.add_argument("--ode", type=float, metavar="RTOL",
                    help="rtol of the forms' index-1 ODEs (undamped rod, DOP853)")
    ap.add_argument("--ode-forms", nargs="+", default=["absolute", "relative"],
                    choices=("absolute", "relative"), help="forms of --ode")
    ap.add_argument("--ode-dir", help="directory keeping each form's --ode run")
    ap.add_argument("--forms", nargs="+", default=["relative"],
                    choices=("relative", "recursive"),
                    help="joint-coordinate formulations timed against the absolute form")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    if args.ode is not None:
        if not 0 < args.ode < 1:
            ap.error(f"--ode: expected a tolerance 0 < RTOL < 1, got {args.ode}")
        zeta = 0.0 if args.zeta is None else args.zeta
        with tempfile.TemporaryDirectory() as tmp:
            model = damped_slider_crank(tmp, args.modes, zeta)
        print(f"flexible slider-crank, {args.modes} modes, zeta = {zeta:g}, index-1 ODEs "
              f"by DOP853 at rtol {args.ode:g}, {args.t_end:g} s, load average "
              f"{os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
        ode_agreement(model, args.ode, args.t_end, args.outputs, args.ode_forms,
                      args.ode_dir)
        return
    if args.agreement is not None:
        if not args.agreement > 0:
            ap.error(f"--agreement: expected a step H > 0 [s], got {args.agreement}")
        zeta = 0.0 if args.zeta is None else args.zeta
        with tempfile.TemporaryDirectory() as tmp:
            model = damped_slider_crank(tmp, args.modes, zeta)
        print(f"flexible slider-crank, {args.modes} modes, zeta = {zeta:g}, "
              f"{args.t_end:g} s, h = {args.agreement * 1e6:g} us / 2 / 4, rho_inf = "
              f"{args.rho_inf:g}, load average {os.getloadavg()[0]:.1f}, "
              f"{time.strftime('%Y-%m-%d %H:%M')}", flush=True)
        agreement(model, args.agreement, args.t_end, args.rho_inf, args.outputs)
        return
    if args.converge:
        zeta = 0.7 if args.zeta is None else args.zeta
        with tempfile.TemporaryDirectory() as tmp:
            model = damped_slider_crank(tmp, args.modes, zeta)
        print(f"flexible slider-crank, {args.modes} modes, zeta = {zeta:g}, "
              f"{args.t_end:g} s, load average {os.getloadavg()[0]:.1f}")
        converge(model, args.converge, args.t_end)
        return
    with tempfile.TemporaryDirectory() as tmp:
        model, n_q = flexible_steps.slider_crank(tmp)
    print(f"flexible slider-crank, {n_q} modes, {args.t_end:g} s, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"h = {H * 1e3:g} ms")
    out = {}
    for f in ("absolute", *args.forms):
        try:
            res, ms, cpu, newton = run(model, f, args.t_end)
        except fm.ConvergenceError as exc:
            print(f"| {f} | failed: {str(exc)[:160]} |")
            continue
        out[f] = res
        print(f"| {f} | {ms:.2f} ms/step | {cpu:.2f} CPU ms/step | {newton:.2f} Newton/step |")
    a = out["absolute"]
    for f in args.forms:
        if f not in out:
            continue
        r = out[f]
        dx = np.abs(a.body_q("slider")[:, 0] - r.body_q("slider")[:, 0]).max()
        dq = np.abs(a.body_q("rod")[:, 7:] - r.body_q("rod")[:, 7:]).max()
        print(f"{f}: slider x: max difference {dx:.2e} m; rod q_e: max difference {dq:.2e} "
              f"(largest |q_e| {np.abs(a.body_q('rod')[:, 7:]).max():.2e})")
    if "relative" in out and "recursive" in out:
        a, r = out["relative"], out["recursive"]
        dx = np.abs(a.body_q("slider")[:, 0] - r.body_q("slider")[:, 0]).max()
        dq = np.abs(a.body_q("rod")[:, 7:] - r.body_q("rod")[:, 7:]).max()
        print(f"recursive vs relative: slider x {dx:.2e} m, rod q_e {dq:.2e}")


if __name__ == "__main__":
    main()
