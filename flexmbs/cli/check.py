"""``flexmbs check CASE.toml``: validate a case, assemble it and report, without simulating.

Prints the model inventory, the degrees of freedom (Grübler count and the rank test of
the constraint Jacobian), the redundant constraint rows and the initial assembly (how
far the positions and velocities had to move to satisfy the constraints).  Flexible
bodies given by a mesh are preprocessed (and cached) if needed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from flexmbs.case.report import dof_text, inventory, preprocess_line
from flexmbs.integrate.settings import DEFAULTS


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "check", help="validate a case file and report DOF and initial assembly",
        description="Validate CASE.toml, build and assemble the model, print the degrees "
                    "of freedom, redundant constraints and the initial assembly; no "
                    "simulation.  Exit status 0 if the case is valid, 2 otherwise.")
    p.add_argument("case", help="case file (TOML)")
    p.add_argument("--body-dir", default=None, help="cache folder of reduced flexible bodies "
                   "(default: $FLEXMBS_BODY_CACHE, else ~/.cache/flexmbs/bodies)")
    p.set_defaults(func=run)


def preprocess_printer(msg: str, seconds: float) -> None:
    print(preprocess_line(msg, seconds), file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from flexmbs.case import build, load_case
    from flexmbs.errors import CaseError, ConvergenceError, ModelError
    from flexmbs.io.paths import writable_dir
    from flexmbs.simulate import prepare
    if args.body_dir is not None:
        # a file or device is an error now; writability is tested before preprocessing
        writable_dir(args.body_dir, "--body-dir", test_write=False)
    spec = load_case(args.case)
    print(f"flexmbs check {args.case}: case file valid", file=sys.stderr)
    built = build(spec, body_dir=Path(args.body_dir) if args.body_dir else None,
                  progress=preprocess_printer)
    print(inventory(built))
    from flexmbs.case.post_items import hotspots
    for h in hotspots(spec, built):              # an unknown node set is reported here
        print(f"  hot spot {h.name:<13s} {len(h.nodes)} node(s) of '{h.body}'"
              + (", S-N curve" if h.sn_curve else ""))
    try:
        prepared = prepare(built.system, spec.solver.get("t0", DEFAULTS.t0))
    except ConvergenceError as exc:
        raise CaseError(f"{spec.path}: initial assembly failed: {exc} (check the initial "
                        "positions of the bodies against the joints)") from None
    except ModelError as exc:
        raise CaseError(f"{spec.path}: {exc}") from None
    print(dof_text(prepared.dof, prepared.moved))
    if built.system.formulation != "absolute":
        print(f"formulation: {built.system.formulation} (joint coordinates of the tree, "
              "docs/relative.md)")
    sv = spec.solver
    if spec.analysis is None:
        print(f"solver: {sv['integrator']}, t = {sv['t0']:g} .. {sv['t_end']:g} s, "
              f"dt = {sv['dt']:g} s ({int(round((sv['t_end'] - sv['t0']) / sv['dt']))} steps), "
              f"rho_inf = {sv['rho_inf']:g}" + (", adaptive" if sv["adaptive"] else ""))
    else:
        print(f"analysis: {spec.analysis['type']} about the {spec.analysis['state']} state")
    print("ok")
    return 0
