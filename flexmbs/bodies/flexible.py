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

All invariants are polynomials in ``q_e`` (their one definition:
:mod:`flexmbs.reduction.invariants`); the
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

from flexmbs.compiled import arg, state
from flexmbs.bodies.ffrf_kernel import ffrf_residual, ffrf_tangent
from flexmbs.bodies.marker import Marker
from flexmbs.kinematics.frames import dATw_de, dAu_de
from flexmbs.kinematics.rotation import (
    A_of, G_of, L_of, LT_matrix, cross_floats, e_from_matrix, matvec_floats, tilde,
    two_L_floats,
)
from flexmbs.reduction.invariants import InvariantPolynomials

log = logging.getLogger(__name__)
E3 = np.eye(3)


#: Largest matrix (entries) in one matrix-vector product.  OpenBLAS runs a ``dgemv`` of
#: 9216 or more entries on several threads; at these sizes the hand-off costs more than
#: the product (several times more on a loaded machine), so larger tensors are split.
_GEMV_MAX = 8192


def _row_chunks(A: np.ndarray) -> tuple:
    """``A`` (2-D) split into row blocks of at most :data:`_GEMV_MAX` entries."""
    rows = max(1, _GEMV_MAX // max(1, A.shape[1]))
    return tuple(np.ascontiguousarray(A[i:i + rows]) for i in range(0, A.shape[0], rows)) \
        or (np.ascontiguousarray(A),)


def _matvec(chunks: tuple, x: np.ndarray) -> np.ndarray:
    """``A @ x`` for ``A`` given as :func:`_row_chunks`."""
    if len(chunks) == 1:
        return chunks[0] @ x
    return np.concatenate([c @ x for c in chunks])


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
        """Cached constant arrays: the invariants reshaped so that every contraction with
        ``q_e``, ``qd_e`` or ``omega'`` in :meth:`_state` / :meth:`tangent` is one matrix
        product (BLAS) instead of an ``einsum``.

        Index names follow the invariants: ``C_r1[k, l, j]``, ``O_e1[k, l, i, j]``,
        ``I2[k, l, a, b]``, ``J2[m, l, a, b]``; ``*_l`` puts the contracted ``l`` first.
        """
        cached = self.__dict__.get("_consts")
        if cached is None:
            b = self.body
            n = b.n_q
            poly = InvariantPolynomials(b)
            I2s = b.I2 + np.swapaxes(b.I2, 0, 1)                      # dI/dq_j = I1_j + I2s_jl q_l
            # dG_r/dqd_m = -2 [G_r0[m] + sum_l q_l G_r1[m, l]]
            Gq, G2 = poly.G_r0, poly.G_r1                              # (m, 3, 3), (m, l, 3, 3)
            D = np.array(b.D_e) if self.damping else np.zeros((n, n))
            c = lambda a: np.ascontiguousarray(a, dtype=float)     # noqa: E731
            cached = {
                "poly": poly, "I2s": I2s, "Gq": Gq, "G2": G2, "D": D,
                "C_tT": c(b.C_t.T),
                "I1": c(np.reshape(b.I1, (n, 9))),                              # (k, ab)
                "I2": c(np.reshape(b.I2, (n, n * 9))),                          # (k, l ab)
                "C_r1_l": c(np.transpose(b.C_r1, (1, 0, 2)).reshape(n, 3 * n)),  # (l, k j)
                "C_r1_kl": c(np.reshape(b.C_r1, (n * n, 3))),                   # (k l, j)
                "C_r1_k": c(np.reshape(b.C_r1, (n, 3 * n))),                    # (k, l j)
                "O_e0": c(np.reshape(b.O_e0, (n, 9))),                          # (k, ij)
                "O_e1_l": c(np.transpose(b.O_e1, (1, 0, 2, 3)).reshape(n, 9 * n)),
                "O_e1_kl": c(np.reshape(b.O_e1, (n * n, 9))),                   # (k l, ij)
                "Gq9": c(np.reshape(Gq, (n, 9))),                               # (m, ij)
                "G2_l": c(np.transpose(G2, (1, 0, 2, 3)).reshape(n, 9 * n)),    # (l, m ij)
                "G2_m": c(np.reshape(G2, (n, 9 * n))),                          # (m, l ij)
                "I1_3": c(b.I1),
                "I2s_l": c(np.transpose(I2s, (1, 0, 2, 3)).reshape(n, 9 * n)),  # (l, j ab)
            }
            # the invariants affine in q_e, qd_e, qdd_e as one product each (_state):
            # [m c, I (9), -dG_r/dqd / 2 (9n), [C_r | O_e] (n x 12)] = lin0 + q_e @ lin_q
            cached["lin0"] = np.concatenate([
                b.s0, np.ravel(b.I0), cached["Gq9"].ravel(),
                np.hstack([np.reshape(b.C_r0, (n, 3)), cached["O_e0"]]).ravel()])
            CrOe1 = np.concatenate([cached["C_r1_l"].reshape(n, n, 3),
                                    cached["O_e1_l"].reshape(n, n, 9)], axis=2)   # (l, k, 12)
            cached["lin_q"] = c(np.hstack([b.C_t, cached["I1"], cached["G2_l"],
                                           CrOe1.reshape(n, 12 * n)]))
            # [C_t^T qd, C_r1 qd (3n), D qd] and [C_t^T qdd, M_e qdd]
            cached["lin_qd"] = c(np.hstack([b.C_t, cached["C_r1_l"], D.T]))
            cached["lin_qdd"] = c(np.hstack([b.C_t, np.transpose(b.M_e)]))
            # x @ A for the wide matrices as A^T @ x in row blocks (see _GEMV_MAX)
            for key in ("lin_q", "lin_qd", "lin_qdd", "I2", "I2s_l", "G2_m", "C_r1_k"):
                cached[key + "^T"] = _row_chunks(np.transpose(cached[key]))
            for key in ("C_r1_kl", "O_e1_kl"):
                cached[key + "/"] = _row_chunks(cached[key])
            if self.uses_stiffening:
                # one writable copy of each tensor, flat for the kernels (arg() would copy
                # the body's read-only arrays) and in row blocks for the numpy reference
                K2, K3 = np.array(b.K2, dtype=float), np.array(b.K3, dtype=float)
                cached["K2_flat"] = K2.reshape(n * n, n)                         # (k a, b)
                cached["K3_flat"] = K3.reshape(n ** 3, n)                        # (k a b, c)
                # d(K2:qq)/dq_j = (K2[k,j,b] + K2[k,b,j]) q_b, and the three slots of K3
                cached["K2s_flat"] = (K2 + np.swapaxes(K2, 1, 2)).reshape(n * n, n)
                cached["K3s_flat"] = (K3 + np.transpose(K3, (0, 2, 1, 3))
                                      + np.transpose(K3, (0, 3, 1, 2))).reshape(n ** 3, n)
                for key in ("K2", "K3", "K2s", "K3s"):
                    cached[key] = _row_chunks(cached[key + "_flat"])
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
            f = f + _matvec(k["K2"], qe).reshape(n, n) @ qe \
                + (_matvec(k["K3"], qe).reshape(n * n, n) @ qe).reshape(n, n) @ qe
        return f

    def elastic_tangent(self, qe: np.ndarray) -> np.ndarray:
        """``d/dq (K_e q + K2:qq + K3:qqq)``: ``K_e + K2s q + K3s:qq`` with the symmetrised
        tensors of :meth:`_const`."""
        K = np.array(self.body.K_e, dtype=float)
        if self.uses_stiffening:
            k, n = self._const(), self.n_q
            K += _matvec(k["K2s"], qe).reshape(n, n)
            K += (_matvec(k["K3s"], qe).reshape(n * n, n) @ qe).reshape(n, n)
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
        """Body-frame quantities of the module docstring at one state (a dict; the last
        one is kept, so :meth:`tangent_reference` at the state of the last
        :meth:`residual_reference` reuses it). The numpy formulation that the compiled
        kernels (:mod:`flexmbs.bodies.ffrf_kernel`) are tested against.

        The rigid-body-sized algebra (3-vectors, 3x3 products) is done on Python floats;
        the ``n_q``-sized parts are matrix products with the reshaped invariants of
        :meth:`_const`.
        """
        key = (q.tobytes(), qd.tobytes(), qdd.tobytes(), gravity.tobytes())
        last = self.__dict__.get("_last_state")
        if last is not None and last[0] == key:
            return last[1]
        b, k, n = self.body, self._const(), self.n_q
        m = b.m
        e = q[3:7]
        qe, qed, qedd = q[7:], qd[7:], qdd[7:]
        A = A_of(e)
        Af = A.tolist()
        e0, x, y, z = e.tolist()
        w = (qdd[0:3] - gravity).tolist()
        d = [Af[0][j] * w[0] + Af[1][j] * w[1] + Af[2][j] * w[2] for j in range(3)]  # A^T w
        om = two_L_floats(e0, x, y, z, qd[3:7].tolist())       # omega' = 2 L(e) ed
        al = two_L_floats(e0, x, y, z, qdd[3:7].tolist())      # alpha' = 2 L(e) edd
        lin = k["lin0"] + _matvec(k["lin_q^T"], qe)
        o = 12 + 9 * n
        c = (lin[0:3] / m).tolist()
        Iq = (lin[3:12] + qe @ _matvec(k["I2^T"], qe).reshape(n, 9)).reshape(3, 3)
        Gm = lin[12:o].reshape(n, 9)                   # dG_r/dqd_m / -2, (m, ij)
        CrOe = lin[o:].reshape(n, 12)
        Cr, Oe = CrOe[:, 0:3], CrOe[:, 3:]            # (k, j), (k, ij)
        lqd = _matvec(k["lin_qd^T"], qed)
        vt = lqd[0:3].tolist()
        Ge = 2.0 * lqd[3:3 + 3 * n].reshape(n, 3)
        lqdd = _matvec(k["lin_qdd^T"], qedd)
        Gr = -2.0 * (qed @ Gm).reshape(3, 3)
        I_, G_ = Iq.tolist(), Gr.tolist()
        Iw = matvec_floats(I_, om)
        occ = cross_floats(om, c)
        a_, b_, v_ = cross_floats(al, c), cross_floats(om, occ), cross_floats(om, vt)
        t_ = lqdd[0:3].tolist()
        f_t = [m * (a_[i] + b_[i]) + t_[i] + 2.0 * v_[i] for i in range(3)]   # without m d
        x_, y_, Ia, Go = cross_floats(c, d), cross_floats(om, Iw), matvec_floats(I_, al), matvec_floats(G_, om)
        Crq = (qedd @ Cr).tolist()
        f_r = [m * x_[i] + y_[i] + Ia[i] + Crq[i] + Go[i] for i in range(3)]
        o1, o2, o3 = om
        zeta = np.array(al + [o1 * o1, o1 * o2, o1 * o3, o2 * o1, o2 * o2, o2 * o3,
                              o3 * o1, o3 * o2, o3 * o3])  # [alpha'; vec(w w^T)]
        f_e = CrOe @ zeta + b.C_t @ d + Ge @ om + lqdd[3:] + self.elastic_force(qe) \
            + lqd[3 + 3 * n:]
        out = {"A": A, "e": e, "w": w, "d": d, "om": om, "al": al, "c": c, "Iq": Iq,
               "Cr": Cr, "Ge": Ge, "Oe": Oe, "Gm": Gm, "Gr": Gr, "vt": vt, "Iw": Iw,
               "f_t": f_t, "f_r": f_r, "f_e": f_e, "qe": qe, "qed": qed, "qedd": qedd,
               "efloats": (e0, x, y, z), "Af": Af}
        self.__dict__["_last_state"] = (key, out)
        return out

    def residual(self, q, qd, qdd, gravity) -> np.ndarray:
        """``[m (rdd - g) + A f_t; 2 L^T f_r; f_e]`` (module docstring), shape (7 + n_q,),
        by the compiled kernel :func:`flexmbs.bodies.ffrf_kernel.ffrf_residual`."""
        a = self._kernel_args()
        return ffrf_residual(*self._state_args(q, qd, qdd, gravity), *a)

    def _state_args(self, q, qd, qdd, gravity) -> tuple:
        """The state arguments of the kernels, shapes checked (:func:`flexmbs.compiled.state`)."""
        return state(f"FlexibleBody '{self.name}'", self.n_coords, q, qd, qdd, gravity)

    def _kernel_args(self) -> tuple:
        """The constant arguments of :func:`~flexmbs.bodies.ffrf_kernel.ffrf_residual`."""
        a = self.__dict__.get("_kargs")
        if a is None:
            k, b, n = self._const(), self.body, self.n_q
            c = arg
            stiff = self.uses_stiffening
            K2 = k["K2_flat"] if stiff else np.zeros((0, 0))
            K3 = k["K3_flat"] if stiff else np.zeros((0, 0))
            # arg() copies read-only data (the body's arrays), so the types never vary
            a = (float(b.m), c(k["lin0"]), c(k["lin_q"]), c(k["I2"]), c(k["lin_qd"]),
                 c(k["lin_qdd"]),
                 c(b.C_t).reshape(n, 3), c(b.K_e).reshape(n, n), K2, K3, stiff)
            self.__dict__["_kargs"] = a
        return a

    def residual_reference(self, q, qd, qdd, gravity) -> np.ndarray:
        """:meth:`residual` by numpy operations on :meth:`_state` (the reference the
        compiled kernel is tested against; the tangent uses the same state)."""
        s = self._state(q, qd, qdd, gravity)
        m, Af, w, f_t = self.body.m, s["Af"], s["w"], s["f_t"]
        e0, x, y, z = s["efloats"]
        r1, r2, r3 = s["f_r"]
        out = np.empty(7 + self.n_q)
        out[0:7] = [m * w[i] + Af[i][0] * f_t[0] + Af[i][1] * f_t[1] + Af[i][2] * f_t[2]
                    for i in range(3)] + [
            2.0 * (-x * r1 - y * r2 - z * r3),              # 2 L(e)^T f_r
            2.0 * (e0 * r1 - z * r2 + y * r3),
            2.0 * (z * r1 + e0 * r2 - x * r3),
            2.0 * (-y * r1 + x * r2 + e0 * r3)]
        out[7:] = s["f_e"]
        return out

    def tangent(self, q, qd, qdd, gravity):
        """``(K, C, M)``: exact derivatives of :meth:`residual` by q, qd, qdd, by the
        compiled kernel :func:`flexmbs.bodies.ffrf_kernel.ffrf_tangent`."""
        a = self._kernel_args()
        return ffrf_tangent(*self._state_args(q, qd, qdd, gravity), *a[:6], *self._tangent_args())

    def _tangent_args(self) -> tuple:
        """The constant arguments of :func:`~flexmbs.bodies.ffrf_kernel.ffrf_tangent` after
        those it shares with the residual."""
        a = self.__dict__.get("_targs")
        if a is None:
            k, b, n = self._const(), self.body, self.n_q
            c = arg
            stiff = self.uses_stiffening
            K2s = k["K2s_flat"] if stiff else np.zeros((0, 0))
            K3s = k["K3s_flat"] if stiff else np.zeros((0, 0))
            a = (c(b.C_t).reshape(n, 3), c(b.M_e).reshape(n, n), c(k["D"]).reshape(n, n),
                 c(k["I1"]).reshape(n, 9), c(k["I2s_l"]).reshape(n, 9 * n),
                 c(k["G2_m"]).reshape(n, 9 * n), c(k["C_r1_kl"]).reshape(n * n, 3),
                 c(k["C_r1_k"]).reshape(n, 3 * n), c(k["O_e1_kl"]).reshape(n * n, 9),
                 c(b.K_e).reshape(n, n), K2s, K3s, stiff)
            self.__dict__["_targs"] = a
        return a

    def tangent_reference(self, q, qd, qdd, gravity):
        """:meth:`tangent` by numpy operations on :meth:`_state` (the reference the
        compiled kernel is tested against)."""
        s = self._state(q, qd, qdd, gravity)
        b, k, n = self.body, self._const(), self.n_q
        m, A, e = b.m, s["A"], s["e"]
        L = L_of(e)
        c, d, om, al = (np.array(s[x]) for x in ("c", "d", "om", "al"))
        Iq, Cr, Ge, Oe, qe, qed, qedd = (
            s[x] for x in ("Iq", "Cr", "Ge", "Oe", "qe", "qed", "qedd"))
        N = 6 + n
        ct, ot = tilde(c), tilde(om)
        C_tT = k["C_tT"]
        Oe3 = Oe.reshape(n, 3, 3)
        # partial derivatives of f = [f_t (without m d); f_r; f_e] by
        # (a' - b, alpha', omega', qd_e, q_e) (columns)
        Fx = np.zeros((N, 9 + 2 * n))
        f_d, f_al, f_om = Fx[:, 0:3], Fx[:, 3:6], Fx[:, 6:9]
        f_qd, f_q = Fx[:, 9:9 + n], Fx[:, 9 + n:]
        f_d[3:6], f_d[6:] = m * ct, b.C_t
        f_al[0:3], f_al[3:6], f_al[6:] = -m * ct, Iq, Cr
        D = (om @ c) * E3 + np.outer(om, c) - 2.0 * np.outer(c, om)      # d(w x (w x c))/dw
        f_om[0:3] = m * D - 2.0 * tilde(s["vt"])
        f_om[3:6] = ot @ Iq - tilde(s["Iw"]) + s["Gr"]
        f_om[6:] = Oe3 @ om + om @ Oe3 + Ge
        Gm3 = s["Gm"].reshape(n, 3, 3)
        f_qd[0:3] = 2.0 * ot @ C_tT
        f_qd[3:6] = -2.0 * (Gm3 @ om).T
        f_qd[6:] = 2.0 * _matvec(k["C_r1_kl/"], om).reshape(n, n) + k["D"]
        f_q[0:3] = (tilde(al) + ot @ ot) @ C_tT
        dI = k["I1_3"] + _matvec(k["I2s_l^T"], qe).reshape(n, 3, 3)  # (j, 3, 3)
        G2qd = _matvec(k["G2_m^T"], qed).reshape(n, 3, 3)        # sum_m qd_m G2[m, l]
        f_q[3:6] = (-tilde(d) @ C_tT + (dI @ al).T + ot @ (dI @ om).T
                    + _matvec(k["C_r1_k^T"], qedd).reshape(n, 3).T - 2.0 * (G2qd @ om).T)
        f_q[6:] = (_matvec(k["C_r1_kl/"], al).reshape(n, n)
                   + _matvec(k["O_e1_kl/"], np.outer(om, om).ravel()).reshape(n, n)
                   + self.elastic_tangent(qe))
        f_qdd = np.empty((N, n))
        f_qdd[0:3], f_qdd[3:6], f_qdd[6:] = C_tT, Cr.T, b.M_e
        # derivatives of the body-frame variables by e
        L2 = 2.0 * L
        dd_de = dATw_de(e, np.array(s["w"]))                            # d(A^T w)/de
        dal_de, dom_de = -2.0 * L_of(qdd[3:7]), -2.0 * L_of(qd[3:7])

        # projection P = blockdiag(A, 2 L^T, E) of the rows
        def proj(X):
            Y = np.empty((7 + n, X.shape[1]))
            Y[0:3] = A @ X[0:3]
            Y[3:7] = L2.T @ X[3:6]
            Y[7:] = X[6:]
            return Y

        nc = 7 + n
        M = np.zeros((nc, nc))
        Cm = np.zeros((nc, nc))
        K = np.zeros((nc, nc))
        # one projection for all column blocks: [d/d rdd, d/d edd, d/d qdd_e, d/d ed,
        # d/d qd_e, d/de, d/dq_e]
        X = np.empty((N, 3 + 4 + n + 4 + n + 4 + n))
        X[:, 0:3] = f_d @ A.T
        X[:, 3:7] = f_al @ L2
        X[:, 7:7 + n] = f_qdd
        o = 7 + n
        X[:, o:o + 4] = f_om @ L2
        X[:, o + 4:o + 4 + n] = f_qd
        o += 4 + n
        X[:, o:o + 4] = f_d @ dd_de + f_al @ dal_de + f_om @ dom_de
        X[:, o + 4:] = f_q
        Y = proj(X)
        M[:, 0:3] = Y[:, 0:3]
        M[0, 0] += m
        M[1, 1] += m
        M[2, 2] += m
        M[:, 3:7] = Y[:, 3:7]
        M[:, 7:] = Y[:, 7:7 + n]
        o = 7 + n
        Cm[:, 3:7] = Y[:, o:o + 4]
        Cm[:, 7:] = Y[:, o + 4:o + 4 + n]
        o += 4 + n
        K[:, 3:7] = Y[:, o:o + 4]
        K[:, 7:] = Y[:, o + 4:]
        K[0:3, 3:7] += dAu_de(e, np.array(s["f_t"]))
        K[3:7, 3:7] += 2.0 * LT_matrix(np.array(s["f_r"]))
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
