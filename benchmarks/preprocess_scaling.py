"""Preprocessing cost against mesh size (not a test).

Hex27 cantilever beams 1.0 x 0.1 x 0.1 m (nx = 10 ny = 10 nz), built in memory (no mesh
files are written), clamp RBE2 as frame, Craig--Bampton with 20 fixed-interface modes,
invariants, K2/K3 and stress modes.  Each size runs in a fresh subprocess so the peak
RSS is that size's own.

    python benchmarks/preprocess_scaling.py                     # 20x2x2 .. 110x11x11
    python benchmarks/preprocess_scaling.py 60 110 139          # chosen nx (ny = nz = nx/10)
    python benchmarks/preprocess_scaling.py --eigensolver slepc-amg 60 110
    python benchmarks/preprocess_scaling.py --limit-gb 14 139   # address-space cap per run
    python benchmarks/preprocess_scaling.py --in-core 139       # keep the MUMPS factor in RAM

nx = 110 is 351k dofs; nx = 139 is 203k nodes / 610k dofs (the Exudyn/NGsolve size of
PEER_EXUDYN).  The BLAS that MUMPS links is printed with the table: with Debian's
reference BLAS the eigen step was 1.3-1.5x slower than with OpenBLAS at 61k-140k dofs
(docs/preprocessing.md).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("mesh", "n_dof", "eigensolver", "assembly s", "eigen s", "invariants s",
           "stress s", "total s", "peak RSS MB", "kB/dof")


def one(nx: int, eigensolver: str, in_core: bool = False) -> dict:
    import resource

    sys.path.insert(0, str(ROOT / "tests"))
    from reduction.boxmesh import box_meshio

    from flexmbs.fe.assemble import assemble
    from flexmbs.fe.material import material_from_name
    from flexmbs.io.mesh import mesh_from_meshio
    from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model
    from flexmbs.reduction import eigen
    from flexmbs.reduction.eigen import choose_backend

    if in_core:
        eigen.OUT_OF_CORE_THRESHOLD = 10**12

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
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"mesh": "x".join(map(str, n)), "n_dof": fe.n_dof,
            "eigensolver": choose_backend(eigensolver, fe.n_dof), "assembly": t_asm,
            "eigen": timings.get("modes", 0.0),
            "invariants": timings.get("invariants", 0.0) + timings.get("geometric", 0.0),
            "stress": timings.get("stress", 0.0), "total": total, "rss_mb": rss,
            "kb_per_dof": rss * 1024 / fe.n_dof, "blas": _blas(),
            "ooc": (not in_core and fe.n_dof > eigen.OUT_OF_CORE_THRESHOLD
                    and choose_backend(eigensolver, fe.n_dof) == "slepc")}


def _blas() -> str:
    """The BLAS shared library mapped into this process by PETSc/MUMPS."""
    try:
        from petsc4py import PETSc  # noqa: F401  (loads MUMPS and its BLAS)
    except ImportError:
        return "?"
    libs = {line.split()[-1] for line in open("/proc/self/maps")
            if "blas" in line.rsplit("/", 1)[-1] and "numpy" not in line
            and "scipy" not in line}
    return ", ".join(sorted(libs)) or "?"


def main(argv: list[str]) -> None:
    eig, limit_gb, in_core = "auto", None, False
    while argv[:1] and argv[0].startswith("--"):
        if argv[0] == "--eigensolver":
            eig, argv = argv[1], argv[2:]
        elif argv[0] == "--in-core":
            in_core, argv = True, argv[1:]
        elif argv[0] == "--limit-gb":
            limit_gb, argv = float(argv[1]), argv[2:]
        else:
            raise SystemExit(f"unknown option {argv[0]}")
    sizes = [int(a) for a in argv] or [20, 40, 60, 80, 110]
    print(" | ".join(COLUMNS))
    print(" | ".join("---" for _ in COLUMNS))
    blas = None
    for nx in sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(nx), eig, str(int(in_core))],
                             capture_output=True, text=True, cwd=ROOT,
                             preexec_fn=_limit(limit_gb))
        if out.returncode != 0:
            tail = (out.stderr.strip().splitlines() or ["killed"])[-1]
            print(f"{nx}x{nx // 10}x{nx // 10} | failed: {tail}", flush=True)
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        blas = r.pop("blas")
        name = r["eigensolver"] + (" (out of core)" if r["ooc"] else "")
        print(f"{r['mesh']} | {r['n_dof']:,} | {name} | {r['assembly']:.1f} | "
              f"{r['eigen']:.1f} | {r['invariants']:.1f} | {r['stress']:.1f} | "
              f"{r['total']:.1f} | {r['rss_mb']:,.0f} | {r['kb_per_dof']:.1f}", flush=True)
    print(f"\nBLAS used by MUMPS: {blas}")


def _limit(gb):
    if gb is None:
        return None

    def set_limit():
        import resource
        b = int(gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (b, b))
    return set_limit


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one(int(sys.argv[2]), sys.argv[3], sys.argv[4:5] == ["1"])))
    else:
        main(sys.argv[1:])
