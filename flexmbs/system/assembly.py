"""The assembled multibody DAE in descriptor form (THEORY (2.79), §1.5).

Generalized coordinates ``q`` stack the bodies' coordinates (rigid: ``[r, e]``, point
mass: ``r``).  The residual and constraints of :class:`flexmbs.integrate.protocol.DAE`:

    r = sum_bodies r_b(q_b, qd_b, qdd_b) - sum_forces Q_f + G^T lam,     g = [g_norm; g_joints]

with ``g_norm = e.e - 1`` per rigid body.  Internal states ``z`` of force elements
(:mod:`flexmbs.forces.states`) are coordinates after the bodies' with the residual rows
``r_z = zd - f(z, q, qd, t)`` (``f`` is the elements' ``Q`` in those rows).  Every joint, drive and force element is
evaluated on its local vector ``x = [q_i; q_j; t]`` through jets, and scattered into
sparse global matrices.  Redundant constraint rows found by the rank test
(:mod:`flexmbs.system.dof`) are dropped from ``g``; their multipliers are reported as 0
and the affected reactions flagged as not unique.

:class:`AssembledSystem` is the front that composes the parts: the
:class:`~flexmbs.system.layout.Layout` (offsets and blocks), the
:class:`~flexmbs.system.constraint_rows.ConstraintRows` (active rows, how they are
evaluated, memos), the :class:`~flexmbs.system.constraint_hessian.ConstraintHessian`,
the :class:`~flexmbs.system.force_terms.ForceTerms`, the
:class:`~flexmbs.system.tangent.TangentAssembly` and the outputs of
:mod:`flexmbs.system.outputs`.
"""
from __future__ import annotations

import math

import numpy as np

from flexmbs.bodies.pack import BodyPack
from flexmbs.compiled import use_compiled
from flexmbs.system import outputs
from flexmbs.system.affine_plan import AffinePlan
from flexmbs.system.constraint_hessian import ConstraintHessian
from flexmbs.system.contacts import ContactTerms
from flexmbs.system.constraint_rows import ConstraintRows
from flexmbs.system.force_terms import ForceTerms
from flexmbs.system.friction_pack import FrictionPack
from flexmbs.system.spring_pack import LocalSprings, SpringPack
from flexmbs.system.stacked import MAX_N as STACKED_MAX_N
from flexmbs.system.layout import Layout
from flexmbs.system.sparse import CSRMatrix, Grids
from flexmbs.system.tangent import TangentAssembly
from flexmbs.system.velocity_rows import VelocityRows

__all__ = ["AssembledSystem", "CSRMatrix"]


