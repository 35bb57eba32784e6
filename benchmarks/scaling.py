"""Scaling of flexmbs (issue 6; not a test): cost per step against the number of modes,
the number of flexible bodies, the FE mesh size and the interface node count, and the
preprocessing time and memory against the mesh size.

    .venv/bin/python benchmarks/scaling.py              # all series (about 15-25 min)
    .venv/bin/python benchmarks/scaling.py --quick      # fewer, smaller points (a few min)
    .venv/bin/python benchmarks/scaling.py --series chain,mesh     # some series only
    .venv/bin/python benchmarks/scaling.py --large      # plus preprocessing up to 610k dofs,
                                                        # mesh 110x11x11, RBE3 on 2592 nodes
    .venv/bin/python benchmarks/scaling.py --plots-only # plots and docs from the JSON
    .venv/bin/python benchmarks/scaling.py --relative   # only the joint-coordinate
                                                        # formalisms (relative_scaling.py)

Every point runs in a fresh subprocess, so its timings and its peak RSS are its own.
Time stepping: generalized-α, h = 1e-3 s, rho_inf = 0.9, the default direct LU,
geometric stiffening on; the model is built and reduced before the clock starts.  The
cost per step is the wall time from step ``WARM`` to the last step divided by the number
of steps (so setup, consistent initial conditions and the first Jacobians are left out);
the median single-step time and the process CPU time per step are given too; each point
keeps the fastest of ``--repeat`` runs (default 2).  All bodies are steel hex27 box
beams built in memory (``tests/reduction/boxmesh.py``), Craig--Bampton with an RBE2
frame interface.

Series
  modes      cantilever 1.0 x 0.1 x 0.1 m, hex27 20x2x2, n_q = 4 ... 64 fixed-interface
             modes, ``Fixed`` to ground at its clamp, gravity -y
  chain      N = 1 ... 64 flexible links 0.2 x 0.02 x 0.02 m (hex27 10x1x1, 2
             fixed-interface + 6 constraint modes: n_q = 8), reduced once and loaded from
             one body file; ``Revolute`` (z) to ground and between links, gravity -y;
             ``--large`` adds N = 128 and 256
  mesh       the cantilever with 10 modes from hex27 nx x nx/10 x nx/10 meshes
  interface  the cantilever with 10 modes on hex27 40x4x4; (a) the RBE2 clamp (frame) on
             the k end layers of nodes, (b) clamp on the end face and an RBE3 ``tip``
             interface on the k far-end layers with a 1 kN tip force; k = 1 ... 32 (81 to
             2592 nodes; the RBE3 tip up to 16 layers, 32 with ``--large``)
  preprocess ``benchmarks/preprocess_scaling.py`` (20 modes, hex27 nx x nx/10 x nx/10)

Writes ``benchmarks/scaling.json`` (``--json``), ``docs/img/scaling_*.png`` and the
generated blocks (tables, fits) of ``docs/scaling.md``.  The machine load average
(``os.getloadavg``) is printed and stored for every point: the timings are only as good
as the machine was quiet.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "benchmarks"
IMG = ROOT / "docs" / "img"
DOC = ROOT / "docs" / "scaling.md"
H, RHO_INF = 1e-3, 0.9
WARM = 10                                  # steps of the short run (set-up, first steps)
SERIES = ("modes", "chain", "mesh", "interface", "preprocess")
BEAM = (1.0, 0.1, 0.1)                     # cantilever [m]
LINK = (0.2, 0.02, 0.02)                   # chain link [m]
GRAVITY = (0.0, -9.81, 0.0)

#: points per series: (quick, default); preprocess: ``--large`` adds 110 and 139
POINTS = {
    "modes": ([4, 8, 16, 32, 64], [4, 8, 16, 32, 64]),
    "chain": ([1, 2, 4, 8, 16], [1, 2, 4, 8, 16, 32, 64]),
    "mesh": ([10, 20, 40], [10, 20, 40, 60, 80]),             # --large adds 110
    "interface": ([1, 4, 16], [1, 2, 4, 8, 16, 32]),          # tip: up to TIP_MAX_LAYERS
    "preprocess": ([10, 20, 40], [20, 40, 60, 80]),
}
LARGE = {"preprocess": [110, 139], "mesh": [110], "chain": [128, 256]}
STEPS = (200, 400)                         # (quick, default)
#: RBE3 eliminates six master dofs in terms of all 3 n_i others: T^T K T gets a dense
#: (3 n_i)^2 block (32 layers, 2592 nodes: 155 s, 5.4 GB), so above this only with --large
TIP_MAX_LAYERS = 16


# ---------------------------------------------------------------------------------------
# models (run inside the worker subprocess)
# ---------------------------------------------------------------------------------------
def _box(n, size=BEAM, node_sets=None):
    """hex27 box mesh with node/facet sets x0, x1 (plus ``node_sets``), in memory."""
    import dataclasses
    sys.path.insert(0, str(ROOT / "tests"))
    from reduction.boxmesh import box_meshio

    from flexmbs.io.mesh import mesh_from_meshio
    mesh = mesh_from_meshio(box_meshio("hex27", tuple(n), tuple(size)),
                            source=f"hex27 {n[0]}x{n[1]}x{n[2]}")
    if node_sets:
        sets = dict(mesh.node_sets)
        sets.update({k: v(mesh.points) for k, v in node_sets.items()})
        mesh = dataclasses.replace(mesh, node_sets=sets)
    return mesh


def _reduce(mesh, n_modes, interfaces, name, stiffening=True):
    """Craig--Bampton, frame on the first interface, K2/K3 (``stiffening``); returns
    (body, n_dof, s)."""
    from flexmbs.fe.assemble import assemble
    from flexmbs.fe.material import material_from_name
    from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model
    t0 = time.perf_counter()
    fe = assemble(mesh, material_from_name("steel"))
    specs = tuple(InterfaceSpec(n, k) for n, k in interfaces)
    body = reduce_model(fe, ReductionSettings(n_modes=n_modes, interfaces=specs,
                                              frame=f"interface:{specs[0].name}",
                                              static_modes=False, stiffening=stiffening),
                        name=name)
    return body, int(fe.n_dof), time.perf_counter() - t0


def _cantilever(body, clamp="x0", stiffening=True):
    import flexmbs as fm
    beam = fm.FlexibleBody("beam", body, stiffening=stiffening)
    model = fm.System(gravity=GRAVITY, name="cantilever")
    model.add(fm.Fixed("clamp", fm.ground, beam[clamp]))
    return model, beam


def _layers(points, k, end):
    """Nodes of the first (end = 0) or last (end = 1) ``k`` lattice layers along x."""
    import numpy as np
    x = np.round(points[:, 0], 12)
    xs = np.unique(x)
    return np.flatnonzero(x <= xs[k - 1]) if end == 0 else np.flatnonzero(x >= xs[-k])


def build(series, x, body_file=None):
    """The model of one point: (model, info dict) with the sizes and the reduction time."""
    import flexmbs as fm
    info = {}
    if series in ("modes-K2K3", "modes-linear"):
        stiff = series == "modes-K2K3"
        body, n_dof, t = _reduce(_box((20, 2, 2)), x, [("x0", "rbe2")], "beam", stiff)
        model, _ = _cantilever(body, stiffening=stiff)
        info.update(mesh="20x2x2", n_dof=n_dof, reduce_s=t)
    elif series == "mesh":
        n = (x, max(1, x // 10), max(1, x // 10))
        mesh = _box(n)
        body, n_dof, t = _reduce(mesh, 10, [("x0", "rbe2")], "beam")
        model, _ = _cantilever(body)
        info.update(mesh="x".join(map(str, n)), n_dof=n_dof, reduce_s=t,
                    n_nodes=int(mesh.n_nodes), clamp_nodes=len(mesh.node_sets["x0"]))
    elif series in ("interface-clamp", "interface-tip"):
        sets = {"clamp": lambda p: _layers(p, x, 0), "tip": lambda p: _layers(p, x, 1)}
        mesh = _box((40, 4, 4), node_sets=sets)
        if series == "interface-clamp":
            body, n_dof, t = _reduce(mesh, 10, [("clamp", "rbe2")], "beam")
            model, _ = _cantilever(body, "clamp")
            nodes = len(mesh.node_sets["clamp"])
        else:
            body, n_dof, t = _reduce(mesh, 10, [("x0", "rbe2"), ("tip", "rbe3")], "beam")
            model, beam = _cantilever(body)
            model.add(fm.ExternalForce("load", at=beam["tip"], force=(0.0, -1000.0, 0.0)))
            nodes = len(mesh.node_sets["tip"])
        info.update(mesh="40x4x4", n_dof=n_dof, reduce_s=t, layers=x, interface_nodes=nodes)
    elif series == "chain":
        from flexmbs.io.bodyfile import load_body
        t0 = time.perf_counter()
        body = load_body(body_file)
        links = [fm.FlexibleBody(f"link{i}", body, r0=(i * LINK[0], 0.0, 0.0))
                 for i in range(x)]
        model = fm.System(gravity=GRAVITY, name=f"chain_{x}")
        model.add(fm.Revolute("pin", fm.ground, links[0]["x0"], axis="z"))
        for i in range(1, x):
            model.add(fm.Revolute(f"J{i}", links[i - 1]["x1"], links[i]["x0"], axis="z"))
        info.update(mesh="10x1x1", n_q_body=body.n_q, load_s=time.perf_counter() - t0)
    else:
        raise SystemExit(f"unknown series '{series}'; known: {', '.join(SERIES)}")
    info["n_bodies"] = len(model.bodies)
    info["n_q_elastic"] = int(sum(b.n_q for b in model.bodies))
    return model, info


def reduce_link(path):
    """The chain link, reduced once and written to ``path``."""
    from flexmbs.io.bodyfile import save_body
    body, n_dof, t = _reduce(_box((10, 1, 1), LINK), 2, [("x0", "rbe2"), ("x1", "rbe2")], "link")
    save_body(path, body)
    return {"n_q": body.n_q, "n_dof": n_dof, "reduce_s": t}


def time_steps(model, steps, repeat=1):
    """ms per step by difference (no per-step callback: the run keeps its compiled loop,
    which a callback after every step would leave): a run of ``steps`` steps and one of
    ``WARM`` steps, both from the same set-up, ``(wall(steps) - wall(WARM)) / (steps -
    WARM)``, after an untimed run that loads the kernels; the fastest of ``repeat`` such
    pairs, and the median of the pairs; process CPU alike; Newton iterations and
    Jacobians per step from the two runs' counters."""
    import statistics

    import flexmbs as fm
    # a first run loads the compiled kernels of this model's features (untimed)
    fm.simulate(model, WARM * H, H, rho_inf=RHO_INF, output_dt=WARM * H)
    rows = []
    for _ in range(repeat):
        runs = {}
        for n in (WARM, steps):
            t0, c0 = time.perf_counter(), time.process_time()
            res = fm.simulate(model, n * H, H, rho_inf=RHO_INF, output_dt=n * H)
            runs[n] = (time.perf_counter() - t0, time.process_time() - c0, res)
        (w_s, c_s, short), (w_l, c_l, long_) = runs[WARM], runs[steps]
        n = long_.stats.steps - short.stats.steps
        if n < 1:
            raise SystemExit(f"the {steps}-step run took {long_.stats.steps} steps, the "
                             f"{WARM}-step run {short.stats.steps}: nothing to time")
        per = (w_l - w_s) / n
        rows.append({"steps": int(long_.stats.steps), "timed_steps": n,
                     "ms_per_step": 1e3 * per,
                     "cpu_ms_per_step": 1e3 * (c_l - c_s) / n,
                     "newton_per_step": (long_.stats.newton_iterations
                                         - short.stats.newton_iterations) / n,
                     "jacobians_per_step": (long_.stats.jacobian_evaluations
                                            - short.stats.jacobian_evaluations) / n,
                     "setup_s": w_s - short.stats.steps * per, "wall_s": w_l,
                     "n_coords": int(long_.q.shape[1]), "n_lam": int(long_.lam.shape[1])})
    best = min(rows, key=lambda r: r["ms_per_step"])
    best["ms_median"] = statistics.median(r["ms_per_step"] for r in rows)
    return best


