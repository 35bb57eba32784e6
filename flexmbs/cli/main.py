"""flexmbs command-line entry point: ``flexmbs <command> ...``.

Each command lives in its own module ``flexmbs.cli.<command>`` with two functions:
``add_parser(subparsers)`` and ``run(args) -> int``.  Errors derived from
:class:`flexmbs.errors.FlexmbsError` are printed as one line with the exit status of
:data:`flexmbs.errors.EXIT_CODES`: 2 for a mistake in the input or the model, 3 for a run
the solver could not finish (no convergence, a singular configuration), 5 for a run that
diverged (docs/solver.md).
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

from flexmbs.errors import EXIT_CODES, ConvergenceError, DivergenceError, FlexmbsError

COMMANDS = ("preprocess", "info", "run", "check", "plot", "sweep")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flexmbs", description="Flexible-body multibody solver (SI units throughout).")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"flexmbs.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"flexmbs.cli.{name}":
                raise
            continue
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # PETSc options (anything after a lone "--petsc" or starting with "-ksp_", "-pc_", ...)
    # are handled by the commands that solve; see flexmbs.integrate.petsc_options.
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    args.petsc_args = extra
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except DivergenceError as exc:
        print(f"flexmbs {args.command}: diverged: {exc}", file=sys.stderr)
        return EXIT_CODES["diverged"]
    except ConvergenceError as exc:
        print(f"flexmbs {args.command}: failed: {exc}", file=sys.stderr)
        return EXIT_CODES["failed"]
    except FlexmbsError as exc:
        print(f"flexmbs {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_CODES["user error"]
    except KeyboardInterrupt:
        print(f"flexmbs {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
