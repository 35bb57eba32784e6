"""A parameter sweep: the Cartesian product of the axes (``--vary`` or the case file's
``[sweep] vary`` table), one run of the case service per variant
(:mod:`flexmbs.parallel.variant_run`), spread over the MPI ranks (static round-robin,
:mod:`flexmbs.parallel.distribute`), and the summary table ``DIR/<case>_sweep.csv``
(one row per variant: the varied values, status, the outputs, the result file and the
error message of a failed variant), written on rank 0.  A failing variant does not stop
the others.  Re-running skips variants whose result file is complete and was computed
from the same case data.
"""
from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from flexmbs.case import folders
from flexmbs.case.loader import read_raw
from flexmbs.errors import CaseError, OutputError
from flexmbs.parallel import distribute, outputs, table, variants
from flexmbs.parallel.keypath import check_key_paths
from flexmbs.parallel.variant_run import Context, row, run_variant


@dataclass(frozen=True)
class SweepResult:
    """Rows (one dict per variant, in variant order, on every rank) and the CSV file."""

    rows: list
    keys: list
    csv: Path
    wall_time: float
    n_failed: int = 0
    interrupted: bool = False
    variants: list = field(default_factory=list)
    signal: int = 0
    n_replaced: int = 0         # complete runs that replaced an earlier result of other settings


def plan(case: str | Path, axes=None) -> list:
    """The variants of the sweep of ``case`` over ``axes`` (default: its ``[sweep] vary``
    table), in order (:class:`~flexmbs.parallel.variants.Variant`)."""
    raw = read_raw(case)
    file_axes, _ = variants.sweep_table(raw, str(case))
    return variants.expand(list(axes) if axes else file_axes,
                           variants.case_name(raw, Path(case)))


def sweep(case: str | Path, axes=None, *, out: str | Path | None = None, output_exprs=None,
          overrides: dict | None = None, body_dir: str | Path | None = None,
          petsc_args=(), force: bool = False, comm=None,
          on_variant: Callable[[str], None] | None = None) -> SweepResult:
    """Run the sweep of ``case`` over ``axes`` = [(key path, values), ...] (default: its
    ``[sweep] vary`` table) on the ranks of ``comm`` (mpi4py; ``None``: serial).

    ``overrides``: key path -> value applied to every variant (``{"solver.t_end": 0.1}``).
    ``on_variant(line)``: called on the variant's rank with one line per variant run
    (rank, number, name, status, wall time, error).
    Collective: every rank of ``comm`` must call it; every rank gets the whole table.
    """
    case = Path(case)
    raw = read_raw(case)
    file_axes, file_outputs = variants.sweep_table(raw, str(case))
    axes = list(axes) if axes else file_axes
    exprs = tuple(output_exprs or file_outputs or outputs.DEFAULT_OUTPUTS)
    for e in exprs:
        outputs.parse_output(e)
    if raw.get("analysis") is not None:
        raise CaseError(f"{case}: analysis: a sweep runs time simulations; remove the "
                        "[analysis] table")
    name = variants.case_name(raw, case)
    todo = variants.expand(axes, name)
    overrides = dict(overrides or {})
    base = {k: v for k, v in raw.items() if k != "sweep"}
    check_key_paths(base, [k for k, _ in axes] + list(overrides), where=str(case))
    out_dir = Path(out) if out else folders.output_folder(case, (raw.get("output") or {}).get(
        "directory"))
    rank, size = distribute.rank_size(comm)
    distribute.on_root(comm, _make_folder, out_dir)
    ctx = Context(raw=raw, case=case.resolve(), out=out_dir, outputs=exprs,
                  overrides=overrides,
                  body_dir=Path(body_dir) if body_dir else folders.body_cache(),
                  petsc_args=tuple(petsc_args), force=force)
    stop = {"signal": None}
    t0 = time.perf_counter()
    if size > 1 and _has_meshes(raw):
        distribute.on_root(comm, _warm_cache, ctx, todo[0])

    def one(v):
        start = time.perf_counter()
        try:
            r = run_variant(v, ctx)
        except Exception as exc:                # noqa: BLE001 - e.g. an unwritable DIR
            r = row(v, "failed", error=f"{type(exc).__name__}: {exc}", result="")
        if r["status"] == "interrupted":
            stop["signal"] = r.get("_signal", 2)
        if on_variant is not None:
            on_variant(f"[rank {rank}/{size}] {v.index + 1}/{len(todo)} {v.stem}: "
                       f"{r['status']}"
                       + (" (replaces the earlier result of other settings)"
                          if r.get("_replaced") else "")
                       + (f" ({time.perf_counter() - start:.2f} s)"
                          if r["status"] != "cached" else "")
                       + (f": {r['error']}" if r.get("error") else ""))
        return r

    with _stop_between_variants(stop):
        rows = distribute.map_tasks(one, todo, comm, stop=lambda: stop["signal"] is not None)
    wall = time.perf_counter() - t0
    keys = [k for k, _ in axes]
    rows = [r if r is not None else row(v, "not run", error="sweep interrupted")
            for v, r in zip(todo, rows)]
    replaced = sum(bool(r.pop("_replaced", False)) for r in rows)
    for r in rows:
        r.pop("_signal", None)
    csv = out_dir / f"{name}_sweep.csv"
    distribute.on_root(comm, _write_table, csv, rows, keys)
    n_failed = sum(r["status"] not in ("complete", "cached") for r in rows)
    interrupted = any(r["status"] in ("interrupted", "not run") for r in rows)
    if comm is not None:                           # one exit status on every rank
        stop["signal"] = comm.allreduce(stop["signal"] or 0, op=_mpi_max())
    return SweepResult(rows, keys, csv, wall, n_failed, interrupted, todo,
                       stop["signal"] or 0, replaced)


