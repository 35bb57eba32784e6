"""Cost of the joint-coordinate formalisms (issue 16; not a test), in one run:

1. per evaluation, for planar chains of n = 2 ... 256 revolute links: the recursive
   formalism's residual ``Mbar betadd - k`` (recursive Newton-Euler, O(n)), its mass
   matrix (composite rigid bodies, O(n d) = O(n^2) on a chain), and the non-recursive
   formalism's ``Mbar``, ``k`` (``sum J_i^T M_i J_i``, O(n^2));
2. per generalized-alpha step (h = 1 ms, rho_inf = 0.9, 0.1 s; the time of the integrator's
   loop, without the set-up and consistent initial conditions; 10 warm-up steps at the
   smallest n) for n = 2 ... 256: the recursive formulation (modified Newton on the
   articulated-body factorisation, O(n) per iteration, no tangent) against the
   descriptor form (absolute, n <= 256) and the relative formulation (n <= 64: its Newton
   matrix is a tangent by central differences, 2 n residuals of O(n^2), and a dense LU),
   with the Newton iterations per step;
3. the recursive formulation on pendulum chains of n = 2 ... 256 spherical joints (one
   Euler normalisation row each: m = n rows, all eliminated joint by joint inside the
   articulated-body recursion, so O(n) per iteration): the Newton matrix factored and
   solved once, and (n <= 16) per step as in 2 with the steps that fell back to the full
   matrix.

    .venv/bin/python benchmarks/relative_scaling.py            # n up to 256 (about 1 min)
    .venv/bin/python benchmarks/relative_scaling.py --quick    # n up to 64
    .venv/bin/python benchmarks/scaling.py --relative          # the same
    .venv/bin/python benchmarks/relative_scaling.py --spherical  # table 3 alone

``--spherical`` uses the public API only, so the same script measures another checkout:
``PYTHONPATH=/path/to/other/checkout python benchmarks/relative_scaling.py --spherical``.

Prints two tables and the slope of log(time) against log(n) of each evaluation and of
the recursive step over n >= 16 (1: linear, 2: quadratic).  The machine load average is printed: the timings are
only as good as the machine was quiet.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from functools import partial

import numpy as np

import flexmbs as fm
from flexmbs.relative import nonrecursive, recursive
from flexmbs.relative.dae import RelativeDAE
from flexmbs.relative.kinematics import forward


def chain(n: int, formulation: str = "relative", L: float = 0.2) -> fm.System:
    """n rods of length L [m], revolute about z, hanging at a slant, gravity -y."""
    model = fm.System(gravity=(0.0, -9.81, 0.0), name=f"chain{n}", formulation=formulation)
    u = L * np.array([np.sin(0.3), -np.cos(0.3), 0.0])
    R0 = np.column_stack([u / L, [np.cos(0.3), np.sin(0.3), 0.0], [0.0, 0.0, 1.0]])
    parent = fm.ground
    for i in range(n):
        b = fm.RigidBody(f"rod{i}", m=1.0, I_S=np.diag([1e-4, L * L / 12, L * L / 12]),
                         r0=(i + 0.5) * u, R0=R0)
        model.add(b, fm.Revolute(f"J{i}", parent, b, at=i * u, axis="z"))
        parent = b
    return model


def spherical_chain(n: int, L: float = 0.2) -> fm.System:
    """n rods of length L [m] on spherical joints, hanging at a slant in the x-y plane,
    started swinging out of it (1 rad/s about x through the pivot), gravity -y;
    formulation "recursive"."""
    model = fm.System(gravity=(0.0, -9.81, 0.0), name=f"spherical{n}",
                      formulation="recursive")
    u = L * np.array([np.sin(0.3), -np.cos(0.3), 0.0])
    R0 = np.column_stack([u / L, [np.cos(0.3), np.sin(0.3), 0.0], [0.0, 0.0, 1.0]])
    omega = np.array([1.0, 0.0, 0.0])
    parent = fm.ground
    for i in range(n):
        r0 = (i + 0.5) * u
        b = fm.RigidBody(f"rod{i}", m=1.0, I_S=np.diag([1e-4, L * L / 12, L * L / 12]),
                         r0=r0, R0=R0, omega0=omega, v0=np.cross(omega, r0))
        model.add(b, fm.Spherical(f"J{i}", parent, b, at=i * u))
        parent = b
    return model


def _factor_and_solve(dae, q, z, rhs, t=itertools.count()):
    # a new time each call: a Newton matrix asked twice at one point is made once
    return dae.newton_factor(q, z, z, np.zeros(dae.n_lam), float(next(t)), 4e6, 2e3,
                             1.0).solve(rhs)


def spherical_steps(sizes, t_end: float = 0.008, h: float = 1e-3, step_top: int = 256,
                    ) -> list[dict]:
    """Per size: the Newton iteration of the recursive formulation on
    :func:`spherical_chain` -- its matrix factored and solved once at the initial state
    (``"factor"``, s) -- and, for n <= ``step_top``, s per step (``"recursive"``), Newton
    iterations per step (``"recursive its"``) and the steps whose Newton stopped
    contracting and took the full (central-difference) matrix (``"full"``: dense
    tangents), the Newton matrices solved by GMRES (``"krylov"``) and the GMRES
    iterations per such Newton matrix (``"gmres"``)."""
    fm.simulate(spherical_chain(sizes[0]), 10 * h, h, rho_inf=0.9)   # warm-up
    full = [0]
    tangent = RelativeDAE.tangent

    def counted(self, *a):
        full[0] += 1
        return tangent(self, *a)
    daes = []
    newton_factor = RelativeDAE.newton_factor

    def recorded(self, *a):
        if not daes or daes[-1] is not self:
            daes.append(self)
        return newton_factor(self, *a)
    rows = []
    for n in sizes:
        dae = RelativeDAE(spherical_chain(n).validate(), "recursive")
        q, z = dae.initial_q(), np.zeros(dae.n_q)
        rhs = np.random.default_rng(n).normal(size=dae.n_q + dae.n_lam)
        row = {"n": n, "factor": per_call(partial(_factor_and_solve, dae, q, z, rhs))}
        if n <= step_top:
            full[0] = 0
            RelativeDAE.tangent, RelativeDAE.newton_factor = counted, recorded
            try:
                r = fm.simulate(spherical_chain(n), t_end, h, rho_inf=0.9, output_dt=t_end)
            finally:
                RelativeDAE.tangent, RelativeDAE.newton_factor = tangent, newton_factor
            c = getattr(daes[-1], "newton_counts", {}) if daes else {}
            row.update({"krylov": c.get("krylov", 0),
                        "gmres": c.get("gmres", 0) / max(c.get("krylov", 0), 1)})
            row.update({"recursive": r.stats.wall_time / r.stats.steps, "full": full[0],
                        "recursive its": r.stats.newton_iterations / r.stats.steps,
                        "steps": r.stats.steps})
        rows.append(row)
    return rows


def print_spherical(sizes) -> None:
    sph = spherical_steps(sizes)
    print("\n| n (spherical chain) | Newton matrix factored + one solve [ms] | per body [us] "
          "| recursive [ms/step] (its) | dense tangents | GMRES matrices (its each) |"
          "\n|---:|---:|---:|---:|---:|---:|")
    for r in sph:
        step = (f"{1e3 * r['recursive']:.2f} ({r['recursive its']:.2f}) | "
                f"{r['full']} in {r['steps']} steps | {r['krylov']} ({r['gmres']:.1f})"
                if "recursive" in r else "- | - | -")
        print(f"| {r['n']} | {1e3 * r['factor']:.3f} | {1e6 * r['factor'] / r['n']:.1f} | "
              f"{step} |")
    stepped = [r for r in sph if "recursive" in r]
    print(f"\nslope of log(time) vs log(n), n >= 16, spherical chain: factor + solve "
          f"{slope(sph, 'factor'):.2f}, step {slope(stepped, 'recursive'):.2f}", flush=True)


def per_call(f, budget: float = 0.2) -> float:
    """Median wall time [s] of ``f()`` over about ``budget`` seconds (at least 3 calls)."""
    times, t_all = [], time.perf_counter()
    while len(times) < 3 or time.perf_counter() - t_all < budget:
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _rnea(tree, beta, betad, betadd, g):
    return recursive.inverse_dynamics(tree, forward(tree, beta, betad), betadd, g)


def _nonrecursive(tree, beta, betad, g):
    return nonrecursive.mass_and_bias(tree, forward(tree, beta, betad), g)


def evaluations(sizes) -> list[dict]:
    rows = []
    for n in sizes:
        dae = RelativeDAE(chain(n).validate())
        rng = np.random.default_rng(n)
        beta, betad, betadd = (rng.normal(size=n) for _ in range(3))
        g = dae.gravity
        tree, kin = dae.tree, forward(dae.tree, beta, betad)
        rows.append({
            "n": n,
            "rnea": per_call(partial(_rnea, tree, beta, betad, betadd, g)),
            "crba": per_call(partial(recursive.mass_matrix, tree, kin)),
            "nonrec": per_call(partial(_nonrecursive, tree, beta, betad, g)),
        })
    return rows


#: the largest chain each formulation's steps are measured for (about a minute at most)
STEP_TOP = {"absolute": 256, "relative": 64, "recursive": 256}


def steps(sizes, t_end: float = 0.1, h: float = 1e-3) -> list[dict]:
    """Per size: ``{formulation: s per step}`` of the integrator's loop, and the Newton
    iterations per step (``"<formulation> its"``)."""
    rows = []
    for f in STEP_TOP:
        fm.simulate(chain(sizes[0], f), 10 * h, h, rho_inf=0.9)        # warm-up
    for n in sizes:
        row = {"n": n}
        for f, top in STEP_TOP.items():
            if n > top:
                continue
            r = fm.simulate(chain(n, f), t_end, h, rho_inf=0.9, output_dt=t_end)
            row[f] = r.stats.wall_time / r.stats.steps
            row[f + " its"] = r.stats.newton_iterations / r.stats.steps
        rows.append(row)
    return rows


def slope(rows, key) -> float:
    big = [r for r in rows if r["n"] >= 16]
    if len(big) < 2:
        return float("nan")
    return float(np.polyfit(np.log([r["n"] for r in big]), np.log([r[key] for r in big]), 1)[0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="chains up to 64 links")
    ap.add_argument("--spherical", action="store_true",
                    help="only the spherical chain's steps (table 3)")
    ap.add_argument("--top", type=int, default=None, help="the largest chain")
    args = ap.parse_args(argv)
    top = args.top or (64 if args.quick else 256)
    sizes = [2 ** k for k in range(1, 20) if 2 ** k <= top]
    print(f"flexmbs relative formalisms ({os.path.dirname(fm.__file__)}); "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    if args.spherical:
        print_spherical([n for n in sizes if n >= 8])
        return 0
    ev = evaluations(sizes)
    print("\n| n | recursive residual (RNEA) [ms] | per body [us] | CRBA mass matrix [ms] "
          "| non-recursive Mbar, k [ms] |\n|---:|---:|---:|---:|---:|")
    for r in ev:
        print(f"| {r['n']} | {1e3 * r['rnea']:.3f} | {1e6 * r['rnea'] / r['n']:.1f} | "
              f"{1e3 * r['crba']:.3f} | {1e3 * r['nonrec']:.3f} |")
    print(f"\nslope of log(time) vs log(n), n >= 16: RNEA {slope(ev, 'rnea'):.2f}, "
          f"CRBA {slope(ev, 'crba'):.2f}, non-recursive {slope(ev, 'nonrec'):.2f}")
    st = steps(sizes)

    def cell(r, f):
        return f"{1e3 * r[f]:.2f} ({r[f + ' its']:.2f})" if f in r else "-"
    print("\n| n | absolute [ms/step] (Newton its) | relative [ms/step] (its) | recursive "
          "[ms/step] (its) | recursive per body [ms] |\n|---:|---:|---:|---:|---:|")
    for r in st:
        print(f"| {r['n']} | {cell(r, 'absolute')} | {cell(r, 'relative')} | "
              f"{cell(r, 'recursive')} | {1e3 * r['recursive'] / r['n']:.3f} |")
    rel = [r for r in st if "relative" in r]
    print(f"\nslope of log(ms/step) vs log(n), n >= 16: recursive {slope(st, 'recursive'):.2f}, "
          f"absolute {slope(st, 'absolute'):.2f}, relative {slope(rel, 'relative'):.2f}")
    print_spherical(sizes)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
