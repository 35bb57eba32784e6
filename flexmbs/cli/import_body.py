"""``flexmbs import FORMAT PATH... -o BODY.h5``: another code's matrices -> reduced body.

Formats (docs/external_bodies.md): ``mtx`` (a folder with ``model.toml`` and Matrix
Market files, or with Nastran OP4 matrices named in it) and ``abaqus`` (the input file
and its ``*MATRIX GENERATE`` mass and stiffness ``.mtx`` files).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from flexmbs.errors import CaseError, FlexmbsError

FORMATS = {"mtx": 1, "abaqus": 3}


class ImportBodyError(FlexmbsError):
    """Invalid import arguments."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "import", help="make a flexible-body file from another FE code's matrices",
        description="Build BODY.h5 from an FE model exported by another code: node "
                    "coordinates, mass and stiffness matrices, interface node sets and "
                    "optionally the recovery modes (see docs/external_bodies.md).")
    p.add_argument("format", choices=sorted(FORMATS),
                   help="mtx: FOLDER with model.toml (Matrix Market / OP4 matrices); "
                        "abaqus: MODEL.inp MASS.mtx STIFFNESS.mtx (*MATRIX GENERATE)")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--modes", type=int, default=None,
                   help="number of modes flexmbs computes when the import has no "
                        "recovery modes Phi")
    p.add_argument("--interface", action="append", default=[], metavar="NAME[:rbe2|rbe3]",
                   help="node set to turn into an interface marker (abaqus; the mtx "
                        "manifest lists its own)")
    p.add_argument("--frame", default=None,
                   help="mean_axis or interface:NAME (default: the model's, else the "
                        "first interface, else mean_axis)")
    p.add_argument("--material", default=None,
                   help="named material or E,nu,rho (SI): stored in the body and used for "
                        "the stress modes when the import has cells but none (default: "
                        "the model's [material])")
    p.add_argument("--damping", type=float, default=0.0, help="modal damping ratio zeta")
    p.add_argument("--name", default=None, help="body name (default: the model's)")
    p.add_argument("-o", "--output", required=True, help="reduced-body file to write (.h5)")
    p.set_defaults(func=run)


def read_external(fmt: str, paths: list[str], interfaces: list[str], name: str | None):
    """The :class:`flexmbs.io.external.ExternalModel` of the command's inputs."""
    from flexmbs.reduction import InterfaceSpec
    if len(paths) != FORMATS[fmt]:
        what = ("FOLDER (or its model.toml)" if fmt == "mtx"
                else "MODEL.inp MASS.mtx STIFFNESS.mtx")
        raise ImportBodyError(f"import {fmt}: expected {what}, got {len(paths)} path(s) "
                              f"{paths}")
    if fmt == "mtx":
        if interfaces:
            raise ImportBodyError("import mtx: --interface is not used; the interfaces are "
                                  "the [interfaces] tables of model.toml")
        from flexmbs.io.matrix_market import read_model
        return read_model(paths[0])
    from flexmbs.io.abaqus_mtx import read_abaqus
    try:
        specs = tuple(InterfaceSpec.parse(s) for s in interfaces)
    except ValueError as exc:
        raise ImportBodyError(f"--interface: {exc}") from None
    return read_abaqus(*paths, interfaces=specs, name=name)


def run(args: argparse.Namespace) -> int:
    from flexmbs.cli.info import summary
    from flexmbs.cli.preprocess import parse_material
    from flexmbs.io.bodyfile import save_body
    from flexmbs.io.paths import writable_file
    from flexmbs.reduction.external import external_body
    try:
        writable_file(args.output, "-o", not_same_as=_inputs(args.paths))
    except CaseError as exc:
        raise ImportBodyError(str(exc)) from None
    if args.modes is not None and args.modes < 1:
        raise ImportBodyError(f"--modes: expected at least 1, got {args.modes}")
    if not 0.0 <= args.damping < 1.0:
        raise ImportBodyError(f"--damping: expected a ratio in [0, 1), got {args.damping}")
    material = None if args.material is None else parse_material(args.material)
    model = read_external(args.format, args.paths, args.interface, args.name)
    try:
        body = external_body(model, n_modes=args.modes, frame=args.frame,
                             damping=args.damping, material=material,
                             provenance={"command": " ".join(sys.argv)})
    except ValueError as exc:
        raise ImportBodyError(f"import {args.paths[0]} failed: {exc}") from None
    if args.name:
        import dataclasses
        body = dataclasses.replace(body, name=args.name)
    try:
        save_body(args.output, body)
    except OSError as exc:
        raise ImportBodyError(f"-o '{args.output}': cannot write the body file "
                              f"({exc.strerror or exc})") from None
    print(f"flexmbs import {args.format}: wrote {Path(args.output)}", file=sys.stderr)
    print(summary(body))
    return 0


def _inputs(paths: list[str]) -> tuple[Path, ...]:
    """The files an import reads: the paths given and, for a folder, every file in it
    (the manifest and the matrices it names), which ``-o`` must not replace."""
    out = []
    for p in map(Path, paths):
        out.append(p)
        if p.is_dir():
            out += [f for f in p.rglob("*") if f.is_file()]
        elif p.name == "model.toml":
            out += [f for f in p.parent.rglob("*") if f.is_file()]
    return tuple(out)
