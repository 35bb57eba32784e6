"""Joint coordinates of a tree joint (THEORY §3.3, (9)-(11)): the pose of the child's
joint frame Q in the parent's joint frame P, and its relative twist, as functions of
the joint coordinates ``beta`` and their rates ``betad`` (``eta = betad``, ``H = E``).

In P's axes, with ``A_rel`` the rotation of Q and ``d`` the position of Q's origin:

    omega_rel = S_omega(beta) betad,          d/dt omega_rel = S_omega betadd + s_omega
    v_rel     = dd/dt = S_v(beta) betad,      d/dt v_rel     = S_v betadd + s_v

| joint       | beta                    | A_rel             | d     | S_omega         | S_v      |
|-------------|-------------------------|-------------------|-------|-----------------|----------|
| revolute    | angle about z           | R_z(theta)        | 0     | e_z             | 0        |
| prismatic   | displacement along z    | E                 | s e_z | 0               | e_z      |
| cylindrical | angle, displacement     | R_z(theta)        | s e_z | [e_z, 0]        | [0, e_z] |
| universal   | alpha (x_P), beta (y_Q) | R_x(alpha) R_y(b) | 0     | [e_x, R_x e_y]  | 0        |
| spherical   | Euler parameters e (4)  | A(e)              | 0     | 2 G(e)          | 0        |
| free        | d (3), e (4)            | A(e)              | d     | [0, 2 G(e)]     | [E, 0]   |

(angles in rad, displacements in m.)
The only non-zero bias is the universal joint's ``s_omega = alphad e_x x (R_x e_y) bd``
(``G(ed) ed = 0`` for the Euler parameters).  Spherical and free joints carry the
normalisation ``Phi = e.e - 1 = 0`` (THEORY §3.3 (6)), a constraint row of the DAE: the
parameterisation has no singular configuration.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmbs.kinematics.rotation import A_of, G_of

E3 = np.eye(3)
EX, EY, EZ = E3


def R_x(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def R_y(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def R_z(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class JointMotion:
    """The relative kinematics of one joint kind (module table).

    ``n_beta`` coordinates; ``e_slice``: where its Euler parameters sit in ``beta`` (or
    None)."""

    kind: str
    n_beta: int
    e_slice: slice | None = None

    def beta0(self, d0=None, e0=None) -> np.ndarray:
        """Coordinates of the configuration ``A_rel = A(e0)``, ``d = d0`` (default: the
        joint frames coincide)."""
        e = np.array([1.0, 0.0, 0.0, 0.0]) if e0 is None else np.asarray(e0, float)
        if self.kind == "spherical":
            return e.copy()
        if self.kind == "free":
            return np.concatenate([np.zeros(3) if d0 is None else np.asarray(d0, float), e])
        return np.zeros(self.n_beta)

    def pose(self, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(A_rel, d)``: Q's rotation and origin in P's axes."""
        k, b = self.kind, beta
        if k == "revolute":
            return R_z(b[0]), np.zeros(3)
        if k == "prismatic":
            return E3.copy(), b[0] * EZ
        if k == "cylindrical":
            return R_z(b[0]), b[1] * EZ
        if k == "universal":
            return R_x(b[0]) @ R_y(b[1]), np.zeros(3)
        if k == "spherical":
            return A_of(b), np.zeros(3)
        return A_of(b[3:7]), b[0:3].copy()          # free

    def subspace(self, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(S_omega, S_v)``, each (3, n_beta), in P's axes (in ``beta``'s numbers)."""
        k, n = self.kind, self.n_beta
        dtype = np.result_type(beta, float)     # complex in a complex-step sweep
        S_w, S_v = np.zeros((3, n), dtype), np.zeros((3, n), dtype)
        if k == "revolute":
            S_w[:, 0] = EZ
        elif k == "prismatic":
            S_v[:, 0] = EZ
        elif k == "cylindrical":
            S_w[:, 0], S_v[:, 1] = EZ, EZ
        elif k == "universal":
            S_w[:, 0], S_w[:, 1] = EX, R_x(beta[0]) @ EY
        elif k == "spherical":
            S_w[:] = 2.0 * G_of(beta)
        else:
            S_v[:, 0:3] = E3
            S_w[:, 3:7] = 2.0 * G_of(beta[3:7])
        return S_w, S_v

    def bias(self, beta: np.ndarray, betad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(s_omega, s_v)``: the relative accelerations at ``betadd = 0``, P's axes."""
        s_w = np.zeros(3)
        if self.kind == "universal":
            s_w = betad[0] * betad[1] * np.cross(EX, R_x(beta[0]) @ EY)
        return s_w, np.zeros(3)


MOTIONS = {
    "revolute": JointMotion("revolute", 1),
    "prismatic": JointMotion("prismatic", 1),
    "cylindrical": JointMotion("cylindrical", 2),
    "universal": JointMotion("universal", 2),
    "spherical": JointMotion("spherical", 4, slice(0, 4)),
    "free": JointMotion("free", 7, slice(3, 7)),
}
