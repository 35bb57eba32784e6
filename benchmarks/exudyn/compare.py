"""Side by side with Exudyn (``python benchmarks/run.py --exudyn``): drives both sides.

For every model, ``repeat`` times and interleaved (flexmbs, Exudyn, flexmbs, Exudyn, ...):

1. flexmbs in a subprocess of this interpreter (``run.py --one-exudyn NAME --export F``):
   builds the model (``flexmbs_models.build``), writes its data to ``F.npz``, simulates
   and prints steps/s and the key output;
2. Exudyn in a subprocess of the Exudyn venv (``exudyn_models.py F.npz``), made by
   ``make_env.sh`` if missing.

The table holds the better steps/s of each side (the machine is shared and noisy), the
ratio flexmbs/Exudyn and the key outputs at t_end with their difference
``|key_flexmbs - key_Exudyn|`` (2-norm; m for all six models).

Models with gravity on a flexible body get one more, untimed Exudyn run with gravity as
consistent nodal forces (``exudyn_models.py --gravity nodal``): Exudyn's
``LoadMassProportional`` on a reduced body leaves the elastic shift of the centre of mass
out of the frame's gravity moment, and this run shows what the difference is without it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN = HERE.parent / "run.py"
VENV = Path(os.environ.get("EXUDYN_VENV", HERE.parent / ".exudyn-venv"))
VENV_PY = VENV / "bin" / "python"


class SideBySideError(RuntimeError):
    """A side could not be run (message names the model, the command and its stderr)."""


def ensure_env() -> Path:
    """The Exudyn venv's python, creating the venv with ``make_env.sh`` if missing."""
    if VENV_PY.exists():
        check = subprocess.run([str(VENV_PY), "-c", "import exudyn, numpy, scipy"],
                               capture_output=True, text=True, check=False)
        if check.returncode == 0:
            return VENV_PY
        print(f"{VENV} exists but cannot import exudyn/numpy/scipy; recreating it",
              file=sys.stderr)
    print(f"creating the Exudyn venv {VENV} (pip install exudyn numpy scipy) ...",
          file=sys.stderr)
    out = subprocess.run(["bash", str(HERE / "make_env.sh")], capture_output=True, text=True,
                         check=False, env={**os.environ, "EXUDYN_VENV": str(VENV)})
    if out.returncode != 0 or not VENV_PY.exists():
        raise SideBySideError(
            f"could not create the Exudyn venv {VENV}: 'pip install exudyn numpy scipy' failed "
            "(no network to PyPI?). Run 'bash benchmarks/exudyn/make_env.sh' where pip has "
            f"network, or set EXUDYN_VENV to an existing venv.\n{out.stderr[-1500:]}")
    print(out.stdout.strip(), file=sys.stderr)
    return VENV_PY


