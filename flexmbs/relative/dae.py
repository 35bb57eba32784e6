"""The DAE of a tree with cut joints in joint coordinates (THEORY §1, §3.8, §7 item 23),
in the form the integrators take (:mod:`flexmbs.integrate.protocol`):

    r = Mbar(beta) betadd - k(beta, betad, t) + G^T lam = 0,       g(beta, t) = 0,
    g = [e_j.e_j - 1 (spherical / free joints);  c(q_b(beta), t) (cut joints, drives)],
    G = [2 e_j^T;  C_b T(beta)]

with ``Mbar``, ``k`` from the non-recursive formalism (``formulation = "relative"``) or
``Mbar betadd - k`` by recursive Newton-Euler and ``Mbar`` by composite rigid bodies
(``"recursive"``).  The rows ``c`` of the cut joints and drives, their Jacobian ``C_b``
and the force elements' generalized forces ``Q_f`` are those of the descriptor form
(:class:`~flexmbs.system.assembly.AssembledSystem` of the whole model), evaluated on the
absolute coordinates ``q_b(beta)``, ``qd_b = T betad``
(:mod:`flexmbs.relative.absolute_map`); ``Q_f`` enters ``k`` as applied wrenches
``f_i^t`` on the bodies.  For a tree without drives ``g`` holds only the normalisations.

A tree with flexible bodies (their modal coordinates are joint coordinates,
:mod:`flexmbs.relative.flexible_kinematics`) takes, with ``formulation = "relative"``,
the route of the descriptor form projected on the joint velocities (THEORY (2.82)):

    Mbar = T^T M_b T,   Mbar betadd - k = T^T r_b(q_b, T betad, T betadd + Td betad, t),

``r_b`` the bodies' residuals with the force elements (the descriptor residual at
``lam = 0``), ``M_b`` its mass matrix; with ``"recursive"`` the same ``r_b`` and ``M_b``
per body in recursive Newton-Euler and composite bodies
(:mod:`flexmbs.relative.flexible_recursive`).

For a rigid tree ``K = dr/dbeta`` and ``C = dr/dbetad`` are central differences of
``r`` (step ``1e-7 (1 + |x|)``), dense: the joint coordinates are few; for a flexible
tree they are the descriptor form's tangent carried through ``T``
(:mod:`flexmbs.relative.flexible_tangent`).  The poses, ``J`` and ``T`` at a ``beta``
are made once (memoised on its bytes) for the residual, the rows and their Jacobian.

A tree with ``"recursive"`` hands the integrator its Newton matrix factored
(``newton_factor``, :class:`~flexmbs.integrate.protocol.FactoredNewton`): modified
Newton on ``[[c_M Mbar, G^T], [G, 0]]`` by the articulated-body factorisation and a
Schur complement on the rows of the cut joints and drives (the Euler normalisations
eliminated joint by joint inside the recursion, :mod:`flexmbs.relative.newton_factor`),
O(n (1 + m_c)) per iteration (m_c rows of cut joints and drives), no tangent; for a
tree with flexible bodies ``c_M Mbar + Delta_e``, ``Delta_e = c_K K_t(q_e) + c_C D_e``
on each flexible body's modal coordinates (the tangent's body-local part: the elastic
force's tangent stiffness with the geometric stiffening, and the damping), by
:mod:`flexmbs.relative.flexible_articulated`.  When the
integrator asks again for a matrix within the same Newton solve (at the point its last
increment led to) and the fresh modified matrix's increment ``x`` is not ``THETA`` of the
last one (the error contraction of the modified iteration; the residual's ratio is no
guide here: ``I - W W_0^-1`` is far from normal, norm ~5e3 on a 32-link chain whose
``I - W_0^-1 W`` has norm 7e-3), the fresh factor's own contraction along it,
``|W_0^-1 W x - x| / |x|`` (one product ``W x``), tells whose the poor contraction is:
above ``THETA`` the factor's (the dropped tangent, e.g. a spherical chain at a large
step), and the rest of the solve takes the full matrix; at most ``THETA`` the
nonlinearity's, which the full matrix shares (the stiffened slider-crank, whose
non-recursive form with the full tangent takes as many iterations), and the solve stays
modified; it is measured again at every later fresh factor whose increment does not
contract, and after one good measure an increment that does not shrink at all switches
(a stall at round-off).  The full matrix is solved by GMRES
preconditioned by the articulated factor (:class:`~flexmbs.relative.newton_factor.
KrylovFactor`, ``W v`` a directional difference of the residual, O(n) per product), the
dense tangent only if GMRES does not converge.
"""
from __future__ import annotations

import functools

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from flexmbs.relative import cut_rows, flexible_recursive, nonrecursive, recursive
from flexmbs.relative.flexible_articulated import FlexibleSchurFactor
from flexmbs.relative.newton_factor import DenseFactor, KrylovFactor, SchurFactor
from flexmbs.relative.absolute_map import (
    absolute_state,
    body_placement,
    body_quaternions,
    body_wrenches,
    rate_products,
    velocity_map,
)
from flexmbs.relative.flexible_kinematics import (
    forward_flexible,
    moved_bodies,
    poses_and_jacobians,
)
from flexmbs.relative.flexible_tangent import T_derivatives, T_gradients, projected_tangent
from flexmbs.relative.kinematics import forward, transfer
from flexmbs.relative.tree import build_tree
from flexmbs.system.model import System

