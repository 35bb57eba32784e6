"""Are two versions of flexmbs the same integrator?  Every output row of the shipped cases
and of the five ``--exudyn`` benchmark models, saved by one version and compared, bit for
bit, by another (a refactoring must not change a single bit).

    python benchmarks/same_trajectories.py --save before.npz        # on the old version
    python benchmarks/same_trajectories.py --compare before.npz     # on the new one

For a version in another folder: ``PYTHONPATH=/tmp/base python benchmarks/...``.  The
cases run through ``flexmbs run`` (``--no-plots --no-xdmf``, their own ``t_end``; the long
spin-up limited by ``--t-end``), each result file read back whole; the benchmark models
through ``fm.simulate`` at the benchmark settings (h = 1e-3 s over 1 s, rho_inf = 0.9),
all output rows kept.  The table gives per model the rows, the datasets and the largest
difference; the exit status is 1 when anything differs.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: shipped cases and extra arguments (time simulations only; the modal case is a table)
CASES = {"main": [], "slider_crank": [], "four_bar": [], "flexible_pendulum": [],
         "heavy_top": [], "spin_up_beam": ["--t-end", "4"]}
MODELS = ("rigid_pendulum", "rigid_fourbar", "cantilever_10", "flexible_pendulum_8",
          "flexible_slider_crank_12")


def case_rows(name: str, extra: list[str], tmp: Path) -> dict[str, np.ndarray]:
    import h5py
    out = tmp / name
    env = {**os.environ, "FLEXMBS_BODY_CACHE": str(tmp / "bodies")}
    r = subprocess.run([sys.executable, "-m", "flexmbs.cli.main", "run",
                        str(ROOT / "cases" / name / "case.toml"), "--out", str(out),
                        "--no-plots", "--no-xdmf", "--quiet", *extra],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"case {name}: flexmbs run failed ({r.returncode}): {r.stderr}")
    (path,) = [p for p in out.glob("*.h5") if ".running" not in p.name]
    rows = {}
    with h5py.File(path) as f:
        def visit(key, obj):
            if isinstance(obj, h5py.Dataset) and obj.ndim >= 1 and key != "checkpoint":
                rows[f"case:{name}/{key}"] = obj[()]
        f.visititems(visit)
    return rows


def model_rows(name: str) -> dict[str, np.ndarray]:
    sys.path.insert(0, str(HERE))
    import logging

    from run import build

    import flexmbs as fm
    logging.disable(logging.WARNING)
    res = fm.simulate(build(name), 1.0, 1e-3, rho_inf=0.9)
    return {f"model:{name}/t": res.t, f"model:{name}/q": res.q,
            f"model:{name}/qd": res.qd, f"model:{name}/lam": res.lam}


def collect(only: set[str] | None) -> dict[str, np.ndarray]:
    rows: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in CASES.items():
            if only is None or name in only:
                print(f"  case {name} ...", file=sys.stderr, flush=True)
                rows.update(case_rows(name, extra, Path(tmp)))
    for name in MODELS:
        if only is None or name in only:
            print(f"  model {name} ...", file=sys.stderr, flush=True)
            rows.update(model_rows(name))
    return rows


def compare(old: dict, new: dict) -> int:
    groups = sorted({k.split("/")[0] for k in old} | {k.split("/")[0] for k in new})
    bad = 0
    print(f"{'model':34s} {'rows':>6s} {'datasets':>8s} {'max |diff|':>11s}  same")
    for g in groups:
        keys = sorted(k for k in set(old) | set(new) if k.split("/")[0] == g)
        diff, same, rows = 0.0, True, 0
        for k in keys:
            a, b = old.get(k), new.get(k)
            if a is None:                  # a new output (e.g. a sensor added to a case)
                print(f"    {k}: new dataset (not in the saved run)")
                continue
            if b is None or a.shape != b.shape:
                same, diff = False, float("inf")
                print(f"    {k}: {'missing' if a is None or b is None else 'shape'} differs")
                continue
            rows = max(rows, len(a))
            if not np.array_equal(a, b, equal_nan=True):
                same = False
                diff = max(diff, float(np.nanmax(np.abs(a - b))))
        bad += not same
        print(f"{g:34s} {rows:6d} {len(keys):8d} {diff:11.3e}  {'yes' if same else 'NO'}")
    return 1 if bad else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", metavar="FILE.npz")
    g.add_argument("--compare", metavar="FILE.npz")
    p.add_argument("--only", default=None, help="comma-separated case or model names")
    a = p.parse_args(argv)
    only = set(a.only.split(",")) if a.only else None
    rows = collect(only)
    if a.save:
        np.savez(a.save, **rows)
        print(f"saved {len(rows)} datasets to {a.save}")
        return 0
    with np.load(a.compare) as f:
        old = {k: f[k] for k in f.files
               if only is None or k.split("/")[0].split(":")[1] in only}
    return compare(old, rows)


if __name__ == "__main__":
    sys.exit(main())
