"""CPU time per step of the side-by-side models (not a test): ``time.process_time``
around each 0.2 s simulation (h = 1e-3 s, rho_inf = 0.9, one output), the fastest of
``N`` after a five-step warm-up, one line per tree [us].  CPU time, not wall time, so
that two states of the code can be compared on a shared machine (alternate them):

    PYTHONPATH=<tree> .venv/bin/python benchmarks/cpu_step.py <tree> MODEL[,MODEL...] N
"""
from __future__ import annotations

import sys
import tempfile
import time

H, T_RUN = 1e-3, 0.2


def main(tree: str, names: str, n: int) -> str:
    sys.path.insert(0, tree + "/benchmarks/exudyn")
    import flexmbs as fm
    from flexmbs_models import build
    if not fm.__file__.startswith(tree):
        raise SystemExit(f"cpu_step: flexmbs imported from {fm.__file__}, not {tree} "
                         f"(set PYTHONPATH={tree})")
    out = []
    for name in names.split(","):
        model = build(name, tempfile.mkdtemp())[0]
        fm.simulate(model, 5 * H, H, rho_inf=0.9, output_dt=5 * H)
        best = float("inf")
        for _ in range(n):
            t0 = time.process_time()
            res = fm.simulate(model, T_RUN, H, rho_inf=0.9, output_dt=T_RUN)
            best = min(best, (time.process_time() - t0) / res.stats.steps)
        out.append(f"{name} {best * 1e6:.1f}")
    return f"{tree} " + " | ".join(out)


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
