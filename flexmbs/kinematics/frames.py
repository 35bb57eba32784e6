"""Jets of marker frames: position and axes of a marker as functions of body coordinates.

For a marker ``P`` on a rigid body with coordinates ``[r, e]`` (see ``flexmbs.bodies.rigid``):

    p(q)   = r + A(e) s,           dp/dr = E,   dp_k/de = 2 Q_k(s) e,   d2p_k/de2 = 2 Q_k(s)
    a_j(q) = A(e) R[:, j],         the same with ``s -> R[:, j]`` and no ``r`` term,

where ``(A(e) u)_k = e^T Q_k(u) e`` (``flexmbs.kinematics.rotation.Q_of``).

For a marker with elastic rows ``Phi``, ``Psi`` on a flexible body with coordinates
``[r, e, q_e]`` (``flexmbs.bodies.flexible``), THEORY §2.1:

    p(q)   = r + A(e) (s + Phi q_e),            a_j(q) = A(e) (R_j + (Psi q_e) x R_j),

i.e. ``V = A(e) U(q_e)`` with ``U`` affine in ``q_e``, ``dU/dq_e = W`` (``Phi`` for the
position, ``-tilde(R_j) Psi`` for axis j), so

    dV/de = Te . U,  dV/dq_e = A W,  d2V/de2 = 2 Q(U),  d2V/de dq_e = Te . W,  d2V/dq_e2 = 0.

The axes use the linearised elastic rotation, so they are orthonormal only to first
order in ``Psi q_e``.  The local
coordinate vector of a joint is ``x = [q_i; q_j; t]``; ``offset`` places a body's
coordinates in it.  A point mass has coordinates ``r`` only and fixed axes.
"""
from __future__ import annotations

import numpy as np

from flexmbs.compiled import arg, backend
from flexmbs.kinematics import frame_kernel, frame_reference
from flexmbs.kinematics.jet import Jet
from flexmbs.kinematics.rotation import T_A, A_of, G_of, Q_of, as_floats, tilde


