"""Reduced bodies from another code's matrices: invariants from the mass matrix.

For isoparametric solid elements the position and the displacement are interpolated by the
same shape functions, ``R_P = sum_i N_i X_i``, ``phi_k = sum_i N_i phi_k,i``.  With the
scalar consistent mass ``m_ij = int rho N_i N_j dV`` (so ``M = m (x) E``, three equal
translational blocks) the shape integrals of THEORY §2.8.2 are exact finite sums
(``X`` (N, 3) node coordinates, ``F_k`` (N, 3) the nodal values of mode ``k``)::

    m = 1^T m 1        s0 = X^T m 1        S[:, k] = F_k^T m 1
    J0 = X^T m X       J1[k] = X^T m F_k   J2[k, l] = F_k^T m F_l

equal to the element quadrature of :mod:`flexmbs.reduction.quadrature` to round-off; with
a lumped (diagonal) mass they are the lumped approximation.  What each invariant needs:
``m``, ``s0``, ``J0``, ``I0``: ``M`` and ``points``; ``C_t``, ``C_r0``, ``O_e0``, ``J1``,
``I1``: also the nodal modes ``Phi``; ``J2``, ``C_r1``, ``O_e1``, ``I2``: ``Phi`` too;
``K_e``: ``K`` (full, or already reduced); markers: the interface node sets and ``Phi``.
Without ``Phi`` flexmbs computes the basis itself from ``M`` and ``K``
(:func:`flexmbs.reduction.modes.compute_basis`).  ``K2``, ``K3`` (geometric stiffening)
need the element gradients and are not computed: imported bodies are linear-elastic.
"""
from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from flexmbs.errors import FlexmbsError
from flexmbs.fe.assemble import fe_model_unassembled
from flexmbs.fe.material import Material
from flexmbs.fe.model import FEModel
from flexmbs.fe.stress import nodal_stress_modes
from flexmbs.io.bodyfile import ReducedBody, check_body
from flexmbs.io.external import ExternalModel, ExternalModelError
from flexmbs.io.mesh import Mesh
from flexmbs.reduction.interfaces import interface_from_nodes, rigid_modes
from flexmbs.reduction.invariants import invariants_from_shape_integrals
from flexmbs.reduction.modes import compute_basis, m_orthonormalize, normalize_signs
from flexmbs.reduction.quadrature import ShapeIntegrals
from flexmbs.reduction.reduce import interface_marker, library_versions

log = logging.getLogger(__name__)

#: relative tolerance for "the modes are already M-orthonormal and K-diagonal" and for
#: the frame conditions an imported basis must meet
BASIS_TOL = 1e-8


@dataclass(frozen=True)
class NodeCloud:
    """The nodes of an imported model (what the basis computation reads of a mesh)."""

    points: np.ndarray


def scalar_mass(M: sp.spmatrix, where: str) -> sp.csr_matrix:
    """The scalar mass ``m`` of ``M = m (x) E`` (node-major dofs ``3 i + k``).

    Refused in one line if the x, y, z blocks differ or couple (rotary inertia, mass
    offsets): the invariants need a translational mass acting alike in every direction."""
    M = sp.csr_matrix(M)
    m = M[0::3, 0::3]
    scale = max(abs(m).max(), 1e-300)
    for a in range(3):
        for b in range(3):
            blk = M[a::3, b::3] - (m if a == b else 0 * m)
            err = abs(blk).max() if blk.nnz else 0.0
            if err > 1e-10 * scale:
                raise ExternalModelError(
                    f"{where}: the mass matrix must act alike on x, y and z (M = m (x) E, "
                    f"translational mass of solid elements), found block ({'xyz'[a]}, "
                    f"{'xyz'[b]}) off by {err:.3g} kg ({err / scale:.2g} of the largest entry)")
    return m