def worker(series, x, steps, repeat, body_file):
    import logging
    logging.disable(logging.WARNING)
    load0 = os.getloadavg()[0]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model, info = build(series, x, body_file)
    rss_model = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row = {"series": series, "x": x, **info, **time_steps(model, steps, repeat)}
    row.update(peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               rss_after_build_mb=rss_model, rss_start_mb=rss0,
               load_start=load0, load_end=os.getloadavg()[0])
    return row


# ---------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------
def _sub(args, timeout, retries=1):
    """Run this script (or another) in a fresh interpreter; the last stdout line is JSON.

    A failed point is run once more (``retries``) before it is reported as failed."""
    for attempt in range(retries + 1):
        try:
            out = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                                 cwd=ROOT, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout} s"}
        if out.returncode == 0:
            return json.loads(out.stdout.strip().splitlines()[-1])
        lines = out.stderr.strip().splitlines() or [f"exit code {out.returncode}"]
        err = {"error": lines[-1], "traceback": lines[-12:]}
        print(f"  ({' '.join(args[-6:])}: attempt {attempt + 1} failed: {lines[-1]})",
              file=sys.stderr, flush=True)
    return err


def _load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


COLUMNS = {
    "modes": [("elastic force", "kind", "s"), ("n_q", "n_q_elastic", "d"),
              ("n_coords", "n_coords", "d"),
              ("ms/step", "ms_per_step", ".3f"), ("CPU ms/step", "cpu_ms_per_step", ".3f"),
              ("median of runs ms", "ms_median", ".3f"),
              ("Newton/step", "newton_per_step", ".2f"), ("Jac/step", "jacobians_per_step", ".3f"),
              ("reduce s", "reduce_s", ".1f"), ("peak RSS MB", "peak_rss_mb", ".0f"),
              ("load", "load_start", ".1f")],
    "chain": [("N", "n_bodies", "d"), ("n_coords", "n_coords", "d"), ("n_lam", "n_lam", "d"),
              ("ms/step", "ms_per_step", ".3f"), ("CPU ms/step", "cpu_ms_per_step", ".3f"),
              ("median of runs ms", "ms_median", ".3f"),
              ("ms/step/body", "ms_per_body", ".3f"), ("Newton/step", "newton_per_step", ".2f"),
              ("Jac/step", "jacobians_per_step", ".3f"), ("peak RSS MB", "peak_rss_mb", ".0f"),
              ("load", "load_start", ".1f")],
    "mesh": [("mesh", "mesh", "s"), ("n_dof", "n_dof", ",d"), ("clamp nodes", "clamp_nodes", "d"),
             ("ms/step", "ms_per_step", ".3f"), ("CPU ms/step", "cpu_ms_per_step", ".3f"),
              ("median of runs ms", "ms_median", ".3f"),
             ("Newton/step", "newton_per_step", ".2f"), ("reduce s", "reduce_s", ".1f"),
             ("peak RSS MB", "peak_rss_mb", ".0f"), ("load", "load_start", ".1f")],
    "interface": [("interface", "kind", "s"), ("layers", "layers", "d"),
                  ("nodes", "interface_nodes", ",d"), ("n_q", "n_q_elastic", "d"),
                  ("ms/step", "ms_per_step", ".3f"), ("CPU ms/step", "cpu_ms_per_step", ".3f"),
              ("median of runs ms", "ms_median", ".3f"),
                  ("Newton/step", "newton_per_step", ".2f"), ("reduce s", "reduce_s", ".1f"),
                  ("peak RSS MB", "peak_rss_mb", ",.0f"), ("load", "load_start", ".1f")],
    "preprocess": [("mesh", "mesh", "s"), ("n_dof", "n_dof", ",d"),
                   ("eigensolver", "eigensolver", "s"), ("assembly s", "assembly", ".1f"),
                   ("eigen s", "eigen", ".1f"), ("invariants s", "invariants", ".1f"),
                   ("stress s", "stress", ".1f"), ("total s", "total", ".1f"),
                   ("peak RSS MB", "rss_mb", ",.0f"), ("kB/dof", "kb_per_dof", ".1f"),
                   ("load", "load_start", ".1f")],
}


