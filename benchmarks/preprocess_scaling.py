"""Preprocessing cost against mesh size (not a test).

Hex27 cantilever beams 1.0 x 0.1 x 0.1 m (nx = 10 ny = 10 nz), clamp RBE2 as frame,
Craig--Bampton with 20 fixed-interface modes, invariants and K2/K3.  Each size runs in a
fresh subprocess so the peak RSS is that size's own.

    python benchmarks/preprocess_scaling.py                # 20x2x2 .. 80x8x8
    python benchmarks/preprocess_scaling.py 20 40 110      # chosen nx (ny = nz = nx/10)
    python benchmarks/preprocess_scaling.py --eigensolver scipy 20 40
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(nx: int, eigensolver: str) -> dict:
    import resource

    sys.path.insert(0, str(ROOT / "tests"))
    from reduction.boxmesh import box_meshio

    from flexmbs.fe.assemble import assemble
    from flexmbs.fe.material import material_from_name
    from flexmbs.io.mesh import mesh_from_meshio
    from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model

    n = (nx, max(1, nx // 10), max(1, nx // 10))
    mesh = mesh_from_meshio(box_meshio("hex27", n), source=f"hex27 {n}")
    t0 = time.perf_counter()
    fe = assemble(mesh, material_from_name("steel"))
    t_asm = time.perf_counter() - t0
    timings = {}
    reduce_model(fe, ReductionSettings(n_modes=20, interfaces=(InterfaceSpec("x0"),),
                                       frame="interface:x0", eigensolver=eigensolver),
                 progress=lambda step, t: timings.__setitem__(step.split(" ")[0], t))
    total = time.perf_counter() - t0
    return {"mesh": "x".join(map(str, n)), "n_dof": fe.n_dof, "assembly": t_asm,
            "eigen": timings.get("modes", 0.0),
            "invariants": timings.get("invariants", 0.0) + timings.get("geometric", 0.0),
            "total": total,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str]) -> None:
    eig = "auto"
    if argv[:1] == ["--eigensolver"]:
        eig, argv = argv[1], argv[2:]
    sizes = [int(a) for a in argv] or [20, 40, 60, 80]
    print(f"{'mesh':>10} {'n_dof':>8} {'assembly s':>11} {'eigen s':>8} {'invariants s':>13} "
          f"{'total s':>8} {'peak RSS MB':>12}")
    for nx in sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(nx), eig],
                             capture_output=True, text=True, cwd=ROOT)
        if out.returncode != 0:
            print(f"{nx:>10} failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{r['mesh']:>10} {r['n_dof']:>8d} {r['assembly']:>11.2f} {r['eigen']:>8.2f} "
              f"{r['invariants']:>13.2f} {r['total']:>8.2f} {r['rss_mb']:>12.0f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one(int(sys.argv[2]), sys.argv[3])))
    else:
        main(sys.argv[1:])
