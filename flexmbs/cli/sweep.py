"""``[mpiexec -n N] flexmbs sweep CASE.toml --vary KEY=v1,v2,... [--vary ...] [--out DIR]``.

A parameter sweep: the Cartesian product of the ``--vary`` axes (or of the case file's
``[sweep] vary`` table), one ``flexmbs run`` per variant, spread over the MPI ranks
(static round-robin, :mod:`flexmbs.parallel.distribute`).  Per variant, in ``DIR``:

    <case>__<key>=<value>....toml   the exact case that was run
    <case>__<key>=<value>....h5     its result file (same code path as ``flexmbs run``)
    <case>__<key>=<value>....log    everything that run printed or logged

and on rank 0 the summary ``DIR/<case>_sweep.csv`` (one row per variant: the varied
values, status, the ``--outputs``, the result file and the error message of a failed
variant), also printed.  A failing variant does not stop the others.  Re-running skips
variants whose result file is complete and was computed from the same case data.

Exit status: 0 if every variant completed, 1 if any failed, 130/143 if interrupted.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from flexmbs.case.loader import read_raw
from flexmbs.cli.run import add_case_arguments
from flexmbs.case import folders
from flexmbs.errors import CaseError, OutputError
from flexmbs.parallel import distribute, outputs, table, variants
from flexmbs.parallel.keypath import check_key_paths
from flexmbs.parallel.toml_writer import dumps


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep", help="run a case for every combination of parameter values (MPI-parallel)",
        description="Run CASE.toml once per combination of the --vary values (Cartesian "
                    "product), distributing the variants over the MPI ranks (start with "
                    "mpiexec/srun -n N; serial without).  Writes DIR/<case>__<key>=<value>"
                    "....h5 (+ .toml, .log) per variant and DIR/<case>_sweep.csv.  Unknown "
                    "arguments are PETSc options, as for `flexmbs run`.")
    add_case_arguments(p)
    p.add_argument("--vary", action="append", default=[], metavar="KEY=v1,v2,...",
                   help="case-file key path and its values, e.g. 'drives[0].omega=100,150' "
                   "(repeat for a Cartesian product; replaces the [sweep] vary table)")
    p.add_argument("--outputs", default=None, metavar="EXPR,...",
                   help="table columns, e.g. 't_final,wall_time,max_abs(sensors/*)' "
                   "(default: " + ",".join(outputs.DEFAULT_OUTPUTS) + ")")
    p.add_argument("--force", action="store_true", help="re-run complete variants too")
    p.add_argument("--dry-run", action="store_true", help="list the variants and exit")
    p.set_defaults(func=run)


# -- the sweep as a function -------------------------------------------------------------------
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


@dataclass(frozen=True)
class _Context:
    raw: dict
    case: Path
    out: Path
    outputs: tuple
    overrides: dict
    body_dir: Path
    petsc_args: tuple
    force: bool
    verbose: bool


def sweep(case: str | Path, axes=None, *, out: str | Path | None = None, output_exprs=None,
          overrides: dict | None = None, body_dir: str | Path | None = None,
          petsc_args=(), force: bool = False, comm=None,
          verbose: bool = False) -> SweepResult:
    """Run the sweep of ``case`` over ``axes`` = [(key path, values), ...] (default: its
    ``[sweep] vary`` table) on the ranks of ``comm`` (mpi4py; ``None``: serial).

    ``overrides``: key path -> value applied to every variant (``{"solver.t_end": 0.1}``).
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
    ctx = _Context(raw=raw, case=case.resolve(), out=out_dir, outputs=exprs,
                   overrides=overrides,
                   body_dir=Path(body_dir) if body_dir else folders.body_cache(),
                   petsc_args=tuple(petsc_args),
                   force=force, verbose=verbose)
    stop = {"signal": None}
    t0 = time.perf_counter()
    if size > 1 and _has_meshes(raw):
        distribute.on_root(comm, _warm_cache, ctx, todo[0])

    def one(v):
        start = time.perf_counter()
        try:
            row = run_variant(v, ctx)
        except Exception as exc:                # noqa: BLE001 - e.g. an unwritable DIR
            row = _row(v, "failed", ctx, error=f"{type(exc).__name__}: {exc}", result="")
        if row["status"] == "interrupted":
            stop["signal"] = row.get("_signal", 2)
        if verbose:
            print(f"[rank {rank}/{size}] {v.index + 1}/{len(todo)} {v.stem}: {row['status']}"
                  + (" (replaces the earlier result of other settings)"
                     if row.get("_replaced") else "")
                  + (f" ({time.perf_counter() - start:.2f} s)"
                     if row["status"] != "cached" else "")
                  + (f": {row['error']}" if row.get("error") else ""), file=sys.stderr)
        return row

    with _stop_between_variants(stop):
        rows = distribute.map_tasks(one, todo, comm, stop=lambda: stop["signal"] is not None)
    wall = time.perf_counter() - t0
    keys = [k for k, _ in axes]
    rows = [r if r is not None else _row(v, "not run", ctx, error="sweep interrupted")
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
    """SIGINT/SIGTERM outside a simulation: start no further variant (``flexmbs run``
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


def _warm_cache(ctx: _Context, v) -> None:
    """Preprocess the flexible bodies of the first variant on rank 0 before the others
    start, so that the ranks do not all reduce the same mesh at once (the cache writes
    atomically, so that would only waste time).  Problems are left to the variant."""
    import tempfile

    from flexmbs.case import build, load_case
    try:
        case_raw = variants.variant_case(ctx.raw, ctx.case, v, overrides=ctx.overrides)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{v.stem}.toml"
            path.write_text(dumps(case_raw))
            build(load_case(path), body_dir=ctx.body_dir)
    except Exception:                          # noqa: BLE001 - reported by the variant
        logging.getLogger(__name__).debug("cache warm-up failed", exc_info=True)


# -- one variant --------------------------------------------------------------------------------
def _row(v, status: str, ctx: _Context, **extra) -> dict:
    return {"variant": v.index, **v.value_dict(), "status": status,
            "result": f"{v.stem}.h5", **extra}


def _is_complete(h5: Path, digest: str) -> bool:
    import h5py
    try:
        with h5py.File(h5, "r") as f:
            return f.attrs.get("status") == "complete" and f.attrs.get("sweep_digest") == digest
    except OSError:
        return False


def _run_info(h5: Path) -> dict:
    import h5py
    import numpy as np
    info = {}
    with h5py.File(h5, "r") as f:
        t = f["time"][()] if "time" in f else np.zeros(0)
        info["t_final"] = float(t[-1]) if len(t) else float("nan")
        for k in ("steps", "rejected_steps", "newton_iterations", "wall_time"):
            v = f.attrs.get(f"sweep_{k}")
            info[k] = float("nan") if v is None else (float(v) if k == "wall_time" else int(v))
    return info


@contextlib.contextmanager
def _captured_simulate():
    """Keep the :class:`~flexmbs.simulate.Result` of the ``simulate`` call made inside
    ``flexmbs.cli.run.run`` (it imports ``simulate`` at call time) for its step counts."""
    import importlib
    sim = importlib.import_module("flexmbs.simulate")   # the module (flexmbs.simulate is
    original, box = sim.simulate, {}                     # also the re-exported function)

    def simulate(*args, **kwargs):
        box["result"] = original(*args, **kwargs)
        return box["result"]
    sim.simulate = simulate
    try:
        yield box
    finally:
        sim.simulate = original


@contextlib.contextmanager
def _own_log(stream):
    """Send stdout, stderr and the root logger to ``stream`` (the variant's log)."""
    root = logging.getLogger()
    saved = root.handlers[:]
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.handlers = [handler]
    try:
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            yield
    finally:
        root.handlers = saved


def run_variant(v, ctx: _Context) -> dict:
    """Run one variant through ``flexmbs run`` (skipped if its result file is complete and
    from the same case data); never raises: failures are recorded in the returned row."""
    from flexmbs.cli import run as cli_run
    h5, toml, log = (ctx.out / f"{v.stem}{ext}" for ext in (".h5", ".toml", ".log"))
    try:
        case_raw = variants.variant_case(ctx.raw, ctx.case, v, overrides=ctx.overrides)
    except CaseError as exc:
        return _row(v, "failed", ctx, error=str(exc))
    digest = variants.case_digest(case_raw, [*ctx.petsc_args, *_file_stamps(case_raw)])
    if not ctx.force and _is_complete(h5, digest):
        return _finish(v, "cached", h5, ctx)
    # an earlier result of other settings (or --force) stays until this run completes:
    # only a complete run replaces <stem>.h5 (flexmbs.io.results); the row says so
    replaces = h5.is_file()
    toml.write_text(f"# sweep variant {v.index} of {ctx.case}\n" + dumps(case_raw))
    # no PNG plots (one plots/ folder per DIR) and no XDMF: io.xdmf derives its file names
    # with Path.with_suffix, which cuts a variant name at its last dot (drives[0].omega)
    args = argparse.Namespace(case=str(toml), out=str(ctx.out), t_end=None, dt=None,
                              output_dt=None, body_dir=str(ctx.body_dir), no_xdmf=True,
                              no_plots=True, quiet=True, petsc_args=list(ctx.petsc_args),
                              in_sweep=True)
    t0 = time.perf_counter()
    error, status, code = "", "complete", 0
    with open(log, "w") as stream, _own_log(stream), _captured_simulate() as box:
        try:
            code = cli_run.run(args)
        except KeyboardInterrupt:
            code = 130
        except Exception as exc:            # noqa: BLE001 - any failure is recorded
            status, error = "failed", f"{type(exc).__name__}: {exc}"
            traceback.print_exc(file=stream)
    wall = time.perf_counter() - t0
    if code >= 128:
        row = _row(v, "interrupted", ctx, error=f"interrupted (exit status {code})",
                   wall_time=wall, **_partial(h5))
        row["_signal"] = code - 128
        return row
    if status == "complete" and (code != 0 or not h5.is_file()):
        status, error = "failed", f"flexmbs run returned {code} without a complete result"
    if status != "complete":
        return _row(v, status, ctx, error=error.replace(f"{ctx.out}/", "").replace(
            f"{v.stem}.toml: ", ""), wall_time=wall, **_partial(h5))
    import h5py
    stats = getattr(box.get("result"), "stats", None)
    with h5py.File(h5, "a") as f:
        f.attrs["sweep_digest"] = digest
        f.attrs["sweep_variant"] = str(dict(v.values))
        f.attrs["sweep_wall_time"] = wall
        for k in ("steps", "rejected_steps", "newton_iterations"):
            if getattr(stats, k, None) is not None:
                f.attrs[f"sweep_{k}"] = int(getattr(stats, k))
    row = _finish(v, "complete", h5, ctx)
    row["_replaced"] = replaces
    return row


def _file_stamps(case_raw: dict) -> list[str]:
    """Size and modification time of the mesh and body files a variant reads: editing
    one invalidates the variant's result (hashing big meshes on every re-run would not
    pay; the body cache itself hashes the mesh content)."""
    stamps = []
    for b in case_raw.get("bodies", []):
        for k in ("mesh", "body_file"):
            p = Path(str(b.get(k))) if isinstance(b, dict) and b.get(k) else None
            if p is not None and p.is_file():
                st = p.stat()
                stamps.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
    return stamps


def _partial(h5: Path) -> dict:
    """What a failed, diverged or interrupted run left (its file of that status, see
    :func:`flexmbs.io.results.status_path`): the file and the time reached, or none."""
    from flexmbs.io.results import status_path, steps_in
    for status in ("failed", "diverged", "interrupted", "running"):
        p = Path(status_path(h5, status))
        if p.is_file():
            n, t = steps_in(p)                 # (also a killed run's file)
            return {"result": p.name, **({"t_final": t} if n else {})}
    return {"result": ""}


def _finish(v, status: str, h5: Path, ctx: _Context) -> dict:
    info = _run_info(h5)
    row = _row(v, status, ctx)
    try:
        row.update(outputs.evaluate(ctx.outputs, h5, info))
    except (OSError, KeyError, ValueError) as exc:
        row["error"] = f"outputs: {exc}"
    return row


def _mpi_max():
    from mpi4py import MPI
    return MPI.MAX


# -- command ----------------------------------------------------------------------------------
def _world():
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI.COMM_WORLD


def run(args: argparse.Namespace) -> int:
    comm = _world()
    rank, size = distribute.rank_size(comm)
    axes = [variants.parse_vary(t) for t in args.vary]
    exprs = variants.split_top_level(args.outputs) if args.outputs else None
    overrides = {}
    for opt, key in (("t_end", "solver.t_end"), ("dt", "solver.dt"),
                     ("output_dt", "output.dt")):
        val = getattr(args, opt)
        if val is not None:
            overrides[key] = val
    if args.dry_run:
        raw = read_raw(args.case)
        file_axes, _ = variants.sweep_table(raw, args.case)
        todo = variants.expand(axes or file_axes, variants.case_name(raw, Path(args.case)))
        if rank == 0:
            for v in todo:
                print(f"{v.index:4d}  rank {v.index % size}  {v.stem}")
        return 0
    if rank == 0:
        print(f"flexmbs sweep {args.case} on {size} rank(s)", file=sys.stderr)
    res = sweep(args.case, axes, out=args.out, output_exprs=exprs, overrides=overrides,
                body_dir=args.body_dir, petsc_args=getattr(args, "petsc_args", ()),
                force=args.force, comm=comm, verbose=True)
    if rank == 0:
        print(table.format_table(res.rows, res.keys))
        n, count = len(res.rows), {}
        for r in res.rows:
            count[r["status"]] = count.get(r["status"], 0) + 1
        done = count.get("complete", 0) + count.get("cached", 0)
        bad = [f"{count[k]} {k}" for k in ("failed", "interrupted", "not run") if k in count]
        print(f"{done}/{n} variants complete ({count.get('cached', 0)} from earlier runs"
              + (f", {res.n_replaced} replacing earlier results of other settings"
                 if res.n_replaced else "") + ")"
              + "".join(f", {b}" for b in bad)
              + f"; {size} rank(s), wall time {res.wall_time:.2f} s; table: {res.csv}")
    if res.interrupted:
        return 128 + (res.signal or 2)
    return 1 if res.n_failed else 0
