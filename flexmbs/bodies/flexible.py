"""Flexible bodies in the floating frame of reference (THEORY §2.3-§2.8).

Coordinates ``q_b = [r, e, q_e]`` (``n_coords = 7 + n_q``): the position ``r`` of the
floating frame R (inertial), its Euler parameters ``e`` (``A(e)``: R -> inertial) and the
elastic coordinates ``q_e`` of the reduced body.  With the body-frame accelerations
``a' = A^T rdd``, ``alpha' = 2 L(e) edd``, the angular velocity ``omega' = 2 L(e) ed``
and ``z_III = [a'; alpha'; qdd_e]``, the body-frame equations of THEORY §2.7,

    f = M(q_e) z_III + h_omega + h_e - h_b = [f_t; f_r; f_e],

are projected like the rigid body's (:mod:`flexmbs.bodies.rigid`) with the virtual
displacements ``delta r``, ``delta pi' = 2 L delta e`` and ``delta q_e``:

    residual = [ m (rdd - g) + A (f_t - m a' + m b);   2 L^T f_r;   f_e ],   b = A^T g.

(The ``m a' - m b`` part of ``f_t`` is written as ``m (rdd - g)`` before projecting, which
is the same for orthonormal ``A`` and makes ``n_q = 0`` reproduce ``RigidBody`` to
round-off, tangent included.)  The pieces (THEORY §2.8.2, §2.5, §2.6):

    h_omega_t = m w~ w~ c + 2 w~ C_t^T qd_e
    h_omega_r = w~ I w + G_r w
    h_omega_e = [w^T O_e^k w]_k + G_e w
    h_e       = K_e q_e + K2:q q + K3:q q q (stiffening) or K_e q_e (linear)  + D_e qd_e
    h_b       = [m b; m c~ b; C_t b]

All invariants are polynomials in ``q_e`` (:mod:`flexmbs.reduction.invariants`); the
tangent ``(K, C, M)`` below is their exact derivative, written as the partial
derivatives of ``f`` by ``(a' - b, alpha', omega', q_e, qd_e, qdd_e)`` chained with
``d(A^T w)/de``, ``d(2 L e_dd)/de = -2 L(edd)``, ``d(2 L ed)/de = -2 L(ed)`` and the
derivatives of the projections ``A`` and ``2 L^T``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from flexmbs.bodies.marker import Marker
from flexmbs.kinematics.frames import cross3, dAu_de
from flexmbs.kinematics.rotation import (
    A_of, G_of, L_of, LT_matrix, QT_of, e_from_matrix, tilde,
)

log = logging.getLogger(__name__)
E3 = np.eye(3)


def _ro(a) -> np.ndarray:
    arr = np.array(a, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class FlexibleBody:
    """A reduced elastic body in the floating frame of reference.

    Parameters
    ----------
    name : unique body name
    body : the :class:`~flexmbs.io.bodyfile.ReducedBody` (invariants, modes, markers)
    r0, R0 : initial position [m] and orientation (frame R -> inertial) of the frame R
    v0 : (3,) initial velocity of the frame origin [m/s], inertial
    omega0 : (3,) initial angular velocity of the frame [rad/s], inertial
    qe0, qed0 : (n_q,) initial elastic coordinates and rates (default 0)
    stiffening : quadratic model with the geometric stiffening ``K2, K3`` (if the file
        has them) or the linear elastic force ``K_e q_e``
    damping : include the structural damping ``D_e qd_e``
    """

    name: str
    body: object
    r0: np.ndarray = field(default_factory=lambda: _ro(np.zeros(3)))
    R0: np.ndarray = field(default_factory=lambda: _ro(np.eye(3)))
    v0: np.ndarray = field(default_factory=lambda: _ro(np.zeros(3)))
    omega0: np.ndarray = field(default_factory=lambda: _ro(np.zeros(3)))
    qe0: np.ndarray | None = None
    qed0: np.ndarray | None = None
    stiffening: bool = True
    damping: bool = True

    is_ground = False

    def __post_init__(self):
        n = self.body.n_q
        for key in ("r0", "R0", "v0", "omega0"):
            object.__setattr__(self, key, _ro(getattr(self, key)))
        for key in ("qe0", "qed0"):
            val = getattr(self, key)
            object.__setattr__(self, key, _ro(np.zeros(n) if val is None else val))
        if self.stiffening and n and not self.body.has_stiffening:
            log.warning("FlexibleBody '%s': the body file has no K2, K3; using the linear "
                        "elastic force", self.name)

    @classmethod
    def from_file(cls, name: str, path: str | Path, **kw) -> FlexibleBody:
        """A body from a reduced-body file (``flexmbs preprocess``)."""
        from flexmbs.io.bodyfile import load_body
        return cls(name, load_body(path), **kw)

    # -- sizes and data ---------------------------------------------------------------
    @property
    def n_q(self) -> int:
        return self.body.n_q

    @property
    def n_coords(self) -> int:
        return 7 + self.body.n_q

    @property
    def m(self) -> float:
        return self.body.m

    @property
    def uses_stiffening(self) -> bool:
        return bool(self.stiffening and self.body.has_stiffening and self.n_q)

    def _const(self):
        """Cached constant arrays (trace of J1, symmetrised I2 sum, damping)."""
        cached = self.__dict__.get("_consts")
        if cached is None:
            b = self.body
            n = b.n_q
            trJ1 = np.trace(b.J1, axis1=1, axis2=2) if n else np.zeros(0)
            I2s = b.I2 + np.swapaxes(b.I2, 0, 1)                      # dI/dq_j = I1_j + I2s_jl q_l
            J1T = np.swapaxes(b.J1, 1, 2)
            # dG_r/dqd_m = -2 [J1_m^T - tr(J1_m) E + sum_l q_l (J2_ml - M_e[l,m] E)]
            Gq = J1T - trJ1[:, None, None] * E3                        # (m, 3, 3)
            G2 = b.J2 - b.M_e.T[:, :, None, None] * E3                 # (m, l, 3, 3)
            D = np.array(b.D_e) if self.damping else np.zeros((n, n))
            cached = {"trJ1": trJ1, "I2s": I2s, "Gq": Gq, "G2": G2, "D": D}
            self.__dict__["_consts"] = cached
        return cached

    # -- markers ----------------------------------------------------------------------
    def __getitem__(self, name: str) -> Marker:
        names = [mk.name for mk in self.body.markers]
        if name not in names:
            raise KeyError(f"FlexibleBody '{self.name}': no interface marker '{name}' "
                           f"(has: {', '.join(names) or 'none'})")
        mk = self.body.marker(name)
        return Marker(name, self, mk.R, np.eye(3), _ro(mk.Phi), _ro(mk.Psi))

    def marker(self, name: str, s=(0.0, 0.0, 0.0), R=None) -> Marker:
        """A marker fixed to the floating frame R (no elastic motion) at ``s``."""
        return Marker(name, self, np.asarray(s, float), np.eye(3) if R is None else R)

    def node_marker(self, name: str, node: int, R=None) -> Marker:
        """A marker at mesh node ``node``: ``s`` its reference position, ``Phi`` its mode
        rows ``modes[node]`` and ``Psi = 1/2 curl(Phi)`` at the node (element-averaged
        gradient of the FE interpolation, :func:`nodal_rotation_modes`)."""
        b = self.body
        node = int(node)
        if not 0 <= node < len(b.points):
            raise IndexError(f"FlexibleBody '{self.name}': node {node} not in 0..{len(b.points) - 1}")
        Psi = self._node_psi()[node]
        return Marker(name, self, b.points[node], np.eye(3) if R is None else R,
                      _ro(b.modes[node]), _ro(Psi))

    def _node_psi(self) -> np.ndarray:
        cached = self.__dict__.get("_psi_nodes")
        if cached is None:
            cached = nodal_rotation_modes(self.body)
            self.__dict__["_psi_nodes"] = cached
        return cached

    # -- initial state and checks -----------------------------------------------------
    def initial_q(self) -> np.ndarray:
        return np.concatenate([self.r0, e_from_matrix(self.R0), self.qe0])

    def initial_qd(self) -> np.ndarray:
        e = e_from_matrix(self.R0)
        return np.concatenate([self.v0, 0.5 * G_of(e).T @ self.omega0, self.qed0])

    def problems(self) -> list[str]:
        """Every problem with the data (empty if valid)."""
        out, who, n = [], f"FlexibleBody '{self.name}'", self.n_q
        if not np.isfinite(self.m) or self.m <= 0:
            out.append(f"{who}: mass must be positive, got {self.m}")
        for key, shape in (("r0", (3,)), ("R0", (3, 3)), ("v0", (3,)), ("omega0", (3,)),
                           ("qe0", (n,)), ("qed0", (n,))):
            val = getattr(self, key)
            if val.shape != shape:
                out.append(f"{who}: {key} must have shape {shape}, got {val.shape}")
            elif not np.all(np.isfinite(val)):
                out.append(f"{who}: {key} has non-finite entries")
        if self.R0.shape == (3, 3) and np.all(np.isfinite(self.R0)):
            if not np.allclose(self.R0 @ self.R0.T, E3, atol=1e-9) or np.linalg.det(self.R0) < 0:
                out.append(f"{who}: R0 must be a rotation matrix (orthonormal, det +1)")
        if n:
            lam = np.linalg.eigvalsh(0.5 * (self.body.M_e + self.body.M_e.T))
            if lam.min() <= 0:
                out.append(f"{who}: elastic mass matrix M_e is not positive definite "
                           f"(smallest eigenvalue {lam.min():.3g}); rigid modes in the basis?")
        return out

    # -- kinematics -------------------------------------------------------------------
    def A(self, q: np.ndarray) -> np.ndarray:
        return A_of(q[3:7])

    def omega(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Angular velocity of the frame R, inertial components: ``2 G(e) ed``."""
        return 2.0 * G_of(q[3:7]) @ qd[3:7]

    # -- invariants at q_e ---------------------------------------------------------------
    def com(self, qe: np.ndarray) -> np.ndarray:
        """Centre of mass in R: ``c = (s0 + C_t^T q_e) / m``."""
        b = self.body
        return (b.s0 + b.C_t.T @ qe) / b.m

    def inertia(self, qe: np.ndarray) -> np.ndarray:
        """``I(q_e) = I0 + sum q_k I1_k + sum q_k q_l I2_kl`` about R."""
        b = self.body
        return b.I0 + np.einsum("k,kij->ij", qe, b.I1) + np.einsum("k,l,klij->ij", qe, qe, b.I2)

    def mass_matrix(self, qe: np.ndarray) -> np.ndarray:
        """``M(q_e)`` (6 + n_q) of THEORY §2.3 in body components."""
        b, n = self.body, self.n_q
        M = np.zeros((6 + n, 6 + n))
        mct = b.m * tilde(self.com(qe))
        Cr = b.C_r0 + np.einsum("klj,l->kj", b.C_r1, qe)
        M[:3, :3] = b.m * E3
        M[:3, 3:6], M[3:6, :3] = mct.T, mct
        M[:3, 6:], M[6:, :3] = b.C_t.T, b.C_t
        M[3:6, 3:6] = self.inertia(qe)
        M[3:6, 6:], M[6:, 3:6] = Cr.T, Cr
        M[6:, 6:] = b.M_e
        return M

    def elastic_force(self, qe: np.ndarray) -> np.ndarray:
        """``K_e q + K2:qq + K3:qqq`` (or ``K_e q`` for the linear model), no damping."""
        b = self.body
        f = b.K_e @ qe
        if self.uses_stiffening:
            f = f + (b.K2 @ qe) @ qe + ((b.K3 @ qe) @ qe) @ qe
        return f

    def elastic_tangent(self, qe: np.ndarray) -> np.ndarray:
        b = self.body
        K = np.array(b.K_e, dtype=float)
        if self.uses_stiffening:
            K2, K3 = b.K2, b.K3
            K = K + K2 @ qe + np.einsum("kbj,b->kj", K2, qe)
            P = K3 @ qe                                                # (k, a, b)
            K = K + P @ qe + np.einsum("kbj,b->kj", P, qe) \
                + np.einsum("kcj,c->kj", np.einsum("kbcj,b->kcj", K3, qe), qe)
        return K

    def elastic_energy(self, q: np.ndarray) -> float:
        """Strain energy ``V_e`` with ``dV_e/dq_e = h_e`` (no damping).

        The St. Venant-Kirchhoff energy is a quartic polynomial whose homogeneous parts
        of degree 2, 3, 4 have the gradients ``K_e q``, ``K2:qq``, ``K3:qqq``; Euler's
        theorem gives ``V_e = q.K_e q / 2 + q.(K2:qq) / 3 + q.(K3:qqq) / 4``.
        """
        b = self.body
        qe = np.asarray(q, float)[7:]
        V = 0.5 * qe @ b.K_e @ qe
        if self.uses_stiffening:
            V += qe @ ((b.K2 @ qe) @ qe) / 3.0
            V += qe @ (((b.K3 @ qe) @ qe) @ qe) / 4.0
        return float(V)

    # -- dynamics ---------------------------------------------------------------------
    def _state(self, q, qd, qdd, gravity):
        b = self.body
        e, ed, edd = q[3:7], qd[3:7], qdd[3:7]
        qe, qed, qedd = q[7:], qd[7:], qdd[7:]
        A, L = A_of(e), L_of(e)
        w = qdd[0:3] - gravity
        d = A.T @ w                                   # a' - b
        om = 2.0 * L @ ed
        al = 2.0 * L @ edd
        c = self.com(qe)
        Iq = self.inertia(qe)
        Cr = b.C_r0 + np.einsum("klj,l->kj", b.C_r1, qe)
        k = self._const()
        Gr = -2.0 * (np.einsum("m,mij->ij", qed, k["Gq"])
                     + np.einsum("m,l,mlij->ij", qed, qe, k["G2"]))
        Ge = 2.0 * np.einsum("klj,l->kj", b.C_r1, qed)
        Oe = b.O_e0 + np.einsum("klij,l->kij", b.O_e1, qe)
        vt = b.C_t.T @ qed
        Iw = Iq @ om
        f_t = b.m * cross3(al, c) + b.C_t.T @ qedd + b.m * cross3(om, cross3(om, c)) \
            + 2.0 * cross3(om, vt)                    # without m d
        f_r = b.m * cross3(c, d) + Iq @ al + Cr.T @ qedd + cross3(om, Iw) + Gr @ om
        f_e = b.C_t @ d + Cr @ al + b.M_e @ qedd + np.einsum("kij,i,j->k", Oe, om, om) \
            + Ge @ om + self.elastic_force(qe) + k["D"] @ qed
        return locals()

    def residual(self, q, qd, qdd, gravity) -> np.ndarray:
        """``[m (rdd - g) + A f_t; 2 L^T f_r; f_e]`` (module docstring), shape (7 + n_q,)."""
        s = self._state(q, qd, qdd, gravity)
        return np.concatenate([self.body.m * s["w"] + s["A"] @ s["f_t"],
                               2.0 * s["L"].T @ s["f_r"], s["f_e"]])

    def tangent(self, q, qd, qdd, gravity):
        """``(K, C, M)``: exact derivatives of :meth:`residual` by q, qd, qdd."""
        s = self._state(q, qd, qdd, gravity)
        b, k, n = self.body, self._const(), self.n_q
        m, A, L, e = b.m, s["A"], s["L"], s["e"]
        c, d, om, al, Iq, Cr, Gr, Ge, Oe, qe, qed, qedd = (
            s[x] for x in ("c", "d", "om", "al", "Iq", "Cr", "Gr", "Ge", "Oe", "qe", "qed", "qedd"))
        N = 6 + n
        ct, ot = tilde(c), tilde(om)
        # partial derivatives of f = [f_t (without m d); f_r; f_e]
        f_d = np.zeros((N, 3))
        f_d[3:6], f_d[6:] = m * ct, b.C_t
        f_al = np.zeros((N, 3))
        f_al[0:3], f_al[3:6], f_al[6:] = -m * ct, Iq, Cr
        f_om = np.zeros((N, 3))
        D = (om @ c) * E3 + np.outer(om, c) - 2.0 * np.outer(c, om)      # d(w x (w x c))/dw
        f_om[0:3] = m * D - 2.0 * tilde(s["vt"])
        f_om[3:6] = ot @ Iq - tilde(s["Iw"]) + Gr
        f_om[6:] = np.einsum("kij,j->ki", Oe + np.swapaxes(Oe, 1, 2), om) + Ge
        f_qdd = np.zeros((N, n))
        f_qdd[0:3], f_qdd[3:6], f_qdd[6:] = b.C_t.T, Cr.T, b.M_e
        f_qd = np.zeros((N, n))
        f_qd[0:3] = 2.0 * ot @ b.C_t.T
        f_qd[3:6] = -2.0 * (np.einsum("mij,j->im", k["Gq"], om)
                            + np.einsum("l,mlij,j->im", qe, k["G2"], om))
        f_qd[6:] = 2.0 * np.einsum("klj,j->kl", b.C_r1, om) + k["D"]
        f_q = np.zeros((N, n))
        f_q[0:3] = (tilde(al) + ot @ ot) @ b.C_t.T
        dI = b.I1 + np.einsum("jlab,l->jab", k["I2s"], qe)              # (j, 3, 3)
        f_q[3:6] = (-tilde(d) @ b.C_t.T + np.einsum("jab,b->aj", dI, al)
                    + ot @ np.einsum("jab,b->aj", dI, om)
                    + np.einsum("k,klj->jl", qedd, b.C_r1)
                    - 2.0 * np.einsum("m,mlij,j->il", qed, k["G2"], om))
        f_q[6:] = (np.einsum("klj,j->kl", b.C_r1, al)
                   + np.einsum("klij,i,j->kl", b.O_e1, om, om) + self.elastic_tangent(qe))
        # derivatives of the body-frame variables by e
        w = s["w"]
        dd_de = 2.0 * np.einsum("lab,b->la", QT_of(w), e)              # d(A^T w)/de
        dal_de, dom_de = -2.0 * L_of(qdd[3:7]), -2.0 * L_of(qd[3:7])
        # projection P = blockdiag(A, 2 L^T, E)
        def proj(X):
            Y = np.empty((7 + n, X.shape[1]))
            Y[0:3] = A @ X[0:3]
            Y[3:7] = 2.0 * L.T @ X[3:6]
            Y[7:] = X[6:]
            return Y

        nc = 7 + n
        M = np.zeros((nc, nc))
        Cm = np.zeros((nc, nc))
        K = np.zeros((nc, nc))
        M[:, 0:3] = proj(f_d @ A.T)
        M[0:3, 0:3] += m * E3
        M[:, 3:7] = proj(f_al @ (2.0 * L))
        M[:, 7:] = proj(f_qdd)
        Cm[:, 3:7] = proj(f_om @ (2.0 * L))
        Cm[:, 7:] = proj(f_qd)
        K[:, 3:7] = proj(f_d @ dd_de + f_al @ dal_de + f_om @ dom_de)
        K[0:3, 3:7] += dAu_de(e, s["f_t"])
        K[3:7, 3:7] += 2.0 * LT_matrix(s["f_r"])
        K[:, 7:] = proj(f_q)
        return K, Cm, M

    # -- energies ---------------------------------------------------------------------
    def kinetic_energy(self, q, qd) -> float:
        """``T = 1/2 z_II^T M(q_e) z_II``, ``z_II = [A^T rd; 2 L ed; qd_e]`` (the ``m E``
        block written as ``1/2 m rd.rd``, as ``RigidBody`` does; equal for unit ``e``)."""
        e = q[3:7]
        v = A_of(e).T @ qd[0:3]
        z = np.concatenate([v, 2.0 * L_of(e) @ qd[3:7], qd[7:]])
        return 0.5 * z @ self.mass_matrix(q[7:]) @ z + 0.5 * self.m * (qd[0:3] @ qd[0:3] - v @ v)

    def potential_energy(self, q, gravity) -> float:
        """Gravity potential ``V = -m g . (r + A c(q_e))``."""
        return -self.m * gravity @ (q[0:3] + A_of(q[3:7]) @ self.com(q[7:]))

    def momentum(self, q, qd) -> tuple[np.ndarray, np.ndarray]:
        """Linear momentum ``p`` and angular momentum about the inertial origin (inertial).

        ``p = A (m v' + m w' x c + C_t^T qd_e)`` and ``H_O = r x p + A h_R`` with
        ``h_R = m c x v' + I w' + C_r^T qd_e`` (rows 1-2 of ``M z_II``)."""
        e = q[3:7]
        A = A_of(e)
        z = np.concatenate([A.T @ qd[0:3], 2.0 * L_of(e) @ qd[3:7], qd[7:]])
        Mz = self.mass_matrix(q[7:]) @ z
        p = A @ Mz[0:3]
        return p, np.cross(q[0:3], p) + A @ Mz[3:6]

    def __repr__(self) -> str:
        return f"FlexibleBody('{self.name}', m={self.m:g} kg, n_q={self.n_q})"


