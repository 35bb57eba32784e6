"""``flexmbs export BODY.h5 -o FOLDER [--matrices mtx|op4]``: a flexible body as the
matrices another code reads (docs/external_bodies.md)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from flexmbs.errors import FlexmbsError


class ExportError(FlexmbsError):
    """Invalid export arguments."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "export", help="write a flexible body's mass, stiffness and modes for other codes",
        description="Write FOLDER/model.toml with the body's node coordinates, mass and "
                    "stiffness matrices (re-assembled from its mesh and material), modes, "
                    "stress modes and interface node sets; 'flexmbs import mtx FOLDER' "
                    "reads it back.")
    p.add_argument("body", help="reduced-body file (.h5) made by flexmbs preprocess")
    p.add_argument("-o", "--output", required=True, help="folder to write (created)")
    p.add_argument("--matrices", choices=["mtx", "op4"], default="mtx",
                   help="M, K, Phi as Matrix Market files or in one Nastran OUTPUT4 file")
    p.set_defaults(func=run)


#: the list of files an export wrote, kept in its folder: a later export may replace them
MARKER = ".flexmbs-export"


def run(args: argparse.Namespace) -> int:
    from flexmbs.io.bodyfile import load_body
    from flexmbs.io.matrix_market import write_model
    from flexmbs.reduction.export import exported_model
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise ExportError(f"-o '{out}': expected a folder, found a file")
    if not out.parent.is_dir():
        raise ExportError(f"-o '{out}': the folder '{out.parent}' does not exist")
    model = exported_model(load_body(args.body), source=args.body)
    tmp = out / f".partial-export-{os.getpid()}"
    try:
        out.mkdir(exist_ok=True)
        names = [p.name for p in write_model(tmp, model, matrices=args.matrices)]
        ours = set(_earlier_export(out))
        foreign = [n for n in names if (out / n).exists() and n not in ours]
        if foreign:
            raise ExportError(
                f"-o '{out}': expected a new folder, an empty one or one of an earlier "
                f"export, found {', '.join(repr(n) for n in foreign)} not written by "
                f"flexmbs export (nothing was replaced)")
        for n in names:                   # each file replaced whole (os.replace)
            os.replace(tmp / n, out / n)
        (out / MARKER).write_text("\n".join(names) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"-o '{out}': cannot write ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"flexmbs export: wrote {len(names)} files to {out}", file=sys.stderr)
    return 0


def _earlier_export(out: Path) -> list[str]:
    """The files an earlier export listed in ``out`` (none without its marker)."""
    try:
        return (out / MARKER).read_text(encoding="utf-8").split()
    except OSError:
        return []
