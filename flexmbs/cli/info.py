"""``flexmbs info BODY.h5``: summary of a reduced-body file."""
from __future__ import annotations

import argparse

import numpy as np

from flexmbs.io.bodyfile import ReducedBody, load_body


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("info", help="summarise a reduced-body file",
                              description="Print mass, centre of mass, inertia, frequencies "
                                          "and interfaces of a reduced-body HDF5 file.")
    p.add_argument("body", help="reduced-body file (.h5) written by flexmbs preprocess")
    p.set_defaults(func=run)


def summary(body: ReducedBody) -> str:
    """Human-readable summary (SI units) of ``body``."""
    c = body.s0 / body.m
    I_c = body.I0 - body.m * (c @ c * np.eye(3) - np.outer(c, c))  # parallel-axis theorem
    lines = [f"body '{body.name}': {body.cell_type} mesh, {len(body.points)} nodes, "
             f"{len(body.cells)} cells",
             f"  material          {body.material.get('name', '')} E={body.material['E']:.4g} Pa "
             f"nu={body.material['nu']:.4g} rho={body.material['rho']:.6g} kg/m^3",
             f"  reduction         {body.method}, frame {body.frame}, n_q = {body.n_q}"
             + (", geometric stiffening K2/K3" if body.has_stiffening else ""),
             f"  mass [kg]         {body.m:.6g}",
             f"  centre of mass [m] {np.array2string(c, precision=6, suppress_small=True)}",
             "  inertia about the centre of mass [kg m^2]:"]
    lines += ["      " + np.array2string(row, precision=6, suppress_small=True,
                                         floatmode="maxprec") for row in I_c]
    f = body.frequencies
    lines.append("  frequencies [Hz]:")
    for i in range(0, len(f), 6):
        lines.append("      " + "  ".join(f"{x:10.4f}" for x in f[i:i + 6]))
    for mk in body.markers:
        lines.append(f"  marker '{mk.name}' ({mk.kind}, {len(mk.nodes)} nodes) at R = "
                     f"{np.array2string(mk.R, precision=6, suppress_small=True)} m"
                     + (", residual stress modes" if mk.stress_residual is not None else ""))
    if body.faces:
        lines.append("  faces: " + ", ".join(fc.name for fc in body.faces))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    print(summary(load_body(args.body)))
    return 0