def nodal_rotation_modes(body) -> np.ndarray:
    """``Psi`` (N, 3, n_q) at every mesh node: ``1/2 curl`` of the mode fields (THEORY
    §2.8.1), the gradient taken from each element's isoparametric interpolation at its
    nodes and averaged over the elements sharing the node (as the nodal stress recovery)."""
    from skfem import CellBasis

    from flexmbs.fe.assemble import ELEMENTS
    from flexmbs.io.mesh import Mesh, _skfem_local_order

    mesh = Mesh(points=body.points, cells=body.cells, cell_type=body.cell_type)
    elem = ELEMENTS[mesh.cell_type][0]()
    X = elem.doflocs.T
    nb = CellBasis(mesh.skfem(), elem, quadrature=(X, np.ones(X.shape[1])))
    local = _skfem_local_order(mesh.cell_type, mesh.cells)        # (E, n_loc) node ids
    n_nodes = len(body.points)
    count = np.bincount(local.ravel(), minlength=n_nodes).astype(float)
    modes = np.asarray(body.modes)                                 # (N, 3, n_q)
    # scalar basis function j belongs to local node j (node local[:, j])
    G = np.stack([nb.basis[j][0].grad for j in range(nb.Nbfun)])  # (j, k, E, p)
    He = np.einsum("jkep,ejiq->epikq", G, modes[local], optimize=True)
    H = np.zeros((n_nodes, 3, 3, modes.shape[2]))
    np.add.at(H, local.ravel(), He.reshape(-1, 3, 3, modes.shape[2]))
    H /= count[:, None, None, None]
    curl = np.stack([H[:, 2, 1] - H[:, 1, 2], H[:, 0, 2] - H[:, 2, 0], H[:, 1, 0] - H[:, 0, 1]],
                    axis=1)
    return 0.5 * curl
