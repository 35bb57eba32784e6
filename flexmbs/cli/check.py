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

import numpy as np


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
    print(f"  preprocess {msg:<55s} {seconds:7.2f} s", file=sys.stderr, flush=True)


def initial_report(system, t0: float):
    """Assemble ``system`` and run the initial-state checks; returns
    ``(asm, DofReport, ConsistentState, (max |dq|, max |dqd|))``."""
    from flexmbs.integrate.consistent import (
        consistent_initial_conditions, consistent_positions,
    )
    from flexmbs.system import dof
    asm = system.assemble()
    q_guess, qd_guess = asm.initial_q(), asm.initial_qd()
    q_pos, _ = consistent_positions(asm, q_guess, t0)
    report = dof.analyse(asm, q_pos, t0)
    init = consistent_initial_conditions(asm, q_pos, qd_guess, t0)
    from flexmbs.errors import ModelError
    from flexmbs.system import health
    bad = health.inconsistent_rows(asm, init.q, init.qd, t0)
    if bad:
        raise ModelError([f"{system.name}: inconsistent constraints: {b}" for b in bad])
    return asm, report, init, (float(np.abs(init.q - q_guess).max(initial=0.0)),
                               float(np.abs(init.qd - qd_guess).max(initial=0.0)))


def inventory(built) -> str:
    s = built.system
    lines = [f"model '{s.name}': {len(s.bodies)} bodies, {len(s.joints)} joints, "
             f"{len(s.drives)} drives, {len(s.forces)} force elements, {len(s.sensors)} sensors"]
    for b in s.bodies:
        kind = type(b).__name__
        extra = f", n_q = {b.n_q}" if hasattr(b, "n_q") else ""
        lines.append(f"  body   {b.name:<16s} {kind}, m = {b.m:.6g} kg{extra}")
    for j in s.joints:
        lines.append(f"  joint  {j.name:<16s} {type(j).__name__}, {len(j.labels)} equations")
    for d in s.drives:
        lines.append(f"  drive  {d.name:<16s} {type(d).__name__} on '{d.joint}'")
    for name, (path, how) in built.body_files.items():
        lines.append(f"  body file of '{name}': {path} ({how})")
    return "\n".join(lines)


def dof_text(report, moved: tuple[float, float]) -> str:
    lines = [report.summary()]
    lines.append(f"initial assembly: positions moved by at most {moved[0]:.3g}, "
                 f"velocities by at most {moved[1]:.3g} (SI units) to satisfy the constraints")
    if report.mobility <= 0:
        lines.append("note: the model has no degree of freedom left (fully driven or locked)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from flexmbs.case import build, load_case
    from flexmbs.errors import CaseError, ConvergenceError, ModelError
    from flexmbs.io.paths import writable_dir
    if args.body_dir is not None:
        # a file or device is an error now; writability is tested before preprocessing
        writable_dir(args.body_dir, "--body-dir", test_write=False)
    spec = load_case(args.case)
    print(f"flexmbs check {args.case}: case file valid", file=sys.stderr)
    built = build(spec, body_dir=Path(args.body_dir) if args.body_dir else None,
                  progress=preprocess_printer)
    print(inventory(built))
    try:
        _, report, _, moved = initial_report(built.system, spec.solver.get("t0", 0.0))
    except ConvergenceError as exc:
        raise CaseError(f"{spec.path}: initial assembly failed: {exc} (check the initial "
                        "positions of the bodies against the joints)") from None
    except ModelError as exc:
        raise CaseError(f"{spec.path}: {exc}") from None
    print(dof_text(report, moved))
    sv = spec.solver
    if spec.analysis is None:
        print(f"solver: {sv['integrator']}, t = {sv['t0']:g} .. {sv['t_end']:g} s, "
              f"dt = {sv['dt']:g} s ({int(round((sv['t_end'] - sv['t0']) / sv['dt']))} steps), "
              f"rho_inf = {sv['rho_inf']:g}" + (", adaptive" if sv["adaptive"] else ""))
    else:
        print(f"analysis: {spec.analysis['type']} about the {spec.analysis['state']} state")
    print("ok")
    return 0
