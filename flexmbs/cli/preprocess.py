"""``flexmbs preprocess MESH ... -o BODY.h5``: mesh -> FE model -> reduced-body file."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from flexmbs.errors import BodyFileError, FlexmbsError


class PreprocessError(FlexmbsError):
    """Invalid preprocess arguments."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "preprocess", help="reduce a solid mesh to a flexible-body file",
        description="Assemble the FE model of MESH, reduce it (free-free or Craig-Bampton "
                    "modes), compute the floating-frame invariants and write BODY.h5.")
    p.add_argument("mesh", help="solid mesh (gmsh .msh, .vtu, Abaqus .inp)")
    p.add_argument("--material", default=None,
                   help="named material (steel, aluminium, ...) or E,nu,rho in SI units; "
                        "optional for an Abaqus .inp that defines its *MATERIAL (then it "
                        "must agree with it)")
    p.add_argument("--mass", choices=["consistent", "lumped"], default="consistent",
                   help="mass matrix: consistent, or lumped by row sums (first-order "
                        "elements, as Abaqus/Standard)")
    p.add_argument("--modes", type=int, required=True,
                   help="number of free-free (no interfaces) or fixed-interface modes")
    p.add_argument("--interface", action="append", default=[], metavar="NAME[:rbe2|rbe3]",
                   help="node set of the mesh to turn into an interface marker (repeatable)")
    p.add_argument("--frame", default="mean_axis",
                   help="reference-frame condition: mean_axis or interface:NAME")
    p.add_argument("--static-modes", choices=["inertial"], default=None,
                   help="add the inertial static modes (needed for geometric stiffening)")
    p.add_argument("--damping", type=float, default=0.0, help="modal damping ratio zeta")
    p.add_argument("--unit", choices=["m", "mm"], default="m", help="length unit of MESH")
    p.add_argument("--eigensolver", choices=["auto", "scipy", "slepc", "slepc-amg", "lobpcg"],
                   default="auto")
    p.add_argument("--modal-derivatives", type=int, default=0, metavar="N",
                   help="add the static modal derivatives of the lowest N basis vectors")
    p.add_argument("--derivative-axis", choices=["x", "y", "z"], default=None,
                   help="take the N vectors that move mainly along this axis")
    p.add_argument("--method", choices=["auto", "free_free"], default="auto",
                   help="free_free: free-free modes also with interfaces (rbe3 markers on the "
                        "free body, mean_axis frame)")
    p.add_argument("--residual-flexibility", action="store_true",
                   help="store the residual stress modes of every interface (static "
                        "correction of the stresses near loaded interfaces)")
    p.add_argument("--no-stiffening", action="store_true",
                   help="skip the geometric-stiffening tensors K2, K3")
    p.add_argument("-o", "--output", required=True, help="reduced-body file to write (.h5)")
    p.set_defaults(func=run)


def parse_material(text: str):
    from flexmbs.fe.material import Material, material_from_name
    if "," in text:
        try:
            E, nu, rho = (float(v) for v in text.split(","))
        except ValueError:
            raise PreprocessError(f"--material: expected NAME or E,nu,rho, got {text!r}") from None
        if not all(np.isfinite(x) and abs(x) <= 1e30 for x in (E, nu, rho)):
            raise PreprocessError(f"--material: expected finite E [Pa], nu, rho [kg/m^3] of "
                                  f"magnitude at most 1e30, got {text!r}")
        try:
            return Material(E=E, nu=nu, rho=rho, name="custom")
        except ValueError as exc:
            raise PreprocessError(f"--material: {exc}") from None
    try:
        return material_from_name(text)
    except ValueError as exc:
        raise PreprocessError(f"--material: {exc}") from None


def world():
    """PETSc's ``COMM_WORLD`` when started by ``mpiexec``/``srun`` with more than one
    rank, else None (serial)."""
    try:
        from petsc4py import PETSc
    except ImportError:
        return None
    return PETSc.COMM_WORLD if PETSc.COMM_WORLD.getSize() > 1 else None


