"""Degree-of-freedom bookkeeping (THEORY §5.9.1).

* Grübler's count (2.71): ``F = 6 n - sum u_g`` (point masses count 3, drives remove one
  freedom each).  Only an estimate: closed spatial loops of revolute joints have
  passive (redundant) constraints.
* The numerical rank test of ``G`` decides.  Rows are taken in order (Euler
  normalisations, then joints and drives in the order they were added, each joint's
  equations in its label order); a row is redundant when it lies in the span of the rows
  kept before it, i.e. its Gram–Schmidt remainder is below ``tol`` times its norm.
  The mobility is ``n_q - rank(G)`` over the bodies' coordinates (the internal states
  of force elements, first-order coordinates after them, are not freedoms of the
  mechanism; they are reported apart).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DofReport:
    """``grubler``: Grübler's count; ``mobility``: n_q - rank G; ``redundant``: row labels."""

    grubler: int
    mobility: int
    n_q: int
    n_constraints: int
    rank: int
    redundant: tuple
    n_states: int = 0       # internal states of force elements (not in n_q)

    def summary(self) -> str:
        states = f" (and {self.n_states} internal states of force elements)" \
            if self.n_states else ""
        lines = [f"degrees of freedom: {self.mobility} (Grübler count {self.grubler}); "
                 f"{self.n_q} coordinates{states}, {self.n_constraints} constraint rows, "
                 f"rank {self.rank}"]
        if self.redundant:
            lines.append(f"{len(self.redundant)} redundant constraint rows removed "
                         "(their reactions are not unique):")
            lines.extend(f"  - {lab}" for lab in self.redundant)
        return "\n".join(lines)


def grubler(model) -> int:
    """``F = sum_bodies f_b - sum_joints u_g - n_drive_rows`` with f_b = 6 for a rigid body,
    6 + n_q for a floating-frame elastic body (its elastic coordinates are freedoms too)
    and 3 for a point mass."""
    f = sum(b.n_coords - 1 if b.n_coords >= 7 else 3 for b in model.bodies)
    f -= sum(len(j.labels) for j in model.joints)
    f -= sum(len(d.labels) for d in model.drives)
    return int(f)


def independent_rows(G: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Boolean mask of the rows of ``G`` kept by ordered Gram–Schmidt (see module doc).

    Row ``g_i`` of norm ``|g_i|``: ``v = g_i / |g_i|`` minus its projection on the rows
    kept so far, ``v <- v - B^T (B v)`` with ``B`` their orthonormal basis (twice, for
    stability: classical Gram–Schmidt with re-orthogonalisation, one matrix product per
    row instead of one per basis vector); kept when ``|v| > tol``."""
    G = np.asarray(G, dtype=float)
    keep = np.zeros(G.shape[0], dtype=bool)
    B = np.empty_like(G)                         # the orthonormal basis, rows 0..k-1
    k = 0
    for i, row in enumerate(G):
        nrm = math.sqrt(row.dot(row))
        if nrm == 0.0:
            continue
        v = row / nrm
        if k:
            Bk = B[:k]
            for _ in range(2):                   # re-orthogonalise once for stability
                v = v - Bk.T @ (Bk @ v)
        rem = math.sqrt(v.dot(v))
        if rem > tol:
            B[k] = v / rem
            k += 1
            keep[i] = True
    return keep


def analyse(asm, q: np.ndarray, t: float = 0.0, tol: float = 1e-9) -> DofReport:
    """Rank test at ``q``; marks redundant rows inactive on ``asm`` and reports them."""
    dense = asm.constraint_rows.dense_rows(q, t) if asm.active.all() else None
    G = dense[1] if dense is not None else \
        asm.constraint_jacobian(q, t, all_rows=True).toarray()
    keep = independent_rows(G, tol)
    asm.active = keep
    asm.redundant = [lab for lab, k in zip(asm.row_labels, keep) if not k]
    rank = int(keep.sum())
    n_states = len(getattr(asm, "state_indices", ()))
    n_q = asm.n_q - n_states
    return DofReport(grubler(asm.model), n_q - rank, n_q, len(keep), rank,
                     tuple(asm.redundant), n_states)
