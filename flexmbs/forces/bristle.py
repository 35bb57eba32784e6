"""Parameters of the LuGre bristle friction shared by joint and contact friction (THEORY
§3, §7 items 28 and 35; the law: :mod:`flexmbs.forces.lugre`).

From the static coefficient ``mu_s`` of a :class:`~flexmbs.forces.friction_law.FrictionLaw`,
the ``stiction_deformation`` ``z_s`` [m] (the bristle deflection at the static limit) and
the ``stiction_velocity`` ``v_st`` [m/s]:

    sigma0 = mu_s / z_s                      bristle stiffness per unit normal force [1/m]
    sigma1 = 2 mu_s / v_st                   bristle damping per unit normal force [s/m]
                                             (unless ``bristle_damping`` is given)
    eps    = SMOOTHING v_st                  smoothing of the slip speed [m/s]
    v_d    = DAMPING_VELOCITY v_st           speed above which sigma1 fades [m/s]
    h_max  = z_s / (2 v_st)                  the largest step resolving the bristles [s]

A law without a Stribeck curve (``v_s = 0``) and ``mu_s > mu_k`` is used with
``v_s = v_st`` (the bristle model needs a continuous ``mu``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from flexmbs.forces.friction_law import FrictionLaw

SMOOTHING = 1e-2     # eps of the slip speed a(v), as a fraction of the stiction velocity
DAMPING_VELOCITY = 5.0   # v_d of the bristle damping, in stiction velocities


@dataclass(frozen=True, eq=False)
class BristleParameters:
    """Mixin of a friction element with the bristle parameters of the module docstring;
    the element's :class:`FrictionLaw` is ``bristle_law`` (its ``law`` field unless a
    subclass says otherwise)."""

    stiction_deformation: float = 1e-5
    stiction_velocity: float = 1e-3
    bristle_damping: float | None = None

    max_step_reason = ("bristles need (z_s / (2 v_st)); with larger steps a joint that "
                       "should stick may slide (docs/friction.md)")

    @property
    def bristle_law(self) -> FrictionLaw:
        return self.law

    @property
    def effective_law(self) -> FrictionLaw:
        """The law, with ``v_s = stiction_velocity`` when it has no Stribeck curve."""
        law = self.bristle_law
        if law.v_s <= 0 and law.mu_s != law.mu_k:
            law = dataclasses.replace(law, v_s=self.stiction_velocity)
        return law

    @property
    def sigma0(self) -> float:
        """Bristle stiffness per unit normal force ``mu_s / z_s`` [1/m]."""
        return self.bristle_law.mu_s / self.stiction_deformation

    @property
    def sigma1(self) -> float:
        """Bristle damping per unit normal force [s/m]: ``bristle_damping``, by default
        ``2 mu_s / v_st`` (then a step load below the limit moves the contact at most at
        about ``v_st / 2``, so it sticks; the bristles are then damped over
        ``sigma1 / sigma0 = 2 z_s / v_st``)."""
        if self.bristle_damping is not None:
            return float(self.bristle_damping)
        return 2.0 * self.bristle_law.mu_s / self.stiction_velocity

    @property
    def smoothing(self) -> float:
        """``eps`` of the slip speed [m/s]."""
        return SMOOTHING * self.stiction_velocity

    @property
    def damping_velocity(self) -> float:
        """``v_d`` of the bristle damping [m/s]."""
        return DAMPING_VELOCITY * self.stiction_velocity

    @property
    def max_step(self) -> float | None:
        """The largest time step that resolves the bristles, ``z_s / (2 v_st)`` [s]."""
        return self.stiction_deformation / (2.0 * self.stiction_velocity)

    def bristle_problems(self, who: str) -> list[str]:
        """One line per invalid bristle parameter, naming ``who``."""
        out = []
        if not (self.sigma1 >= 0 and self.sigma1 < float("inf")):
            out.append(f"{who}: bristle_damping must be finite and >= 0 [s/m], got "
                       f"{self.sigma1}")
        for name, val, unit in (("stiction_deformation", self.stiction_deformation, "m"),
                                ("stiction_velocity", self.stiction_velocity, "m/s")):
            if not (val > 0 and val < float("inf")):
                out.append(f"{who}: {name} must be > 0 [{unit}], got {val}")
        return out