def run(args: argparse.Namespace) -> int:
    comm = world()
    if comm is None:
        return _run(args, None)
    try:
        return _run(args, comm)
    except Exception as exc:     # one rank failing must not leave the others waiting
        msg = str(exc) if isinstance(exc, FlexmbsError) else f"{type(exc).__name__}: {exc}"
        print(f"flexmbs preprocess (rank {comm.getRank()} of {comm.getSize()}): error: "
              f"{msg}", file=sys.stderr, flush=True)
        comm.tompi4py().Abort(2)
        return 2


def _petsc_options(extra: list[str]) -> dict[str, str | None]:
    """Arguments argparse did not know go to the PETSc options database (``-flexmbs_eps_
    monitor``, ``-flexmbs_eps_st_mat_mumps_icntl_14 50``; ``flexmbs.cli.main`` has
    already refused ``--long`` typos and unknown PETSc types)."""
    if not extra:
        return {}
    from flexmbs.integrate.options import petsc_options_from_args
    try:
        return petsc_options_from_args(extra)
    except ValueError as exc:
        raise PreprocessError(f"PETSc options: {exc}") from None


def _check_output(args: argparse.Namespace) -> None:
    """``-o`` must be a new or writable file in an existing folder, not the input mesh."""
    from flexmbs.errors import CaseError
    from flexmbs.io.paths import writable_file
    try:
        writable_file(args.output, "-o", not_same_as=(args.mesh,))
    except CaseError as exc:
        raise PreprocessError(str(exc)) from None
    if Path(args.output).suffix.lower() in (".msh", ".inp", ".vtu", ".vtk", ".toml"):
        raise PreprocessError(f"-o '{args.output}': expected a reduced-body file name "
                              f"(.h5), got the extension of a mesh or case file "
                              f"'{Path(args.output).suffix}'")


def _check_numbers(args: argparse.Namespace) -> None:
    if args.modes < 1:
        raise PreprocessError(f"--modes: expected at least 1, got {args.modes}")
    if not 0.0 <= args.damping < 1.0:
        raise PreprocessError(f"--damping: expected a modal damping ratio in [0, 1), got "
                              f"{args.damping}")
    if args.modal_derivatives < 0:
        raise PreprocessError(f"--modal-derivatives: expected 0 or more, got "
                              f"{args.modal_derivatives}")


def _check_frame(settings) -> None:
    names = [i.name for i in settings.interfaces]
    if settings.frame == "mean_axis":
        return
    name = settings.frame.partition(":")[2] if settings.frame.startswith("interface:") else None
    if name is None or name not in names:
        raise PreprocessError(f"--frame: expected mean_axis or interface:NAME with NAME one of "
                              f"the --interface names {names}, got {settings.frame!r}")


def _sizes(fe, settings, material, mesh, unit: str) -> None:
    """Warn about an implausible mesh unit; check and print the size of the reduction."""
    from flexmbs.io.mesh import unit_warning
    from flexmbs.reduction.budget import check_budget
    try:
        mass = float(material.rho * fe.basis.dx.sum())
    except (AttributeError, TypeError, ValueError):
        mass = None
    warning = unit_warning(mesh.points, unit, mass, source=mesh.source, hint="--unit {unit}")
    if warning:
        print(f"flexmbs preprocess: warning: {warning}", file=sys.stderr, flush=True)
    try:
        b = check_budget(fe, settings, keys={"modes": "--modes",
                                             "modal_derivatives": "--modal-derivatives"})
    except ValueError as exc:
        raise PreprocessError(str(exc)) from None
    if b.large:
        print(f"  reducing: {b.text()}; the eigen solve may take a while",
              file=sys.stderr, flush=True)


