"""Interfaces (RBE2 rigid spiders, RBE3 averaging elements) on named node sets.

An interface turns the nodes of a named set into one marker with six DOFs
``zbar = [t; theta]`` (translation and small rotation about the reference point ``R``).

* RBE2: the nodes follow the marker rigidly, ``u_i = t + theta x r_i``,  ``r_i = X_i - R``.
* RBE3: the marker follows the nodes in the weighted least-squares sense,
  ``t = sum w_i u_i / sum w_i``, ``theta = A^{-1} sum w_i r_i x u_i`` with
  ``A = sum w_i (r_i.r_i E - r_i r_i^T)``; the nodes stay free otherwise.

Both kinds share the *fit matrix* ``L`` (6 x n_dof) with ``zbar = L u``; for RBE2 it is
exact because the nodes move rigidly.  :func:`interface_transformation` builds the
sparse map ``u = T z`` whose coordinates ``z = [kept dofs; marker dofs]`` make the
interfaces ordinary boundary DOFs for Craig--Bampton reduction.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from flexmbs.errors import MeshError

log = logging.getLogger(__name__)

KINDS = ("rbe2", "rbe3")


def tilde(a: np.ndarray) -> np.ndarray:
    """Skew matrix ``tilde(a) b = a x b`` (THEORY §0); ``a`` (..., 3) -> (..., 3, 3)."""
    a = np.asarray(a, dtype=float)
    out = np.zeros((*a.shape[:-1], 3, 3))
    out[..., 0, 1], out[..., 0, 2] = -a[..., 2], a[..., 1]
    out[..., 1, 0], out[..., 1, 2] = a[..., 2], -a[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -a[..., 1], a[..., 0]
    return out


@dataclass(frozen=True)
class InterfaceSpec:
    """A requested interface: node set ``name`` of the mesh, ``kind`` 'rbe2' or 'rbe3'.

    ``weights``: 'area' (tributary area from the facet set of the same name,
    equal weights if there is none) or 'equal'.
    """

    name: str
    kind: str = "rbe2"
    weights: str = "area"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"interface '{self.name}': kind must be one of {KINDS}, "
                             f"got {self.kind!r}")
        if self.weights not in ("area", "equal"):
            raise ValueError(f"interface '{self.name}': weights must be 'area' or 'equal', "
                             f"got {self.weights!r}")

    @staticmethod
    def parse(text: str) -> InterfaceSpec:
        """Parse ``NAME`` or ``NAME:rbe2`` / ``NAME:rbe3`` (command-line form).

        ``ValueError`` naming the text, what was expected and what was found, for a
        non-string, an empty name, spaces at the ends, an unknown kind (``"clamp:rbe5"``)
        or a name that cannot be a marker (``.``, ``/``: see :func:`interface_problem`).
        """
        problem = interface_problem(text)
        if problem:
            raise ValueError(problem)
        name, _, kind = text.partition(":")
        return InterfaceSpec(name=name, kind=(kind or "rbe2").lower())


def interface_problem(text) -> str:
    """'' if ``text`` is a valid interface ``NAME[:rbe2|rbe3]``, else what is wrong, as
    ``interface "tip:rbe3 ": expected ..., got ...``."""
    if not isinstance(text, str):
        return (f"interface {text!r}: expected a string \"NAME\" or \"NAME:rbe2|rbe3\", "
                f"got {type(text).__name__}")
    show = '"' + text + '"'
    if text.strip() != text:
        return (f"interface {show}: expected \"NAME\" or \"NAME:rbe2|rbe3\" without spaces "
                "at the ends, got spaces (remove them)")
    name, colon, kind = text.partition(":")
    if not name.strip():
        return f"interface {show}: expected a non-empty node-set NAME before the colon"
    if name.strip() != name:
        return f"interface {show}: expected no spaces around the colon, got \"{name}\""
    if colon and kind.strip() != kind:
        return f"interface {show}: expected no spaces around the colon, got \"{kind}\""
    if colon and kind.lower() not in KINDS:
        return (f"interface {show}: expected the kind rbe2 or rbe3 after the colon, got "
                f"\"{kind}\"")
    bad = sorted({c for c in name if c in "/\\\0" or not c.isprintable()})
    if bad or name in (".", ".."):
        found = ", ".join(map(repr, bad)) if bad else repr(name)
        return (f"interface {show}: expected a node-set name usable as a marker name, got "
                f"{found} in it")
    return ""


@dataclass(frozen=True)
class Interface:
    """A resolved interface: nodes, weights, reference point and fit matrix.

    Attributes
    ----------
    name, kind : str
    nodes : (n_i,) int        mesh node indices
    weights : (n_i,) float    nodal weights (normalised to sum 1)
    R : (3,) float [m]        reference point (weighted centroid of the nodes)
    dofs : (n_i, 3) int       global dofs of the nodes
    L_local : (6, 3 n_i)      fit matrix on ``dofs.ravel()``: ``[t; theta] = L_local u_i``
    """

    name: str
    kind: str
    nodes: np.ndarray
    weights: np.ndarray
    R: np.ndarray
    dofs: np.ndarray
    L_local: np.ndarray

    def fit_matrix(self, n_dof: int) -> sp.csr_matrix:
        """Sparse fit matrix ``L`` (6 x n_dof): marker motion ``[t; theta] = L u``."""
        rows = np.repeat(np.arange(6), self.dofs.size)
        cols = np.tile(self.dofs.ravel(), 6)
        return sp.csr_matrix((self.L_local.ravel(), (rows, cols)), shape=(6, n_dof))

    def rigid_rows(self, points: np.ndarray) -> np.ndarray:
        """(3 n_i, 6) map ``u_i = t + theta x r_i = [E, -tilde(r_i)] [t; theta]``."""
        r = points[self.nodes] - self.R
        G = np.zeros((len(self.nodes), 3, 6))
        G[:, :, :3] = np.eye(3)
        G[:, :, 3:] = -tilde(r)
        return G.reshape(-1, 6)


def _tributary_weights(mesh, nodes: np.ndarray, name: str) -> np.ndarray | None:
    """Tributary area of each node from the facet set ``name`` (each facet's area split
    equally over its nodes, so all weights are positive; cf. PEER_EXUDYN tet10 trap)."""
    facet_sets = getattr(mesh, "facet_sets", None) or {}
    if name not in facet_sets:
        return None
    facets = np.asarray(facet_sets[name])
    if facets.ndim != 2 or facets.shape[0] == 0:
        return None
    p = np.asarray(mesh.points)
    n_corner = 3 if facets.shape[1] in (3, 6) else 4
    c = p[facets[:, :n_corner]]
    if n_corner == 3:
        area = 0.5 * np.linalg.norm(np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0]), axis=1)
    else:
        area = 0.5 * np.linalg.norm(np.cross(c[:, 2] - c[:, 0], c[:, 3] - c[:, 1]), axis=1)
    w = np.zeros(len(p))
    np.add.at(w, facets, (area / facets.shape[1])[:, None])
    w = w[nodes]
    if np.any(w <= 0.0):
        log.warning("interface '%s': %d nodes not on its facets; using equal weights",
                    name, int(np.sum(w <= 0.0)))
        return None
    return w


def _node_set(mesh, name: str) -> np.ndarray:
    if hasattr(mesh, "node_set"):
        return np.asarray(mesh.node_set(name), dtype=int)
    sets = getattr(mesh, "node_sets", {})
    if name not in sets:
        raise MeshError(f"node set '{name}' not found; the mesh has {sorted(sets)}")
    return np.asarray(sets[name], dtype=int)


def resolve_interface(spec: InterfaceSpec, mesh, dof_of_node: np.ndarray) -> Interface:
    """Build the :class:`Interface` of ``spec`` on ``mesh`` (node set of the same name)."""
    nodes = np.unique(_node_set(mesh, spec.name))
    if len(nodes) < 3:
        raise MeshError(f"interface '{spec.name}': needs at least 3 nodes, got {len(nodes)}")
    w = None
    if spec.weights == "area":
        w = _tributary_weights(mesh, nodes, spec.name)
    if w is None:
        w = np.ones(len(nodes))
    return interface_from_nodes(spec.name, spec.kind, nodes, w, mesh.points, dof_of_node)


def interface_from_nodes(name: str, kind: str, nodes: np.ndarray, weights: np.ndarray,
                         points: np.ndarray, dof_of_node: np.ndarray) -> Interface:
    """The :class:`Interface` of the given ``nodes`` and (unnormalised) ``weights``:
    ``R = sum w_i X_i``, ``t = sum w_i u_i``, ``theta = A^-1 sum w_i r_i x u_i`` with
    ``A = sum w_i (|r_i|^2 E - r_i r_i^T)``, ``r_i = X_i - R``."""
    nodes = np.asarray(nodes, dtype=np.int64)
    X = np.asarray(points, dtype=float)[nodes]
    w = np.asarray(weights, dtype=float)
    w = w / w.sum()
    R = w @ X
    try:
        L = fit_rows(X, w, R)
    except ValueError:
        raise MeshError(f"interface '{name}': nodes are collinear, the rotation of the "
                        "marker is undefined") from None
    return Interface(name=name, kind=kind, nodes=nodes, weights=w, R=R,
                     dofs=np.asarray(dof_of_node)[nodes], L_local=L)


def fit_rows(X: np.ndarray, w: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Fit matrix ``L_local`` (6, 3 n_i) of nodes ``X`` (n_i, 3) [m] with weights ``w``
    (sum 1) about ``R`` (3,): ``t = sum w_i u_i``, ``theta = A^-1 sum w_i r_i x u_i``,
    ``r_i = X_i - R``, ``A = sum w_i (r_i.r_i E - r_i r_i^T)``.  ``L_local^T W`` spreads a
    wrench ``W = [F; M]`` over the nodes (RBE3): ``f_i = w_i F + w_i (A^-1 M) x r_i``.
    ``ValueError`` if the nodes are collinear (``A`` singular)."""
    w = np.asarray(w, dtype=float)
    r = np.asarray(X, dtype=float) - np.asarray(R, dtype=float)
    A = np.einsum("i,ij,ik->jk", w, r, r)
    A = np.trace(A) * np.eye(3) - A
    if np.linalg.cond(A) > 1e10:
        raise ValueError("nodes are collinear: the rotation of the fit is undefined")
    L = np.zeros((6, len(w), 3))
    L[:3] = (np.eye(3)[:, None, :] * w[None, :, None])
    L[3:] = np.einsum("jk,i,ikl->jil", np.linalg.inv(A), w, tilde(r))
    return L.reshape(6, -1)


