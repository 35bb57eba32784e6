"""``[mpiexec -n N] flexmbs sweep CASE.toml --vary KEY=v1,v2,... [--vary ...] [--out DIR]``.

A parameter sweep (:mod:`flexmbs.parallel.sweep`): the Cartesian product of the
``--vary`` axes (or of the case file's ``[sweep] vary`` table), one run per variant,
spread over the MPI ranks.  Per variant, in ``DIR``:

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
import sys

from flexmbs.cli.run import add_case_arguments
from flexmbs.parallel import distribute, outputs, table, variants
from flexmbs.parallel.sweep import SweepResult, plan, sweep

__all__ = ["SweepResult", "add_parser", "run", "sweep"]


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


def _world():
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI.COMM_WORLD


def _tally(res: SweepResult, size: int) -> str:
    """The last line: how many variants completed, failed, were interrupted."""
    n, count = len(res.rows), {}
    for r in res.rows:
        count[r["status"]] = count.get(r["status"], 0) + 1
    done = count.get("complete", 0) + count.get("cached", 0)
    bad = [f"{count[k]} {k}" for k in ("failed", "interrupted", "not run") if k in count]
    return (f"{done}/{n} variants complete ({count.get('cached', 0)} from earlier runs"
            + (f", {res.n_replaced} replacing earlier results of other settings"
               if res.n_replaced else "") + ")"
            + "".join(f", {b}" for b in bad)
            + f"; {size} rank(s), wall time {res.wall_time:.2f} s; table: {res.csv}")


def run(args: argparse.Namespace) -> int:
    comm = _world()
    rank, size = distribute.rank_size(comm)
    axes = [variants.parse_vary(t) for t in args.vary]
    exprs = variants.split_top_level(args.outputs) if args.outputs else None
    overrides = {key: getattr(args, opt) for opt, key in
                 (("t_end", "solver.t_end"), ("dt", "solver.dt"), ("output_dt", "output.dt"))
                 if getattr(args, opt) is not None}
    if args.dry_run:
        todo = plan(args.case, axes)
        if rank == 0:
            for v in todo:
                print(f"{v.index:4d}  rank {v.index % size}  {v.stem}")
        return 0
    if rank == 0:
        print(f"flexmbs sweep {args.case} on {size} rank(s)", file=sys.stderr)
    res = sweep(args.case, axes, out=args.out, output_exprs=exprs, overrides=overrides,
                body_dir=args.body_dir, petsc_args=getattr(args, "petsc_args", ()),
                force=args.force, comm=comm,
                on_variant=lambda line: print(line, file=sys.stderr))
    if rank == 0:
        print(table.format_table(res.rows, res.keys))
        print(_tally(res, size))
    if res.interrupted:
        return 128 + (res.signal or 2)
    return 1 if res.n_failed else 0