def mass_shape_integrals(m: sp.spmatrix, points: np.ndarray, Phi: np.ndarray
                         ) -> ShapeIntegrals:
    """The shape integrals of ``Phi`` (3N, n_q) from the scalar mass ``m`` (N, N) (module
    docstring)."""
    X = np.asarray(points, dtype=float)
    n_q = Phi.shape[1]
    F = np.asarray(Phi, dtype=float).reshape(len(X), 3 * n_q)      # (N, (i k))
    one = np.ones(len(X))
    m1, mX, mF = m @ one, m @ X, m @ F
    J2 = (F.T @ mF).reshape(3, n_q, 3, n_q).transpose(1, 3, 0, 2).copy()
    J1 = (X.T @ mF).reshape(3, 3, n_q).transpose(2, 0, 1).copy()
    return ShapeIntegrals(m=float(one @ m1), s0=X.T @ m1, S=(m1 @ F).reshape(3, n_q),
                          J0=X.T @ mX, J1=J1, J2=J2)


def _need(model: ExternalModel, piece: str, why: str) -> None:
    if getattr(model, piece) is None:
        raise ExternalModelError(f"import '{model.source}': missing {piece} ({why})")


def _shape(model: ExternalModel, piece: str, a, expected: tuple) -> None:
    if tuple(a.shape) != expected:
        raise ExternalModelError(f"import '{model.source}': {piece} must have shape "
                                 f"{expected}, got {tuple(a.shape)}")


def _interfaces(model: ExternalModel):
    n = len(model.points)
    dofs = np.arange(3 * n).reshape(n, 3)
    out = []
    for itf in model.interfaces:
        nodes = np.asarray(itf.nodes, dtype=np.int64)
        if nodes.ndim != 1 or len(nodes) < 3 or nodes.min() < 0 or nodes.max() >= n:
            span = f"{nodes.min() + 1}..{nodes.max() + 1}" if nodes.size else "-"
            raise ExternalModelError(
                f"import '{model.source}': interface '{itf.name}' must list at least 3 "
                f"node numbers in 1..{n}, got {nodes.size} in {span}")
        w = np.ones(len(nodes)) if itf.weights is None else np.asarray(itf.weights, float)
        if w.shape != nodes.shape or not np.all(w > 0):
            raise ExternalModelError(f"import '{model.source}': interface '{itf.name}' "
                                     f"weights must be {len(nodes)} positive numbers, got "
                                     f"shape {w.shape}")
        out.append(interface_from_nodes(itf.name, itf.kind, nodes, w, model.points, dofs))
    return tuple(out)


def _frame(model: ExternalModel, frame: str | None, itfs) -> str:
    frame = frame or model.frame or (f"interface:{itfs[0].name}" if itfs else "mean_axis")
    names = [i.name for i in itfs]
    if frame != "mean_axis" and not (frame.startswith("interface:")
                                     and frame.split(":", 1)[1] in names):
        raise ExternalModelError(f"import '{model.source}': frame must be 'mean_axis' or "
                                 f"'interface:NAME' with NAME among the interfaces {names}, "
                                 f"got {frame!r}")
    return frame


def _given_basis(model: ExternalModel, M, n_dof: int):
    """``(Phi, K_e, omega)`` of the imported recovery modes, made M-orthonormal and
    K-diagonal by a Rayleigh--Ritz solve unless they already are."""
    Phi = np.asarray(model.Phi, dtype=float)
    if Phi.ndim != 2 or Phi.shape[0] != n_dof or Phi.shape[1] < 1:
        raise ExternalModelError(f"import '{model.source}': Phi must have shape ({n_dof}, "
                                 f"n_q) (3 dofs per node), got {Phi.shape}")
    n_q = Phi.shape[1]
    _need(model, "K", "the elastic stiffness K_e = Phi^T K Phi")
    K = model.K
    if K.shape == (n_q, n_q) and n_q != n_dof:
        K_e = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=float)
    else:
        _shape(model, "K", K, (n_dof, n_dof))
        K_e = Phi.T @ (K @ Phi)
    K_e = 0.5 * (K_e + K_e.T)
    M_e = Phi.T @ (M @ Phi)
    M_e = 0.5 * (M_e + M_e.T)
    off = K_e - np.diag(np.diag(K_e))
    if (np.abs(M_e - np.eye(n_q)).max() > BASIS_TOL
            or np.abs(off).max() > BASIS_TOL * np.abs(K_e).max()):
        lam, V = sla.eigh(K_e, M_e)
        Phi, K_e = normalize_signs(Phi @ V), np.diag(lam)
    lam = np.diag(K_e).copy()
    if np.any(lam <= BASIS_TOL * lam.max()):
        raise ExternalModelError(f"import '{model.source}': Phi holds rigid-body motion "
                                 f"(omega^2 = {lam.min():.3g} 1/s^2); expected elastic "
                                 "modes only, the frame carries the rigid motion")
    return Phi, K_e, np.sqrt(lam)


