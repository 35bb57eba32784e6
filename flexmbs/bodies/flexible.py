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

``D_e`` is :attr:`FlexibleBody.D_e`: the body file's (one ratio ``zeta`` for all modes,
set at preprocessing) or, given ``structural_damping``, Rayleigh or per-mode damping made
from ``M_e``, ``K_e`` on first use (:mod:`flexmbs.bodies.damping`).

All invariants are polynomials in ``q_e`` (their one definition:
:mod:`flexmbs.reduction.invariants`); the tangent ``(K, C, M)`` is their exact
derivative, written as the partial derivatives of ``f`` by ``(a' - b, alpha', omega',
q_e, qd_e, qdd_e)`` chained with ``d(A^T w)/de``, ``d(2 L e_dd)/de = -2 L(edd)``,
``d(2 L ed)/de = -2 L(ed)`` and the derivatives of the projections ``A`` and ``2 L^T``.

Residual and tangent are computed by the compiled kernels
(:mod:`flexmbs.bodies.ffrf_kernel`) or their numpy reference
(:mod:`flexmbs.bodies.ffrf_reference`), as :func:`flexmbs.compiled.backend` chooses; this
module lays the invariants out as their arguments.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from flexmbs.bodies import ffrf_kernel, ffrf_reference
from flexmbs.bodies.marker import Marker
from flexmbs.compiled import arg, backend, state
from flexmbs.kinematics.rotation import A_of, G_of, L_of, e_from_matrix
from flexmbs.reduction.invariants import InvariantPolynomials, matvec
from flexmbs.reduction.stiffening import h3_pairs, pair_gram, pair_vector

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
    structural_damping : None (the body file's ``D_e``), or a
        :class:`~flexmbs.bodies.damping.RayleighDamping` or
        :class:`~flexmbs.bodies.damping.ModalDamping` that replaces it (:attr:`D_e`)
    """

    kind = "flexible"          # its case-file type (flexmbs.case.kinds)

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
    structural_damping: object = None

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
        """Cached constant arrays: the invariant polynomials of the body
        (:class:`~flexmbs.reduction.invariants.InvariantPolynomials`, ``"poly"``) and their
        coefficients laid out for the kernels, so that every contraction with ``q_e``,
        ``qd_e`` or ``omega'`` is one matrix product or one loop.

        Index names follow the invariants: ``C_r1[k, l, j]``, ``O_e1[k, l, i, j]``,
        ``I2[k, l, a, b]``, ``G_r1[m, l, a, b]``; ``*_l`` puts the contracted ``l`` first.
        """
        cached = self.__dict__.get("_consts")
        if cached is None:
            b = self.body
            n = b.n_q
            p = InvariantPolynomials(b)
            I2s = b.I2 + np.swapaxes(b.I2, 0, 1)                      # dI/dq_j = I1_j + I2s_jl q_l
            D = np.array(self.D_e)
            c = lambda a: np.ascontiguousarray(a, dtype=float)     # noqa: E731
            cached = {
                "poly": p, "D": D,
                "C_r1_kl": c(np.reshape(b.C_r1, (n * n, 3))),                   # (k l, j)
                "C_r1_k": c(np.reshape(b.C_r1, (n, 3 * n))),                    # (k, l j)
                "O_e1_kl": c(np.reshape(b.O_e1, (n * n, 9))),                   # (k l, ij)
                "G2_m": c(np.reshape(p.G_r1, (n, 9 * n))),                      # (m, l ij)
                "I2s_l": c(np.transpose(I2s, (1, 0, 2, 3)).reshape(n, 9 * n)),  # (l, j ab)
            }
            # the invariants affine in q_e, qd_e, qdd_e as one product each (kernels):
            # [m c, I (9), -dG_r/dqd / 2 (9n), [C_r | O_e] (n x 12)] = lin0 + q_e @ lin_q
            cached["lin0"] = np.concatenate([
                b.s0, np.ravel(b.I0), p.G_r0_9.ravel(),
                np.hstack([np.reshape(b.C_r0, (n, 3)), p.O_e0]).ravel()])
            CrOe1 = np.concatenate([p.C_r1_l.reshape(n, n, 3),
                                    p.O_e1_l.reshape(n, n, 9)], axis=2)   # (l, k, 12)
            cached["lin_q"] = c(np.hstack([b.C_t, p.I1, p.G_r1_l, CrOe1.reshape(n, 12 * n)]))
            # [C_t^T qd, C_r1 qd (3n), D qd] and [C_t^T qdd, M_e qdd]
            cached["lin_qd"] = c(np.hstack([b.C_t, p.C_r1_l, D.T]))
            cached["lin_qdd"] = c(np.hstack([b.C_t, np.transpose(b.M_e)]))
            if self.uses_stiffening:
                # one writable copy of each tensor, flat for the kernels (arg() would copy
                # the body's read-only arrays)
                K2 = np.array(b.K2, dtype=float)
                cached["K2_flat"] = K2.reshape(n * n, n)                         # (k a, b)
                # d(K2:qq)/dq_j = (K2[k,j,b] + K2[k,b,j]) q_b
                cached["K2s_flat"] = (K2 + np.swapaxes(K2, 1, 2)).reshape(n * n, n)
                # K3 : q q q and its tangent in the pair form (n_p x n_p, a quarter of K3)
                cached["H_p"] = pair_gram(b.K3)
            self.__dict__["_consts"] = cached
        return cached

    @property
    def D_e(self) -> np.ndarray:
        """The structural damping matrix applied: zero without ``damping``, the body file's
        ``D_e`` without ``structural_damping``, else that specification's
        (:mod:`flexmbs.bodies.damping`) built from ``M_e``, ``K_e``."""
        cached = self.__dict__.get("_D_e")
        if cached is None:
            b, n = self.body, self.body.n_q
            if not self.damping:
                cached = np.zeros((n, n))
            elif self.structural_damping is None:
                cached = np.array(b.D_e)
            else:
                cached = self.structural_damping.D_e(b.M_e, b.K_e)
            self.__dict__["_D_e"] = _ro(cached)
        return self.__dict__["_D_e"]

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

    def face_marker(self, face: str) -> Marker:
        """A marker following the mean motion of the named face (facet set): at the
        face's centroid ``X_c`` with ``Phi = Phi_c = int_A Phi dA / A`` (its area-weighted
        mean mode, :mod:`flexmbs.reduction.loads`), no rotation rows."""
        faces = {fc.name: fc for fc in self.body.faces}
        fc = faces.get(face)
        if fc is None:
            raise KeyError(f"FlexibleBody '{self.name}': no face '{face}' "
                           f"(has: {', '.join(faces) or 'none'})")
        if fc.Phi_c is None:
            raise KeyError(f"FlexibleBody '{self.name}': face '{face}' has no mean mode in "
                           f"its body file (written by an older flexmbs): preprocess the "
                           f"body again")
        return Marker(f"face:{face}", self, fc.X_c, np.eye(3), _ro(fc.Phi_c),
                      _ro(np.zeros_like(fc.Phi_c)))

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
        if self.structural_damping is not None:
            out += self.structural_damping.problems(n, who)
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

    # -- invariants at q_e (reduction.invariants) ----------------------------------------
    def com(self, qe: np.ndarray) -> np.ndarray:
        """Centre of mass in R: ``c = (s0 + C_t^T q_e) / m``."""
        return self._const()["poly"].c(qe)

    def inertia(self, qe: np.ndarray) -> np.ndarray:
        """``I(q_e) = I0 + sum q_k I1_k + sum q_k q_l I2_kl`` about R."""
        return self._const()["poly"].I(qe)

    def mass_matrix(self, qe: np.ndarray) -> np.ndarray:
        """``M(q_e)`` (6 + n_q) of THEORY §2.3 in body components."""
        return self._const()["poly"].mass_matrix(qe)

    def elastic_force(self, qe: np.ndarray) -> np.ndarray:
        """``K_e q + K2:qq + K3:qqq`` (or ``K_e q`` for the linear model), no damping."""
        f = self.body.K_e @ qe
        if self.uses_stiffening:
            k, n = self._const(), self.n_q
            f = f + matvec(k["K2_flat"], qe).reshape(n, n) @ qe + h3_pairs(k["H_p"], qe)
        return f

    def elastic_energy(self, q: np.ndarray) -> float:
        """Strain energy ``V_e`` with ``dV_e/dq_e = h_e`` (no damping).

        The St. Venant-Kirchhoff energy is a quartic polynomial whose homogeneous parts
        of degree 2, 3, 4 have the gradients ``K_e q``, ``K2:qq``, ``K3:qqq``; Euler's
        theorem gives ``V_e = q.K_e q / 2 + q.(K2:qq) / 3 + q.(K3:qqq) / 4``, the last
        ``pi(q)^T H_p pi(q) / 8`` in the pair form (:mod:`flexmbs.reduction.stiffening`).
        """
        b = self.body
        qe = np.asarray(q, float)[7:]
        V = 0.5 * qe @ b.K_e @ qe
        if self.uses_stiffening:
            V += qe @ ((b.K2 @ qe) @ qe) / 3.0
            pi = pair_vector(qe)
            V += pi @ (self._const()["H_p"] @ pi) / 8.0
        return float(V)

    # -- dynamics ---------------------------------------------------------------------
    def residual(self, q, qd, qdd, gravity) -> np.ndarray:
        """``[m (rdd - g) + A f_t; 2 L^T f_r; f_e]`` (module docstring), shape (7 + n_q,):
        ``ffrf_residual`` of the compiled kernels or of their reference
        (:func:`flexmbs.compiled.backend`)."""
        return backend(ffrf_kernel, ffrf_reference).ffrf_residual(
            *self._state_args(q, qd, qdd, gravity), *self.kernel_args())

    def _state_args(self, q, qd, qdd, gravity) -> tuple:
        """The state arguments of the kernels, shapes checked (:func:`flexmbs.compiled.state`)."""
        return state(f"FlexibleBody '{self.name}'", self.n_coords, q, qd, qdd, gravity)

    def kernel_args(self) -> tuple:
        """The constant arguments of :func:`~flexmbs.bodies.ffrf_kernel.ffrf_residual`."""
        a = self.__dict__.get("_kargs")
        if a is None:
            k, b, n = self._const(), self.body, self.n_q
            c = arg
            stiff = self.uses_stiffening
            K2 = k["K2_flat"] if stiff else np.zeros((0, 0))
            H_p = k["H_p"] if stiff else np.zeros((0, 0))
            # arg() copies read-only data (the body's arrays), so the types never vary
            a = (float(b.m), c(k["lin0"]), c(k["lin_q"]), c(k["poly"].I2), c(k["lin_qd"]),
                 c(k["lin_qdd"]),
                 c(b.C_t).reshape(n, 3), c(b.K_e).reshape(n, n), K2, H_p, int(stiff))
            self.__dict__["_kargs"] = a
        return a

    def tangent(self, q, qd, qdd, gravity):
        """``(K, C, M)``: exact derivatives of :meth:`residual` by q, qd, qdd:
        ``ffrf_tangent`` of the compiled kernels or of their reference
        (:func:`flexmbs.compiled.backend`)."""
        a = self.kernel_args()
        return backend(ffrf_kernel, ffrf_reference).ffrf_tangent(
            *self._state_args(q, qd, qdd, gravity), *a[:6], *self.tangent_args())

    def tangent_args(self) -> tuple:
        """The constant arguments of :func:`~flexmbs.bodies.ffrf_kernel.ffrf_tangent` after
        those it shares with the residual."""
        a = self.__dict__.get("_targs")
        if a is None:
            k, b, n = self._const(), self.body, self.n_q
            c = arg
            stiff = self.uses_stiffening
            K2s = k["K2s_flat"] if stiff else np.zeros((0, 0))
            H_p = k["H_p"] if stiff else np.zeros((0, 0))
            a = (c(b.C_t).reshape(n, 3), c(b.M_e).reshape(n, n), c(k["D"]).reshape(n, n),
                 c(k["poly"].I1).reshape(n, 9), c(k["I2s_l"]).reshape(n, 9 * n),
                 c(k["G2_m"]).reshape(n, 9 * n), c(k["C_r1_kl"]).reshape(n * n, 3),
                 c(k["C_r1_k"]).reshape(n, 3 * n), c(k["O_e1_kl"]).reshape(n * n, 9),
                 c(b.K_e).reshape(n, n), K2s, H_p, int(stiff))
            self.__dict__["_targs"] = a
        return a

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
    from flexmbs.io.cell_types import cell_blocks
    from flexmbs.io.mesh import Mesh, skfem_local_order

    n_nodes = len(body.points)
    modes = np.asarray(body.modes)                                 # (N, 3, n_q)
    count = np.zeros(n_nodes)
    H = np.zeros((n_nodes, 3, 3, modes.shape[2]))
    for kind, cells in cell_blocks(body.cell_type, body.cells):   # one, or a mixed mesh's
        mesh = Mesh(points=body.points, cells=cells, cell_type=kind)
        elem = ELEMENTS[mesh.cell_type][0]()
        X = elem.doflocs.T
        nb = CellBasis(mesh.skfem(), elem, quadrature=(X, np.ones(X.shape[1])))
        local = skfem_local_order(mesh.cell_type, mesh.cells)    # (E, n_loc) node ids
        count += np.bincount(local.ravel(), minlength=n_nodes)
        # scalar basis function j belongs to local node j (node local[:, j])
        G = np.stack([nb.basis[j][0].grad for j in range(nb.Nbfun)])  # (j, k, E, p)
        He = np.einsum("jkep,ejiq->epikq", G, modes[local], optimize=True)
        np.add.at(H, local.ravel(), He.reshape(-1, 3, 3, modes.shape[2]))
    H /= count[:, None, None, None]
    curl = np.stack([H[:, 2, 1] - H[:, 1, 2], H[:, 0, 2] - H[:, 2, 0], H[:, 1, 0] - H[:, 0, 1]],
                    axis=1)
    return 0.5 * curl
