"""Distributed preprocessing against serial: wall time, peak memory, equality (not a test).

For each size, a hex27 cantilever 1.0 x 0.1 x 0.08 m (rectangular section: no repeated
frequencies, so the modes are unique and the bodies comparable) is meshed by the shipped
gmsh script, then reduced twice through the command line, with identical arguments
(20 Craig--Bampton modes, RBE2 clamp as frame, K2/K3 and stress modes included):

    flexmbs preprocess beam.msh ...                 (serial)
    mpiexec -n N flexmbs preprocess beam.msh ...    (distributed)

and the two body files are compared (frequencies, invariants, modes).

    python benchmarks/preprocess_mpi.py                 # 80x8x6 (107k dofs), 2 ranks
    python benchmarks/preprocess_mpi.py --ranks 2 80x8x6 110x11x8
    python benchmarks/preprocess_mpi.py --keep /tmp/bodies 80x8x6

Peak memory is the largest resident set of one process (for N ranks: of one rank).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SIZE = (1.0, 0.1, 0.08)
FIELDS = ("J1", "J2", "M_e", "C_r1", "O_e1", "K_e", "K2", "K3", "modes", "stress_modes")
ARGS = ["--material", "steel", "--modes", "20", "--interface", "clamp",
        "--frame", "interface:clamp"]


def mpiexec(n: int) -> list[str]:
    cmd = ["mpiexec", "-n", str(n)]
    if os.geteuid() == 0:
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return cmd + ["--oversubscribe"]


def measured(cmd: list[str]) -> tuple[float, float]:
    """Wall time [s] and peak RSS of the largest child process [MB] of ``cmd``, measured
    by a fresh wrapper process so that earlier runs do not count."""
    probe = ("import resource, subprocess, sys, time, json; t = time.perf_counter(); "
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
             "stderr=subprocess.PIPE, text=True); "
             "print(json.dumps([r.returncode, time.perf_counter() - t, "
             "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, "
             "r.stderr[-2000:]]))")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True)
    rc, wall, rss, err = json.loads(out.stdout.strip().splitlines()[-1])
    if rc != 0:
        raise SystemExit(f"command failed ({rc}): {' '.join(cmd)}\n{err}")
    return wall, rss


def compare(a_path: Path, b_path: Path) -> tuple[float, float]:
    """Largest relative difference of the frequencies and of the invariant fields."""
    from flexmbs.io.bodyfile import load_body
    a, b = load_body(a_path), load_body(b_path)
    d_omega = float(np.max(np.abs(a.omega - b.omega) / b.omega))
    d_inv = max(float(np.abs(np.asarray(getattr(a, f)) - np.asarray(getattr(b, f))).max()
                      / np.abs(np.asarray(getattr(b, f))).max()) for f in FIELDS)
    return d_omega, d_inv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", default=["80x8x6"], help="NXxNYxNZ hex27 cells")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--keep", default=None, help="directory to keep meshes and bodies in")
    args = ap.parse_args()
    for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = "1"              # serial and ranks alike: one BLAS thread each
    sys.path.insert(0, str(ROOT / "meshes"))
    from make_meshes import box_beam
    work = Path(args.keep or tempfile.mkdtemp(prefix="flexmbs-mpi-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    flexmbs = [sys.executable, "-m", "flexmbs"]
    cols = ["mesh", "n_dof", "serial s", f"{args.ranks} ranks s", "speed-up",
            "serial peak MB", "per-rank peak MB", "max rel. diff. omega",
            "max rel. diff. invariants"]
    print(" | ".join(cols))
    print(" | ".join("---" for _ in cols))
    rows = []
    for size in args.sizes:
        n = tuple(int(v) for v in size.lower().split("x"))
        mesh = work / f"beam_hex27_{size}.msh"
        if not mesh.exists():
            box_beam(mesh, SIZE, n, "hex27")
        serial, dist = work / f"serial_{size}.h5", work / f"dist_{size}.h5"
        t_s, m_s = measured([*flexmbs, "preprocess", str(mesh), *ARGS, "-o", str(serial)])
        t_d, m_d = measured([*mpiexec(args.ranks), *flexmbs, "preprocess", str(mesh), *ARGS,
                             "-o", str(dist)])
        d_om, d_inv = compare(dist, serial)
        n_dof = 3 * (2 * n[0] + 1) * (2 * n[1] + 1) * (2 * n[2] + 1)
        row = dict(mesh=size, n_dof=n_dof, serial_s=t_s, dist_s=t_d, speedup=t_s / t_d,
                   serial_mb=m_s, rank_mb=m_d, d_omega=d_om, d_inv=d_inv)
        rows.append(row)
        print(f"{size} | {n_dof:,} | {t_s:.1f} | {t_d:.1f} | {t_s / t_d:.2f} | {m_s:,.0f} | "
              f"{m_d:,.0f} | {d_om:.1e} | {d_inv:.1e}", flush=True)
    print(f"\nfiles in {work}; load average {os.getloadavg()[0]:.1f} at the end")
    (work / "preprocess_mpi.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