def _make_folder(path: Path) -> None:
    """The output folder: checked (one line for a file, a device, no permission), then
    made."""
    from flexmbs.io.paths import writable_dir
    writable_dir(path, "--out")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError.from_exception(exc, path) from None


def _write_table(csv: Path, rows, keys) -> None:
    try:
        table.write_csv(csv, rows, keys)
    except OSError as exc:
        raise OutputError.from_exception(exc, csv).keeping(
            "the variants' result files are kept") from None


@contextlib.contextmanager
def _stop_between_variants(stop: dict):
    """SIGINT/SIGTERM outside a simulation: start no further variant (the case service
    handles the signal itself while it simulates); a second signal stops at once."""
    import signal
    sigs = (signal.SIGINT, signal.SIGTERM)

    def handler(signum, frame):
        if stop["signal"] is not None:
            raise KeyboardInterrupt(signal.Signals(signum).name)
        stop["signal"] = int(signum)
    try:
        saved = {sg: signal.signal(sg, handler) for sg in sigs}
    except ValueError:                              # not the main thread: leave them
        saved = {}
    try:
        yield
    finally:
        for sg, h in saved.items():
            signal.signal(sg, h)


def _has_meshes(raw: dict) -> bool:
    return any(isinstance(b, dict) and b.get("mesh") for b in raw.get("bodies", []))


def _warm_cache(ctx: Context, v) -> None:
    """Preprocess the flexible bodies of the first variant on rank 0 before the others
    start, so that the ranks do not all reduce the same mesh at once (the cache writes
    atomically, so that would only waste time).  Problems are left to the variant."""
    from flexmbs.case import build
    try:
        build(ctx.variant_spec(v, ctx.variant_case(v)), body_dir=ctx.body_dir)
    except Exception:                          # noqa: BLE001 - reported by the variant
        logging.getLogger(__name__).debug("cache warm-up failed", exc_info=True)


def _mpi_max():
    from mpi4py import MPI
    return MPI.MAX