@dataclass(frozen=True)
class InterfaceTransformation:
    """``u = T z``, ``z = [u_kept; zbar_1; ...; zbar_nI]``.

    ``kept`` are the global dofs that stay coordinates; ``n_kept`` is their number and
    the marker dofs of interface ``j`` are ``z[n_kept + 6 j : n_kept + 6 j + 6]``.
    """

    T: sp.csr_matrix
    kept: np.ndarray
    n_kept: int
    interfaces: tuple[Interface, ...]

    def project(self, A: sp.spmatrix, *, blocks: bool = False):
        """``T^T A T`` for a symmetric sparse ``A`` without the products ``A T``.

        With ``T = S + D`` (``S`` selects the kept dofs, ``D`` has rows only at the few
        dependent dofs ``d``): ``T^T A T = A[kept, kept] + Q + Q^T + D_d^T A_dd D_d``,
        ``Q = S^T A[:, d] D_d``.  The one large piece ``A[kept, kept]`` is taken by index
        mapping (:func:`submatrix`).  ``blocks=True`` returns ``(A_ii, A_ib, A_bb)`` with
        ``i`` the kept and ``b`` the marker coordinates instead of the whole matrix.
        """
        A = sp.csr_matrix(A)
        n_dof, n_z = self.T.shape
        nk = self.n_kept
        dep = np.setdiff1d(np.arange(n_dof), self.kept)
        Td = self.T[dep]                                    # (n_dep, n_z)
        AD = (A[:, dep] @ Td).tocsr()                       # (n_dof, n_z), thin
        Q = AD[self.kept]                                   # (nk, n_z)
        R = (Td.T @ AD[dep]).tocsr()                        # (n_z, n_z)
        A_ii = submatrix(A, self.kept)
        small = (Q[:, :nk] + Q[:, :nk].T + R[:nk, :nk]).tocsr()
        small.eliminate_zeros()
        if small.nnz:
            A_ii = (A_ii + small).tocsr()
        A_ib = (Q[:, nk:] + R[:nk, nk:]).tocsr()
        A_bb = R[nk:, nk:].toarray()
        if blocks:
            return A_ii, A_ib, A_bb
        if n_z == nk:
            return A_ii
        return sp.bmat([[A_ii, A_ib], [A_ib.T, sp.csr_matrix(A_bb)]], format="csr")

    def marker_slice(self, name: str) -> slice:
        for j, itf in enumerate(self.interfaces):
            if itf.name == name:
                return slice(self.n_kept + 6 * j, self.n_kept + 6 * j + 6)
        raise KeyError(name)