def _last_json(cmd, env=None, what=""):
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if out.returncode != 0:
        raise SideBySideError(f"{what} failed: {' '.join(map(str, cmd))}\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_flexmbs(name: str, export: Path, petsc: str = "") -> dict:
    return _last_json([sys.executable, str(RUN), "--one-exudyn", name, "--export", str(export),
                       f"--petsc={petsc}"], what=f"flexmbs side of '{name}'")


def run_exudyn(python: Path, npz: Path, fast: bool = False, nodal_gravity: bool = False) -> dict:
    env = {**os.environ, "EXUDYN_MODULE": "fast" if fast else ""}
    extra = ["--gravity", "nodal"] if nodal_gravity else []
    return _last_json([str(python), str(HERE / "exudyn_models.py"), str(npz), *extra], env=env,
                      what=f"Exudyn side of '{npz.stem}'")


def _flexible_gravity(npz: Path) -> bool:
    import numpy as np
    with np.load(npz) as d:
        return bool(np.any(d["gravity"])) and any(k.endswith("_X") for k in d.files)


def _diff(a, b) -> float:
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5


def side_by_side(names, repeat=2, petsc="", fast=False) -> list[dict]:
    """Run both sides, interleaved, ``repeat`` times; one row per model."""
    python = ensure_env()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            npz = Path(tmp) / f"{name}.npz"
            ours, theirs = [], []
            for _ in range(repeat):
                ours.append(run_flexmbs(name, npz, petsc))
                theirs.append(run_exudyn(python, npz, fast))
            a = max(ours, key=lambda r: r["steps_per_s"])
            b = max(theirs, key=lambda r: r["steps_per_s"])
            check = (run_exudyn(python, npz, fast, nodal_gravity=True)
                     if _flexible_gravity(npz) else None)
            rows.append({"model": name, "flexmbs": a, "exudyn": b,
                         "exudyn_nodal_gravity_key": check and check["key"],
                         "key_difference_nodal_gravity": check and _diff(a["key"], check["key"]),
                         "flexmbs_steps_per_s_runs": [r["steps_per_s"] for r in ours],
                         "exudyn_steps_per_s_runs": [r["steps_per_s"] for r in theirs],
                         "ratio": a["steps_per_s"] / b["steps_per_s"],
                         "key_difference": _diff(a["key"], b["key"]),
                         "exudyn_version": b["exudyn"],
                         "exudyn_module": "fast" if fast else "standard",
                         "note": a.get("note", "")})
    return rows


def _key(v) -> str:
    return "(" + ", ".join(f"{x:.8g}" for x in v) + ")" if len(v) > 1 else f"{v[0]:.8g}"


def print_table(rows) -> None:
    head = (f"{'model':26s} {'flexmbs steps/s':>15s} {'Exudyn steps/s':>14s} {'ratio':>7s}  "
            f"{'key output flexmbs':>26s} {'key output Exudyn':>26s} {'difference':>10s} "
            f"{'diff, nodal g':>13s}")
    print(head)
    print("-" * len(head))
    for r in rows:
        a, b = r["flexmbs"], r["exudyn"]
        print(f"{r['model']:26s} {a['steps_per_s']:15.1f} {b['steps_per_s']:14.1f} "
              f"{r['ratio']:7.4f}  {_key(a['key']):>26s} {_key(b['key']):>26s} "
              f"{r['key_difference']:10.2e} "
              + (f"{r['key_difference_nodal_gravity']:13.2e}"
                 if r["key_difference_nodal_gravity"] is not None else f"{'-':>13s}"))
    if rows:
        print(f"\nExudyn {rows[0]['exudyn_version']} ({rows[0]['exudyn_module']} module); "
              "better of the runs per side; Newton iterations per step "
              + ", ".join(f"{r['model']}: {r['flexmbs']['newton_per_step']:.2f} / "
                          f"{r['exudyn']['newton_per_step']:.2f}" for r in rows)
              + " (flexmbs / Exudyn)")
        print("flexmbs steps/s exclude a five-step warm-up run first in each process (it loads "
              "the compiled kernels from numba's cache): "
              + ", ".join(f"{r['model']} {r['flexmbs'].get('warmup_s', float('nan')):.2f} s"
                          for r in rows))
        print("diff, nodal g: the difference when Exudyn applies gravity on the flexible body "
              "as consistent nodal forces F = M g\n(untimed check; its LoadMassProportional "
              "takes the frame's gravity moment about the undeformed centre of mass)")
        print("\nModels and key outputs (at t_end = 1 s, h = 1e-3 s, rho_inf = 0.9):")
        for r in rows:
            print(f"  {r['model']}: {r['note']}")


_TITLES = {"rigid_pendulum": "rigid pendulum", "rigid_fourbar": "rigid four-bar",
           "cantilever_10": "cantilever, 10 modes",
           "flexible_pendulum_8": "flexible pendulum, 8 modes",
           "flexible_slider_crank_12": "flexible slider-crank, 12 modes",
           "spatial_linkage_7x20": "spatial 3-loop linkage, 7 links x 20 modes"}


def markdown_table(rows, command: str) -> str:
    """The side-by-side table as the generated block of ``docs/performance.md``."""
    import datetime
    import os
    import platform
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    when = datetime.datetime.now().strftime("%Y-%m-%dT%H:%M")
    lines = [f"*Measured {when} by `{command}` on {platform.machine()}, "
             f"{os.cpu_count()} cores, load average {load} at the end; Exudyn "
             f"{rows[0]['exudyn_version']} ({rows[0]['exudyn_module']} module); each side the "
             f"better of {len(rows[0]['flexmbs_steps_per_s_runs'])} runs, interleaved.*", "",
             "| model | flexmbs steps/s | Exudyn steps/s | ratio flexmbs/Exudyn | Newton/step "
             "flexmbs / Exudyn | flexmbs warm-up s | key-output difference [m] |",
             "|---|---:|---:|---:|---|---:|---|"]
    for r in rows:
        a, b = r["flexmbs"], r["exudyn"]
        diff = f"{r['key_difference']:.1e}"
        if r["key_difference_nodal_gravity"] is not None:
            diff += f" ({r['key_difference_nodal_gravity']:.1e} with nodal gravity in Exudyn)"
        lines.append(f"| {_TITLES.get(r['model'], r['model'])} | {a['steps_per_s']:,.0f} | "
                     f"{b['steps_per_s']:,.0f} | {r['ratio']:.2f} | "
                     f"{a['newton_per_step']:.2f} / {b['newton_per_step']:.2f} | "
                     f"{a.get('warmup_s', float('nan')):.2f} | {diff} |")
    return "\n".join(lines) + "\n"


def write_docs_block(rows, path, command: str) -> None:
    """Replace ``<!-- exudyn:table -->`` ... ``<!-- /exudyn:table -->`` in ``path``."""
    import re
    from pathlib import Path
    p = Path(path)
    text = p.read_text()
    pat = re.compile(r"(<!-- exudyn:table -->\n).*?(<!-- /exudyn:table -->)", re.S)
    if not pat.search(text):
        raise SideBySideError(f"{p}: no '<!-- exudyn:table -->' block to replace")
    p.write_text(pat.sub(lambda m: m.group(1) + markdown_table(rows, command) + m.group(2),
                         text))
