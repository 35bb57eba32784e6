"""The reduction pipeline: FE model -> basis -> invariants -> :class:`ReducedBody`.

``reduce_model(fe, settings)`` runs, in order: interfaces, modes (THEORY §2.8.7, §8.1),
shape integrals by element quadrature (§2.8.3), invariants (§2.8.2), ``K_e``, ``D_e``,
geometric-stiffening tensors (§2.8.5), stress modes, interface markers and face-load
integrals.  Each step is logged with its wall time and reported to ``progress``.
"""
from __future__ import annotations

import dataclasses
import datetime
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexmbs._version import __version__ as flexmbs_version
from flexmbs.fe.assemble import summed_over_blocks
from flexmbs.io.bodyfile import Face, Marker, ReducedBody, check_body
from flexmbs.reduction.interfaces import InterfaceSpec, resolve_interface
from flexmbs.reduction.invariants import invariants_from_shape_integrals
from flexmbs.reduction.loads import face_integrals
from flexmbs.reduction.modes import compute_basis
from flexmbs.reduction.quadrature import shape_integrals
from flexmbs.reduction.residual import residual_flexibility, residual_stress_modes
from flexmbs.reduction.stiffening import stiffening_tensors

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReductionSettings:
    """What to reduce and how.

    n_modes : free--free modes (no interfaces) or fixed-interface modes (Craig--Bampton)
    interfaces : node sets turned into RBE2/RBE3 markers
    frame : 'mean_axis' or 'interface:NAME'
    static_modes : add the 12 inertial static modes (geometric stiffening, THEORY §8.1)
    damping : modal damping ratio zeta for every mode (``D_e = diag(2 zeta omega)``)
    eigensolver : 'auto', 'scipy', 'slepc' (MUMPS), 'slepc-amg' or 'lobpcg' (iterative)
    stiffening : compute ``K2``, ``K3`` (skipped above ``max_q_stiffening`` coordinates)
    modal_derivatives : add the static modal derivatives of the lowest ``n`` basis vectors
        (all pairs i <= j, ``flexmbs.reduction.derivatives``): the axial "shortening" that
        bending induces, without which the exact Green--Lagrange terms over-stiffen the
        bending of slender bodies (docs/stiffening.md)
    derivative_axis : None: the first ``n`` vectors; 0/1/2: the first ``n`` vectors that
        move mainly along x/y/z (e.g. the in-plane bending vectors of a strip)
    method : 'auto' (free--free without interfaces, Craig--Bampton with them) or
        'free_free' (free--free modes also with interfaces, which are then RBE3 markers
        on the free body; mean axis only)
    residual_flexibility : store with every interface marker the residual stress modes
        of its loads (``flexmbs.reduction.residual``), for the static correction of the
        stresses near loaded interfaces (docs/stresses.md)
    """

    n_modes: int
    interfaces: tuple[InterfaceSpec, ...] = ()
    frame: str = "mean_axis"
    static_modes: bool = False
    damping: float = 0.0
    eigensolver: str = "auto"
    stiffening: bool = True
    max_q_stiffening: int = 80
    modal_derivatives: int = 0
    derivative_axis: int | None = None
    method: str = "auto"
    residual_flexibility: bool = False

    def __post_init__(self):
        if self.n_modes < 1:
            raise ValueError(f"n_modes must be >= 1, got {self.n_modes}")
        if self.modal_derivatives < 0:
            raise ValueError(f"modal_derivatives must be >= 0, got {self.modal_derivatives}")
        if self.derivative_axis not in (None, 0, 1, 2):
            raise ValueError(f"derivative_axis must be None, 0, 1 or 2, got {self.derivative_axis}")
        if not 0.0 <= self.damping < 1.0:
            raise ValueError(f"damping ratio must be in [0, 1), got {self.damping}")
        if self.method not in ("auto", "free_free"):
            raise ValueError(f"method must be 'auto' or 'free_free', got {self.method!r}")
        if self.method == "free_free":
            if self.frame != "mean_axis":
                raise ValueError(f"method 'free_free' needs frame 'mean_axis', got "
                                 f"{self.frame!r}")
            rigid = [i.name for i in self.interfaces if i.kind != "rbe3"]
            if rigid:
                raise ValueError(f"method 'free_free': interfaces are markers on the free "
                                 f"body and must be rbe3 (\"NAME:rbe3\"), got rbe2 for "
                                 f"{rigid}")
        names = [i.name for i in self.interfaces]
        if len(set(names)) != len(names):
            raise ValueError(f"interfaces must have distinct names, got {names}")

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["interfaces"] = [dataclasses.asdict(i) for i in self.interfaces]
        return d


