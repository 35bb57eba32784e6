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


def flexible_rod(n_modes: int = 4, zeta: float = 0.02):
    """A steel rod 0.2 x 0.01 x 0.01 m (hex27 10 x 1 x 1), clamped at its interface
    ``hole_A`` (its frame), ``n_modes`` fixed-interface modes damped at ``zeta`` (the
    rod's modal coordinates), linear elastic, the face ``hole_B`` at its other end (the
    meshing and reduction helpers of the tests' flexible scenarios)."""
    import tempfile
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "tests" / "scenarios" / "flexible"))
    from flexcase_models import STEEL, box_beam_mesh, reduce_cb
    tmp = Path(tempfile.mkdtemp(prefix="flexible_chain"))
    mesh = box_beam_mesh(tmp / "rod.msh", (0.2, 0.01, 0.01), (10, 1, 1),
                         faces=("hole_A", "hole_B"))
    return reduce_cb(mesh, STEEL, n_modes, interfaces=("hole_A",),
                     static_modes=False, name="rod", damping=zeta, stiffening=False)


def flexible_chain(n: int, rod) -> fm.System:
    """n flexible rods ``rod`` hung end to end (the mean motion of the face ``hole_B``
    of one to ``hole_A`` of the next) on revolute joints about z, at a slant of 0.3 rad,
    gravity -y."""
    model = fm.System(gravity=(0.0, -9.81, 0.0), name=f"flexible_chain{n}")
    R_A = rod.marker("hole_A").R
    R_B = {fc.name: fc for fc in rod.faces}["hole_B"].X_c
    c, s = np.cos(0.3 - np.pi / 2), np.sin(0.3 - np.pi / 2)
    R0 = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    u = R0 @ (R_B - R_A)
    parent = fm.ground
    for i in range(n):
        b = fm.FlexibleBody(f"rod{i}", rod, r0=i * u - R0 @ R_A, R0=R0)
        P = parent if parent is fm.ground else parent.face_marker("hole_B")
        model.add(b, fm.Revolute(f"J{i}", P, b["hole_A"], axis="z"))
        parent = b
    return model


def _flexible_run(model, factored: bool, t_end: float, h: float):
    """The recursive formulation's generalized-alpha run of ``model``: the Newton matrix
    by the flexible articulated bodies (``factored``) or dense (the tangent); its
    :class:`~flexmbs.integrate.trajectory.Stats`, the number of full (tangent) matrices
    it took (with ``factored``: those the integrator asked again within a step, taken
    as a stall of modified Newton) and their time [s]."""
    from flexmbs.integrate import GeneralizedAlpha, consistent_initial_conditions
    dae = RelativeDAE(model.validate(), "recursive")
    dae.factored = factored
    init = consistent_initial_conditions(dae, dae.initial_q(), dae.initial_qd(), 0.0)
    integ = GeneralizedAlpha(dae, rho_inf=0.9)
    full, tangent = [0, 0.0], dae.tangent

    def counted(*a):
        t0 = time.perf_counter()
        out = tangent(*a)
        full[0] += 1
        full[1] += time.perf_counter() - t0
        return out
    dae.tangent = counted
    stats = integ.run(init.q, init.qd, init.qdd, init.lam, 0.0, t_end, h=h,
                      output_times=[t_end]).stats
    return stats, full[0], full[1]


def _dense_matrix(dae, q, z, rhs, c_K, c_C, c_M):
    """The full Newton matrix of a flexible tree (its tangent), LU and one solve."""
    import scipy.linalg as sla
    K, C, M = (x.toarray() for x in dae.tangent(q, z, z, np.zeros(dae.n_lam), 0.0))
    G = dae.constraint_jacobian(q, 0.0).toarray()
    n = dae.n_q
    W = np.zeros((n + dae.n_lam,) * 2)
    W[:n, :n] = c_K * K + c_C * C + c_M * M
    W[:n, n:], W[n:, :n] = G.T, G
    return sla.lu_solve(sla.lu_factor(W), rhs)


