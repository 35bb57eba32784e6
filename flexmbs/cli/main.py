"""flexmbs command-line entry point: ``flexmbs <command> ...``.

Each command lives in its own module ``flexmbs.cli.<command>`` with two functions:
``add_parser(subparsers)`` and ``run(args) -> int``.  Errors derived from
:class:`flexmbs.errors.FlexmbsError` are printed as one line with the exit status of
:data:`flexmbs.errors.EXIT_CODES`: 2 for a mistake in the input or the model, 3 for a run
the solver could not finish (no convergence, a singular configuration), 4 for a file that
could not be written (disk full, I/O error, no permission), 5 for a run that diverged
(docs/solver.md, docs/errors.md).
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

from flexmbs.errors import (
    EXIT_CODES, ConvergenceError, DivergenceError, FlexmbsError, OutputError,
)
from flexmbs.integrate.settings import DEFAULTS

COMMANDS = ("preprocess", "import", "export", "info", "run", "check", "plot", "sweep")
#: commands whose module is not named like the command (``import`` is a Python keyword)
MODULES = {"import": "import_body"}
#: commands whose unknown single-dash arguments are PETSc options
PETSC_COMMANDS = ("preprocess", "run", "sweep")


def version() -> str:
    """The installed version of flexmbs (package metadata, else ``flexmbs._version``)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version
    try:
        return dist_version("flexmbs")
    except PackageNotFoundError:
        from flexmbs._version import __version__
        return __version__