def _cell(row, key, fmt):
    v = row.get(key)
    if v is None:
        return "—"
    return format(v, fmt) if fmt != "s" else str(v)


def table(name, rows) -> str:
    cols = COLUMNS[name]
    lines = ["| " + " | ".join(c[0] for c in cols) + " |",
             "|" + "|".join("---:" if c[2] != "s" else "---" for c in cols) + "|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r.get('x')} | failed: {r['error']} |")
        else:
            lines.append("| " + " | ".join(_cell(r, k, f) for _, k, f in cols) + " |")
    return "\n".join(lines)


def _print_row(name, r):
    if "error" in r:
        print(f"  {name} {r.get('x')}: FAILED: {r['error']}", flush=True)
        return
    cols = COLUMNS[name]
    print("  " + "  ".join(f"{c[0]}={_cell(r, c[1], c[2])}" for c in cols), flush=True)


def run_series(name, quick, steps, repeat, large, tmp):
    xs = list(POINTS[name][0 if quick else 1])
    if large:
        xs += LARGE.get(name, [])
    rows = []
    print(f"\n== {name}: points {xs}  ({_load()})", flush=True)
    timeout = 7200 if large else 1800
    if name == "chain":
        link = Path(tmp) / "link.h5"
        meta = _sub([__file__, "--reduce-link", str(link)], timeout)
        if "error" in meta:
            rows.append({"x": 0, "error": f"link reduction: {meta['error']}"})
            return rows
        print(f"  link: n_q = {meta['n_q']}, {meta['n_dof']} dofs, reduced in "
              f"{meta['reduce_s']:.1f} s -> {link.name}", flush=True)
    for x in xs:
        load0 = os.getloadavg()[0]
        if name == "preprocess":
            r = _sub([str(HERE / "preprocess_scaling.py"), "--one", str(x), "auto", "0"], timeout)
            r.update(series=name, x=x, load_start=load0, load_end=os.getloadavg()[0])
            r.pop("blas", None)
            group = [r]
        elif name == "modes":
            group = []
            for kind in ("K2K3", "linear"):
                r = _sub([__file__, "--one", f"modes-{kind}", str(x), "--steps", str(steps),
                          "--repeat", str(repeat)], timeout)
                r.update(x=x, kind="K2/K3 (stiffening)" if kind == "K2K3" else "linear K_e q")
                group.append(r)
        elif name == "interface":
            group = []
            for kind in ("clamp", "tip"):
                if kind == "tip" and x > TIP_MAX_LAYERS and not large:
                    continue
                r = _sub([__file__, "--one", f"interface-{kind}", str(x), "--steps", str(steps),
                          "--repeat", str(repeat)], timeout)
                r.update(x=x, kind=f"{kind} ({'RBE2, frame' if kind == 'clamp' else 'RBE3'})")
                group.append(r)
        else:
            args = [__file__, "--one", name, str(x), "--steps", str(steps), "--repeat", str(repeat)]
            if name == "chain":
                args += ["--body", str(Path(tmp) / "link.h5")]
            r = _sub(args, timeout)
            r.setdefault("x", x)
            if name == "chain" and "error" not in r:
                r["ms_per_body"] = r["ms_per_step"] / r["n_bodies"]
            group = [r]
        for r in group:
            _print_row(name, r)
            rows.append(r)
    if name in ("interface", "modes"):
        rows.sort(key=lambda r: (str(r.get("kind")), r.get("x", 0)))
    return rows