def _computed_basis(model: ExternalModel, M, itfs, frame, n_modes, static_modes, eigensolver):
    _need(model, "K", "flexmbs computes the modes from M and K when Phi is not given")
    n_dof = M.shape[0]
    _shape(model, "K", model.K, (n_dof, n_dof))
    if n_modes is None:
        raise ExternalModelError(f"import '{model.source}': no recovery modes Phi, so the "
                                 "number of modes to compute must be given (--modes N)")
    n = len(model.points)
    fe = FEModel(mesh=NodeCloud(np.asarray(model.points, float)), material=None, basis=None,
                 M=M, K=sp.csr_matrix(model.K), dof_of_node=np.arange(n_dof).reshape(n, 3))
    basis = compute_basis(fe, itfs, n_modes, frame, static_modes=static_modes,
                          backend=eigensolver)
    K_e = basis.Phi.T @ (fe.K @ basis.Phi)
    return basis.Phi, 0.5 * (K_e + K_e.T), basis.omega


def _check_frame(model: ExternalModel, frame: str, Phi, M, itfs) -> None:
    """An imported basis must meet the frame condition it is used with."""
    scale = np.abs(Phi).max()
    if frame == "mean_axis":
        R = m_orthonormalize(rigid_modes(model.points, np.arange(M.shape[0]).reshape(-1, 3),
                                         M.shape[0]), M)
        c = np.abs(R.T @ (M @ Phi)).max()          # Phi, R M-orthonormal: 0 <= c <= 1
        if c > BASIS_TOL:
            raise ExternalModelError(
                f"import '{model.source}': frame 'mean_axis' needs modes M-orthogonal to the "
                f"rigid-body modes (free-free modes), found a coupling of {c:.3g}; give the "
                "frame interface of clamped-interface modes (--frame interface:NAME)")
        return
    itf = next(i for i in itfs if f"interface:{i.name}" == frame)
    moved = np.abs(itf.fit_matrix(M.shape[0]) @ Phi).max()
    if moved > BASIS_TOL * scale:
        raise ExternalModelError(
            f"import '{model.source}': frame {frame!r} needs modes that leave that "
            f"interface at rest (clamped-interface modes), found it moving by {moved:.3g} "
            f"per unit q ({moved / scale:.2g} of the largest modal displacement)")


def _material_of(model: ExternalModel) -> Material | None:
    mat = model.material
    try:
        return Material(E=float(mat["E"]), nu=float(mat["nu"]), rho=float(mat["rho"]),
                        name=str(mat.get("name", "")))
    except (KeyError, TypeError, ValueError):
        if mat:
            log.warning("import '%s': material %s incomplete or invalid; ignored",
                        model.source, dict(mat))
        return None


def _stress_modes(model: ExternalModel, material: Material, Phi: np.ndarray) -> np.ndarray:
    """Nodal stress modes (N, 6, n_q) [Pa] of the imported modes on the imported cells."""
    try:
        mesh = Mesh(points=np.asarray(model.points, float), cells=model.cells,
                    cell_type=model.cell_type)
    except FlexmbsError as exc:
        raise ExternalModelError(f"import '{model.source}': cells: {exc}") from None
    fe = fe_model_unassembled(mesh, material)
    Phi_fe = np.empty_like(Phi)
    Phi_fe[np.asarray(fe.dof_of_node).ravel()] = Phi
    return nodal_stress_modes(fe, Phi_fe)


