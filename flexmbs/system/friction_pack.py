"""The joint friction elements of a system as tables for the compiled whole step
(:mod:`flexmbs.forces.friction_kernel`, numpy reference :mod:`flexmbs.forces.
friction_reference`).

A :class:`~flexmbs.forces.joint_friction.JointFriction` whose joint's rows are stacked
(:class:`~flexmbs.system.stacked.StackedRows`) is one row of ``fr_int`` and ``fr_par``
(:mod:`flexmbs.forces.friction_columns`): its markers among the stacked frames, its
states' place in ``q``, its joint's rows, the body the reaction acts on, and its law's
constants.  :meth:`FrictionPack.residual` and :meth:`FrictionPack.newton` check the
shapes of their inputs (the kernels do not check indices) and call the kernel or the
reference (``FLEXMBS_KERNELS``).
"""
from __future__ import annotations

import numpy as np

from flexmbs.compiled import arg, backend
from flexmbs.forces import friction_kernel, friction_reference
from flexmbs.forces.bristle import DAMPING_VELOCITY, SMOOTHING
from flexmbs.forces.friction_columns import KIND_CODES, N_INT, N_PAR
from flexmbs.forces.joint_friction import JointFriction
from flexmbs.system.element_pack import ElementPack


class FrictionPack(ElementPack):
    """Tables ``fr_int`` (k, 9) and ``fr_par`` (k, 10) of the friction elements ``names``
    (their force blocks: ``blocks``); ``n_q`` coordinates, ``n_rows`` constraint rows."""

    def __init__(self, fr_int, fr_par, blocks, n_q: int, n_rows: int):
        self.fr_int = np.ascontiguousarray(fr_int, dtype=np.int64).reshape(-1, N_INT)
        self.fr_par = arg(np.asarray(fr_par, dtype=float).reshape(-1, N_PAR))
        super().__init__(self.fr_int, blocks, n_q)
        self.n_rows = n_rows

    @classmethod
    def of(cls, layout, stacked) -> FrictionPack:
        """The elements of ``layout`` the kernel covers: joint friction on a revolute,
        prismatic, cylindrical or spherical joint whose rows ``stacked`` holds."""
        joint_block = {blk.name: bi for bi, blk in enumerate(layout.blocks)
                       if blk.kind == "joint"}
        rows_int, rows_par, blocks = [], [], []
        for fb in layout.force_blocks:
            el = fb.element
            if not isinstance(el, JointFriction) or el.joint.kind not in KIND_CODES:
                continue
            bi = joint_block.get(el.joint.name)
            if bi is None or not stacked.handles(bi):
                continue
            mP, mQ = stacked.markers_of[bi]
            o_P, o_Q = fb.offsets[0], fb.offsets[1]
            col, sign = (fb.idx[o_Q], -1) if o_Q is not None else (fb.idx[o_P], 1)
            law, v_st = el.effective_law, el.stiction_velocity
            rows_int.append((KIND_CODES[el.joint.kind], mP, mQ,
                             layout.state_slices[el.name].start, layout.row_start[bi],
                             layout.row_start[bi + 1], col, sign, int(el.from_reaction)))
            rows_par.append((law.mu_s, law.mu_k, law.v_s, law.c_v, el.sigma0, el.sigma1,
                             SMOOTHING * v_st, DAMPING_VELOCITY * v_st,
                             el.pin_radius or 0.0, el.preload))
            blocks.append(fb)
        return cls(rows_int, rows_par, blocks, layout.n_q, int(layout.row_start[-1]))

    def _inputs(self, q, qd, lam_all, C, D, G) -> tuple:
        n, R = self.n_q, self.n_rows
        q, qd, lam_all, G, C, D = self.checked(
            (("q", q, (n,)), ("qd", qd, (n,)), ("lam_all", lam_all, (R,)),
             ("G", G, (R, n))), C, D)
        return q, qd, lam_all, C, D, G

    def residual(self, r, q, qd, lam_all, C, D, G) -> None:
        """``r -= Q`` of the elements (``r`` (n_q,) float, written in place)."""
        q, qd, lam_all, C, D, G = self._inputs(q, qd, lam_all, C, D, G)
        self.check_residual(r)
        backend(friction_kernel, friction_reference).friction_residual(
            r, q, qd, lam_all, C, D, G, self.fr_int, self.fr_par)

    def newton(self, out, q, qd, lam_all, lam_pos, C, D, G, c_K: float,
               c_C: float) -> None:
        """The elements' terms of a dense Newton matrix ``out`` (n_q + n_lam square),
        ``lam_pos`` (n_rows,) the position of each row in ``lam`` (-1: dropped)."""
        q, qd, lam_all, C, D, G = self._inputs(q, qd, lam_all, C, D, G)
        lam_pos = np.ascontiguousarray(lam_pos, dtype=np.int64)
        m = int(lam_pos.max(initial=-1)) + 1
        if lam_pos.shape != (self.n_rows,) or out.ndim != 2 \
                or out.shape[0] != out.shape[1] or out.shape[0] < self.n_q + m:
            raise ValueError(f"{self.who}: lam_pos must have shape "
                             f"({self.n_rows},) and out be square of size >= n_q + n_lam = "
                             f"{self.n_q + m}, got {lam_pos.shape} and {out.shape}")
        backend(friction_kernel, friction_reference).friction_newton(
            out, q, qd, lam_all, lam_pos, C, D, G, self.fr_int, self.fr_par, float(c_K),
            float(c_C))
