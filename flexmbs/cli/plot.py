"""``flexmbs plot RESULT.h5 [--out DIR]``: PNG plots of a result file."""
from __future__ import annotations

import argparse
from pathlib import Path

from flexmbs.errors import FlexmbsError


class PlotError(FlexmbsError):
    """A result file that cannot be plotted."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "plot", help="plot sensors, joint coordinates/reactions and energy of a result file",
        description="Write one PNG per sensor and joint and the energy of RESULT.h5 "
                    "(written by flexmbs run, complete or not) into DIR.")
    p.add_argument("result", help="result file (.h5) written by flexmbs run")
    p.add_argument("--out", default=None, help="output folder (default: plots/ next to RESULT)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from flexmbs.io.results import open_result
    from flexmbs.post.plots import plot_results
    path = Path(args.result)
    if not path.is_file():
        raise PlotError(f"{path}: result file not found")
    try:
        with open_result(path) as f:          # also the .running.h5 of a killed run
            fmt, status = f.attrs.get("format"), f.attrs.get("status", "?")
    except OSError as exc:
        raise PlotError(f"{path}: not a readable HDF5 file ({exc})") from None
    if fmt != "flexmbs-result":
        raise PlotError(f"{path}: expected a flexmbs result file (format 'flexmbs-result'), "
                        f"got format {fmt!r}")
    out = Path(args.out) if args.out else path.parent / "plots"
    from flexmbs.io.paths import writable_dir
    writable_dir(out, "--out")
    pngs = plot_results(path, out)
    print(f"{len(pngs)} PNG files in {out} (run status: {status})")
    return 0
