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

Best peer (``run.py --exudyn --best-peer``, :func:`best_peer_row`, :mod:`best_peer`).  The
same tolerance rule for both codes, per model:

1. a tight reference of that code: its Newton tolerance at 1e-12, or the tightest of
   1e-12, 1e-11, 1e-10 that completes (Exudyn: ``newton.relativeTolerance``; flexmbs:
   ``newton_rtol``, the fraction of the first Newton correction left as estimated error);
2. a ladder of loosened tolerances, tightest first: Exudyn 1e-8 (its default), 1e-7, 1e-6,
   1e-5, 1e-4; flexmbs 1e-6, 1e-5 (its default), 1e-4, 1e-3, 1e-2;
3. the best setting is the loosest rung reached from the tightest through rungs whose key
   output at t_end stays within 1e-7 m (2-norm) of the code's own tight reference; the
   walk stops at the first rung that fails or leaves the bound (a looser rung landing
   inside again is luck).  No rung within the bound: an error, no column.

Exudyn runs its fast module (``EXUDYN_MODULE=fast``), ladders and timed runs alike.  The
ladders are one subprocess per code and model (reference and rungs in one process); the
timed runs at the chosen tolerances are interleaved, ``repeat`` times, the better kept.
The table also gives the distance between the two codes' tight references, which should
agree as the default columns do.

Stiffening cost (``run.py --stiffening-cost``, :func:`stiffening_cost`): flexmbs alone,
the flexible models with geometric stiffening off (as compared with Exudyn) and on,
interleaved ``repeat`` times.
"""
from __future__ import annotations

import json
import math
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


def _tolerances(values) -> str:
    return ",".join(f"{t:.0e}" for t in values)


def run_flexmbs(name: str, export: Path, petsc: str = "", newton_rtol: float | None = None,
                ladder=(), stiffening: bool = False) -> dict:
    """One timed flexmbs run (``newton_rtol`` [-]: its Newton tolerance, default flexmbs's),
    or with ``ladder`` one run per tolerance (``{"ladder": [...]}``, no export)."""
    extra = ([f"--newton-rtol={newton_rtol!r}"] if newton_rtol is not None else []) + \
        ([f"--ladder={_tolerances(ladder)}"] if ladder else []) + \
        (["--stiffening"] if stiffening else [])
    return _last_json([sys.executable, str(RUN), "--one-exudyn", name, "--export", str(export),
                       f"--petsc={petsc}", *extra], what=f"flexmbs side of '{name}'")


def run_exudyn(python: Path, npz: Path, fast: bool = False, nodal_gravity: bool = False,
               relative_tolerance: float | None = None, ladder=()) -> dict:
    """One timed Exudyn run (``relative_tolerance`` [-]: its Newton relative tolerance,
    default Exudyn's), or with ``ladder`` one run per tolerance (``{"ladder": [...]}``)."""
    env = {**os.environ, "EXUDYN_MODULE": "fast" if fast else ""}
    extra = (["--gravity", "nodal"] if nodal_gravity else []) + \
        ([f"--relative-tolerance={relative_tolerance!r}"] if relative_tolerance is not None
         else []) + ([f"--ladder={_tolerances(ladder)}"] if ladder else [])
    return _last_json([str(python), str(HERE / "exudyn_models.py"), str(npz), *extra], env=env,
                      what=f"Exudyn side of '{npz.stem}'")


def _flexible_gravity(npz: Path) -> bool:
    import numpy as np
    with np.load(npz) as d:
        return bool(np.any(d["gravity"])) and any(k.endswith("_X") for k in d.files)


def distance(a, b) -> float:
    """2-norm of the difference of two key outputs [m]."""
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))


def _interleaved(repeat, first, second) -> tuple[list, list]:
    """``repeat`` calls of ``first()`` and ``second()`` in turn: their two result lists."""
    a, b = [], []
    for _ in range(repeat):
        a.append(first())
        b.append(second())
    return a, b


def _fastest(runs) -> dict:
    return max(runs, key=lambda r: r["steps_per_s"])


def best_peer_row(name, npz, python, repeat=2, petsc="") -> dict:
    """The best-peer entry of one model (the rule of the module doc): both ladders, then
    ``repeat`` timed runs per side at the chosen tolerances, interleaved."""
    import best_peer as bp
    ours = bp.choose(run_flexmbs(name, npz, petsc, ladder=bp.REFERENCE + bp.FLEXMBS_LADDER)
                     ["ladder"], bp.REFERENCE, f"flexmbs, model '{name}'")
    theirs = bp.choose(run_exudyn(python, npz, True, ladder=bp.REFERENCE + bp.EXUDYN_LADDER)
                       ["ladder"], bp.REFERENCE, f"Exudyn (fast module), model '{name}'")
    a_runs, b_runs = _interleaved(
        repeat, lambda: run_flexmbs(name, npz, petsc, newton_rtol=ours["tolerance"]),
        lambda: run_exudyn(python, npz, True, relative_tolerance=theirs["tolerance"]))
    a, b = _fastest(a_runs), _fastest(b_runs)
    return {"flexmbs": {**ours, "steps_per_s": a["steps_per_s"], "key": a["key"],
                        "newton_per_step": a["newton_per_step"]},
            "exudyn": {**theirs, "steps_per_s": b["steps_per_s"], "key": b["key"],
                       "newton_per_step": b["newton_per_step"], "module": "fast"},
            "ratio": a["steps_per_s"] / b["steps_per_s"],
            "reference_difference": distance(ours["reference_key"],
                                                theirs["reference_key"]),
            "flexmbs_steps_per_s_runs": [r["steps_per_s"] for r in a_runs],
            "exudyn_steps_per_s_runs": [r["steps_per_s"] for r in b_runs]}