class _Steps:
    def __init__(self, progress):
        self.progress, self.t = progress, time.perf_counter()
        self.timings: dict[str, float] = {}

    def done(self, step: str) -> None:
        now = time.perf_counter()
        self.timings[step] = now - self.t
        log.info("%s: %.2f s", step, now - self.t)
        if self.progress is not None:
            self.progress(step, now - self.t)
        self.t = now


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def library_versions() -> dict:
    import h5py
    import scipy
    import skfem

    out = {"numpy": np.__version__, "scipy": scipy.__version__, "h5py": h5py.__version__,
           "scikit-fem": getattr(skfem, "__version__", "?"), "flexmbs": flexmbs_version}
    try:
        import petsc4py
        import slepc4py
        out["petsc4py"], out["slepc4py"] = petsc4py.__version__, slepc4py.__version__
    except ImportError:
        pass
    return out


def reduce_model(fe, settings: ReductionSettings, *, name: str = "body",
                 progress: Callable[[str, float], None] | None = None,
                 provenance: dict | None = None, comm=None) -> ReducedBody:
    """Reduce the FE model ``fe`` (:class:`flexmbs.fe.model.FEModel`) to a body.

    ``comm``: a PETSc communicator of several ranks runs the reduction distributed
    (``flexmbs.reduction.distributed``; ``fe`` may then come without ``M``, ``K``, from
    ``fe_model_unassembled``); every rank returns the same body."""
    from flexmbs.reduction.distributed import Distributed, is_distributed
    steps = _Steps(progress)
    mesh = fe.mesh
    if hasattr(mesh, "blocks") and (is_distributed(comm) or settings.modal_derivatives):
        raise ValueError(f"mesh '{mesh.source}': a mixed-element mesh ({mesh.cell_type}) "
                         f"is reduced on one rank without modal derivatives only; expected "
                         f"one element type")
    points = np.asarray(mesh.points)
    itfs = tuple(resolve_interface(s, mesh, fe.dof_of_node) for s in settings.interfaces)
    dist = Distributed.create(fe, comm) if is_distributed(comm) else None
    if dist is not None:
        _check_distributable(settings)
        steps.done(f"partition over {dist.part.size} ranks (PT-Scotch)")
        db = _distributed_basis(fe, itfs, settings, dist)
        basis, K_e = db.basis, db.K_e
        local, total = fe.basis.restricted(dist.part.elements), dist.sum
    else:
        basis = compute_basis(fe, itfs, settings.n_modes, settings.frame,
                              static_modes=settings.static_modes, backend=settings.eigensolver,
                              method=settings.method)
        if settings.modal_derivatives:
            basis = _with_modal_derivatives(fe, basis, itfs, settings)
        K_e = basis.Phi.T @ (fe.K @ basis.Phi)
        K_e = 0.5 * (K_e + K_e.T)
        local, total = fe.basis, (lambda x: x)
    Phi, n_q = basis.Phi, basis.Phi.shape[1]
    steps.done(f"modes ({basis.method}, {n_q} coordinates)")
    inv = invariants_from_shape_integrals(
        total(summed_over_blocks(shape_integrals, local, fe.material.rho, Phi)))
    zeta = np.full(n_q, float(settings.damping))
    D_e = np.diag(2.0 * zeta * basis.omega)
    steps.done("invariants")
    if settings.stiffening and n_q <= settings.max_q_stiffening:
        K2, K3 = (total(K) for K in summed_over_blocks(stiffening_tensors, local,
                                                       fe.material.C, Phi))
        steps.done("geometric stiffening K2, K3")
    else:
        if settings.stiffening:
            log.warning("n_q = %d > %d: K2, K3 not computed (memory n_q^4)", n_q,
                        settings.max_q_stiffening)
        K2, K3 = np.zeros((0, 0, 0)), np.zeros((0, 0, 0, 0))
    dofs = np.asarray(fe.dof_of_node)
    modes = Phi[dofs]                                   # (N, 3, n_q)
    stress_modes = _stress_modes(fe, Phi, dist)
    steps.done("stress modes")
    residual = {}
    if settings.residual_flexibility:
        residual = residual_stress_modes(fe, residual_flexibility(
            fe, itfs, Phi, K_e, settings.frame, craig_bampton=basis.method == "craig_bampton",
            backend=settings.eigensolver))
        steps.done("residual flexibility of the interfaces")
    markers = tuple(interface_marker(itf, Phi, settings.frame, fe.n_dof,
                                     residual.get(itf.name))
                    for itf in itfs)
    faces = tuple(Face(**dataclasses.asdict(face_integrals(k, v, points, modes)), facets=v)
                  for k, v in sorted(getattr(mesh, "facet_sets", {}).items()))
    steps.done("markers and face integrals")
    prov = {"settings": settings.as_dict(), "versions": library_versions(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "mesh_file": str(getattr(mesh, "source", "")),
            "mesh_scale": getattr(mesh, "scale", 1.0),
            "n_dof": int(fe.n_dof), "n_static_modes": basis.n_static,
            "n_ranks": 1 if dist is None else dist.part.size,
            "timings_s": {k: round(v, 3) for k, v in steps.timings.items()}}
    src = getattr(mesh, "source", "")
    if src and Path(src).is_file():
        prov["mesh_sha256"] = file_sha256(src)
    prov.update(provenance or {})
    mat = fe.material
    body = ReducedBody(
        name=name, m=inv.m, s0=inv.s0, C_t=inv.C_t, J0=inv.J0, J1=inv.J1, J2=inv.J2,
        M_e=inv.M_e, I0=inv.I0, I1=inv.I1, I2=inv.I2, C_r0=inv.C_r0, C_r1=inv.C_r1,
        O_e0=inv.O_e0, O_e1=inv.O_e1, K_e=K_e, D_e=D_e, K2=K2, K3=K3, omega=basis.omega,
        zeta=zeta, points=points, cells=mesh.cells, cell_type=mesh.cell_type, modes=modes,
        stress_modes=stress_modes, frame=settings.frame, method=basis.method,
        markers=markers, faces=faces,
        material={"E": mat.E, "nu": mat.nu, "rho": mat.rho, "name": mat.name},
        provenance=prov)
    check_body(body)
    return body


def _check_distributable(settings: ReductionSettings) -> None:
    from flexmbs.reduction.distributed import DistributedError
    if settings.eigensolver not in ("auto", "slepc"):
        raise DistributedError(
            f"distributed preprocessing: eigensolver must be 'auto' or 'slepc' (SLEPc with "
            f"parallel MUMPS), got {settings.eigensolver!r}")
    if settings.method != "auto" or settings.residual_flexibility:
        raise DistributedError(
            "distributed preprocessing: method 'free_free' and residual_flexibility are "
            "serial only; run on one rank")


def _distributed_basis(fe, itfs, settings, dist):
    """The basis on several ranks; modal derivatives with the distributed ``K``, ``M``,
    the quadratic forces summed rank by rank and the parallel constrained solves."""
    from flexmbs.reduction.derivatives import quadratic_force_elements
    from flexmbs.reduction.distributed import distributed_basis
    from flexmbs.reduction.distributed.static import clamped_solve, mean_axis_solve
    from flexmbs.reduction.interfaces import rigid_modes
    db = distributed_basis(fe.basis, fe.material, np.asarray(fe.mesh.points),
                           np.asarray(fe.dof_of_node), dist.part, itfs,
                           settings.n_modes, settings.frame, dist.comm,
                           static_modes=settings.static_modes,
                           keep_u=bool(settings.modal_derivatives))
    if not settings.modal_derivatives:
        return db
    K, M, comm = db.K_u, db.M_u, dist.comm
    local = fe.basis.restricted(dist.part.elements)

    def f2(a, b=None):
        return dist.sum(quadratic_force_elements(local, fe.material.C, a, b))

    def solver(fixed):
        if fixed is None:
            R = rigid_modes(np.asarray(fe.mesh.points), np.asarray(fe.dof_of_node), fe.n_dof)
            return lambda F: mean_axis_solve(K, M, R, F, comm)
        return lambda F: clamped_solve(K, fixed, F, comm)

    basis = _with_modal_derivatives(fe, db.basis, itfs, settings,
                                    ops={"M": M, "K": K, "f2": f2, "solver": solver})
    K_e = basis.Phi.T @ (K @ basis.Phi)
    K.destroy()
    M.destroy()
    return dataclasses.replace(db, basis=basis, K_e=0.5 * (K_e + K_e.T), K_u=None, M_u=None)


def _stress_modes(fe, Phi: np.ndarray, dist=None) -> np.ndarray:
    """``S = nodal_stress_operator @ Phi`` reshaped (N, 6, n_q) [Pa per unit q]; with
    ``dist`` the nodal sums of each rank's elements are added over the ranks before the
    averaging."""
    from flexmbs.fe.stress import node_count, nodal_stress_modes
    if dist is None:
        return nodal_stress_modes(fe, Phi)
    S = dist.sum(nodal_stress_modes(fe, Phi, elements=dist.part.elements, averaged=False))
    return S / node_count(fe)[:, None, None]


def interface_marker(itf, Phi: np.ndarray, frame: str, n_dof: int,
                     stress_residual: np.ndarray | None = None) -> Marker:
    PP = itf.fit_matrix(n_dof) @ Phi                    # (6, n_q)
    if frame == f"interface:{itf.name}":
        # the basis satisfies L Phi = 0 there by construction; store exact zeros
        if np.abs(PP[:3]).max() > 1e-8 * np.abs(Phi).max():
            log.warning("frame interface '%s' moves elastically (max %.3g m)", itf.name,
                        np.abs(PP[:3]).max())
        PP = np.zeros_like(PP)
    return Marker(name=itf.name, kind=itf.kind, R=itf.R, Phi=PP[:3], Psi=PP[3:],
                  nodes=itf.nodes, weights=itf.weights, stress_residual=stress_residual)


def _with_modal_derivatives(fe, basis, itfs, settings, ops: dict | None = None):
    """Enrich the basis with static modal derivatives (see ``derivatives.enrich_basis``).

    With an ``interface:NAME`` frame on an RBE2 interface the derivatives are computed
    with that interface's dofs clamped; otherwise with the mean-axis condition.
    ``ops`` (distributed run): the operators ``M``, ``K``, ``f2(a, b)`` and
    ``solver(fixed_dofs) -> solve(F)`` to use instead of ``fe``'s matrices."""
    from flexmbs.reduction.derivatives import dominant_axis_modes, enrich_basis
    fixed = None
    if settings.frame.startswith("interface:"):
        name = settings.frame.split(":", 1)[1]
        itf = next(i for i in itfs if i.name == name)
        kind = next(s.kind for s in settings.interfaces if s.name == name)
        if kind != "rbe2":
            raise ValueError(f"modal_derivatives: the frame interface '{name}' must be RBE2 "
                             f"(got {kind})")
        fixed = np.asarray(itf.dofs).ravel()
    n = settings.modal_derivatives
    ops = ops or {}
    idx = (list(range(n)) if settings.derivative_axis is None
           else dominant_axis_modes(fe, basis.Phi, settings.derivative_axis, n,
                                    M=ops.get("M")))
    Phi, omega = enrich_basis(fe, basis.Phi, idx, fixed_dofs=fixed, backend=settings.eigensolver,
                              K_factor=ops["solver"](fixed) if ops else None,
                              M=ops.get("M"), K=ops.get("K"), f2=ops.get("f2"))
    return dataclasses.replace(basis, Phi=Phi, omega=omega)
