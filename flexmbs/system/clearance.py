"""Revolute joint with radial clearance (a pin in a hole), THEORY §7 item 35.

A :class:`ClearanceRevolute` between the hole (side P, axis ``axis`` or the z axis of
its marker) and the pin (side Q) is two model items:

* constraint rows keeping the pin axis parallel to the hole axis and the pin in the
  hole's mid-plane, those of a :class:`~flexmbs.constraints.planar.Planar` joint
  ``<name>.axial`` with the hole axis as plane normal (``z_P . d = 0``,
  ``z_P . x_Q = 0``, ``z_P . y_Q = 0``);
* the radial contact ``<name>``, a :class:`~flexmbs.forces.contact.PinInHoleContact`:
  free inside the clearance ``c`` [m], pushed back by the normal ``law`` with
  ``friction`` on the pin's surface (radius ``R`` [m]) beyond it, by the law
  ``friction_model`` of the contacts (docs/contact.md): ``"regularised"`` (the default
  here, speed ``v_eps`` [m/s]: a pin flying in its clearance mostly slides, and the
  shipped case keeps its numbers) or ``"bristle"`` (true sticking: a pin pressed on the
  hole by ``F_n`` holds a torque ``|M| < mu_s F_n R`` without turning; parameters
  ``stiction_deformation`` [m], ``stiction_velocity`` [m/s], ``bristle_damping``
  [s/m]).

A point mass has no axes: with one on either side the rows are left out
(``axial = False`` is then implied), and its axial position must be held by its other
joints (a guide, as in ``cases/slider_crank_clearance``).  In case files it is the
``[[joints]]`` type ``clearance_revolute``; ``System.add`` adds its :meth:`parts`.

With ``c = 0`` the joint tends to a revolute as the contact stiffness grows: the pin
then sits ``delta = (F / K)^(1/n)`` off the hole centre under a radial load ``F``.
"""
from __future__ import annotations

from dataclasses import dataclass

from flexmbs.bodies.attach import body_of
from flexmbs.constraints.planar import Planar
from flexmbs.forces.contact import FRICTION_MODELS, PinInHoleContact
from flexmbs.forces.contact_law import ContactLaw
from flexmbs.forces.friction_law import FrictionLaw


@dataclass(frozen=True, eq=False)
class ClearanceRevolute:
    """Pin (``second``) in a hole (``first``) with radial clearance ``c`` [m] (module
    docstring); ``at`` [m] and ``axis`` place the joint frame as for a revolute."""

    name: str
    first: object
    second: object
    c: float = 0.0
    law: ContactLaw | None = None
    friction: FrictionLaw | None = None
    R: float = 0.0
    at: object = None
    axis: object = None
    v_eps: float = 1e-4
    axial: bool = True
    friction_model: str = FRICTION_MODELS[1]
    stiction_deformation: float = 1e-5
    stiction_velocity: float = 1e-3
    bristle_damping: float | None = None
    kind = "clearance_revolute"
    coordinate_names = ()   # no joint coordinates: drives and stops cannot act on it

    def problems(self) -> list[str]:
        """The problems of its parts (one line each, naming ``name``)."""
        try:
            parts = self.parts()
        except (TypeError, ValueError) as exc:
            return [f"ClearanceRevolute '{self.name}': {exc}"]
        out = []
        for part in parts:
            out += [p.replace(f"{type(part).__name__} '{part.name}'",
                              f"ClearanceRevolute '{self.name}'", 1) for p in part.problems()]
        return out

    def frame(self) -> Planar:
        """The rows ``<name>.axial`` (also the joint frame of the contact's markers)."""
        return Planar(f"{self.name}.axial", self.first, self.second, self.at, self.axis)

    def has_rows(self) -> bool:
        """Whether the axial rows are made (not with a point mass on either side)."""
        return self.axial and all(getattr(body_of(s), "n_coords", 7) != 3
                                  for s in (self.first, self.second))

    def parts(self) -> tuple:
        """The model items: the axial rows (when :meth:`has_rows`) and the contact."""
        rows = self.frame()
        P, Q = rows.resolve()
        contact = PinInHoleContact(self.name, first=P, second=Q, law=self.law,
                                   friction=self.friction, v_eps=self.v_eps, c=self.c,
                                   R=self.R, friction_model=self.friction_model,
                                   stiction_deformation=self.stiction_deformation,
                                   stiction_velocity=self.stiction_velocity,
                                   bristle_damping=self.bristle_damping)
        return (rows, contact) if self.has_rows() else (contact,)