def _run(args: argparse.Namespace, comm) -> int:
    from flexmbs.reduction import InterfaceSpec, ReductionSettings
    from flexmbs.reduction.petsc_options import UnreadOptions

    root = comm is None or comm.getRank() == 0

    def step(msg: str, t: float) -> None:
        if root:
            print(f"  {msg:<45s} {t:8.2f} s", file=sys.stderr, flush=True)

    _check_numbers(args)
    try:
        settings = ReductionSettings(
            n_modes=args.modes,
            interfaces=tuple(InterfaceSpec.parse(s) for s in args.interface),
            frame=args.frame, static_modes=args.static_modes == "inertial",
            modal_derivatives=args.modal_derivatives,
            derivative_axis=(None if args.derivative_axis is None
                             else "xyz".index(args.derivative_axis)),
            damping=args.damping, eigensolver=args.eigensolver,
            stiffening=not args.no_stiffening, method=args.method,
            residual_flexibility=args.residual_flexibility)
    except ValueError as exc:
        raise PreprocessError(str(exc)) from None
    _check_frame(settings)
    given_material = None if args.material is None else parse_material(args.material)
    if comm is not None and args.mass != "consistent":
        raise PreprocessError(f"--mass {args.mass}: available in a serial run only, got "
                              f"{comm.getSize()} MPI ranks")
    given = _petsc_options(getattr(args, "petsc_args", []))
    _check_output(args)
    with UnreadOptions(given) as unread:
        _reduce(args, comm, settings, given_material, root, step)
    if root:
        for line in unread.lines():     # (after the summary: the last lines one reads)
            print(f"flexmbs preprocess: warning: {line}", file=sys.stderr)
    return 0


def _reduce(args, comm, settings, material_given, root: bool, step) -> None:
    """Read, assemble, reduce and write the body (``material_given``: ``--material``)."""
    from flexmbs.cli.info import summary
    from flexmbs.fe.assemble import assemble, fe_model_unassembled
    from flexmbs.fe.material import resolve_material
    from flexmbs.io.bodyfile import save_body
    from flexmbs.io.mesh import read_mesh
    from flexmbs.reduction import reduce_model
    t0 = time.perf_counter()
    if root:
        ranks = "" if comm is None else f" on {comm.getSize()} MPI ranks"
        print(f"flexmbs preprocess {args.mesh}{ranks}", file=sys.stderr)
    t = time.perf_counter()
    mesh = read_mesh(args.mesh, scale=1e-3 if args.unit == "mm" else 1.0, mixed=True)
    if comm is not None and hasattr(mesh, "blocks"):
        raise PreprocessError(f"{args.mesh}: a mixed-element mesh ({mesh.cell_type}) is "
                              f"preprocessed on one rank only, got {comm.getSize()} ranks")
    step(f"read mesh ({mesh.cell_type}, {mesh.n_nodes} nodes)", time.perf_counter() - t)
    try:
        material = resolve_material(material_given, mesh.material, mesh.source)
    except ValueError as exc:
        raise PreprocessError(str(exc)) from None
    missing = [i.name for i in settings.interfaces if i.name not in mesh.node_sets]
    if missing:
        raise PreprocessError(f"--interface: expected node sets (physical groups) of "
                              f"{args.mesh}, found no {', '.join(map(repr, missing))}; "
                              f"available: {', '.join(sorted(mesh.node_sets)) or 'none'}")
    t = time.perf_counter()
    if comm is None:
        try:
            fe = assemble(mesh, material, mass=args.mass)
        except ValueError as exc:
            raise PreprocessError(f"--mass {args.mass}: {exc}") from None
        step(f"assemble M, K ({fe.n_dof} dofs)", time.perf_counter() - t)
    else:
        fe = fe_model_unassembled(mesh, material)   # each rank assembles its own rows
    if root:
        _sizes(fe, settings, material, mesh, args.unit)
    try:
        body = reduce_model(fe, settings, name=Path(args.mesh).stem, progress=step,
                            provenance={"command": " ".join(sys.argv)}, comm=comm)
    except ValueError as exc:
        raise PreprocessError(f"preprocessing {args.mesh} failed: {exc}") from None
    except (ArithmeticError, RuntimeError, np.linalg.LinAlgError, BodyFileError) as exc:
        # RuntimeError: ARPACK and PETSc/SLEPc errors; BodyFileError: a body not finite
        raise PreprocessError(f"preprocessing {args.mesh} failed: {type(exc).__name__}: "
                              f"{exc}") from None
    if root:
        t = time.perf_counter()
        try:
            save_body(args.output, body)
        except OSError as exc:
            raise PreprocessError(f"-o '{args.output}': cannot write the body file "
                                  f"({exc.strerror or exc})") from None
        step(f"write {args.output}", time.perf_counter() - t)
        print(f"  total {time.perf_counter() - t0:.2f} s", file=sys.stderr)
        print(summary(body))