class FrameJet:
    """Position ``p`` and axes ``x, y, z`` of a marker frame, each a 3-vector jet."""

    __slots__ = ("p", "x", "y", "z")

    def __init__(self, p: Jet, x: Jet, y: Jet, z: Jet):
        self.p, self.x, self.y, self.z = p, x, y, z

    def axis(self, k: int) -> Jet:
        return (self.x, self.y, self.z)[k]


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x b`` for 3-vectors without numpy's general (slow for tiny arrays) machinery."""
    a0, a1, a2 = as_floats(a)
    b0, b1, b2 = as_floats(b)
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def dAu_de(e: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``d(A(e) u)/de`` (3x4) in closed form: with ``eps = e[1:]``,

    ``2 [e0 u + eps x u,  (eps.u) E + eps u^T - u eps^T - e0 tilde(u)]`` (equal to ``2 Q(u) e``).
    """
    e0, x, y, z = as_floats(e)
    u0, u1, u2 = as_floats(u)
    s = x * u0 + y * u1 + z * u2                                   # eps . u
    return 2.0 * np.array([
        [e0 * u0 + y * u2 - z * u1, s, x * u1 - u0 * y + e0 * u2,
         x * u2 - u0 * z - e0 * u1],
        [e0 * u1 + z * u0 - x * u2, y * u0 - u1 * x - e0 * u2, s,
         y * u2 - u1 * z + e0 * u0],
        [e0 * u2 + x * u1 - y * u0, z * u0 - u2 * x + e0 * u1, z * u1 - u2 * y - e0 * u0,
         s]])


_CONJ = np.array([1.0, -1.0, -1.0, -1.0])


def dATw_de(e: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``d(A(e)^T w)/de`` (3x4): ``A(e)^T = A(e*)`` with ``e* = (e0, -eps)``, so it is
    :func:`dAu_de` at ``e*`` with the ``eps`` columns negated (equal to ``2 Q'(w) e``)."""
    D = dAu_de(e * _CONJ, w)
    D[:, 1:] *= -1.0
    return D


def _vector_jet(e, u, n, off, order, with_r, A=None):
    v = (A @ u) if e is not None else np.array(u, float)
    d = np.zeros((3, n))
    h = np.zeros((3, n, n)) if order == 2 else None
    if with_r:
        v = v + with_r[1]
        d[0, off] = d[1, off + 1] = d[2, off + 2] = 1.0
    if e is not None:
        eo = off + 3
        d[:, eo:eo + 4] = dAu_de(e, u)
        if order == 2:
            h[:, eo:eo + 4, eo:eo + 4] = 2.0 * Q_of(u)
    return Jet(v, d, h)


def frame_jet(marker, q_b: np.ndarray | None, n: int, offset: int, order: int = 2,
              rot: tuple | None = None) -> FrameJet:
    """Jets of ``marker``'s position and axes over an ``n``-long local vector.

    ``rot``: ``rotation_data(q_b[3:7])`` if the caller already has it (shared by all the
    markers of one body in one evaluation)."""
    body = marker.body
    if getattr(body, "is_ground", False):
        return _ground_frame(marker, n, order)
    if body.n_coords == 3:          # point mass: translation only
        R = marker.R
        p = _vector_jet(None, marker.s, n, offset, order, (True, q_b[0:3]))
        axes = [Jet.constant(R[:, k], n, order) for k in range(3)]
        return FrameJet(p, *axes)
    if rot is None:
        rot = rotation_data(q_b[3:7])
    if is_flexible(marker):
        return _flexible_frame(q_b, marker, n, offset, order, rot)
    return _rigid_frame(q_b, marker, n, offset, order, rot)


def _cached(marker, key, make):
    """A constant array kept on the marker (read-only, shared by all evaluations)."""
    store = marker.__dict__.setdefault("_frame_cache", {})
    a = store.get(key)
    if a is None:
        a = store[key] = make()
        if isinstance(a, np.ndarray):
            a.setflags(write=False)
    return a


def _ground_frame(marker, n, order) -> FrameJet:
    """Constant jets of a ground marker (cached per local size and order)."""
    def make():
        R = marker.R
        return FrameJet(Jet.constant(marker.s, n, order),
                        *(Jet.constant(R[:, k], n, order) for k in range(3)))
    return _cached(marker, ("ground", n, order), make)


def _D_template(marker, n, off):
    """Zeros (4, 3, n) with ``dp/dr = E`` at the body offset ``off`` (copied per call)."""
    def make():
        D = np.zeros((4, 3, n))
        D[0, 0, off] = D[0, 1, off + 1] = D[0, 2, off + 2] = 1.0
        return D
    return _cached(marker, ("D", n, off), make)


def is_flexible(marker) -> bool:
    return marker.Phi is not None and marker.body.n_coords > 7


def _flexible_UW(marker, qe):
    """``U`` (3, 4): [s + Phi q, R_j + (Psi q) x R_j] and ``W`` (4, 3, n_q) = dU/dq."""
    R = marker.R
    Phi = np.asarray(marker.Phi, float)
    Psi = np.zeros_like(Phi) if marker.Psi is None else np.asarray(marker.Psi, float)
    th = Psi @ qe
    U = np.column_stack([marker.s + Phi @ qe] + [R[:, j] + cross3(th, R[:, j]) for j in range(3)])
    W = np.stack([Phi] + [-tilde(R[:, j]) @ Psi for j in range(3)])
    return U, W


def _flexible_consts(marker):
    """Constant data of a flexible marker: ``U0 = [s, R]`` (3, 4), ``W = dU/dq_e``
    (4, 3, n_q), ``W_r`` = ``W`` as (3, 4 n_q) (``[l, u j]``), ``W12`` = ``W`` as
    (12, n_q) (``[u l, j]``, so that ``U^T = U0^T + W12 q_e`` since ``U`` is affine in
    ``q_e``) and ``U0T = U0^T``."""
    def make():
        Phi = np.asarray(marker.Phi, float)
        Psi = np.zeros_like(Phi) if marker.Psi is None else np.asarray(marker.Psi, float)
        R = np.asarray(marker.R, float)
        W = np.stack([Phi] + [-tilde(R[:, j]) @ Psi for j in range(3)])
        U0 = np.column_stack([marker.s, R])
        W_r = np.ascontiguousarray(W.transpose(1, 0, 2).reshape(3, -1))
        W12 = np.ascontiguousarray(W.reshape(12, -1))
        U0T = np.ascontiguousarray(U0.T).ravel()          # (12,): [u l]
        for a in (W, W_r, W12, U0, U0T):
            a.setflags(write=False)
        return U0, W, W_r, W12, U0T
    return _cached(marker, "flex", make)


def kernel_consts(marker, kind):
    """``(U0T, W12, W_r)`` of :func:`flexmbs.kinematics.frame_kernel.fill_frame` for a
    rigid (``n_q = 0``) or flexible marker, cached."""
    def make():
        if kind == "flexible":
            _, _, W_r, W12, U0T = _flexible_consts(marker)
            return arg(U0T), arg(W12), arg(W_r)
        return arg(rigid_U(marker).T.ravel()), np.zeros((12, 0)), np.zeros((3, 0))
    return _cached(marker, ("kernel", kind), make)


def _de_block(Ter: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``einsum('kla,lu->uka', Te, U)`` (4, 3, 4) as one small matrix product
    (``Ter`` is ``Te`` laid out as (3, 12), ``[l, k a]``, see :func:`rotation_data`)."""
    return (U.T @ Ter).reshape(U.shape[1], 3, 4)


def material_vectors(rot, UT: np.ndarray, W_r: np.ndarray, order: int) -> tuple:
    """The vectors ``V_u = A(e) U_u`` of a body with coordinates ``[r, e, q_e]``, ``U_u``
    (the rows of ``UT`` (m, 3)) affine in ``q_e`` with ``dU_u/dq_e = W_u`` (``W_r`` (3,
    m n_q), ``[l, u j]``), and their derivatives (module docstring)

        dV/de = Te . U,  dV/dq_e = A W,  d2V/de2 = 2 Q(U),  d2V/de dq_e = Te . W:

    ``(V (m, 3), dV/de (m, 3, 4), dV/dq_e (m, 3, n_q), d2V/de2 (m, 3, 4, 4), d2V/de dq_e
    (m, 3, 4, n_q))``, the last two None below order 2; ``rot``: :func:`rotation_data`.
    A marker's four vectors (:func:`_fill_flexible`) or any material point of an elastic
    body (a rim point, :mod:`flexmbs.constraints.rim_contact`)."""
    A, Te, Ter = rot
    m = UT.shape[0]
    nq = W_r.shape[1] // m
    V = UT @ A.T
    V_e = (UT @ Ter).reshape(m, 3, 4)                               # _de_block(Ter, U)
    V_q = (A @ W_r).reshape(3, m, nq).transpose(1, 0, 2)            # A W_u
    if order < 2:
        return V, V_e, V_q, None, None
    V_ee = 2.0 * (UT @ _T_A_R).reshape(m, 3, 4, 4)                  # 2 Q(U_u)
    # d2V/de dq_e = Te . W:  [u, k, a, j] = sum_l Te[k, l, a] W[u, l, j]
    V_eq = (Te.transpose(0, 2, 1).reshape(12, 3) @ W_r).reshape(3, 4, m, nq) \
        .transpose(2, 0, 1, 3)
    return V, V_e, V_q, V_ee, V_eq


def _fill_flexible(q_b, marker, off, order, rot, V, D, H) -> None:
    """Write a flexible marker's ``V`` (4, 3) (rows s, x, y, z), ``D`` (4, 3, n) (zeros
    with ``dp/dr = E`` already in) and, at order 2, the ``e``/``q_e`` blocks of ``H``
    (:func:`material_vectors`)."""
    nq = len(q_b) - 7
    _, _, W_r, W12, U0T = _flexible_consts(marker)
    UT = (U0T + W12 @ q_b[7:]).reshape(4, 3)           # U^T, rows s, x, y, z
    V[:], V_e, V_q, V_ee, V_eq = material_vectors(rot, UT, W_r, order)
    V[0] += q_b[0:3]
    eo, qo = off + 3, off + 7
    D[:, :, eo:eo + 4] = V_e
    D[:, :, qo:qo + nq] = V_q
    if order < 2:
        return
    H[:, :, eo:eo + 4, eo:eo + 4] = V_ee
    H[:, :, eo:eo + 4, qo:qo + nq] = V_eq
    H[:, :, qo:qo + nq, eo:eo + 4] = np.swapaxes(V_eq, 2, 3)


def rigid_U(marker) -> np.ndarray:
    """``U = [s, R]`` (3, 4) of a rigid-body (or ground) marker, cached."""
    U = marker.__dict__.get("_U")
    if U is None:
        U = np.column_stack([marker.s, marker.R])        # (3, 4): s, x, y, z
        U.setflags(write=False)
        marker.__dict__["_U"] = U
    return U


def _fill_rigid(q_b, marker, off, rot, V, D) -> None:
    """Write a rigid marker's ``V`` (4, 3) and the ``e`` columns of ``D`` (4, 3, n)."""
    A, _, Ter = rot
    U = rigid_U(marker)
    np.matmul(U.T, A.T, out=V)
    V[0] += q_b[0:3]
    D[:, :, off + 3:off + 7] = _de_block(Ter, U)


def _rigid_H(marker):
    """``d2V/de2 = 2 Q(U)`` (4, 3, 4, 4) of a rigid marker: constant."""
    return 2.0 * np.einsum("klab,lu->ukab", T_A, rigid_U(marker))


def _flexible_frame(q_b, marker, n, off, order, rot=None) -> FrameJet:
    """Position and axes of a marker with elastic rows ``Phi``, ``Psi`` (module docstring)."""
    rot = rotation_data(q_b[3:7]) if rot is None else rot
    V = np.empty((4, 3))
    D = _D_template(marker, n, off).copy()
    H = np.zeros((4, 3, n, n)) if order >= 2 else None
    _fill_flexible(q_b, marker, off, order, rot, V, D, H)
    if H is None:
        return FrameJet(Jet(V[0], D[0], None), Jet(V[1], D[1], None),
                        Jet(V[2], D[2], None), Jet(V[3], D[3], None))
    return FrameJet(*(Jet(V[k], D[k], H[k]) for k in range(4)))


_NO_U0T, _NO_W12, _NO_Q = np.zeros(12), np.zeros((12, 0)), np.zeros(7)   # ground markers
T_A_KERNEL = np.array(T_A, dtype=float, order="C")                       # writable copy
_T_A_R = np.ascontiguousarray(T_A.transpose(1, 0, 2, 3).reshape(3, 48))   # [l, k a b]
_T_A_9 = np.ascontiguousarray(T_A.reshape(9, 16))                         # [k l, a b]
_T_A_E = np.ascontiguousarray(T_A.transpose(1, 0, 2, 3).reshape(36, 4))   # [l k a, b]


def rotation_data(e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``A(e)``, ``Te`` (3, 3, 4) with ``d(A(e) u)/de = einsum('kla,l->ka', Te, u)``, and
    ``Te`` laid out as (3, 12) (``[l, k a]``, for :func:`_de_block`).

    From ``A_kl(e) = e^T T_A[k,l] e``: ``Te[k,l] = 2 T_A[k,l] e``; note ``A = Te . e / 2``.
    """
    Ter = (2.0 * (_T_A_E @ e)).reshape(3, 12)          # [l, k a]
    Te = Ter.reshape(3, 3, 4).transpose(1, 0, 2)       # [k, l, a] (a view)
    return A_of(e), Te, Ter


def _rigid_frame(q_b, marker, n, off, order, rot=None) -> FrameJet:
    """All four vectors (s and the three axes) of a rigid-body marker at once:
    ``V = A U + [r, 0, 0, 0]``, ``dV/de = Te . U``, ``d2V/de2 = 2 Q(U)`` (constant)."""
    rot = rotation_data(q_b[3:7]) if rot is None else rot
    V = np.empty((4, 3))
    D = _D_template(marker, n, off).copy()
    _fill_rigid(q_b, marker, off, rot, V, D)
    if order == 2:
        def make():
            H = np.zeros((4, 3, n, n))
            H[:, :, off + 3:off + 7, off + 3:off + 7] = _rigid_H(marker)
            return H
        H = _cached(marker, ("H", n, off), make)
        return FrameJet(*(Jet(V[k], D[k], H[k]) for k in range(4)))
    return FrameJet(Jet(V[0], D[0], None), Jet(V[1], D[1], None),
                    Jet(V[2], D[2], None), Jet(V[3], D[3], None))


class PairFrames:
    """The frames of a joint's two markers ``P``, ``Q`` stacked over its local vector
    ``x`` (length ``n``): ``C`` (8, 3) with rows ``p_P, x_P, y_P, z_P, p_Q, x_Q, y_Q,
    z_Q``, ``D = dC/dx`` (8, 3, n) and, at order 2, ``H = d2C/dx2`` (8, 3, n, n).
    A block with more markers (a drive fed by a sensor: the sensor's markers follow
    ``P``, ``Q``) stacks four rows per marker the same way, ``C`` (4 m, 3).

    The constant parts (ground markers, ``dp/dr = E``, a rigid marker's ``d2V/de2``)
    are kept in templates; an evaluation copies them and fills the state-dependent
    blocks (:func:`rotation_data` of each body is shared through ``rot``).
    """

    def __init__(self, markers, offsets, n: int):
        self.markers, self.offsets, self.n = tuple(markers), tuple(offsets), n
        self._kinds = []
        C0 = np.zeros((4 * len(self.markers), 3))
        D0 = np.zeros((4 * len(self.markers), 3, n))
        for k, (mk, off) in enumerate(zip(self.markers, self.offsets)):
            body = mk.body
            if off is None or getattr(body, "is_ground", False):
                C0[4 * k:4 * k + 4] = rigid_U(mk).T
                self._kinds.append("ground")
                continue
            if body.n_coords == 3:
                self._kinds.append("point")
            else:
                self._kinds.append("flexible" if is_flexible(mk) else "rigid")
            D0[4 * k, :, off:off + 3] = np.eye(3)
        for a in (C0, D0):
            a.setflags(write=False)
        self._C0, self._D0, self._H0 = C0, D0, None
        self._H_varies = any(k in ("flexible", "point") for k in self._kinds)

    def _H_template(self):
        if self._H0 is None:
            H0 = np.zeros((*self._D0.shape, self.n))
            for k, (mk, off, kind) in enumerate(zip(self.markers, self.offsets, self._kinds)):
                if kind == "rigid":
                    H0[4 * k:4 * k + 4, :, off + 3:off + 7, off + 3:off + 7] = _rigid_H(mk)
            H0.setflags(write=False)
            self._H0 = H0
        return self._H0

    def evaluate(self, q_bodies, order: int, rot: dict | None = None):
        """``(C, D, H)`` at the markers' body coordinates ``q_bodies`` (None for ground);
        ``rot`` {body id: rotation_data} is shared between calls of one evaluation."""
        C = self._C0.copy()
        D = self._D0.copy()
        H = None
        if order >= 2:
            H = self._H_template()
            if self._H_varies:
                H = H.copy()
        for k, (mk, off, kind, q_b) in enumerate(zip(self.markers, self.offsets, self._kinds,
                                                     q_bodies)):
            if kind == "ground":
                continue
            sl = slice(4 * k, 4 * k + 4)
            if kind == "point":
                fj = frame_jet(mk, q_b, self.n, off, order)
                for i, j in enumerate((fj.p, fj.x, fj.y, fj.z)):
                    C[4 * k + i], D[4 * k + i] = j.v, j.d
                    if H is not None:
                        H[4 * k + i] = j.h
                continue
            r = None if rot is None else rot.get(id(mk.body))
            if r is None and order >= 2:
                r = rotation_data(q_b[3:7])
                if rot is not None:
                    rot[id(mk.body)] = r
            if order < 2:                     # compiled: the same numbers at order 1
                backend(frame_kernel, frame_reference).fill_frame(arg(q_b), *kernel_consts(mk, kind), off, C[sl], D[sl])
            elif kind == "rigid":
                _fill_rigid(q_b, mk, off, r, C[sl], D[sl])
            else:
                _fill_flexible(q_b, mk, off, order, r, C[sl], D[sl],
                               None if H is None else H[sl])
        return C, D, H

    def hessian_contract(self, Wm: np.ndarray, q_bodies, rot: dict | None = None) -> np.ndarray:
        """``sum_(v,i) Wm[v, i] H[v, i]`` (n, n) with ``H`` of :meth:`evaluate`, from the
        nonzero blocks of each marker without forming ``H``: with ``M = Wm_k^T U^T``
        (3, 3) of marker ``k`` the ``e, e`` block is ``2 sum_(k,l) M[k, l] T_A[k, l]``
        (``d2V/de2 = 2 Q(U)``), and on a flexible marker the ``e, q_e`` block is
        ``sum_(k,l) Te[k, l, a] N[k, l, j]`` with ``N = Wm_k^T W`` (``d2V/de dq_e = Te . W``)."""
        n = self.n
        out = np.zeros((n, n))
        for k, (mk, off, kind, q_b) in enumerate(zip(self.markers, self.offsets, self._kinds,
                                                     q_bodies)):
            if kind in ("ground", "point"):      # constant, or linear in r: no Hessian
                continue
            Wk = Wm[4 * k:4 * k + 4]
            eo = off + 3
            if kind == "rigid":
                UT = rigid_U(mk).T
            else:
                _, W, _, W12, U0T = _flexible_consts(mk)
                UT = (U0T + W12 @ q_b[7:]).reshape(4, 3)
            out[eo:eo + 4, eo:eo + 4] += (2.0 * (Wk.T @ UT).reshape(9) @ _T_A_9).reshape(4, 4)
            if kind == "flexible":
                r = None if rot is None else rot.get(id(mk.body))
                Te = (rotation_data(q_b[3:7]) if r is None else r)[1]
                nq = W.shape[2]
                N = (Wk.T @ W.reshape(4, 3 * nq)).reshape(9, nq)          # [k l, j]
                mixed = Te.reshape(9, 4).T @ N                            # (4, n_q)
                qo = off + 7
                out[eo:eo + 4, qo:qo + nq] += mixed
                out[qo:qo + nq, eo:eo + 4] += mixed.T
        return out

    def kernel_markers(self, q_bodies) -> tuple | None:
        """The marker arguments ``(U0T, W12, q_b, eo)`` of P then Q for
        :func:`flexmbs.kinematics.frame_kernel.label_hessian_sum` (``eo = -1`` for a
        ground marker), or None if a marker is on a point mass."""
        if "point" in self._kinds:
            return None
        out = []
        for mk, off, kind, q_b in zip(self.markers, self.offsets, self._kinds, q_bodies):
            if kind == "ground":
                out += [_NO_U0T, _NO_W12, _NO_Q, -1]
            else:
                U0T, W12, _ = kernel_consts(mk, kind)
                out += [U0T, W12, arg(q_b), off + 3]
        return tuple(out)

    @staticmethod
    def frame_jets(C, D, H) -> tuple[FrameJet, ...]:
        """The :class:`FrameJet` of each marker of :meth:`evaluate`'s arrays (views, no
        copies): ``(P, Q)`` for a joint."""
        if H is None:
            js = [Jet(C[i], D[i], None) for i in range(len(C))]
        else:
            js = [Jet(C[i], D[i], H[i]) for i in range(len(C))]
        return tuple(FrameJet(*js[k:k + 4]) for k in range(0, len(js), 4))


def position(marker, q_b) -> np.ndarray:
    """Inertial position of a marker."""
    body = marker.body
    if getattr(body, "is_ground", False):
        return np.array(marker.s)
    if body.n_coords == 3:
        return q_b[0:3] + marker.s
    if is_flexible(marker):
        return q_b[0:3] + A_of(q_b[3:7]) @ (marker.s + marker.Phi @ q_b[7:])
    return q_b[0:3] + A_of(q_b[3:7]) @ marker.s


def orientation(marker, q_b) -> np.ndarray:
    """Inertial axes (columns) of a marker."""
    body = marker.body
    if getattr(body, "is_ground", False) or body.n_coords == 3:
        return np.array(marker.R)
    if is_flexible(marker):
        return A_of(q_b[3:7]) @ _flexible_UW(marker, q_b[7:])[0][:, 1:]
    return A_of(q_b[3:7]) @ marker.R


def jacobians(marker, q_b) -> tuple[np.ndarray, np.ndarray]:
    """``(J_T, J_R)`` (3 x n_b): ``v_P = J_T qd_b`` and ``omega_P = J_R qd_b`` (inertial).

    On a flexible marker ``J_T = [E, d(A u)/de, A Phi]`` with ``u = s + Phi q_e`` and
    ``J_R = [0, 2 G(e), A Psi]`` (THEORY §2.1, ``T^t``, ``T^r`` in inertial components)."""
    body = marker.body
    nb = body.n_coords
    JT, JR = np.zeros((3, nb)), np.zeros((3, nb))
    if nb == 0:
        return JT, JR
    JT[:, 0:3] = np.eye(3)
    if nb >= 7:
        e = q_b[3:7]
        JR[:, 3:7] = 2.0 * G_of(e)
        if is_flexible(marker):
            A, qe = A_of(e), q_b[7:]
            JT[:, 3:7] = dAu_de(e, marker.s + marker.Phi @ qe)
            JT[:, 7:] = A @ marker.Phi
            if marker.Psi is not None:
                JR[:, 7:] = A @ marker.Psi
        else:
            JT[:, 3:7] = dAu_de(e, marker.s)
    return JT, JR