class _Version(argparse.Action):
    """``--version``: print ``flexmbs X.Y.Z`` and exit 0 (imports nothing heavy)."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"flexmbs {version()}")
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """An argument parser that remembers the ``--long`` options added to it
    (``long_options``) and its sub-command parsers (``commands``: name -> parser)."""

    def __init__(self, *args, **kwargs):
        self.long_options: list[str] = []
        self.commands: dict[str, _Parser] = {}
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        self.long_options += [o for o in action.option_strings if o.startswith("--")]
        return action

    def add_subparsers(self, **kwargs):
        action = super().add_subparsers(parser_class=_Parser, **kwargs)
        self.commands = action.choices
        return action


def _parser() -> _Parser:
    parser = _Parser(
        prog="flexmbs", description="Flexible-body multibody solver (SI units throughout).")
    parser.add_argument("--version", action=_Version)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"flexmbs.cli.{MODULES.get(name, name)}")
        except ModuleNotFoundError as exc:
            if exc.name != f"flexmbs.cli.{MODULES.get(name, name)}":
                raise
            continue
        module.add_parser(sub)
    return parser


def _option_strings(parser: _Parser, command: str) -> list[str]:
    """The ``--long`` options of ``flexmbs`` and of its ``command``."""
    names = list(parser.long_options)
    if command in parser.commands:
        names += parser.commands[command].long_options
    return names


def _check_extra(parser: _Parser, command: str, extra: list[str]) -> str:
    """'' if the arguments argparse did not know are acceptable, else the error message.

    For ``preprocess``, ``run`` and ``sweep`` they are PETSc options (one dash:
    ``-fmbs_pc_type lu``), whose type names are checked here, before any work; a
    ``--long`` argument is a typo of an option of the command.  Other commands take none.
    """
    import difflib
    if not extra:
        return ""
    bad = [a for a in extra if a.startswith("--") and a != "--"]
    if bad:
        known = _option_strings(parser, command)
        hints = []
        for a in bad:
            close = difflib.get_close_matches(a.split("=", 1)[0].replace("_", "-"), known,
                                              n=1, cutoff=0.6)
            if close:
                hints.append(f"did you mean '{close[0]}' for '{a}'?")
        petsc = (f", or PETSc options with one dash (e.g. -{DEFAULTS.options_prefix}pc_type lu)"
                 if command in PETSC_COMMANDS else "")
        return (f"unknown option(s) {bad}: expected the options of 'flexmbs {command} -h'"
                f"{petsc}" + (" (" + " ".join(hints) + ")" if hints else ""))
    if command not in PETSC_COMMANDS:
        return (f"unexpected argument(s) {extra}: 'flexmbs {command}' takes no PETSc "
                f"options (see 'flexmbs {command} -h')")
    from flexmbs.integrate.options import parse_petsc_args
    try:
        parsed = parse_petsc_args(extra)
    except ValueError as exc:
        return f"PETSc options: {exc}"
    return unprefixed_solver_option(command, parsed)


#: the option prefixes of flexmbs's PETSc solvers: the time integrator's (and static
#: solver's) ``fmbs_``, preprocessing's ``flexmbs_eps_``, ``flexmbs_factor_``, ...
SOLVER_PREFIXES = (DEFAULTS.options_prefix, "flexmbs_")
#: PETSc/SLEPc object classes: an option starting with one of them and ``_`` sets a
#: solver object's option and reaches no flexmbs solver without one of the prefixes
#: (global options such as ``-log_view`` or ``-malloc_debug`` do not start so)
SOLVER_CLASSES = ("snes", "ksp", "pc", "ts", "eps", "st", "svd", "tao")
#: ``(command, option class) -> prefix`` of the solver that reads such options (the
#: time integrator's otherwise): preprocessing's eigensolver and its factorisation
PREFIX_OF = {("preprocess", "eps"): "flexmbs_eps_", ("preprocess", "st"): "flexmbs_eps_",
             ("preprocess", "ksp"): "flexmbs_factor_", ("preprocess", "pc"): "flexmbs_factor_"}


def unprefixed_solver_option(command: str, parsed: dict) -> str:
    """'' unless a PETSc option names a solver object's option without the prefix of
    flexmbs's solvers (``-snes_monitor`` for ``-fmbs_snes_monitor``): PETSc would keep it
    unused, silently."""
    for key in parsed:
        if key.startswith(SOLVER_PREFIXES) or key.split("_", 1)[0] not in SOLVER_CLASSES:
            continue
        kind = key.split("_", 1)[0]
        prefix = PREFIX_OF.get((command, kind))
        if prefix is None and command != "preprocess" and kind in ("snes", "ksp", "pc", "ts"):
            prefix = DEFAULTS.options_prefix
        hint = f" (did you mean -{prefix}{key}?)" if prefix else \
            f" ('flexmbs {command}' has no {kind.upper()} solver of its own)"
        return (f"PETSc option -{key}: expected a solver option with the prefix of "
                f"flexmbs's solvers (-{DEFAULTS.options_prefix}... for the time "
                f"integrator, -flexmbs_eps_... and -flexmbs_factor_... for "
                f"preprocessing), got none; without it PETSc ignores the option{hint}")
    return ""


def main(argv: list[str] | None = None) -> int:
    # Arguments argparse does not know are PETSc options of the commands that solve
    # (single dash, checked by _check_extra, handled by flexmbs.integrate.options).
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    args.petsc_args = extra
    from flexmbs.compiled import KERNELS_PROBLEM
    problem = KERNELS_PROBLEM or _check_extra(parser, args.command, extra)
    if problem:
        print(f"flexmbs {args.command}: error: {problem}", file=sys.stderr)
        return EXIT_CODES["user error"]
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except (FlexmbsError, KeyboardInterrupt) as exc:
        kind, code = _outcome(exc)
        print(f"flexmbs {args.command}: {kind}{': ' if str(exc) else ''}{exc}",
              file=sys.stderr)
        _end_every_rank(exc, code)
        return code
    except Exception as exc:
        _end_every_rank(exc, 1, f"flexmbs {args.command}: internal error: "
                                f"{type(exc).__name__}: {exc}")
        raise


def _outcome(exc: BaseException) -> tuple[str, int]:
    """The word and the exit status of an error (:data:`flexmbs.errors.EXIT_CODES`)."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", 130
    for cls, kind, key in ((DivergenceError, "diverged", "diverged"),
                           (ConvergenceError, "failed", "failed"),
                           (OutputError, "io error", "io error")):
        if isinstance(exc, cls):
            return kind, EXIT_CODES[key]
    return "error", EXIT_CODES["user error"]


def _end_every_rank(exc: BaseException, code: int, message: str = "") -> None:
    """Under MPI (more than one rank), an error raised on this rank alone would leave the
    others waiting in their next collective call forever: end them all (``MPI_Abort``)
    with the message.  Errors every rank raised together (``collective``, see
    :func:`flexmbs.parallel.distribute.on_root`) end normally."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or getattr(exc, "collective", False):
        return
    world = mpi.COMM_WORLD
    if world.Get_size() <= 1:
        return
    if message:
        print(message, file=sys.stderr)
    print(f"flexmbs: the error above on rank {world.Get_rank()} ends all "
          f"{world.Get_size()} ranks", file=sys.stderr)
    sys.stderr.flush()
    world.Abort(code)


if __name__ == "__main__":
    sys.exit(main())