def side_by_side(names, repeat=2, petsc="", fast=False, best_peer=False) -> list[dict]:
    """Run both sides, interleaved, ``repeat`` times; one row per model (with
    ``best_peer``: its ``"best_peer"`` entry, :func:`best_peer_row`)."""
    python = ensure_env()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            npz = Path(tmp) / f"{name}.npz"
            ours, theirs = _interleaved(repeat, lambda: run_flexmbs(name, npz, petsc),
                                        lambda: run_exudyn(python, npz, fast))
            a, b = _fastest(ours), _fastest(theirs)
            check = (run_exudyn(python, npz, fast, nodal_gravity=True)
                     if _flexible_gravity(npz) else None)
            rows.append({"model": name, "flexmbs": a, "exudyn": b,
                         "exudyn_nodal_gravity_key": check and check["key"],
                         "key_difference_nodal_gravity":
                             check and distance(a["key"], check["key"]),
                         "flexmbs_steps_per_s_runs": [r["steps_per_s"] for r in ours],
                         "exudyn_steps_per_s_runs": [r["steps_per_s"] for r in theirs],
                         "ratio": a["steps_per_s"] / b["steps_per_s"],
                         "key_difference": distance(a["key"], b["key"]),
                         "exudyn_version": b["exudyn"],
                         "exudyn_module": "fast" if fast else "standard",
                         "note": a.get("note", "")})
            if best_peer:
                rows[-1]["best_peer"] = best_peer_row(name, npz, python, repeat, petsc)
                rows[-1]["best_peer"]["ratio_flexmbs_default"] = (
                    a["steps_per_s"] / rows[-1]["best_peer"]["exudyn"]["steps_per_s"])
    return rows


def _key(v) -> str:
    return "(" + ", ".join(f"{x:.8g}" for x in v) + ")" if len(v) > 1 else f"{v[0]:.8g}"


def _ruled(head: str) -> None:
    print(head)
    print("-" * len(head))


def print_table(rows) -> None:
    head = (f"{'model':26s} {'flexmbs steps/s':>15s} {'Exudyn steps/s':>14s} {'ratio':>7s}  "
            f"{'key output flexmbs':>26s} {'key output Exudyn':>26s} {'difference':>10s} "
            f"{'diff, nodal g':>13s}")
    _ruled(head)
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


def _measured(command: str) -> str:
    """The opening of a generated table's caption: when, how, where, the load."""
    import datetime
    import platform
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    when = datetime.datetime.now().strftime("%Y-%m-%dT%H:%M")
    return (f"*Measured {when} by `{command}` on {platform.machine()}, {os.cpu_count()} "
            f"cores, load average {load} at the end;")