def _meta(quick, steps, repeat):
    cpu = "?"
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                   if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}",
            "python": platform.python_version(), "quick": quick, "steps": steps,
            "repeat": repeat, "h": H, "rho_inf": RHO_INF, "warm_steps": WARM,
            "load_start": os.getloadavg(),
            "threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}}


# ---------------------------------------------------------------------------------------
# fits, plots and the docs page
# ---------------------------------------------------------------------------------------
def _ok(rows, kind=None):
    return [r for r in rows if "error" not in r and (kind is None or
                                                     str(r.get("kind", "")).startswith(kind))]


def power_fit(x, y):
    """Exponent k and factor c of ``y = c x^k`` by least squares in log-log."""
    import numpy as np
    if len(x) < 2:
        return float("nan"), float("nan")
    k, lc = np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)
    return float(k), float(np.exp(lc))


def fits(data) -> dict:
    """The numbers the docs quote (all from the JSON), for the wall time (``wall``) and
    the process CPU time (``cpu``) per step."""
    import numpy as np
    out = {}
    s = data.get("series", {})
    for t, key in (("wall", "ms_per_step"), ("cpu", "cpu_ms_per_step")):
        for kind in ("K2", "linear"):
            rows = [r for r in _ok(s.get("modes", {}).get("rows", []), kind) if key in r]
            if len(rows) >= 2:
                x = np.array([r["n_q_elastic"] for r in rows], float)
                y = np.array([r[key] for r in rows])
                hi = x >= 16
                out[f"modes_{kind}_{t}"] = {
                    "k_all": power_fit(x, y)[0],
                    "k_hi": power_fit(x[hi], y[hi])[0] if hi.sum() >= 2 else None,
                    "k_last": power_fit(x[-2:], y[-2:])[0],
                    "ratio": y[-1] / y[0], "x": (int(x[0]), int(x[-2]), int(x[-1]))}
        rows = [r for r in _ok(s.get("chain", {}).get("rows", [])) if key in r]
        if len(rows) >= 2:
            x = np.array([r["n_bodies"] for r in rows], float)
            y = np.array([r[key] for r in rows])
            b, a = np.polyfit(x, y, 1)
            out[f"chain_{t}"] = {"k": power_fit(x, y)[0], "ms_per_body": float(b),
                                 "ms_fixed": float(a), "ms_per_body_first": float(y[0] / x[0]),
                                 "ms_per_body_last": float(y[-1] / x[-1]),
                                 "N": (int(x[0]), int(x[-1]))}
        rows = [r for r in _ok(s.get("mesh", {}).get("rows", [])) if key in r]
        if len(rows) >= 2:
            y = [r[key] for r in rows]
            out[f"mesh_{t}"] = {"k": power_fit([r["n_dof"] for r in rows], y)[0],
                                "max_over_min": max(y) / min(y),
                                "dof": (rows[0]["n_dof"], rows[-1]["n_dof"])}
        for kind in ("clamp", "tip"):
            rows = [r for r in _ok(s.get("interface", {}).get("rows", []), kind) if key in r]
            if len(rows) >= 2:
                y = [r[key] for r in rows]
                out[f"interface_{kind}_{t}"] = {
                    "k": power_fit([r["interface_nodes"] for r in rows], y)[0],
                    "max_over_min": max(y) / min(y),
                    "nodes": (rows[0]["interface_nodes"], rows[-1]["interface_nodes"])}
    rows = _ok(s.get("preprocess", {}).get("rows", []))
    big = [r for r in rows if r["n_dof"] >= 3_000]
    if len(big) >= 2:
        kt, _ = power_fit([r["n_dof"] for r in big], [r["total"] for r in big])
        km, _ = power_fit([r["n_dof"] for r in big], [r["rss_mb"] for r in big])
        out["preprocess"] = {"k_time": kt, "k_rss": km, "dof": (big[0]["n_dof"],
                                                                big[-1]["n_dof"])}
    return out


