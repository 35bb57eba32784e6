"""A crank-speed sweep of the flexible slider-crank, serial against N ranks (not a test).

    python benchmarks/sweep_mpi.py                       # 4 speeds, t_end 0.05 s, 2 ranks
    python benchmarks/sweep_mpi.py --ranks 2 --t-end 0.1 --speeds 100,150,200,250

The body cache is filled first (``flexmbs check``), so that both runs only simulate.
Then the same ``flexmbs sweep`` command runs without and with ``mpiexec -n N``; the table
gives the wall time of each whole command and the largest difference between the two
runs' result files (every dataset), which must be 0: a variant does not depend on the
rank that runs it.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "cases" / "main" / "case.toml"


def run(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}")
    return time.perf_counter() - t0


def max_difference(a: Path, b: Path) -> float:
    import h5py
    worst = 0.0
    for f in sorted(a.glob("*.h5")):
        with h5py.File(f, "r") as x, h5py.File(b / f.name, "r") as y:
            def visit(name, obj):
                nonlocal worst
                if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "fiu" \
                        and name != "run/wall_time":
                    worst = max(worst, float(np.max(np.abs(obj[()] - y[name][()]),
                                                    initial=0.0)))
            x.visititems(visit)
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--t-end", type=float, default=0.05)
    ap.add_argument("--speeds", default="100,150,200,250")
    args = ap.parse_args()
    # one BLAS thread everywhere: the serial run must not use the second core through
    # BLAS threads, and threaded BLAS sums in a thread-count dependent order
    for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = "1"
    if os.geteuid() == 0:
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    work = Path(tempfile.mkdtemp(prefix="flexmbs-sweep-bench-"))
    fm = [sys.executable, "-m", "flexmbs"]
    bodies = str(work / "bodies")
    run([*fm, "check", str(CASE), "--body-dir", bodies])
    sweep = ["sweep", str(CASE), "--vary", f"drives[0].omega={args.speeds}",
             "--t-end", str(args.t_end), "--body-dir", bodies]
    t1 = run([*fm, *sweep, "--out", str(work / "serial")])
    tn = run(["mpiexec", "-n", str(args.ranks), "--oversubscribe", *fm, *sweep,
              "--out", str(work / "mpi")])
    diff = max_difference(work / "serial", work / "mpi")
    n = len(args.speeds.split(","))
    print("case | variants | t_end s | serial s | "
          f"{args.ranks} ranks s | speed-up | max difference")
    print("--- | --- | --- | --- | --- | --- | ---")
    print(f"flexible slider-crank | {n} | {args.t_end:g} | {t1:.1f} | {tn:.1f} | "
          f"{t1 / tn:.2f} | {diff:g}")
    print(f"\nload average {os.getloadavg()[0]:.1f}; files in {work}")


if __name__ == "__main__":
    main()