#: relative step of the central differences of the tangent
FD_STEP = 1e-7
#: relative step in ``betad`` of a flexible tangent's radial Euler-parameter columns
RADIAL_STEP = 1e-2
#: relative steps of the Newton matrix's directional differences (``_newton_product``):
#: the residual is linear in ``betadd`` and quadratic in ``betad`` (a central difference
#: is exact there, the round-off smallest at a large step), nonlinear in ``beta``, whose
#: perturbation (``c_K`` times that of ``betadd``) is kept to ``PRODUCT_STEP_Q``: the
#: truncation ``O(PRODUCT_STEP_Q^2)`` of flexible trees in motion is 1e-3 (the
#: slider-crank) to 1e-4 (random trees) of ``W v`` at 1e-4, 1e-10 to 6e-7 at 1e-7 (at
#: 1e-8, 2e-9 to 4e-10 of round-off: a Newton solve at 1e-10 then stalled on its floor)
PRODUCT_STEP, PRODUCT_STEP_Q = 1.0, 1e-7


class RelativeDAE:
    """The DAE of ``model`` in joint coordinates ``beta`` (module doc).

    ``formulation``: "relative" (non-recursive) or "recursive"."""

    def __init__(self, model, formulation: str = "relative"):
        self.model = model
        self.formulation = formulation
        self.tree = tree = build_tree(model, formulation)
        self.gravity = np.asarray(model.gravity, dtype=float)
        self.n_q = tree.n_beta
        # the descriptor form of the model: layout of q_b, rows c, force elements
        self.absolute = System(gravity=model.gravity, name=model.name,
                               bodies=list(model.bodies), joints=list(model.joints),
                               drives=list(model.drives), forces=list(model.forces),
                               ).assemble()
        lay = self.absolute.layout
        cut = {id(j) for j in tree.cut}
        #: the descriptor rows of the cut joints and drives (rows ``c`` of ``g``)
        self.cut_rows = np.array([r for b, blk in enumerate(lay.blocks)
                                  if blk.kind == "drive" or id(blk.owner) in cut
                                  for r in range(lay.row_start[b], lay.row_start[b + 1])],
                                 dtype=int)
        self.n_lam = len(tree.e_rows) + len(self.cut_rows)
        #: whether the cut rows, ``q_b``, ``qd_b`` and ``Td betad`` are made by paths
        #: (:mod:`flexmbs.relative.cut_rows`, O(n) and O(d) per touched body) rather than
        #: through the dense ``T`` (the non-recursive route, O(n^2) by design)
        self.by_path = formulation == "recursive"
        self._body_index = cut_rows.body_index_of(tree, self.absolute.body_slices,
                                                  self.absolute.n_q)
        self._memo: dict = {}           # the last kinematics and cut-joint Jacobian
        #: whether the integrator takes ``newton_factor`` (module doc)
        self.factored = formulation == "recursive"
        self._newton_solve: _NewtonSolve | None = None   # newton_factor's current solve
        #: factors made by ``newton_factor``: articulated (modified Newton), krylov (of
        #: them, full W by GMRES), gmres (iterations), dense (GMRES fallbacks), checked
        #: (poor contractions whose factor's own contraction was measured, one product)
        self.newton_counts = dict.fromkeys(
            ("articulated", "krylov", "gmres", "dense", "checked"), 0)
        self.coordinate_labels = [
            label for tj, b in zip(tree.joints, tree.bodies, strict=True)
            for label in ([f"{tj.name}[{k}]" for k in range(tj.motion.n_beta)]
                          + [f"{b.name}.q_e[{k}]" for k in range(tj.qe.stop - tj.qe.start)])]
        self.active_row_labels = ([f"normalization '{tree.joints[i].name}'"
                                   for i, tj in enumerate(tree.joints)
                                   if tj.motion.e_slice is not None]
                                  + [self.absolute.row_labels[r] for r in self.cut_rows])

    def drop_redundant(self, q, t: float = 0.0, tol: float = 1e-9) -> list[str]:
        """Drop the cut joints' rows that depend on the others at ``q`` (pivoted QR of
        ``G^T``, as the descriptor form's rank test, THEORY §5.9.1); their labels."""
        if not len(self.cut_rows):
            return []
        G = self.constraint_jacobian(q, t).toarray()
        _, R, piv = sla.qr(G.T, mode="economic", pivoting=True)
        d = np.zeros(self.n_lam)
        d[:min(R.shape)] = np.abs(np.diag(R))
        keep = np.sort(piv[d > tol * max(d.max(initial=0.0), 1.0)])
        n_e = len(self.tree.e_rows)
        if not np.all(keep[:n_e] == np.arange(n_e)):
            raise ValueError(f"System '{self.model.name}': the Euler-parameter rows are "
                             "dependent (a zero quaternion)")
        labels = self.active_row_labels
        dropped = [labels[r] for r in range(self.n_lam) if r not in set(keep.tolist())]
        self.cut_rows = self.cut_rows[keep[n_e:] - n_e]
        self.active_row_labels = [labels[r] for r in keep]
        self.n_lam = len(keep)
        return dropped

    # -- kinematics -----------------------------------------------------------------------
    def absolute_coordinates(self, beta, betad=None):
        """``(q_b, qd_b, T, Td betad)`` of the descriptor form at ``(beta, betad)``."""
        # one memo for the calls at rest (rows, their Jacobian, Mbar) and one for those in
        # motion, so that a Newton iteration's alternating calls do not evict each other
        slot = "absolute" if betad is None else "absolute_moving"
        betad = np.zeros(self.n_q) if betad is None else np.asarray(betad, float)
        key = (np.asarray(beta, float).tobytes(), betad.tobytes())
        if self._memo.get(slot, (None,))[0] != key:
            self._memo[slot] = (key, self._absolute(beta, betad))
        return self._memo[slot][1]

    def _absolute(self, beta, betad):
        beta = np.asarray(beta, float)
        if self.tree.flexible:
            # q_b and T depend on beta alone: made once for the calls at rest and in motion
            pose = self._pose(beta)
            key = beta.tobytes()
            if self._memo.get("placement", (None,))[0] != key:
                placed = body_placement(self.tree, pose[0], pose[1], pose[2],
                                        self.absolute.body_slices, self.absolute.n_q, beta)
                for a in placed[:2]:    # shared by the calls at rest and in motion
                    a.flags.writeable = False
                self._memo["placement"] = (key, placed)
            q_b, T, es = self._memo["placement"][1]
            kin = forward_flexible(self.tree, beta, betad, pose)
            Tdbd = rate_products(self.tree, es, kin.v, kin.ahat, self.absolute.body_slices,
                                 self.absolute.n_q)
            return q_b, T @ betad, T, Tdbd
        kin = forward(self.tree, beta, betad)
        J, ahat = nonrecursive.jacobians(self.tree, kin)
        q_b, T, Tdbd = absolute_state(self.tree, kin, J, ahat, self.absolute.body_slices,
                                      self.absolute.n_q, beta)
        return q_b, T @ betad, T, Tdbd

    def body_coordinates(self, beta, betad=None):
        """``(q_b, qd_b, Td betad, geometry)`` at ``(beta, betad)``: with ``by_path``
        from the sweep body by body (:func:`~flexmbs.relative.cut_rows.body_states`, O(n),
        no ``T``; ``geometry`` the :class:`~flexmbs.relative.cut_rows.PathGeometry`),
        else from :meth:`absolute_coordinates` (``geometry`` None).  Memoised as
        :meth:`absolute_coordinates`."""
        if not self.by_path:
            q_b, qd_b, _, Tdbd = self.absolute_coordinates(beta, betad)
            return q_b, qd_b, Tdbd, None
        slot = "path" if betad is None else "path_moving"
        beta = np.asarray(beta, float)
        betad = np.zeros(self.n_q) if betad is None else np.asarray(betad, float)
        key = (beta.tobytes(), betad.tobytes())
        if self._memo.get(slot, (None,))[0] != key:
            if self.tree.flexible:
                st = self.flexible_state(beta, None if slot == "path" else betad)
                geo = cut_rows.PathGeometry(st.loc.r, st.loc.C, st.loc.X_e, st.e)
                v, ahat = st.v, st.ahat
            else:
                kin = (self.forward_at_rest(beta) if slot == "path"
                       else forward(self.tree, beta, betad))
                geo = cut_rows.PathGeometry(kin.r, kin.C, [None] * self.tree.n,
                                            body_quaternions(kin.A))
                v, ahat = kin.v, []
                for i, tj in enumerate(self.tree.joints):
                    a_p = np.zeros(6) if tj.parent < 0 else transfer(kin.rho[i],
                                                                     ahat[tj.parent])
                    ahat.append(a_p + kin.a_breve[i])
            q_b, qd_b, Tdbd = cut_rows.body_states(self.tree, geo, v, ahat, beta, betad,
                                                   self.absolute.body_slices,
                                                   self.absolute.n_q)
            self._memo[slot] = (key, (q_b, qd_b, Tdbd, geo))
        return self._memo[slot][1]

    def forward_at_rest(self, beta):
        """The rigid tree's forward sweep at ``(beta, 0)``, memoised on ``beta``'s bytes
        (the Newton factor and the cut rows at one point share it)."""
        beta = np.asarray(beta, float)
        key = beta.tobytes()
        if self._memo.get("forward_rest", (None,))[0] != key:
            self._memo["forward_rest"] = (key, forward(self.tree, beta, np.zeros(self.n_q)))
        return self._memo["forward_rest"][1]

    def body_accelerations(self, beta, betad, betadd) -> np.ndarray:
        """``qdd_b = T betadd + Td betad`` of the descriptor form; with ``by_path``
        without ``T`` (:func:`~flexmbs.relative.cut_rows.velocity_map_product`, O(n))."""
        betadd = np.asarray(betadd, float)
        if not self.by_path:
            _, _, T, Tdbd = self.absolute_coordinates(beta, betad)
            return T @ betadd + Tdbd
        _, _, Tdbd, geo = self.body_coordinates(beta, betad)
        return cut_rows.velocity_map_product(self.tree, geo, betadd,
                                             self.absolute.body_slices,
                                             self.absolute.n_q) + Tdbd

    def _pose(self, beta) -> tuple:
        """``(A, r, J)`` of the flexible tree at ``beta``, memoised on its bytes."""
        key = beta.tobytes()
        if self._memo.get("pose", (None,))[0] != key:
            self._memo["pose"] = (key, poses_and_jacobians(self.tree, beta))
        return self._memo["pose"][1]

    def velocity_map_at(self, beta, e_ref=None, moved=None, base=None) -> np.ndarray:
        """``T(beta)`` of a flexible tree (one sweep), its Euler parameters with the
        signs of ``e_ref`` (one per body) if given; with ``moved`` (per body) and
        ``base`` (``(A, r, J)`` at a ``beta`` that differs only in coordinates that move
        no other body) only the moved bodies' rows, zero elsewhere."""
        A, _, J = poses_and_jacobians(self.tree, np.asarray(beta, float), moved, base)
        return velocity_map(self.tree, body_quaternions(A, e_ref, moved), J,
                            self.absolute.body_slices, self.absolute.n_q, moved)

    def initial_q(self) -> np.ndarray:
        return self.tree.beta0()

    def initial_qd(self) -> np.ndarray:
        """``betad`` whose body twists fit the bodies' ``v0``, ``omega0`` best (least
        squares on ``v = J betad``; exact when they are compatible with the joints)."""
        beta = self.initial_q()
        if self.tree.flexible:
            J = poses_and_jacobians(self.tree, beta)[2]
        else:
            J = nonrecursive.jacobians(self.tree, forward(self.tree, beta, np.zeros(self.n_q)))[0]
        rows, rhs = [], []
        for i, b in enumerate(self.tree.bodies):
            v_O = np.asarray(b.v0, float)
            rows.append(J[i])
            rhs.append(np.concatenate([b.omega0, v_O]))
            qe = self.tree.joints[i].qe
            if qe.stop > qe.start:                   # modal rates: the body's qed0
                rows.append(np.eye(self.n_q)[qe])
                rhs.append(np.asarray(b.qed0, float))
        # a body's v0 is its origin's velocity, as v_O of the twist
        return np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0]

    def normalize(self, q):
        out = np.array(q, dtype=float, copy=True)
        for s in self.tree.e_rows:
            out[s] /= np.linalg.norm(out[s])
        return out

    # -- dynamics -------------------------------------------------------------------------
    def mass_and_bias(self, beta, betad, t: float = 0.0):
        """``(Mbar, k)`` by the model's formalism (force elements at time ``t``)."""
        beta, betad = np.asarray(beta, float), np.asarray(betad, float)
        if self.tree.flexible:
            return self.mass_matrix(beta), -self._flexible_dynamics(
                beta, betad, np.zeros(self.n_q), t)
        kin = forward(self.tree, beta, betad)
        mod = recursive if self.formulation == "recursive" else nonrecursive
        return mod.mass_and_bias(self.tree, kin, self.gravity,
                                 self.applied_wrenches(beta, betad, t))

    def applied_wrenches(self, q, qd, t, lam_rows=None) -> list | None:
        """Wrenches ``[M; F]`` about ``O_i`` of the force elements (and, with
        ``lam_rows``, of the cut joints and drives, ``-C_b^T lam``) on the tree bodies,
        or None when there are none."""
        if not self.model.forces and lam_rows is None:
            return None
        q_b, qd_b = self.body_coordinates(q, qd)[:2]
        Q = np.zeros(self.absolute.n_q)
        for fb, c in self.absolute.force_contributions(q_b, qd_b, t, 1):
            Q[fb.idx] += c.Q[:-1]
        if lam_rows is not None and len(self.cut_rows):
            G_b = sp.csr_matrix(self.absolute.constraint_jacobian(q_b, t))[self.cut_rows]
            Q -= G_b.T @ lam_rows
        return body_wrenches(self.tree, self.absolute.body_slices, q_b, Q)

    def _projected(self, q, qd, qdd, t):
        """``T^T r_b(q_b, T betad, T betadd + Td betad, t)`` (module doc)."""
        q_b, qd_b, T, Tdbd = self.absolute_coordinates(q, qd)
        return T.T @ self.body_residual(q_b, qd_b, T @ np.asarray(qdd, float) + Tdbd, t)

    def _flexible_dynamics(self, q, qd, qdd, t):
        """``Mbar betadd - k`` of a flexible tree by the model's formalism."""
        if self.formulation != "recursive":
            return self._projected(q, qd, qdd, t)
        return flexible_recursive.inverse_dynamics(
            self.tree, self.flexible_state(q, qd), np.asarray(qdd, float),
            lambda q_b, qd_b, qdd_b: self.body_residual(q_b, qd_b, qdd_b, t),
            self.absolute.body_slices, self.absolute.n_q)

    def flexible_state(self, q, qd=None):
        """The recursive sweep's :class:`~flexmbs.relative.flexible_recursive.FlexibleState`
        at ``(q, qd)``, memoised on their bytes; at rest (``qd`` None, the mass matrix) and
        in motion (the dynamics) in two slots, so that the two calls of one Newton
        iteration do not evict each other."""
        q = np.asarray(q, float)
        slot = "recursive_rest" if qd is None else "recursive"
        qd = np.zeros(self.n_q) if qd is None else np.asarray(qd, float)
        key = (q.tobytes(), qd.tobytes())
        if self._memo.get(slot, (None,))[0] != key:
            self._memo[slot] = (key, flexible_recursive.state(self.tree, q, qd))
        return self._memo[slot][1]

    def body_mass_matrix(self, q_b):
        """The bodies' mass matrix ``M_b`` of the descriptor form at ``q_b`` (sparse)."""
        z = np.zeros(self.absolute.n_q)
        return self.absolute.tangent(q_b, z, z, np.zeros(self.absolute.n_lam), 0.0)[2]

    def body_residual(self, q_b, qd_b, qdd_b, t):
        """The bodies' residuals with the force elements, ``r_b`` of the descriptor form
        (its residual at ``lam = 0``)."""
        return self.absolute.residual(q_b, qd_b, qdd_b, np.zeros(self.absolute.n_lam), t)

    def _dynamics(self, q, qd, qdd, t):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        if self.tree.flexible:
            return self._flexible_dynamics(q, qd, qdd, t)
        kin = forward(self.tree, q, qd)
        f_t = self.applied_wrenches(q, qd, t)
        if self.formulation == "recursive":
            return recursive.inverse_dynamics(self.tree, kin, np.asarray(qdd, float),
                                              self.gravity, f_t)
        Mbar, k = nonrecursive.mass_and_bias(self.tree, kin, self.gravity, f_t)
        return Mbar @ qdd - k

    def residual(self, q, qd, qdd, lam, t):
        r = self._dynamics(q, qd, qdd, t)
        if self.n_lam:
            r = r + self._constraint_forces(np.asarray(q, float), np.asarray(lam, float), t)
        return r

    def _constraint_forces(self, q, lam, t) -> np.ndarray:
        """``G^T lam = [2 e_j lam_j]_j + G_c^T lam_c`` without assembling ``G`` (the
        Euler rows joint by joint, the memoised dense ``G_c`` row by row: the numbers of
        ``constraint_jacobian(q, t).T @ lam``)."""
        n_e = len(self.tree.e_rows)
        out = np.zeros(self.n_q)
        for k, s in enumerate(self.tree.e_rows):
            out[s] = (2.0 * q[s]) * lam[k]
        if len(self.cut_rows):
            # row by row, in the order (and so with the round-off) of the sparse product
            for G_j, lam_j in zip(self._cut_jacobian(q, t), lam[n_e:], strict=True):
                out += G_j * lam_j
        return out

    def mass_matrix(self, q):
        if self.tree.flexible and self.formulation == "recursive":
            st = self.flexible_state(q)
            q_b = flexible_recursive.body_state(self.tree, st, self.absolute.body_slices,
                                                self.absolute.n_q)[0]
            return flexible_recursive.mass_matrix(self.tree, st, self.body_mass_matrix(q_b),
                                                  self.absolute.body_slices)
        if self.tree.flexible:
            q_b, _, T, _ = self.absolute_coordinates(q)
            M_b = self.body_mass_matrix(q_b)
            return T.T @ (M_b @ T)
        kin = forward(self.tree, np.asarray(q, float), np.zeros(self.n_q))
        if self.formulation == "recursive":
            return recursive.mass_matrix(self.tree, kin)
        return nonrecursive.mass_and_bias(self.tree, kin, self.gravity)[0]

    def tangent(self, q, qd, qdd, lam, t):
        if self.tree.flexible:
            return tuple(sp.csr_matrix(x) for x in self._flexible_tangent(q, qd, qdd, lam, t))
        K = _central(lambda x: self.residual(x, qd, qdd, lam, t), q)
        C = _central(lambda x: self.residual(q, x, qdd, lam, t), qd)
        return sp.csr_matrix(K), sp.csr_matrix(C), sp.csr_matrix(self.mass_matrix(q))

    def tangent_mass(self, q, qd, qdd, lam, t):
        """``M = dr/dqdd = Mbar`` alone (no central differences)."""
        return sp.csr_matrix(self.mass_matrix(q))

    def newton_factor(self, q, qd, qdd, lam, t, c_K, c_C, c_M):
        """The Newton matrix of a step factored (module doc): modified Newton by the
        articulated bodies; within one Newton solve, once the modified iteration has
        stalled, the full matrix by GMRES (:class:`KrylovFactor`).

        A call is the same Newton solve's when ``t`` and the coefficients are the last
        call's and ``q`` is where the last factor's last increment led (basic line
        search); any other call starts a solve (a step, a run, a restart).  The factor of
        a call that goes on decides at its first ``solve(F)``: GMRES if the articulated
        factor's increment ``x = W_0^-1 F`` has ``|x| > THETA |dx_prev|`` (the solve's
        previous increment: the modified iteration does not contract) and the factor's own
        contraction ``|W_0^-1 W x - x| / |x| > THETA`` (:func:`_contraction`, measured
        at each such factor); after a measure at most ``THETA`` an increment with
        ``|x| >= |dx_prev|`` switches too (a stall); else the
        articulated factor, so that without Jacobian reuse (a matrix every iteration) or
        after a matrix kept
        from the previous step a contracting iteration stays modified.  Asked twice at the same point (the set-up's probe, then the first
        iteration), it returns the same factor."""
        q = np.asarray(q, float)
        run = self._newton_solve
        if run is not None and run.last is not None and run.last[0] == (
                t, q.tobytes(), c_K, c_C, c_M):
            return run.last[1]
        goes_on = (run is not None and run.coefficients == (t, c_K, c_C, c_M)
                   and run.next_q is not None and np.array_equal(run.next_q, q))
        if not goes_on:
            run = self._newton_solve = _NewtonSolve((t, c_K, c_C, c_M))
        if self.tree.flexible:
            schur = self._flexible_factor(q, t, c_K, c_C, c_M)
            G_c = schur.G_c
        else:
            kin = self.forward_at_rest(q)
            G_c = (self._cut_jacobian(q, t) if len(self.cut_rows)
                   else np.zeros((0, self.n_q)))
            schur = SchurFactor(self.tree, kin, q, G_c, c_M)
        self.newton_counts["articulated"] += 1

        def krylov():
            return KrylovFactor(
                self._newton_product(q, qd, qdd, lam, t, c_K, c_C, c_M, G_c), schur,
                lambda: self._dense_newton(q, qd, qdd, lam, t, c_K, c_C, c_M),
                self.n_q + self.n_lam)
        factor = _WatchedFactor(run, q, schur, krylov if goes_on else None,
                                self.newton_counts)
        run.last = ((t, q.tobytes(), c_K, c_C, c_M), factor)
        return factor

    def _dense_newton(self, q, qd, qdd, lam, t, c_K, c_C, c_M) -> np.ndarray:
        """The full Newton matrix ``[[c_K K + c_C C + c_M M, G^T], [G, 0]]``, dense (the
        tangent by central differences, O(n^2) residual evaluations)."""
        G = self.constraint_jacobian(q, t).toarray()
        K, C, M = (x.toarray() for x in self.tangent(q, qd, qdd, lam, t))
        W = np.zeros((self.n_q + self.n_lam,) * 2)
        W[:self.n_q, :self.n_q] = c_K * K + c_C * C + c_M * M
        W[:self.n_q, self.n_q:], W[self.n_q:, :self.n_q] = G.T, G
        return W

    def _newton_product(self, q, qd, qdd, lam, t, c_K, c_C, c_M, G_c):
        """``[x; y] -> W [x; y]`` of a tree without forming ``W`` (O(n + n m_c)):

            top = (r_0(q + s c_K x, qd + s c_C x, qdd + s c_M x) - r_0(... - s ...)) / 2s
                  + c_K d(G^T lam)/dq x + G^T y,        bottom = G x,

        ``r_0`` the residual without the constraint forces (``Mbar qdd - k``), ``s`` such
        that the largest perturbation is ``PRODUCT_STEP (1 + |(q, qd, qdd)|_inf)`` and
        that of ``q`` at most ``PRODUCT_STEP_Q (1 + |q|_inf)``; the Euler
        rows ``2 e_j^T`` and their ``d(G^T lam)/dq = 2 lam_j I`` joint by joint, the cut
        rows' ``d(G_c^T lam_c)/dq x`` by a central difference of ``G_c``."""
        n, e_rows = self.n_q, self.tree.e_rows
        n_e = len(e_rows)
        lam = np.asarray(lam, float)
        lam_e, lam_c = lam[:n_e], lam[n_e:]
        size = 1.0 + max(np.max(np.abs(q), initial=0.0), np.max(np.abs(qd), initial=0.0),
                         np.max(np.abs(qdd), initial=0.0))
        size_q = 1.0 + np.max(np.abs(q), initial=0.0)

        def apply(v):
            x, y = v[:n], v[n:]
            scale = max(abs(c_K), abs(c_C), abs(c_M)) * np.max(np.abs(x), initial=0.0)
            out = np.zeros(n + self.n_lam)
            if scale > 0.0:
                s = PRODUCT_STEP * size / scale
                if c_K:
                    s = min(s, PRODUCT_STEP_Q * size_q / (abs(c_K) * np.max(np.abs(x))))
                dq, dqd, dqdd = s * c_K * x, s * c_C * x, s * c_M * x
                out[:n] = (self._dynamics(q + dq, qd + dqd, qdd + dqdd, t)
                           - self._dynamics(q - dq, qd - dqd, qdd - dqdd, t)) / (2.0 * s)
                if len(lam_c) and np.any(lam_c):
                    h = FD_STEP * (1.0 + np.max(np.abs(q))) / np.max(np.abs(x))
                    out[:n] += c_K * ((self._cut_jacobian(q + h * x, t)
                                       - self._cut_jacobian(q - h * x, t)).T @ lam_c) / (2 * h)
            for k, sl in enumerate(e_rows):
                out[sl] += 2.0 * (c_K * lam_e[k] * x[sl] + q[sl] * y[k])
                out[n + k] = 2.0 * q[sl] @ x[sl]
            if len(lam_c):
                out[:n] += G_c.T @ y[n_e:]
                out[n + n_e:] = G_c @ x
            return out
        return apply

    def _flexible_factor(self, q, t, c_K, c_C, c_M):
        """The modified Newton matrix of a flexible tree, ``[[c_M Mbar + Delta_e, G^T],
        [G, 0]]`` (``Delta_e``: ``c_K K_t(q_e) + c_C D_e`` on each flexible body's modal
        coordinates), factored by articulated bodies
        (:mod:`flexmbs.relative.flexible_articulated`)."""
        q = np.asarray(q, float)
        st = self.flexible_state(q)
        slices = self.absolute.body_slices
        q_b = flexible_recursive.body_state(self.tree, st, slices, self.absolute.n_q)[0]
        M_b = self.body_mass_matrix(q_b).tocsr()
        M_i = []
        for body in self.tree.bodies:
            s = slices[body.name]
            M_i.append(M_b[s, s].toarray())
        G_c = self._cut_jacobian(q, t) if len(self.cut_rows) else np.zeros((0, self.n_q))
        return FlexibleSchurFactor(self.tree, st.loc, st.e, M_i, q, G_c, c_M, c_K, c_C)

    def _flexible_tangent(self, q, qd, qdd, lam, t):
        """Dense ``(K, C, M)`` of a flexible tree (:mod:`flexmbs.relative.flexible_tangent`)."""
        q, qd, qdd = (np.asarray(x, float) for x in (q, qd, qdd))
        lam = np.asarray(lam, float)
        q_b, qd_b, T, Tdbd = self.absolute_coordinates(q, qd)
        qdd_b = T @ qdd + Tdbd
        n_e = len(self.tree.e_rows)
        mu_b = np.zeros(self.absolute.n_lam)
        mu_b[self.cut_rows] = lam[n_e:]
        T_at, dT = self._gradients(q, q_b, T)
        e_ref = [q_b[self.absolute.body_slices[b.name]][3:7] for b in self.tree.bodies]
        derivatives = T_derivatives(
            T_at, q, qd, T, dT,
            (lambda x: T_gradients(self._T_about(x, e_ref), x, self.velocity_map_at(x, e_ref)))
            if self.tree.e_rows else None)
        K, C, M = projected_tangent(T, derivatives,
                                    self.absolute.tangent(q_b, qd_b, qdd_b, mu_b, t),
                                    self.absolute.residual(q_b, qd_b, qdd_b, mu_b, t), qd, qdd)
        for k, s in enumerate(self.tree.e_rows):
            K[s, s] += 2.0 * lam[k] * np.eye(s.stop - s.start)
        # T is no Jacobian along a joint's Euler parameters e (its rows map their rates
        # through G^T G = E - e e^T): those columns by differences of the residual along
        # e/|e|, in betad exact (quadratic) at a large step
        step = RADIAL_STEP * (1.0 + np.max(np.abs(qd), initial=0.0))
        for s in self.tree.e_rows:
            u = np.zeros(self.n_q)
            u[s] = q[s] / np.linalg.norm(q[s])
            C_u = (self._dynamics(q, qd + step * u, qdd, t)
                   - self._dynamics(q, qd - step * u, qdd, t)) / (2.0 * step)
            K_u = (self.residual(q + FD_STEP * u, qd, qdd, lam, t)
                   - self.residual(q - FD_STEP * u, qd, qdd, lam, t)) / (2.0 * FD_STEP)
            C += np.outer(C_u - C @ u, u)
            K += np.outer(K_u - K @ u, u)
        return K, C, M

    # -- constraints ----------------------------------------------------------------------
    def constraint(self, q, t):
        q = np.asarray(q, float)
        norm = [q[s] @ q[s] - 1.0 for s in self.tree.e_rows]
        if not len(self.cut_rows):
            return np.array(norm)
        q_b = self.body_coordinates(q)[0]
        return np.concatenate([norm, self._cut(self.absolute.constraint(q_b, t))])

    def _cut(self, g_all):
        """The cut joints' rows of the descriptor form's rows (all active there)."""
        return np.asarray(g_all)[self.cut_rows]

    def constraint_jacobian(self, q, t):
        """``G = [2 e^T; G_c]``: the Euler normalisations' rows (4 entries each) and the
        cut rows, sparse (O(n) for a tree without cut rows; no dense (n_lam, n_q))."""
        q = np.asarray(q, float)
        rows, cols = self._e_entries
        E = sp.csr_matrix((2.0 * q[cols], (rows, cols)),
                          shape=(len(self.tree.e_rows), self.n_q))
        if not len(self.cut_rows):
            return E
        return sp.vstack([E, sp.csr_matrix(self._cut_jacobian(q, t))], format="csr")

    @functools.cached_property
    def _e_entries(self) -> tuple[np.ndarray, np.ndarray]:
        """Row and column of each entry of the Euler rows ``2 e^T`` (fixed by the tree)."""
        e_rows = self.tree.e_rows
        cols = np.array([c for s in e_rows for c in range(s.start, s.stop)], dtype=int)
        rows = np.array([k for k, s in enumerate(e_rows) for _ in range(s.start, s.stop)],
                        dtype=int)
        return rows, cols

    def _cut_jacobian(self, q, t):
        """``C_b T`` (rows of the cut joints, (n_cut, n_beta)), memoised on ``(q, t)``;
        with ``by_path`` along the touched bodies' paths (:mod:`flexmbs.relative.cut_rows`)."""
        key = (q.tobytes(), float(t), self.cut_rows.tobytes())
        if self.by_path and self._memo.get("cut", (None,))[0] != key:
            q_b, _, _, geo = self.body_coordinates(q)
            C_b = sp.csr_matrix(self.absolute.constraint_jacobian(q_b, t))[self.cut_rows]
            self._memo["cut"] = (key, cut_rows.cut_jacobian(
                self.tree, geo, C_b, self._body_index, self.absolute.body_slices))
        if self._memo.get("cut", (None,))[0] != key:
            q_b, _, T, _ = self.absolute_coordinates(q)
            G_b = self.absolute.constraint_jacobian(q_b, t).toarray()[self.cut_rows]
            self._memo["cut"] = (key, G_b @ T)
        return self._memo["cut"][1]

    def constraint_rates(self, q, qd, t):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        n_e = len(self.tree.e_rows)
        g_t, gamma = np.zeros(self.n_lam), np.zeros(self.n_lam)
        for k, s in enumerate(self.tree.e_rows):
            gamma[k] = 2.0 * qd[s] @ qd[s]
        if len(self.cut_rows):
            q_b, qd_b, Tdbd, _ = self.body_coordinates(q, qd)
            gt_b, gamma_b = self.absolute.constraint_rates(q_b, qd_b, t)
            G_b = sp.csr_matrix(self.absolute.constraint_jacobian(q_b, t))[self.cut_rows]
            g_t[n_e:] = self._cut(gt_b)
            gamma[n_e:] = self._cut(gamma_b) + G_b @ Tdbd
        return g_t, gamma

    def constraint_force_jacobian(self, q, mu, t):
        """``d(G^T mu)/dbeta``; for a flexible tree ``2 mu_j E`` on the normalised
        quaternions plus ``T^T d(C_b^T mu_b)/dq_b T + [dT_k^T C_b^T mu_b]_k``."""
        if not self.tree.flexible:
            return sp.csr_matrix(_central(lambda x: self.constraint_jacobian(x, t).T @ mu, q))
        q, mu = np.asarray(q, float), np.asarray(mu, float)
        out = np.zeros((self.n_q, self.n_q))
        for k, s in enumerate(self.tree.e_rows):
            out[s, s] += 2.0 * mu[k] * np.eye(s.stop - s.start)
        if len(self.cut_rows):
            q_b, T, dT, G_b = self._cut_derivatives(q, t)
            mu_b = np.zeros(self.absolute.n_lam)
            mu_b[self.cut_rows] = mu[len(self.tree.e_rows):]
            H = self.absolute.constraint_force_jacobian(q_b, mu_b, t)
            out += T.T @ (H @ T) + np.column_stack([d.T @ (G_b.T @ mu_b) for d in dT])
        return sp.csr_matrix(out)

    def constraint_velocity_jacobian(self, q, v, t):
        """``d(G v)/dbeta``; for a flexible tree ``2 v_j^T`` on the normalisations and
        ``(d(C_b w)/dq_b) T + C_b [dT_k v]_k`` (``w = T v``) on the cut rows."""
        if not self.tree.flexible:
            return sp.csr_matrix(_central(lambda x: self.constraint_jacobian(x, t) @ v, q))
        q, v = np.asarray(q, float), np.asarray(v, float)
        out = np.zeros((self.n_lam, self.n_q))
        for k, s in enumerate(self.tree.e_rows):
            out[k, s] = 2.0 * v[s]
        if len(self.cut_rows):
            q_b, T, dT, G_b = self._cut_derivatives(q, t)
            H = self.absolute.constraint_velocity_jacobian(q_b, T @ v, t)
            out[len(self.tree.e_rows):] = (H @ T)[self.cut_rows] + (
                G_b @ np.column_stack([d @ v for d in dT]))[self.cut_rows]
        return sp.csr_matrix(out)

    def _cut_derivatives(self, q, t):
        """``(q_b, T, [dT/dbeta_k], C_b)`` of a flexible tree at ``q`` (all active rows
        of ``C_b``)."""
        q_b, _, T, _ = self.absolute_coordinates(q)
        dT = self._gradients(q, q_b, T)[1]
        return q_b, T, dT, self.absolute.constraint_jacobian(q_b, t).toarray()

    def _gradients(self, q, q_b, T):
        """``(T_at, [dT/dbeta_k])`` of a flexible tree at ``q`` (``T_at``: ``T`` with the
        Euler parameters of ``q_b``'s signs; at ``q`` moved in ``q_k`` alone, ``T_at(x, k)``
        sweeps only the bodies that ``q_k`` moves), memoised on ``q``: the tangent and the two
        constraint derivatives of one Newton matrix share them."""
        key = q.tobytes()
        memo = self._memo.get("dT")
        if memo is None or memo[0] != key:
            e_ref = [q_b[self.absolute.body_slices[b.name]][3:7] for b in self.tree.bodies]
            T_at = self._T_about(q, e_ref, self._pose(q))
            memo = self._memo["dT"] = (key, T_at, T_gradients(T_at, q, T))
        return memo[1], memo[2]

    def _T_about(self, q, e_ref, base=None):
        """``T_at(x, k=None)``: ``T`` at ``x`` with the Euler parameters' signs of
        ``e_ref``; at an ``x`` that differs from ``q`` in ``x_k`` alone, only the bodies
        that ``q_k`` moves are swept (``base``: the pose at ``q``)."""
        base = poses_and_jacobians(self.tree, q) if base is None else base
        moved = [moved_bodies(self.tree, k) for k in range(self.n_q)]

        def T_at(x, k=None):
            if k is None:
                return self.velocity_map_at(x, e_ref)
            return self.velocity_map_at(x, e_ref, moved[k], base)
        return T_at