def _xticks(ax, x):
    """Major ticks at the measured points, no minor labels (log axes)."""
    from matplotlib.ticker import NullFormatter
    ax.set_xticks(x, [str(v) for v in x])
    ax.xaxis.set_minor_formatter(NullFormatter())


def _cpu(rows):
    return [r.get("cpu_ms_per_step", float("nan")) for r in rows]


def _annotate(fig, meta, rows):
    loads = [r.get("load_start") for r in rows if r.get("load_start") is not None]
    load = f"load avg {min(loads):.1f}–{max(loads):.1f}" if loads else ""
    step = (f"; generalized-α h = {H:g} s, ρ∞ = {RHO_INF}, {meta['steps']} steps"
            if isinstance(meta.get("steps"), int) else "")
    fig.text(0.01, 0.005, f"flexmbs, {meta.get('machine', '?')}; {meta.get('date', '?')[:16]}; "
             f"{load}{step}", fontsize=6.5, color="0.35", ha="left", va="bottom")


def plots(data):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    IMG.mkdir(parents=True, exist_ok=True)
    s = data.get("series", {})
    written = []

    def finish(fig, name, meta, rows):
        _annotate(fig, meta, rows)
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        path = IMG / f"scaling_{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    def two_axes(title):
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.5, 3.8))
        fig.suptitle(title, fontsize=10)
        return fig, a1, a2

    if "modes" in s and _ok(s["modes"]["rows"]):
        rows, meta = _ok(s["modes"]["rows"]), s["modes"]["meta"]
        fig, a1, a2 = two_axes("Cantilever (hex27 20x2x2, Fixed): cost per step vs modes")
        xs = sorted({r["n_q_elastic"] for r in rows})
        for i, kind in enumerate(("K2", "linear")):
            rk = _ok(rows, kind)
            if not rk:
                continue
            x = np.array([r["n_q_elastic"] for r in rk])
            lab = rk[0]["kind"]
            a1.loglog(x, [r["ms_per_step"] for r in rk], "os"[i] + "-", color=f"C{i}",
                      label=f"{lab}: wall")
            a1.loglog(x, _cpu(rk), "os"[i] + "--", color=f"C{i}", ms=4, mfc="none",
                      label=f"{lab}: CPU")
            a2.plot(x, [r["newton_per_step"] for r in rk], "os"[i] + "-", color=f"C{i}",
                    label=lab)
        x = np.array(xs, float)
        y16 = [r["cpu_ms_per_step"] for r in _ok(rows, "K2") if r["n_q_elastic"] == 16
               and "cpu_ms_per_step" in r]
        if y16 and len(x) > 1:
            for p, st in ((2, ":"), (4, "-.")):
                a1.loglog(x[x >= 16], y16[0] * (x[x >= 16] / 16) ** p, st, color="0.5",
                          lw=1, label=f"∝ n_q^{p} (from n_q = 16)")
        a1.set_xlabel("elastic coordinates n_q")
        a1.set_ylabel("ms per step")
        _xticks(a1, xs)
        a1.legend(fontsize=7)
        a1.grid(True, which="both", alpha=0.3)
        a2.set_xscale("log")
        _xticks(a2, xs)
        a2.set_ylim(bottom=0)
        a2.set_xlabel("elastic coordinates n_q")
        a2.set_ylabel("Newton iterations per step")
        a2.legend(fontsize=8)
        a2.grid(True, alpha=0.3)
        finish(fig, "modes", meta, rows)

    if "chain" in s and _ok(s["chain"]["rows"]):
        rows, meta = _ok(s["chain"]["rows"]), s["chain"]["meta"]
        x = np.array([r["n_bodies"] for r in rows])
        y = np.array([r["ms_per_step"] for r in rows])
        fig, a1, a2 = two_axes("Chain of N flexible links (n_q = 8 each, Revolute): cost per step")
        a1.loglog(x, y, "o-", label="wall")
        a1.loglog(x, _cpu(rows), "s--", ms=4, label="CPU (process)")
        a1.loglog(x, y[0] * x, ":", color="0.4", label="∝ N (from N = 1)")
        a1.set_xlabel("flexible bodies N")
        a1.set_ylabel("ms per step")
        _xticks(a1, x)
        a1.legend(fontsize=8)
        a1.grid(True, which="both", alpha=0.3)
        a2.plot(x, y / x, "o-", label="wall")
        a2.plot(x, np.array(_cpu(rows)) / x, "s--", ms=4, label="CPU")
        a2.legend(fontsize=8, loc="lower left")
        a2.set_xscale("log")
        _xticks(a2, x)
        a2.set_ylim(bottom=0)
        a2.set_xlabel("flexible bodies N")
        a2.set_ylabel("ms per step per body")
        a3 = a2.twinx()
        a3.plot(x, [r["newton_per_step"] for r in rows], "^:", color="C2", ms=5)
        a3.set_ylabel("Newton iterations per step (▲)", color="C2")
        a3.set_ylim(bottom=0)
        a2.grid(True, alpha=0.3)
        finish(fig, "chain", meta, rows)

    if "mesh" in s and _ok(s["mesh"]["rows"]):
        rows, meta = _ok(s["mesh"]["rows"]), s["mesh"]["meta"]
        x = np.array([r["n_dof"] for r in rows])
        y = np.array([r["ms_per_step"] for r in rows])
        fig, a1, a2 = two_axes("Cantilever, 10 modes: cost per step vs FE mesh size")
        a1.semilogx(x, y, "o-", label="wall")
        a1.semilogx(x, _cpu(rows), "s--", ms=4, label="CPU (process)")
        for r in rows:
            a1.annotate(r["mesh"], (r["n_dof"], r["ms_per_step"]), fontsize=7,
                        textcoords="offset points", xytext=(0, 6), ha="center")
        a1.set_ylim(0, 1.5 * y.max())
        a1.set_xlabel("FE dofs of the mesh")
        a1.set_ylabel("ms per step")
        a1.legend(fontsize=8)
        a1.grid(True, which="both", alpha=0.3)
        a2.loglog(x, [r["reduce_s"] for r in rows], "o-", label="reduction time [s]")
        a2.loglog(x, [r["peak_rss_mb"] for r in rows], "s-", label="peak RSS [MB]")
        a2.set_xlabel("FE dofs of the mesh")
        a2.set_title("preprocessing of the same bodies (10 modes)", fontsize=8)
        a2.legend(fontsize=8)
        a2.grid(True, which="both", alpha=0.3)
        finish(fig, "mesh", meta, rows)

    if "interface" in s and _ok(s["interface"]["rows"]):
        rows, meta = _ok(s["interface"]["rows"]), s["interface"]["meta"]
        fig, a1, a2 = two_axes("Cantilever, hex27 40x4x4, 10 modes: cost per step vs "
                               "interface nodes")
        for i, kind in enumerate(("clamp", "tip")):
            rk = _ok(rows, kind)
            if not rk:
                continue
            x = np.array([r["interface_nodes"] for r in rk])
            a1.semilogx(x, [r["ms_per_step"] for r in rk], "os"[i] + "-", color=f"C{i}",
                        label=f"{rk[0]['kind']}: wall")
            a1.semilogx(x, _cpu(rk), "os"[i] + "--", color=f"C{i}", ms=4, mfc="none",
                        label=f"{rk[0]['kind']}: CPU")
            a2.loglog(x, [r["reduce_s"] for r in rk], "os"[i] + "-", color=f"C{i}",
                      label=f"{rk[0]['kind']}: reduction [s]")
            a2.loglog(x, [r["peak_rss_mb"] for r in rk], "os"[i] + ":", color=f"C{i}", mfc="none",
                      label=f"{rk[0]['kind']}: peak RSS [MB]")
        a1.set_ylim(0, 1.6 * max(r["ms_per_step"] for r in rows))
        a1.set_xlabel("nodes in the interface")
        a1.set_ylabel("ms per step")
        a1.legend(fontsize=8)
        a1.grid(True, which="both", alpha=0.3)
        a2.set_xlabel("nodes in the interface")
        a2.set_title("preprocessing of the same bodies", fontsize=8)
        a2.legend(fontsize=7)
        a2.grid(True, which="both", alpha=0.3)
        finish(fig, "interface", meta, rows)

    if "preprocess" in s and _ok(s["preprocess"]["rows"]):
        rows, meta = _ok(s["preprocess"]["rows"]), dict(s["preprocess"]["meta"], steps="—")
        x = np.array([r["n_dof"] for r in rows])
        fig, a1, a2 = two_axes("Preprocessing (hex27 nx·nx/10·nx/10, 20 CB modes, K2/K3, "
                               "stress modes)")
        for key, lab, m in (("total", "total", "o-"), ("assembly", "assembly", "^--"),
                            ("eigen", "modes (eigen)", "s--"),
                            ("invariants", "invariants + K2/K3", "v--"),
                            ("stress", "stress modes", "d--")):
            v = np.array([max(r[key], 1e-3) for r in rows])
            a1.loglog(x, v, m, ms=4, label=lab)
        a1.set_xlabel("FE dofs")
        a1.set_ylabel("time [s]")
        a1.legend(fontsize=7)
        a1.grid(True, which="both", alpha=0.3)
        a2.loglog(x, [r["rss_mb"] for r in rows], "o-", label="peak RSS [MB]")
        from matplotlib.ticker import NullFormatter
        a2.yaxis.set_minor_formatter(NullFormatter())
        a2.set_xlabel("FE dofs")
        a2.set_ylabel("peak RSS [MB]")
        a2.grid(True, which="both", alpha=0.3)
        for r in rows:
            a2.annotate(f"{r['kb_per_dof']:.0f} kB/dof", (r["n_dof"], r["rss_mb"]), fontsize=7,
                        textcoords="offset points", xytext=(-8, 6), ha="right")
        a2.margins(x=0.1, y=0.15)
        finish(fig, "preprocess", meta, rows)
    return written