def interface_transformation(n_dof: int, points: np.ndarray,
                             interfaces: tuple[Interface, ...]) -> InterfaceTransformation:
    """Eliminate the dependent dofs of every interface (see module docstring).

    RBE2: all dofs of the set depend on the marker.  RBE3: six master dofs, chosen by
    QR with column pivoting of ``L_local``, depend on the marker and on the other dofs:
    ``u_m = L_m^{-1} (zbar - L_s u_s)``.
    """
    dependent = np.zeros(n_dof, dtype=bool)
    seen = np.zeros(n_dof, dtype=bool)
    plans = []
    for itf in interfaces:
        d = itf.dofs.ravel()
        if np.any(seen[d]):
            raise MeshError(f"interface '{itf.name}' shares nodes with another interface")
        seen[d] = True
        if itf.kind == "rbe2":
            dependent[d] = True
            plans.append((d, None))
        else:
            _, _, piv = sla.qr(itf.L_local, pivoting=True, mode="economic")
            m, s = np.sort(piv[:6]), np.sort(piv[6:])
            dependent[d[m]] = True
            plans.append((d, (m, s)))
    kept = np.flatnonzero(~dependent)
    n_kept = len(kept)
    z_of_dof = -np.ones(n_dof, dtype=int)
    z_of_dof[kept] = np.arange(n_kept)
    rows, cols, vals = [kept], [np.arange(n_kept)], [np.ones(n_kept)]
    for j, (itf, (d, ms)) in enumerate(zip(interfaces, plans)):
        zb = n_kept + 6 * j + np.arange(6)
        if ms is None:
            G = itf.rigid_rows(points)
            rows.append(np.repeat(d, 6))
            cols.append(np.tile(zb, len(d)))
            vals.append(G.ravel())
        else:
            m, s = ms
            Lm_inv = np.linalg.inv(itf.L_local[:, m])
            B = -Lm_inv @ itf.L_local[:, s]
            rows += [np.repeat(d[m], 6), np.repeat(d[m], len(s))]
            cols += [np.tile(zb, 6), np.tile(z_of_dof[d[s]], 6)]
            vals += [Lm_inv.ravel(), B.ravel()]
    T = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n_dof, n_kept + 6 * len(interfaces)))
    return InterfaceTransformation(T=T, kept=kept, n_kept=n_kept, interfaces=tuple(interfaces))