class AssembledSystem:
    """The DAE of a validated :class:`~flexmbs.system.model.System` (implements
    :class:`flexmbs.integrate.protocol.DAE`, offers a fixed-pattern ``newton_matrix``, an
    ``iteration_matrix`` and, when the compiled kernels cover it, an :meth:`affine_plan`).

    With velocity constraints (``n_mu > 0``, :class:`flexmbs.integrate.protocol.
    VelocityConstraints`) the multiplier vector may be ``[lam; mu]``: ``residual`` adds
    ``A^T mu``, ``tangent`` and ``iteration_matrix`` ``d(A^T mu)/dq``, ``reactions`` the
    velocity constraints' wrenches; ``lam`` alone means ``mu = 0``."""

    def __init__(self, model, *, redundancy_tol: float = 1e-9):
        self.model = model
        self.layout = lay = Layout(model)
        self.constraint_rows = ConstraintRows(lay)
        grids = Grids()
        self.hessian = ConstraintHessian(self.constraint_rows, grids)
        self.forces = ForceTerms(lay)
        self.contacts = ContactTerms(self.forces)
        #: names of the contact elements, whose gaps are events (:meth:`event_gaps`)
        self.event_labels, self.event_bodies = self.contacts.labels, self.contacts.bodies
        self.matrices = TangentAssembly(lay, self.constraint_rows, self.hessian, self.forces,
                                        grids)
        self.redundant: list[str] = []
        self.redundancy_tol = redundancy_tol
        self._pack = None
        self._plan_cache = None
        self._local_springs = None
        # the layout's public parts, as attributes of the system
        self.gravity, self.bodies, self.offset = lay.gravity, lay.bodies, lay.offset
        self.n_q, self.body_slices = lay.n_q, lay.body_slices
        self.joint_markers, self.blocks, self.row_labels = (lay.joint_markers, lay.blocks,
                                                            lay.row_labels)
        self.n_rows_all, self.row_start = lay.n_rows_all, lay.row_start
        self.force_blocks, self.sensors = lay.force_blocks, lay.sensors
        self.sensor_markers = lay.sensor_markers
        self.state_slices, self.state_indices = lay.state_slices, lay.state_indices
        #: the velocity rows ``A qd + a = 0`` (:mod:`flexmbs.system.velocity_rows`); their
        #: ``n_mu`` multipliers ``mu`` follow ``lam`` in the multiplier vector
        self.velocity_rows = VelocityRows(lay, getattr(model, "constraints", ()))
        self.n_mu = self.velocity_rows.n_mu

    # -- active rows ----------------------------------------------------------------
    @property
    def active(self) -> np.ndarray:
        """Mask of the constraint rows in ``g`` (redundant rows dropped), read-only:
        assign a new mask (the memoised rows and patterns are keyed on it)."""
        return self.layout.active

    @active.setter
    def active(self, mask) -> None:
        self.layout.active = mask

    @property
    def active_key(self) -> bytes:
        return self.layout.active_key

    @property
    def n_lam(self) -> int:
        return self.layout.n_lam

    @property
    def active_row_labels(self) -> list[str]:
        """Labels of the active constraint rows (the rows of ``g``), in order."""
        return self.layout.active_row_labels

    @property
    def coordinate_labels(self) -> list[str]:
        """One label per coordinate of ``q`` (:attr:`Layout.coordinate_labels
        <flexmbs.system.layout.Layout.coordinate_labels>`)."""
        return self.layout.coordinate_labels

    def row_owner(self, row: int) -> str:
        """``"joint 'J1'"`` / ``"drive 'spin'"`` / ``"normalization 'arm'"`` of row ``row``
        (an index into :attr:`row_labels`)."""
        blk = self.blocks[self.layout.block_of_row(row)]
        return f"{blk.kind} '{blk.name}'"

    # -- initial state ----------------------------------------------------------------
    def initial_q(self) -> np.ndarray:
        return self.layout.initial_q()

    def initial_qd(self) -> np.ndarray:
        return self.layout.initial_qd()

    def normalize(self, q: np.ndarray) -> np.ndarray:
        return self.layout.normalize(q)

    # -- compiled paths -----------------------------------------------------------------
    def body_pack(self) -> BodyPack | None:
        """All bodies packed for one compiled residual call (:class:`~flexmbs.bodies.pack.
        BodyPack`), or None if some body has no compiled residual (point masses) or the
        reference kernels are chosen (:func:`flexmbs.compiled.use_compiled`).  Internal
        states of force elements (after the bodies' coordinates) are not the pack's."""
        if self._pack is None:
            ok = use_compiled() and BodyPack.supports(self.bodies)
            self._pack = BodyPack(self.bodies, [self.offset[id(b)] for b in self.bodies]) \
                if ok else False
        return self._pack or None

    def affine_plan(self) -> AffinePlan | None:
        """The :class:`~flexmbs.system.affine_plan.AffinePlan` of the compiled step
        (bodies packed, every row stacked), or None when the kernels do not cover the
        system (memoised on the active set)."""
        if self.n_mu:       # the compiled step has no velocity rows
            return None
        key = self.layout.active_key
        c = self._plan_cache
        if c is not None and c[0] == key:
            return c[1]
        pack, st = self.body_pack(), self.constraint_rows.stacked()
        plan = None
        if pack is not None and st is not None and st.complete:
            plan = AffinePlan(pack, st, self.constraint_rows, self.gravity, self.force_blocks,
                              self.state_indices, FrictionPack.of(self.layout, st),
                              SpringPack.of(self.layout, st))
        self._plan_cache = (key, plan)
        return plan

    def local_springs(self) -> LocalSprings | None:
        """The force elements of a system above the stacked rows' size that the compiled
        kernels cover, in one compiled call (:class:`~flexmbs.system.spring_pack.
        LocalSprings`), or None (smaller systems, none covered, or the reference kernels)."""
        if self._local_springs is None:
            ls = LocalSprings(self.layout) if self.n_q > STACKED_MAX_N and use_compiled() \
                and self.force_blocks else None
            self._local_springs = ls if ls is not None and len(ls) else False
        return self._local_springs or None

    # -- the DAE ------------------------------------------------------------------------
    def residual(self, q, qd, qdd, lam, t):
        pack = self.body_pack()
        if pack is not None:
            r = pack.residual(q, qd, qdd, self.gravity)
        else:
            r = np.empty(self.n_q)
            for b in self.bodies:                       # the bodies' slices tile q
                s = self.body_slices[b.name]
                r[s] = b.residual(q[s], qd[s], qdd[s], self.gravity)
        r[self.state_indices] = qd[self.state_indices]          # r_z = zd - f
        springs = self.local_springs()
        if springs is not None:                     # the covered elements in one call
            springs.residual(r, q, qd, t)
        for fb, c in self.forces.contributions(q, qd, t, 1, None if springs is None else
                                               springs.others, lam=lam):
            r[fb.idx] -= c.Q[:-1]                   # a block's coordinates are distinct
        if self.n_mu and len(lam) > self.n_lam:     # + A^T mu, mu after lam
            lam = np.asarray(lam, float)
            r += self.velocity_rows.generalized_force(q, lam[self.n_lam:], t)
            lam = lam[:self.n_lam]
        if self.n_lam:
            lam = np.asarray(lam, float)
            R = self.constraint_rows
            dense = R.dense_rows(q, t)
            sparse = R.transpose_product(q, t, lam) if dense is None else None
            if dense is not None:
                r += lam @ dense[1]
            elif sparse is not None:
                r += sparse
            else:   # G^T lam, block by block
                i0 = 0
                for bi, V, D, _ in R.rows(q, t, 1):
                    k = len(V)
                    r[self.blocks[bi].idx] += lam[i0:i0 + k] @ D[:, :-1]
                    i0 += k
        # a finite sum has finite terms (the full test only when the sum is not finite)
        if not math.isfinite(float(r.sum())) and not np.all(np.isfinite(r)):
            bad = self.nonfinite_source(q, qd, qdd, t)
            raise FloatingPointError(f"non-finite residual at t = {t:.6g} s from {bad}")
        return r

    def nonfinite_source(self, q, qd, qdd, t) -> str:
        """What makes the residual non-finite: ``body 'name'``, ``force element 'name'``
        or ``the constraints``."""
        for b in self.bodies:
            s = self.body_slices[b.name]
            if not np.all(np.isfinite(b.residual(q[s], qd[s], qdd[s], self.gravity))):
                return f"body '{b.name}'"
        for fb, c in self.forces.contributions(q, qd, t, 1):
            if not np.all(np.isfinite(c.Q)):
                return f"force element '{fb.element.name}'"
        return "the constraints"

    def force_contributions(self, q, qd, t, order, blocks=None, lam=None):
        """:meth:`ForceTerms.contributions <flexmbs.system.force_terms.ForceTerms.
        contributions>` of the system's force elements (or of ``blocks``; ``lam``: the
        multipliers, for the elements that read a joint reaction)."""
        return self.forces.contributions(q, qd, t, order, blocks, lam)

    def state_rates(self, q, qd, t) -> np.ndarray:
        """``f(z, q, qd, t)`` of the internal states ``q[state_indices]`` of the force
        elements (:meth:`ForceTerms.state_rates <flexmbs.system.force_terms.ForceTerms.
        state_rates>`)."""
        return self.forces.state_rates(q, qd, t)

    def event_gaps(self, q, qd, t):
        """``(s, sd, F_n)`` of the contact elements: gaps [m], their rates [m/s] and
        normal forces [N] (:class:`~flexmbs.system.contacts.ContactTerms`)."""
        return self.contacts.gaps(q, qd, t)

    def impact(self, q, k: int, sd: float) -> np.ndarray:
        """``q`` with contact ``k``'s approach speed set for an impact at gap rate ``sd``."""
        return self.contacts.impact(q, k, sd)

    def sample_times(self, t0: float, t_end: float) -> np.ndarray:
        """The ticks in ``[t0, t_end]`` of the sampled force elements (none: empty)."""
        return self.forces.sample_times(t0, t_end)

    def sample(self, q, qd, t: float, t0: float) -> np.ndarray:
        """``q`` with the sampled elements' held states updated at the tick ``t``
        (:meth:`ForceTerms.sample <flexmbs.system.force_terms.ForceTerms.sample>`)."""
        return self.forces.sample(q, qd, t, t0)

    def tangent(self, q, qd, qdd, lam, t):
        if self.n_mu and len(lam) > self.n_lam:     # K gets d(A^T mu)/dq
            lam = np.asarray(lam, float)
            K, C, M = self.matrices.tangent(q, qd, qdd, lam[:self.n_lam], t)
            return (K + self.velocity_force_jacobian(q, lam[self.n_lam:], t)).tocsr(), C, M
        return self.matrices.tangent(q, qd, qdd, lam, t)

    def tangent_mass(self, q, qd, qdd, lam, t):
        """``M = dr/dqdd`` of :meth:`tangent` alone (CSR), without assembling ``K``, ``C``."""
        lam = np.asarray(lam, float)
        return self.matrices.tangent_mass(q, qd, qdd, lam[:self.n_lam], t)

    def iteration_matrix(self, q, qd, qdd, lam, t, c_K, c_C, c_M):
        """``c_K K + c_C C + c_M M`` of :meth:`tangent` as one CSR matrix."""
        if self.n_mu and len(lam) > self.n_lam:
            lam = np.asarray(lam, float)
            S = self.matrices.iteration_matrix(q, qd, qdd, lam[:self.n_lam], t, c_K, c_C, c_M)
            return (S + c_K * self.velocity_force_jacobian(q, lam[self.n_lam:], t)).tocsr()
        return self.matrices.iteration_matrix(q, qd, qdd, lam, t, c_K, c_C, c_M)

    # -- velocity constraints (:class:`flexmbs.integrate.protocol.VelocityConstraints`) --
    @property
    def velocity_row_labels(self) -> list[str]:
        """Labels of the velocity rows (their multipliers follow ``lam``)."""
        return self.velocity_rows.labels

    def velocity_constraint(self, q, qd, t) -> np.ndarray:
        """``A(q, t) qd + a(q, t)`` (n_mu,) [m/s, rad/s]."""
        return self.velocity_rows.constraint(q, qd, t)

    def velocity_jacobians(self, q, qd, t):
        """``(A, B, c_t)``: ``A = dc/dqd``, ``B = d(A qd + a)/dq``, ``c_t = dc/dt``
        (:meth:`VelocityRows.jacobians <flexmbs.system.velocity_rows.VelocityRows.
        jacobians>`)."""
        return self.velocity_rows.jacobians(q, qd, t)

    def velocity_constraint_matrix(self, q, t=0.0) -> np.ndarray:
        """Every velocity-level row at ``q``, dense ``[G; A]`` (n_lam + n_mu, n_q): the
        ``A(y)`` of :func:`flexmbs.analysis.integrability` (holonomic rows included, so
        the verdict is about the whole set)."""
        G = self.constraint_jacobian(q, t).toarray()
        if not self.n_mu:
            return G
        A = self.velocity_jacobians(q, np.zeros_like(q), t)[0].toarray()
        return np.vstack([G, A])

    def velocity_force_jacobian(self, q, mu, t):
        """``d(A(q, t)^T mu)/dq`` for a fixed ``mu``, CSR (n_q, n_q)."""
        return self.velocity_rows.force_jacobian(q, mu, t)

    def newton_matrix(self, q, qd, qdd, lam, t, c_K, c_C, c_M) -> CSRMatrix:
        """The Newton matrix of an implicit step on ``[q; lam~]``,

            [[c_K (K + d(G^T lam)/dq) + c_C C + c_M M,  G^T],
             [G,                                        0  ]],

        in a fixed CSR pattern (the same ``indptr`` and ``indices`` arrays at every call,
        so a solver can overwrite its matrix values in place).  ``(K, C, M)`` are those
        of :meth:`tangent` (the force elements of :meth:`local_springs`: without the
        curvature of their measures, like the compiled step's)."""
        return self.matrices.newton_matrix(q, qd, qdd, lam, t, c_K, c_C, c_M,
                                           pack=self.body_pack(), plan=self.affine_plan(),
                                           springs=self.local_springs())

    def constraint(self, q, t):
        return self.constraint_rows.constraint(q, t)

    def constraint_jacobian(self, q, t, *, all_rows=False):
        return self.constraint_rows.constraint_jacobian(q, t, all_rows=all_rows)

    def rows_all(self, q, qd, t, rows=None):
        """``(g, gd)`` of every constraint row, the dropped ones too
        (:meth:`ConstraintRows.rows_all <flexmbs.system.constraint_rows.ConstraintRows.
        rows_all>`)."""
        return self.constraint_rows.rows_all(q, qd, t, rows)

    def constraint_time_derivative(self, q, t):
        """``g_t = dg/dt`` at fixed ``q`` (the part of ``dg/dt = G qd + g_t`` of
        :meth:`constraint_rates` that needs no second derivatives)."""
        return self.constraint_rows.constraint_time_derivative(q, t)

    def constraint_rates(self, q, qd, t):
        return self.constraint_rows.constraint_rates(q, qd, t)

    def constraint_force_jacobian(self, q, mu, t):
        return self.hessian.jacobian(q, mu, t)

    def constraint_velocity_jacobian(self, q, v, t):
        return self.constraint_rows.constraint_velocity_jacobian(q, v, t)

    # -- outputs (:mod:`flexmbs.system.outputs`) -----------------------------------------
    def marker_kinematics(self, marker, q, qd, qdd):
        """Position, axes, velocity, angular velocity, acceleration and angular
        acceleration of a marker (:func:`flexmbs.system.outputs.marker_kinematics`)."""
        return outputs.marker_kinematics(self.layout, marker, q, qd, qdd)

    def reactions(self, q, lam, t):
        """Joint reactions ``{name: (force, torque)}`` on the body of each joint's second
        marker, in its frame (:func:`flexmbs.system.outputs.reactions`); with velocity
        constraints ``lam`` is followed by their multipliers ``mu``, whose wrenches
        (inertial components, about the contact point) are added under the constraints'
        names (:meth:`VelocityRows.reactions <flexmbs.system.velocity_rows.VelocityRows.
        reactions>`)."""
        if self.n_mu and len(lam) > self.n_lam:
            lam = np.asarray(lam, float)
            out = outputs.reactions(self.constraint_rows, q, lam[:self.n_lam], t)
            out.update(self.velocity_rows.reactions(q, np.zeros_like(q), lam[self.n_lam:], t))
            return out
        return outputs.reactions(self.constraint_rows, q, lam, t)

    def joint_coordinates(self, q):
        """``{joint name: [coordinates]}`` (angles in rad, displacements in m)."""
        return outputs.joint_coordinates(self.layout, self.model.joints, q)

    def force_potentials(self, q, t=0.0) -> dict:
        """``{name: V_f}`` [J] of the force elements that have a potential."""
        return self.forces.potentials(q, t)

    def energy(self, q, qd, t=0.0):
        """Energies ``kinetic``, ``potential_gravity``, ``potential_elastic``, ``total``
        [J] (:func:`flexmbs.system.outputs.energy`)."""
        return outputs.energy(self.layout, self.forces, q, qd, t)