def external_body(model: ExternalModel, *, n_modes: int | None = None,
                  frame: str | None = None, damping: float = 0.0,
                  static_modes: bool = False, eigensolver: str = "auto",
                  material: Material | None = None,
                  provenance: dict | None = None) -> ReducedBody:
    """The reduced body of an imported model (see the module docstring).

    ``material`` (else the model's own, if complete): stored in the body and, when the
    model has cells but no stress modes, used to compute them
    (:func:`flexmbs.fe.stress.nodal_stress_modes` of the imported modes on flexmbs's own
    elements; without cells or a material the stresses read zero, with a warning).

    ``frame`` defaults to the model's own, else the first interface, else ``mean_axis``.
    ``n_modes``, ``static_modes``, ``eigensolver``: used only when the model has no
    recovery modes ``Phi`` (flexmbs then reduces ``M``, ``K`` itself).
    """
    _need(model, "points", "node coordinates for s0, J0, J1, I0 (THEORY §2.8.2)")
    _need(model, "M", "the mass matrix for m, s0, C_t, J0, J1, J2 (THEORY §2.8.2)")
    points = np.asarray(model.points, dtype=float)
    if points.ndim != 2 or points.shape[1] != 3 or len(points) < 2:
        raise ExternalModelError(f"import '{model.source}': points must have shape (N, 3), "
                                 f"got {points.shape}")
    n_dof = 3 * len(points)
    _shape(model, "M", model.M, (n_dof, n_dof))
    M = sp.csr_matrix(model.M, dtype=float)
    m = scalar_mass(M, f"import '{model.source}'")
    itfs = _interfaces(model)
    frame = _frame(model, frame, itfs)
    if model.Phi is not None:
        Phi, K_e, omega = _given_basis(model, M, n_dof)
        _check_frame(model, frame, Phi, M, itfs)
        method = "craig_bampton" if itfs else "free_free"
    else:
        Phi, K_e, omega = _computed_basis(model, M, itfs, frame, n_modes, static_modes,
                                          eigensolver)
        method = "craig_bampton" if itfs else "free_free"
    n_q = Phi.shape[1]
    inv = invariants_from_shape_integrals(mass_shape_integrals(m, points, Phi))
    stress, stress_from = model.stress_modes, "imported"
    material = material or _material_of(model)
    if stress is None and len(model.cells) and material is not None:
        stress, stress_from = _stress_modes(model, material, Phi), "computed"
    elif stress is None:
        log.warning("import '%s': no stress modes and no cells with a material; the "
                    "body's stresses read zero", model.source)
        stress, stress_from = np.zeros((len(points), 6, n_q)), "none"
    else:
        stress = np.asarray(stress, dtype=float)
        if model.Phi is None or stress.shape != (len(points), 6, n_q):
            raise ExternalModelError(f"import '{model.source}': stress_modes must come with "
                                     f"Phi and have shape {(len(points), 6, n_q)}, got "
                                     f"{stress.shape}")
    zeta = np.full(n_q, float(damping))
    prov = {"imported_from": model.source, "versions": library_versions(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "n_dof": n_dof, "modes": "imported" if model.Phi is not None else "computed",
            "stress_modes": stress_from,
            "settings": {"n_modes": n_modes, "frame": frame, "damping": damping,
                         "interfaces": [{"name": i.name, "kind": i.kind} for i in itfs],
                         "static_modes": static_modes, "stiffening": False}}
    prov.update(provenance or {})
    mat = ({"E": material.E, "nu": material.nu, "rho": material.rho, "name": material.name}
           if material is not None else
           {"E": 0.0, "nu": 0.0, "rho": 0.0, "name": "unknown (imported matrices)"})
    body = ReducedBody(
        name=model.name, m=inv.m, s0=inv.s0, C_t=inv.C_t, J0=inv.J0, J1=inv.J1, J2=inv.J2,
        M_e=inv.M_e, I0=inv.I0, I1=inv.I1, I2=inv.I2, C_r0=inv.C_r0, C_r1=inv.C_r1,
        O_e0=inv.O_e0, O_e1=inv.O_e1, K_e=K_e, D_e=np.diag(2.0 * zeta * omega),
        K2=np.zeros((0, 0, 0)), K3=np.zeros((0, 0, 0, 0)), omega=omega, zeta=zeta,
        points=points, cells=model.cells, cell_type=model.cell_type,
        modes=Phi.reshape(len(points), 3, n_q), stress_modes=stress, frame=frame,
        method=method, markers=tuple(interface_marker(i, Phi, frame, n_dof) for i in itfs),
        material=mat, provenance=prov)
    check_body(body)
    return body