def _reading(name, f, meta=None) -> str:
    """Generated sentences with the fitted numbers of a series (wall and CPU time)."""
    out = []
    for t, lab in (("wall", "wall time"), ("cpu", "CPU time")):
        for kind, what in (("K2", "K2/K3"), ("linear", "linear")):
            m = f.get(f"modes_{kind}_{t}") if name == "modes" else None
            if m:
                hi = f", n_q^{m['k_hi']:.2f} over 16–{m['x'][2]}" if m["k_hi"] else ""
                out.append(f"{what}, {lab}: ∝ n_q^{m['k_all']:.2f} over n_q = {m['x'][0]}–"
                           f"{m['x'][2]}{hi}, n_q^{m['k_last']:.2f} from {m['x'][1]} to "
                           f"{m['x'][2]}; {m['ratio']:.1f}× from {m['x'][0]} to {m['x'][2]} "
                           "modes")
        if name == "chain" and f"chain_{t}" in f:
            c = f[f"chain_{t}"]
            out.append(f"{lab}: ∝ N^{c['k']:.2f}; linear fit {c['ms_fixed']:.2f} ms + "
                       f"{c['ms_per_body']:.2f} ms × N; per body and step "
                       f"{c['ms_per_body_first']:.2f} ms at N = {c['N'][0]}, "
                       f"{c['ms_per_body_last']:.2f} ms at N = {c['N'][1]}")
        if name == "mesh" and f"mesh_{t}" in f:
            c = f[f"mesh_{t}"]
            out.append(f"{lab}: ∝ n_dof^{c['k']:.3f} from {c['dof'][0]:,} to {c['dof'][1]:,} "
                       f"dofs; largest/smallest cost per step {c['max_over_min']:.2f}")
        if name == "interface":
            for kind in ("clamp", "tip"):
                c = f.get(f"interface_{kind}_{t}")
                if c:
                    out.append(f"{kind}, {lab}: ∝ nodes^{c['k']:.3f} from {c['nodes'][0]:,} to "
                               f"{c['nodes'][1]:,} nodes; largest/smallest "
                               f"{c['max_over_min']:.2f}")
    if name == "preprocess" and "preprocess" in f:
        c = f["preprocess"]
        out.append(f"from {c['dof'][0]:,} to {c['dof'][1]:,} dofs: total time ∝ "
                   f"n_dof^{c['k_time']:.2f}, peak RSS ∝ n_dof^{c['k_rss']:.2f}")
    return ("Fits (least squares in log-log):\n\n" + "\n".join(f"- {o}" for o in out)) \
        if out else ""


