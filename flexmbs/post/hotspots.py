"""Hot spots: named stress points of a flexible body, their stress history and fatigue.

A hot spot is a set of mesh nodes of a reduced flexible body: a named node set, or the
node nearest to a point ``x`` given in the body frame (:func:`nearest_node`,
``i = argmin_j |X_j - x|``).  At each output time ``t_k`` with elastic coordinates
``q_e(t_k)`` (stress modes ``S`` (N, 6, n_q), :func:`flexmbs.post.recovery.nodal_stress`):

    sig_i(t_k) = S_i q_e(t_k)                         Voigt xx, yy, zz, yz, xz, xy [Pa]
    sig_vM     = sqrt(((s1 - s2)^2 + (s2 - s3)^2 + (s3 - s1)^2) / 2)   (von Mises)
    s1 >= s2 >= s3                                    eigenvalues of the symmetric tensor

Fatigue (optional, per node): the signed von Mises stress ``sig_vM sign(s_p)`` (``s_p``
the principal stress of largest magnitude, so that tension-compression reversals count
as full ranges) is rainflow-counted (ASTM E1049-85, the maintained ``rainflow``
package) into cycles of range ``S_j`` [Pa] and count ``n_j`` (1 or 1/2), and Miner's
rule sums the damage with a Basquin S-N curve ``N(S) = C S^-m`` (``S`` the stress
range):

    D = sum_j n_j / N(S_j) = sum_j n_j S_j^m / C

``D = 1`` is the predicted failure; the mean stress is not corrected for.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.fe.stress import VOIGT, von_mises
from flexmbs.post.recovery import residual_stress_modes

__all__ = ["HotSpot", "HotSpotHistory", "SNCurve", "miner_damage", "nearest_node",
           "principal_stresses", "rainflow_cycles", "signed_von_mises", "stress_history"]


def _ro(a, dtype=float) -> np.ndarray:
    a = np.array(a, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class SNCurve:
    """Basquin S-N curve ``N(S) = C S^-m``: cycles to failure at stress range ``S`` [Pa];
    ``C`` [Pa^m], ``m`` [-] (both positive)."""

    C: float
    m: float

    def __post_init__(self):
        if not (np.isfinite(self.C) and self.C > 0 and np.isfinite(self.m) and self.m > 0):
            raise ValueError(f"SNCurve: expected C > 0 [Pa^m] and m > 0, got C = {self.C}, "
                             f"m = {self.m}")

    @classmethod
    def through(cls, S_ref: float, N_ref: float, m: float) -> SNCurve:
        """The curve through ``N_ref`` cycles at range ``S_ref`` [Pa]: ``C = N_ref S_ref^m``
        (ValueError when that is beyond the floating-point range: an exponent ``m`` of
        hundreds)."""
        try:
            C = N_ref * S_ref ** m
        except OverflowError:
            C = float("inf")
        if isinstance(C, complex) or not np.isfinite(C):
            raise ValueError(f"SNCurve: C = N_ref S_ref^m = {N_ref:g} x {S_ref:g}^{m:g} is "
                             f"not a finite number: expected an exponent m of a few units "
                             f"(3 to 5 for steel welds) and positive S_ref [Pa], N_ref, "
                             f"got m = {m:g}")
        return cls(C, m)

    def cycles_to_failure(self, S) -> np.ndarray:
        """``N = C S^-m`` for stress ranges ``S`` [Pa] (infinite at ``S = 0``)."""
        S = np.asarray(S, dtype=float)
        with np.errstate(divide="ignore"):
            return self.C * S ** (-self.m)


@dataclass(frozen=True)
class HotSpot:
    """A named stress point: ``nodes`` (k,) mesh node ids of flexible body ``body``;
    ``sn_curve`` for the damage sum (optional)."""

    name: str
    body: str
    nodes: np.ndarray
    sn_curve: SNCurve | None = None

    def __post_init__(self):
        object.__setattr__(self, "nodes", _ro(np.atleast_1d(self.nodes), np.int64))
        if self.nodes.ndim != 1 or self.nodes.size == 0:
            raise ValueError(f"hot spot '{self.name}': expected at least one node id, got "
                             f"shape {self.nodes.shape}")


@dataclass(frozen=True)
class HotSpotHistory:
    """The stress of a :class:`HotSpot` at the output times ``t`` (n,) [s]: ``stress``
    (n, k, 6) Voigt [Pa] in the body frame, ``von_mises`` (n, k) [Pa], ``principal``
    (n, k, 3) [Pa] descending, ``damage`` (k,) Miner sums (``None`` without S-N curve)."""

    spot: HotSpot
    t: np.ndarray
    stress: np.ndarray
    von_mises: np.ndarray
    principal: np.ndarray
    damage: np.ndarray | None = None

    @property
    def worst_node(self) -> int:
        """The node of the spot with the largest von Mises stress over time (mesh id)."""
        return int(self.spot.nodes[np.argmax(self.von_mises.max(axis=0))])


def nearest_node(points: np.ndarray, x) -> int:
    """``argmin_j |X_j - x|``: the node of ``points`` (N, 3) [m] nearest to ``x`` (3,)."""
    d = np.linalg.norm(np.asarray(points, dtype=float) - np.asarray(x, dtype=float), axis=1)
    return int(np.argmin(d))


def tensor(sig: np.ndarray) -> np.ndarray:
    """Voigt stresses (..., 6) -> symmetric tensors (..., 3, 3)."""
    sig = np.asarray(sig, dtype=float)
    T = np.empty(sig.shape[:-1] + (3, 3))
    for c, (i, j) in enumerate(VOIGT):
        T[..., i, j] = T[..., j, i] = sig[..., c]
    return T


def principal_stresses(sig: np.ndarray) -> np.ndarray:
    """Principal stresses ``s1 >= s2 >= s3`` (..., 3) [Pa] of Voigt stresses (..., 6)."""
    return np.linalg.eigvalsh(tensor(sig))[..., ::-1]


def signed_von_mises(sig: np.ndarray) -> np.ndarray:
    """``sig_vM sign(s_p)`` (...,) [Pa], ``s_p`` the principal stress of largest magnitude."""
    s = principal_stresses(sig)
    s_p = np.take_along_axis(s, np.argmax(np.abs(s), axis=-1)[..., None], axis=-1)[..., 0]
    return von_mises(sig) * np.where(s_p < 0, -1.0, 1.0)


def rainflow_cycles(signal) -> tuple[np.ndarray, np.ndarray]:
    """Rainflow count (ASTM E1049-85) of ``signal`` (n,): ranges ``S_j`` and counts
    ``n_j`` (1 for a full cycle, 0.5 for a half), by the ``rainflow`` package."""
    import rainflow
    cycles = rainflow.count_cycles(np.asarray(signal, dtype=float).tolist())
    if not cycles:
        return np.zeros(0), np.zeros(0)
    S, n = np.array(cycles, dtype=float).T
    return S, n


def miner_damage(signal, sn_curve: SNCurve) -> float:
    """``D = sum_j n_j S_j^m / C`` over the rainflow cycles of ``signal`` [Pa]."""
    S, n = rainflow_cycles(signal)
    return float(np.sum(n / sn_curve.cycles_to_failure(S)))


def stress_history(spot: HotSpot, body, t, q_e, wrenches=None) -> HotSpotHistory:
    """The stress history of ``spot`` on ``body`` (a
    :class:`~flexmbs.io.bodyfile.ReducedBody`) at times ``t`` (n,) [s] with elastic
    coordinates ``q_e`` (n, n_q); ``wrenches`` ``{marker: (n, 6)}`` adds the static
    correction of the interface loads, ``sum_I S_I W_I``
    (:func:`flexmbs.post.recovery.nodal_stress`)."""
    nodes = spot.nodes
    n_points = len(body.points)
    if nodes.min() < 0 or nodes.max() >= n_points:
        raise ValueError(f"hot spot '{spot.name}': node ids must lie in 0..{n_points - 1} "
                         f"(body '{spot.body}'), got {nodes.min()}..{nodes.max()}")
    q_e = np.atleast_2d(np.asarray(q_e, dtype=float))
    sig = np.einsum("icq,tq->tic", np.asarray(body.stress_modes)[nodes], q_e)  # S_i q_e
    for name, W in (wrenches or {}).items():
        sig = sig + np.einsum("icw,tw->tic", residual_stress_modes(body, name)[nodes],
                              np.atleast_2d(np.asarray(W, dtype=float)))
    damage = None
    if spot.sn_curve is not None:
        signed = signed_von_mises(sig)
        damage = np.array([miner_damage(signed[:, k], spot.sn_curve)
                           for k in range(len(nodes))])
    return HotSpotHistory(spot, np.asarray(t, dtype=float), sig, von_mises(sig),
                          principal_stresses(sig), damage)