def markdown_table(rows, command: str) -> str:
    """The side-by-side table as the generated block of ``docs/performance.md``."""
    lines = [f"{_measured(command)} Exudyn {rows[0]['exudyn_version']} "
             f"({rows[0]['exudyn_module']} module); each side the better of "
             f"{len(rows[0]['flexmbs_steps_per_s_runs'])} runs, interleaved.*", "",
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
    if all("best_peer" in r for r in rows):
        lines += ["", best_peer_markdown(rows).rstrip("\n")]
    return "\n".join(lines) + "\n"


def best_peer_markdown(rows) -> str:
    """The best-peer table (the rule of the module doc) of rows with ``"best_peer"``."""
    lines = ["Best peer: Exudyn's fast module and flexmbs, each at the loosest Newton "
             "tolerance whose key output stays within 1e-7 m of its own tight reference "
             "(the same runs, interleaved, better of each).", "",
             "| model | Exudyn best steps/s (relativeTolerance) | flexmbs best steps/s "
             "(newton_rtol) | ratio flexmbs best / Exudyn best | ratio flexmbs default / "
             "Exudyn best | tight references apart [m] |",
             "|---|---:|---:|---:|---:|---:|"]
    def cells(r):
        p = r["best_peer"]
        a, b = p["flexmbs"], p["exudyn"]
        return (f"{b['steps_per_s']:,.0f} ({b['tolerance']:.0e})",
                f"{a['steps_per_s']:,.0f} ({a['tolerance']:.0e})", f"{p['ratio']:.2f}",
                f"{p['ratio_flexmbs_default']:.2f}", f"{p['reference_difference']:.1e}")
    return _markdown(lines, rows, cells)


def _markdown(lines, rows, cells) -> str:
    """``lines`` (caption and head) and one table row per model: its title, ``cells(r)``."""
    body = ["| " + " | ".join((_TITLES.get(r["model"], r["model"]), *cells(r))) + " |"
            for r in rows]
    return "\n".join([*lines, *body]) + "\n"


def print_best_peer(rows) -> None:
    """The best-peer table on the terminal, with the distances of every rung."""
    print("\nBest peer (Exudyn fast module; each code at the loosest Newton tolerance within "
          "1e-7 m of its own tight reference):")
    head = (f"{'model':26s} {'Exudyn steps/s':>14s} {'tol':>6s} {'flexmbs steps/s':>15s} "
            f"{'tol':>6s} {'best/best':>9s} {'default/best':>12s} {'refs apart':>10s}")
    _ruled(head)
    for r in rows:
        p = r["best_peer"]
        a, b = p["flexmbs"], p["exudyn"]
        print(f"{r['model']:26s} {b['steps_per_s']:14.1f} {b['tolerance']:6.0e} "
              f"{a['steps_per_s']:15.1f} {a['tolerance']:6.0e} {p['ratio']:9.4f} "
              f"{p['ratio_flexmbs_default']:12.4f} {p['reference_difference']:10.2e}")
    print("distance of each rung from the code's tight reference [m] (None: failed):")
    for r in rows:
        for side in ("exudyn", "flexmbs"):
            q = r["best_peer"][side]
            print(f"  {r['model']}, {side} (reference {q['reference_tolerance']:.0e}): "
                  + ", ".join(f"{t}: " + ("None" if d is None else f"{d:.1e}")
                              for t, d in q["ladder"].items()))


def stiffening_cost(names, repeat=2, petsc="") -> list[dict]:
    """flexmbs steps/s with geometric stiffening off and on, interleaved ``repeat`` times;
    one row per (flexible) model."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            npz = Path(tmp) / f"{name}.npz"
            off, on = _interleaved(repeat, lambda: run_flexmbs(name, npz, petsc),
                                   lambda: run_flexmbs(name, npz, petsc, stiffening=True))
            a, b = _fastest(off), _fastest(on)
            rows.append({"model": name, "off": a, "on": b,
                         "cost": a["steps_per_s"] / b["steps_per_s"], "runs": repeat,
                         "key_difference": distance(a["key"], b["key"])})
    return rows


def print_stiffening(rows) -> None:
    head = (f"{'model':26s} {'steps/s off':>11s} {'steps/s on':>10s} {'off/on':>7s} "
            f"{'Newton/step off/on':>18s} {'key off - on [m]':>16s}")
    _ruled(head)
    print("\n".join(f"{r['model']:26s} {r['off']['steps_per_s']:11.1f} "
                    f"{r['on']['steps_per_s']:10.1f} {r['cost']:7.2f} "
                    f"{r['off']['newton_per_step']:8.2f} / {r['on']['newton_per_step']:7.2f} "
                    f"{r['key_difference']:16.2e}" for r in rows))


def stiffening_markdown(rows, command: str) -> str:
    """The stiffening on/off table as the generated block ``<!-- stiffening:table -->``."""
    lines = [f"{_measured(command)} better of {rows[0]['runs']} runs per setting, "
             "interleaved.*", "",
             "| model | steps/s, stiffening off | steps/s, stiffening on | cost off/on | "
             "Newton/step off / on | key output off - on [m] |",
             "|---|---:|---:|---:|---|---:|"]
    return _markdown(lines, rows, lambda r: (
        f"{r['off']['steps_per_s']:,.0f}", f"{r['on']['steps_per_s']:,.0f}", f"{r['cost']:.2f}",
        f"{r['off']['newton_per_step']:.2f} / {r['on']['newton_per_step']:.2f}",
        f"{r['key_difference']:.1e}"))


def write_docs_block(rows, path, command: str, marker: str = "exudyn:table",
                     table=None) -> None:
    """Replace ``<!-- {marker} -->`` ... ``<!-- /{marker} -->`` in ``path`` by
    ``table(rows, command)`` (default :func:`markdown_table`)."""
    import re
    from pathlib import Path
    table = table or markdown_table
    p = Path(path)
    text = p.read_text()
    pat = re.compile(rf"(<!-- {marker} -->\n).*?(<!-- /{marker} -->)", re.S)
    if not pat.search(text):
        raise SideBySideError(f"{p}: no '<!-- {marker} -->' block to replace")
    p.write_text(pat.sub(lambda m: m.group(1) + table(rows, command) + m.group(2), text))