def update_doc(data):
    """Replace the generated blocks ``<!-- scaling:NAME -->`` ... ``<!-- /scaling:NAME -->``
    of docs/scaling.md with the tables and fits of ``data``."""
    if not DOC.is_file():
        print(f"({DOC} not found: tables not written into the docs)")
        return
    text = DOC.read_text()
    f = fits(data)
    for name, block in data.get("series", {}).items():
        meta = block["meta"]
        loads = [r.get("load_start") for r in block["rows"] if r.get("load_start") is not None]
        head = (f"*Measured {meta['date'][:16]} on {meta['machine']}"
                + (f", load average {min(loads):.1f}–{max(loads):.1f}" if loads else "")
                + (f", {meta['steps']} steps of h = {H:g} s, best of {meta.get('repeat', 1)} runs"
                   if name != "preprocess" else "")
                + (" (`--quick`)" if meta.get("quick") else "") + ".*")
        body = "\n\n".join(p for p in (head, table(name, block["rows"]),
                                        _reading(name, f, meta)) if p)
        pat = re.compile(rf"(<!-- scaling:{name} -->\n).*?(<!-- /scaling:{name} -->)", re.S)
        text, n = pat.subn(lambda m: m.group(1) + body + "\n" + m.group(2), text)
        if not n:
            print(f"(docs/scaling.md has no block for '{name}')")
    DOC.write_text(text)
    print(f"updated {DOC.relative_to(ROOT)}")