def submatrix(A: sp.csr_matrix, keep: np.ndarray) -> sp.csr_matrix:
    """``A[keep][:, keep]`` of a CSR matrix in one pass (``keep`` sorted, unique): one
    boolean mask and one prefix sum over the nonzeros instead of two sliced copies."""
    n = A.shape[0]
    new = -np.ones(n, dtype=np.int64)
    new[keep] = np.arange(len(keep))
    rows_kept = np.zeros(n, dtype=bool)
    rows_kept[keep] = True
    mask = new[A.indices] >= 0
    mask &= np.repeat(rows_kept, np.diff(A.indptr))
    cs = np.zeros(A.nnz + 1, dtype=np.int64)
    np.cumsum(mask, out=cs[1:])
    counts = (cs[A.indptr[1:]] - cs[A.indptr[:-1]])[keep]
    del cs
    indptr = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = new[A.indices[mask]].astype(A.indices.dtype)
    out = sp.csr_matrix((A.data[mask], indices, indptr), shape=(len(keep), len(keep)))
    out.has_sorted_indices = A.has_sorted_indices
    return out


def rigid_modes(points: np.ndarray, dof_of_node: np.ndarray, n_dof: int,
                origin: np.ndarray | None = None) -> np.ndarray:
    """The six rigid-body modes (n_dof, 6): unit translations x, y, z and small rotations
    about x, y, z through ``origin`` (default 0): ``u = t + theta x (X - origin)``."""
    X = np.asarray(points, dtype=float) - (0.0 if origin is None else origin)
    G = np.zeros((len(X), 3, 6))
    G[:, :, :3] = np.eye(3)
    G[:, :, 3:] = -tilde(X)
    out = np.zeros((n_dof, 6))
    out[np.asarray(dof_of_node).ravel()] = G.reshape(-1, 6)
    return out