def print_flexible(sizes, n_modes: int = 4, t_end: float = 0.02, h: float = 1e-3,
                   dense_top: int = 32) -> None:
    """Per chain of n flexible links (:func:`flexible_chain`, ``n_modes`` each): one
    Newton matrix made, factored and solved once at the initial state by the flexible
    articulated bodies (O(n)) and dense (the projected tangent and LU, n <= ``dense_top``),
    and ms per generalized-alpha step of the recursive formulation by each route
    (interleaved in one process), with the Newton iterations per step and the matrices
    of the run (those of the articulated route that were full: modified Newton stalled,
    the tangent and a dense LU)."""
    rod = flexible_rod(n_modes)
    _flexible_run(flexible_chain(sizes[0], rod), True, 2 * h, h)        # warm-up
    _flexible_run(flexible_chain(sizes[0], rod), False, 2 * h, h)
    c_K, c_C, c_M = 0.3 * h * h, 0.6 * h, 1.0           # generalized-alpha's, about
    rows = []
    for n in sizes:
        row = {"n": n}
        dae = RelativeDAE(flexible_chain(n, rod).validate(), "recursive")
        q, z = dae.initial_q(), np.zeros(dae.n_q)
        rhs = np.random.default_rng(n).normal(size=dae.n_q + dae.n_lam)
        row["factor"] = per_call(lambda: dae.newton_factor(
            q, z, z, np.zeros(dae.n_lam), 0.0, c_K, c_C, c_M).solve(rhs))
        if n <= dense_top:
            row["lu"] = per_call(partial(_dense_matrix, dae, q, z, rhs, c_K, c_C, c_M))
        for key, factored in (("factored", True), ("dense", False)):
            if factored or n <= dense_top:
                st, full, t_full = _flexible_run(flexible_chain(n, rod), factored, t_end, h)
                row[key] = st.wall_time / st.steps
                if factored:
                    row["modified"] = (st.wall_time - t_full) / st.steps
                row[key + " its"] = (f"{st.newton_iterations / st.steps:.1f}, "
                                     f"{st.jacobian_evaluations}, {full} full")
        rows.append(row)
        cell = {k: (f"{1e3 * row[k]:.2f} ({row[k + ' its']})" if k in row else "-")
                for k in ("factored", "dense")}
        cell["factored"] += f", {1e3 * row['modified']:.2f} without the full"
        lu = f"{1e3 * row['lu']:.2f}" if "lu" in row else "-"
        ratio = f"{row['dense'] / row['factored']:.1f}" if "dense" in row else "-"
        if len(rows) == 1:
            print(f"\n| n (flexible chain, {n_modes} modes each) | n_beta | Newton matrix "
                  f"articulated / dense [ms] | articulated [ms/step] (its per step, "
                  f"matrices, of them full), without the full matrices' time | dense [ms/step] (its, matrices) | step dense / articulated |"
                  f"\n|---:|---:|---:|---:|---:|---:|")
        print(f"| {n} | {dae.n_q} | {1e3 * row['factor']:.2f} / {lu} | {cell['factored']} "
              f"| {cell['dense']} | {ratio} |", flush=True)
    dense = [r for r in rows if "dense" in r]
    print(f"\nslope of log(time) vs log(n), n >= 16, flexible chain: Newton matrix "
          f"articulated {slope(rows, 'factor'):.2f}, dense {slope(dense, 'lu'):.2f}; step "
          f"articulated {slope(rows, 'factored'):.2f} (without the full matrices "
          f"{slope(rows, 'modified'):.2f}), dense {slope(dense, 'dense'):.2f}",
          flush=True)


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
    ap.add_argument("--flexible", action="store_true",
                    help="only the flexible chain's steps, articulated against dense")
    ap.add_argument("--top", type=int, default=None, help="the largest chain")
    args = ap.parse_args(argv)
    top = args.top or (64 if args.quick else 256)
    sizes = [2 ** k for k in range(1, 20) if 2 ** k <= top]
    print(f"flexmbs relative formalisms ({os.path.dirname(fm.__file__)}); "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    if args.spherical:
        print_spherical([n for n in sizes if n >= 8])
        return 0
    if args.flexible:
        print_flexible(sizes)
        print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
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