# ---------------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description="flexmbs scaling: cost per step against modes, "
                                 "bodies, mesh size and interface nodes; preprocessing against "
                                 "mesh size (tables, JSON, docs/img/scaling_*.png)")
    ap.add_argument("--quick", action="store_true", help="fewer, smaller points, 200 steps")
    ap.add_argument("--series", default=",".join(SERIES),
                    help=f"comma-separated subset of {','.join(SERIES)}")
    ap.add_argument("--steps", type=int, default=None, help="steps per run (default 400; "
                    "--quick 200)")
    ap.add_argument("--repeat", type=int, default=None,
                    help="time-stepping runs per point in its subprocess, the fastest is kept "
                    "(default 2; --quick 1)")
    ap.add_argument("--large", action="store_true",
                    help="preprocess: add hex27 110x11x11 (351k dofs) and 139x13x13 (610k); "
                    "mesh: add 110x11x11; interface: RBE3 tip up to 32 layers; chain: add 128 and "
                    "256 bodies")
    ap.add_argument("--json", default=str(HERE / "scaling.json"),
                    help="results file (read and merged, then rewritten)")
    ap.add_argument("--plots-only", action="store_true",
                    help="no measurements: plots and docs tables from --json")
    ap.add_argument("--no-docs", action="store_true", help="do not touch docs/scaling.md")
    ap.add_argument("--relative", action="store_true",
                    help="only the joint-coordinate formalisms: cost per evaluation and "
                         "per step for chains of 2..256 bodies against the descriptor "
                         "form (benchmarks/relative_scaling.py)")
    ap.add_argument("--one", nargs=2, metavar=("SERIES", "X"), help=argparse.SUPPRESS)
    ap.add_argument("--body", help=argparse.SUPPRESS)
    ap.add_argument("--reduce-link", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    steps = args.steps or STEPS[0 if args.quick else 1]
    repeat = args.repeat or (1 if args.quick or args.one else 2)
    if args.relative:
        from relative_scaling import main as relative_main
        return relative_main(["--quick"] if args.quick else [])
    if args.reduce_link:
        print(json.dumps(reduce_link(args.reduce_link)))
        return 0
    if args.one:
        print(json.dumps(worker(args.one[0], int(args.one[1]), steps, repeat, args.body)))
        return 0
    names = [n.strip() for n in args.series.split(",") if n.strip()]
    bad = [n for n in names if n not in SERIES]
    if bad:
        ap.error(f"--series: unknown {bad}; known: {', '.join(SERIES)}")
    path = Path(args.json)
    data = json.loads(path.read_text()) if path.is_file() else {"series": {}}
    if not args.plots_only:
        t_all = time.perf_counter()
        print(f"flexmbs scaling ({'quick' if args.quick else 'default'}, {steps} steps, "
              f"best of {repeat}, h = {H:g} s, rho_inf = {RHO_INF}); {_load()}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                t0 = time.perf_counter()
                meta = _meta(args.quick, steps, repeat)
                rows = run_series(name, args.quick, steps, repeat, args.large, tmp)
                meta.update(wall_s=time.perf_counter() - t0, load_end=os.getloadavg())
                data["series"][name] = {"meta": meta, "rows": rows}
                path.write_text(json.dumps(data, indent=1))       # after every series
        print(f"\nall series: {time.perf_counter() - t_all:.0f} s; {_load()}")
    for name in SERIES:
        if name in data["series"]:
            print(f"\n### {name}\n\n{table(name, data['series'][name]['rows'])}")
            line = _reading(name, fits(data), data["series"][name]["meta"])
            if line:
                print(f"\n{line}")
    if not args.plots_only:
        print(f"\nwritten {path}")
    for p in plots(data):
        print(f"written {p.relative_to(ROOT)}")
    if not args.no_docs:
        update_doc(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