#: the increment contraction below which ``newton_factor`` keeps the modified iteration
#: (the value of the integrator's default ``theta``)
THETA = 0.25


class _NewtonSolve:
    """``newton_factor``'s record of the current Newton solve: its ``(t, c_K, c_C,
    c_M)``, the point its last increment led to, ``|dx|`` of its last solve, whether it
    has switched to the full matrix, whether a fresh factor's own contraction was
    measured good (``modified``: the solve stays modified), and the last ``(key,
    factor)`` made."""

    def __init__(self, coefficients):
        self.coefficients = coefficients
        self.next_q: np.ndarray | None = None
        self.dx_norm = np.inf
        self.full = False
        self.modified = False
        self.last = None


class _WatchedFactor:
    """A factor of ``newton_factor`` (its doc): the articulated one, or, when ``krylov``
    is given and the articulated factor's first increment shows no contraction that is
    the factor's own (:func:`_contraction`), the full one; each solve records the point
    its increment leads to and ``|dx|`` in the solve's record."""

    def __init__(self, run: _NewtonSolve, q, schur, krylov, counts: dict):
        self.run, self.q, self.schur, self.krylov, self.counts = run, q, schur, krylov, counts
        self.inner, self.at = None, q

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        run, n = self.run, len(self.q)
        if np.ndim(rhs) != 1:           # several right-hand sides: not a Newton iteration
            return (self.schur if self.inner is None else self.inner).solve(rhs)
        x, full = None, None
        if self.inner is None:
            if self.krylov is not None and not run.full:
                x = self.schur.solve(rhs)           # the modified increment, O(n)
                x_norm = float(np.linalg.norm(x))
                if run.modified and not x_norm < run.dx_norm:
                    # a factor's contraction was measured good in this solve: an
                    # increment that does not shrink is a stall whatever its cause
                    run.full = True
                elif not x_norm <= THETA * run.dx_norm:
                    # a poor contraction: this factor's, or the nonlinearity's? (measured
                    # at every such fresh factor: one good measure does not vouch for
                    # the factors after it)
                    full = self.krylov()
                    run.full = not _contraction(full, x) <= THETA
                    run.modified = run.modified or not run.full
                    self.counts["checked"] += 1
            if self.krylov is not None and run.full:
                self.inner, x = full if full is not None else self.krylov(), None
                self.counts["krylov"] += 1
            else:
                self.inner = self.schur
        if x is not None:
            pass
        elif self.inner is self.schur:
            x = self.schur.solve(rhs)
        else:
            before = (len(self.inner.iterations), self.inner.dense_solves)
            x = self.inner.solve(rhs)
            self.counts["gmres"] += sum(self.inner.iterations[before[0]:])
            self.counts["dense"] += self.inner.dense_solves - before[1]
        self.at = self.at - x[:n]               # x_{k+1} = x_k - dx (basic line search)
        run.next_q, run.dx_norm = self.at, float(np.linalg.norm(x))
        return x


def _contraction(full: KrylovFactor, x: np.ndarray) -> float:
    """``|W_0^-1 W x - x| / |x|``: the modified iteration's own (linear) error
    contraction along the increment ``x`` of its fresh factor ``W_0``, ``W x`` one
    product of ``full`` (two residuals).  Newton's error ``e`` maps to ``(I - W_0^-1 W)
    e`` plus the nonlinear remainder that the full matrix leaves too; ``x ~ e`` at the
    fresh factor's point."""
    x_norm = float(np.linalg.norm(x))
    if x_norm == 0.0:                   # (a non-finite x gives nan: not <= THETA)
        return 0.0
    return float(np.linalg.norm(full.P(full.apply(x)) - x)) / x_norm


def _central(f, x) -> np.ndarray:
    """``df/dx`` by central differences (columns)."""
    x = np.asarray(x, dtype=float)
    cols = []
    for k in range(x.size):
        h = FD_STEP * (1.0 + abs(x[k]))
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        cols.append((np.asarray(f(xp)) - np.asarray(f(xm))) / (2 * h))
    return np.column_stack(cols) if cols else np.zeros((0, 0))
