"""Structural damping of a reduced flexible body chosen at simulation time (THEORY §2.5).

The elastic equations of a body carry ``D_e qd_e`` (:mod:`flexmbs.bodies.flexible`).  The
reduced-body file holds the ``D_e`` of preprocessing (one ratio ``zeta`` for all modes);
these specifications replace it when the body is made, without preprocessing again:

* :class:`RayleighDamping` ``(alpha, beta)``:

      D_e = alpha M_e + beta K_e,     zeta_k = alpha / (2 omega_k) + beta omega_k / 2,

  ``alpha`` [1/s] mass-proportional, ``beta`` [s] stiffness-proportional.

* :class:`ModalDamping` ``zeta``: one ratio per eigenmode of the clamped reduced body (a
  sequence of length ``n_q``, lowest mode first) or a function ``zeta(f)`` of its natural
  frequency ``f`` [Hz].  Craig-Bampton (and free-free with static or derivative vectors)
  coordinates are not modal, so ``diag(2 zeta omega)`` in those coordinates would not give
  the ratios asked for.  The ratios are applied to the eigenvectors ``Psi`` of the reduced
  pair, ``K_e Psi = M_e Psi diag(omega^2)``, ``Psi^T M_e Psi = E``:

      D_e = M_e Psi diag(2 zeta_k omega_k) Psi^T M_e,

  so that ``Psi^T D_e Psi = diag(2 zeta_k omega_k)`` and each mode of
  ``M_e qdd + D_e qd + K_e q = 0`` (the body with its frame held) has exactly the ratio
  ``zeta_k``.

Both are symmetric positive semidefinite for ``alpha, beta, zeta_k >= 0``, so they only
dissipate (power ``-qd_e^T D_e qd_e``).  "Clamped" means the floating frame held fixed:
for a Craig-Bampton body with its frame at an interface, the interface clamped; for a
mean-axis body, the frame held at the centre of mass.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla


def reduced_modes(M_e: np.ndarray, K_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(omega, Psi)``: circular frequencies [rad/s] (ascending) and ``M_e``-normalised
    eigenvectors of ``K_e Psi = M_e Psi diag(omega^2)`` (negative round-off clipped)."""
    M = 0.5 * (np.asarray(M_e, float) + np.asarray(M_e, float).T)
    K = 0.5 * (np.asarray(K_e, float) + np.asarray(K_e, float).T)
    lam, Psi = sla.eigh(K, M)
    return np.sqrt(np.clip(lam, 0.0, None)), Psi


@dataclass(frozen=True)
class RayleighDamping:
    """``D_e = alpha M_e + beta K_e``; ``alpha`` [1/s], ``beta`` [s]."""

    alpha: float = 0.0
    beta: float = 0.0

    def problems(self, n_q: int, who: str) -> list[str]:
        return [f"{who}: Rayleigh {key} must be finite and >= 0 [{unit}], got {val}"
                for key, unit, val in (("alpha", "1/s", self.alpha), ("beta", "s", self.beta))
                if not np.isfinite(val) or val < 0]

    def D_e(self, M_e: np.ndarray, K_e: np.ndarray) -> np.ndarray:
        return self.alpha * np.asarray(M_e, float) + self.beta * np.asarray(K_e, float)

    def ratios(self, omega: np.ndarray) -> np.ndarray:
        """``zeta_k = alpha / (2 omega_k) + beta omega_k / 2`` of modes ``omega_k > 0``."""
        omega = np.asarray(omega, float)
        return self.alpha / (2.0 * omega) + 0.5 * self.beta * omega


@dataclass(frozen=True)
class ModalDamping:
    """Ratio ``zeta_k`` of each eigenmode: a sequence (length ``n_q``) or ``zeta(f [Hz])``."""

    zeta: Sequence[float] | Callable[[float], float]

    def ratios(self, omega: np.ndarray) -> np.ndarray:
        """``zeta_k`` of the modes with circular frequencies ``omega`` [rad/s]."""
        omega = np.asarray(omega, float)
        if callable(self.zeta):
            return np.array([float(self.zeta(w / (2.0 * np.pi))) for w in omega])
        return np.asarray(self.zeta, float)

    def problems(self, n_q: int, who: str) -> list[str]:
        if callable(self.zeta):
            return []
        z = np.asarray(self.zeta, float)
        if z.shape != (n_q,):
            return [f"{who}: modal damping needs one ratio per elastic coordinate "
                    f"({n_q}), got {z.size}"]
        if not np.all(np.isfinite(z)) or np.any(z < 0):
            return [f"{who}: modal damping ratios must be finite and >= 0, got {z.tolist()}"]
        return []

    def D_e(self, M_e: np.ndarray, K_e: np.ndarray) -> np.ndarray:
        omega, Psi = reduced_modes(M_e, K_e)
        zeta = self.ratios(omega)
        if not np.all(np.isfinite(zeta)) or np.any(zeta < 0):
            raise ValueError(f"modal damping: zeta(f) must be finite and >= 0, got "
                             f"{zeta.tolist()} at f = {(omega / (2 * np.pi)).tolist()} Hz")
        MPsi = np.asarray(M_e, float) @ Psi
        D = (MPsi * (2.0 * zeta * omega)) @ MPsi.T
        return 0.5 * (D + D.T)
