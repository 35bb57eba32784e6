"""``flexmbs run CASE.toml [--out DIR] [PETSc options...]``: a case from file to results.

The command reads the case and hands it to the case service (:func:`flexmbs.case.run`,
:mod:`flexmbs.case.service`), which locks the output folder (a second run of the case
into the same folder stops with one line, exit status 2), preprocesses the flexible
bodies, reports the inventory and the degrees of freedom, simulates (or runs the
case's ``[analysis]``) into ``DIR/<case>.h5`` and writes the XDMF series and plots.  The
command prints what the service reports (results and summaries on stdout, progress and
problems on stderr) and draws the progress bar (:mod:`flexmbs.cli.progress`).

SIGINT (Ctrl-C) or SIGTERM stops the run after the current output step: the result
file then holds every step computed so far with status "interrupted", and the exit
status is 130 (SIGINT) or 143 (SIGTERM).  A second signal stops at once.  ``--restart
FILE`` continues a run from the last step saved in FILE.  A file that cannot be written
ends the run with exit status 4, the results so far kept (docs/errors.md).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from flexmbs.case.report import summary
from flexmbs.case.service import RunError
from flexmbs.cli.progress import ProgressBar
from flexmbs.errors import EXIT_CODES
from flexmbs.integrate.settings import DEFAULTS

__all__ = ["ProgressBar", "RunError", "add_case_arguments", "add_parser", "run", "summary"]


def add_case_arguments(p) -> None:
    """Arguments shared by ``flexmbs run`` and ``flexmbs sweep``: the case, the output
    folder and the overrides of the case's solver/output settings."""
    p.add_argument("case", help="case file (TOML)")
    p.add_argument("--out", default=None, help="output folder (default: [output] directory "
                   "of the case, else 'results' in the working directory)")
    p.add_argument("--t-end", type=float, default=None, help="override [solver] t_end [s]")
    p.add_argument("--dt", type=float, default=None, help="override [solver] dt [s]")
    p.add_argument("--output-dt", type=float, default=None, help="override [output] dt [s]")
    p.add_argument("--body-dir", default=None, help="cache folder of reduced flexible bodies "
                   "(default: $FLEXMBS_BODY_CACHE, else ~/.cache/flexmbs/bodies)")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="simulate a case file and write results, XDMF and plots",
        description="Simulate CASE.toml: preprocess flexible bodies (cached), check the "
                    "model, integrate with a progress bar, write DIR/<case>.h5, an XDMF "
                    "time series per flexible body and PNG plots.  Unknown arguments are "
                    f"PETSc options, e.g. -{DEFAULTS.options_prefix}pc_factor_mat_solver_type"
                    " mumps.")
    add_case_arguments(p)
    p.add_argument("--no-xdmf", action="store_true", help="skip the XDMF time series")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--restart", default=None, metavar="RESULT.h5",
                   help="continue the run saved in RESULT.h5 (killed, interrupted, failed "
                   "or complete, of this case) from its last saved step to t_end")
    p.set_defaults(func=run)


def _mpi_world() -> tuple[int, int]:
    """``(rank, size)`` of the MPI job this process was started in (from the launcher's
    environment, without initialising MPI), ``(0, 1)`` outside ``mpiexec``."""
    for size_key, rank_key in (("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),
                               ("PMI_SIZE", "PMI_RANK")):
        if os.environ.get(size_key, "").isdigit():
            return int(os.environ.get(rank_key, "0") or 0), int(os.environ[size_key])
    return 0, 1


class _Printer:
    """Prints the service's messages and draws the progress bar between them."""

    def __init__(self, quiet: bool):
        self.quiet, self.bar = quiet, None

    def progress(self, t0: float, t_end: float) -> ProgressBar | None:
        self.bar = None if self.quiet else ProgressBar(t0, t_end)
        return self.bar

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __call__(self, message) -> None:
        self.close()
        print(message.text, file=sys.stderr if message.stderr else sys.stdout)


def run(args: argparse.Namespace) -> int:
    from flexmbs.case import load_case
    from flexmbs.case import run as run_case
    from flexmbs.case.service import Overrides

    rank, size = _mpi_world()
    # started by mpiexec as a plain command (a program that set MPI up itself, e.g. a
    # script handing runs to its ranks, has mpi4py loaded and decides for itself)
    if size > 1 and "mpi4py.MPI" not in sys.modules:
        if rank:
            return EXIT_CODES["user error"]     # rank 0 says why
        raise RunError(f"a run is one process, but this one was started on {size} MPI "
                       f"ranks (mpiexec -n {size}): each would simulate the same case into "
                       f"the same files; run it without mpiexec, or use 'mpiexec -n {size} "
                       f"flexmbs sweep' (variants on the ranks) or 'mpiexec -n {size} "
                       f"flexmbs preprocess' (a big mesh)")
    started = time.perf_counter()
    spec = load_case(args.case)
    printer = _Printer(args.quiet)
    try:
        done = run_case(spec, Overrides(args.t_end, args.dt, args.output_dt), args.out,
                        body_dir=args.body_dir, petsc_args=args.petsc_args,
                        restart=args.restart, xdmf=not args.no_xdmf, plots=not args.no_plots,
                        progress=printer.progress, on_message=printer, label=args.case,
                        started=started)
    finally:
        printer.close()
    return done.report.exit_status
