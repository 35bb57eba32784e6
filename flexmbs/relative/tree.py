"""Topology of a model in relative coordinates (THEORY §7 item 18, §3.2): the tree of
bodies ``1..n`` with predecessors ``p(i)`` (0 = ground), the joint of each body, and the
cut joints that close loops.  A flexible body's joint coordinates are its tree joint's
followed by its modal coordinates ``q_e`` (extra joint coordinates, ``TreeJoint.qe``).

The tree grows from the ground: again and again, the first joint (in the order the
joints were added) of a kind in :data:`~flexmbs.relative.joints.MOTIONS` that reaches a
body not yet in the tree becomes that body's tree joint (its marker on the
tree side is P, its marker on the new body is Q); every other joint is a cut joint,
whose equations ``g(q, t) = 0`` stay constraint rows of the DAE.  A body that no joint
reaches hangs on the ground by a free joint.  What the formulation does not take is
refused with one line naming it (:func:`~flexmbs.system.model.formulation_problem`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexmbs.bodies.ground import ground
from flexmbs.bodies.marker import Marker
from flexmbs.errors import ModelError
from flexmbs.kinematics.rotation import e_from_matrix
from flexmbs.relative.joints import MOTIONS, JointMotion
from flexmbs.system.model import formulation_problem


@dataclass(frozen=True, eq=False)
class TreeJoint:
    """Joint of body ``i``: ``P`` on the predecessor ``p(i)`` (-1: ground), ``Q`` on ``i``,
    coordinates ``beta[s]``; ``joint`` the model's joint (None: an added free joint);
    ``qe``: the slice of body ``i``'s modal coordinates in ``beta`` (empty if rigid);
    ``swapped``: ``P`` is the joint's second marker (the tree took it the other way)."""

    name: str
    motion: JointMotion
    P: Marker
    Q: Marker
    parent: int
    s: slice
    joint: object = None
    qe: slice = field(default_factory=lambda: slice(0, 0))
    swapped: bool = False


@dataclass(frozen=True, eq=False)
class Tree:
    """The tree of a :class:`~flexmbs.system.model.System`.

    ``bodies[i]`` with ``joints[i]`` (parents before children), ``children[i]``,
    ``cut``: the cut joints, ``n_beta`` coordinates, ``e_rows``: slices of the Euler
    parameters in ``beta`` (one normalisation row each)."""

    bodies: tuple
    joints: tuple
    children: tuple
    cut: tuple
    n_beta: int
    e_rows: tuple

    @property
    def n(self) -> int:
        return len(self.bodies)

    @property
    def flexible(self) -> bool:
        """Whether a body of the tree carries modal coordinates."""
        return any(tj.qe.stop > tj.qe.start for tj in self.joints)

    def beta0(self) -> np.ndarray:
        """Coordinates of the initial configuration (the joint frames coincide there;
        an added free joint takes its body's initial pose)."""
        out = np.zeros(self.n_beta)
        for tj, b in zip(self.joints, self.bodies, strict=True):
            if tj.joint is None:
                out[tj.s] = tj.motion.beta0(b.r0, e_from_matrix(b.R0))
            else:
                out[tj.s] = tj.motion.beta0()
            out[tj.qe] = getattr(b, "qe0", ())
        return out


def build_tree(model, formulation: str = "relative") -> Tree:
    """The :class:`Tree` of ``model`` (a validated System); ModelError if refused."""
    why = formulation_problem(model, formulation)
    if why:
        raise ModelError(why)
    index = {id(b): i for i, b in enumerate(model.bodies)}
    placed: dict[int, TreeJoint] = {}
    order: list[int] = []
    in_tree = {-1}                    # body indices in the tree (-1: ground)
    used: set[int] = set()
    resolved = {id(j): j.resolve() for j in model.joints}

    def side(m: Marker) -> int:
        return -1 if getattr(m.body, "is_ground", False) else index[id(m.body)]

    grew = True
    while grew:
        grew = False
        for j in model.joints:
            if id(j) in used or j.kind not in MOTIONS or j.kind == "free":
                continue
            P, Q = resolved[id(j)]
            a, b = side(P), side(Q)
            if (a in in_tree) == (b in in_tree):
                continue
            swapped = a not in in_tree
            if swapped:                    # the tree side is Q's: the roles swap
                P, Q, a, b = Q, P, b, a
            placed[b] = TreeJoint(j.name, MOTIONS[j.kind], P, Q, a, slice(0, 0), j,
                                  swapped=swapped)
            order.append(b)
            in_tree.add(b)
            used.add(id(j))
            grew = True
            break
        if not grew:                        # an unreached body: free joint from ground
            rest = [i for i in range(len(model.bodies)) if i not in in_tree]
            if rest:
                b = model.bodies[rest[0]]
                placed[rest[0]] = TreeJoint(f"{b.name}.free", MOTIONS["free"],
                                            ground.marker(f"{b.name}.free.P"),
                                            b.marker(f"{b.name}.free.Q"), -1, slice(0, 0))
                order.append(rest[0])
                in_tree.add(rest[0])
                grew = True
    new_index = {old: k for k, old in enumerate(order)}
    joints, bodies, e_rows, start = [], [], [], 0
    for old in order:
        tj = placed[old]
        s = slice(start, start + tj.motion.n_beta)
        if tj.motion.e_slice is not None:
            e_rows.append(slice(start + tj.motion.e_slice.start, start + tj.motion.e_slice.stop))
        qe = slice(s.stop, s.stop + getattr(model.bodies[old], "n_q", 0))
        joints.append(TreeJoint(tj.name, tj.motion, tj.P, tj.Q,
                                -1 if tj.parent < 0 else new_index[tj.parent], s, tj.joint,
                                qe, tj.swapped))
        bodies.append(model.bodies[old])
        start = qe.stop
    children = tuple(tuple(k for k, tj in enumerate(joints) if tj.parent == i)
                     for i in range(len(joints)))
    cut = tuple(j for j in model.joints if id(j) not in used)
    return Tree(tuple(bodies), tuple(joints), children, cut, start, tuple(e_rows))
