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
    .venv/bin/python benchmarks/relative_flexible.py --converge 1e-3 5e-4 2.5e-4 --t-end 1.0
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
    """``(result, ms per step, Newton iterations per step)`` after a warm-up."""
    model.formulation = formulation
    fm.simulate(model, 5 * H, H, rho_inf=0.9, output_dt=5 * H)
    t0 = time.perf_counter()
    res = fm.simulate(model, t_end, H, rho_inf=0.9, output_dt=t_end / 10)
    wall = time.perf_counter() - t0
    return res, 1e3 * wall / res.stats.steps, res.stats.newton_iterations / res.stats.steps


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=0.2, help="simulated time [s]")
    ap.add_argument("--converge", type=float, nargs="+", metavar="H",
                    help="steps [s] (halving) of the agreement run instead of the timing")
    ap.add_argument("--modes", type=int, default=2, help="fixed-interface modes (--converge)")
    ap.add_argument("--zeta", type=float, default=0.7, help="modal damping ratio (--converge)")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    if args.converge:
        with tempfile.TemporaryDirectory() as tmp:
            model = damped_slider_crank(tmp, args.modes, args.zeta)
        print(f"flexible slider-crank, {args.modes} modes, zeta = {args.zeta:g}, "
              f"{args.t_end:g} s, load average {os.getloadavg()[0]:.1f}")
        converge(model, args.converge, args.t_end)
        return
    with tempfile.TemporaryDirectory() as tmp:
        model, n_q = flexible_steps.slider_crank(tmp)
    print(f"flexible slider-crank, {n_q} modes, {args.t_end:g} s, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"h = {H * 1e3:g} ms")
    out = {}
    for f in ("absolute", "relative"):
        res, ms, newton = run(model, f, args.t_end)
        out[f] = res
        print(f"| {f} | {ms:.2f} ms/step | {newton:.2f} Newton/step |")
    a, r = out["absolute"], out["relative"]
    dx = np.abs(a.body_q("slider")[:, 0] - r.body_q("slider")[:, 0]).max()
    dq = np.abs(a.body_q("rod")[:, 7:] - r.body_q("rod")[:, 7:]).max()
    print(f"slider x: max difference {dx:.2e} m; rod q_e: max difference {dq:.2e} "
          f"(largest |q_e| {np.abs(a.body_q('rod')[:, 7:]).max():.2e})")


if __name__ == "__main__":
    main()
