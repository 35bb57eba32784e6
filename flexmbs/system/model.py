"""The ``System`` builder: named bodies, joints, drives, force elements and sensors.

``System.validate()`` collects every problem (bad data, unknown or duplicate names,
joints to bodies not in the model, ...) into one :class:`~flexmbs.errors.ModelError`.
``System.assemble()`` returns the :class:`~flexmbs.system.assembly.AssembledSystem`,
the DAE of THEORY (2.79) on flat arrays.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexmbs.bodies.marker import Marker
from flexmbs.errors import ModelError

#: the formulations of a model's equations of motion (docs/relative.md)
FORMULATIONS = ("absolute", "relative", "recursive")


def _kind(item) -> str:
    """Classify a modelling object by the protocol it implements."""
    if hasattr(item, "local_rates") and hasattr(item, "markers"):
        return "velocity constraint"
    if hasattr(item, "residual") and hasattr(item, "n_coords"):
        return "body"
    if hasattr(item, "equations"):
        if hasattr(item, "first") and hasattr(item, "second"):
            return "joint"
        if hasattr(item, "joint"):
            return "drive"
    if hasattr(item, "contribution"):
        return "force"
    if hasattr(item, "measure") and hasattr(item, "resolve"):
        return "sensor"
    return "unknown"


@dataclass
class System:
    """A multibody model under construction.

    Parameters
    ----------
    gravity : (3,) gravitational acceleration [m/s^2], inertial components
    name : model name (used for result files)
    formulation : "absolute" (descriptor form, the default), "relative" (joint
        coordinates, non-recursive formalism) or "recursive" (joint coordinates,
        recursive Newton-Euler); docs/relative.md
    """

    gravity: tuple = (0.0, 0.0, 0.0)
    name: str = "model"
    bodies: list = field(default_factory=list)
    joints: list = field(default_factory=list)
    drives: list = field(default_factory=list)
    forces: list = field(default_factory=list)
    sensors: list = field(default_factory=list)
    #: velocity (nonholonomic) constraints ``A qd + a = 0`` (:mod:`flexmbs.constraints.velocity`)
    constraints: list = field(default_factory=list)
    formulation: str = "absolute"

    def __post_init__(self) -> None:
        """A misplaced argument is a TypeError naming it, what was expected and what was
        found: ``System("x")`` gives the name as the first positional argument, which is
        ``gravity`` (it failed later, in the validation, on a float conversion)."""
        if isinstance(self.gravity, str | bytes):
            raise TypeError(f"System: gravity (the first positional argument): expected a "
                            f"3-vector [m/s^2], got {self.gravity!r} "
                            f"({type(self.gravity).__name__}); the name is a keyword "
                            f"argument: fm.System(name={self.gravity!r})")
        if not isinstance(self.name, str):
            raise TypeError(f"System: name: expected a string, got {self.name!r} "
                            f"({type(self.name).__name__})")

    def add(self, *items) -> System:
        """Add bodies, joints, drives, force elements, sensors or velocity constraints (in
        any order).

        Bodies referenced by joints, force elements or velocity constraints are added
        automatically; a velocity constraint's own position constraints (its
        ``holonomic_joints``, e.g. a rolling disc's normal contact) are added with it, and
        an item made of several (a :class:`~flexmbs.system.clearance.ClearanceRevolute`,
        with ``parts()``) adds its parts."""
        for item in items:
            if hasattr(item, "parts") and not hasattr(item, "residual"):
                self.add(*item.parts())
                continue
            kind = _kind(item)
            if kind == "velocity constraint":
                self.constraints.append(item)
                self.add(*item.holonomic_joints())
                for mk in self._velocity_markers(item):
                    body = mk.body
                    if (not getattr(body, "is_ground", False) and _kind(body) == "body"
                            and not any(b is body for b in self.bodies)):
                        self.bodies.append(body)
                continue
            if kind == "unknown":
                raise ModelError(f"System '{self.name}': cannot add {item!r}: not a body, "
                                 "joint, drive, force element, sensor or velocity constraint")
            target = {"body": self.bodies, "joint": self.joints, "drive": self.drives,
                      "force": self.forces, "sensor": self.sensors}[kind]
            target.append(item)
            if kind in ("joint", "force"):
                for side in self._sides(item):
                    body = side.body if isinstance(side, Marker) else side
                    if (body is not None and not getattr(body, "is_ground", False)
                            and _kind(body) == "body"
                            and not any(b is body for b in self.bodies)):
                        self.bodies.append(body)
        return self

    @staticmethod
    def _velocity_markers(item) -> tuple:
        """The markers of a velocity constraint (none when its sides are invalid: its
        ``problems`` say why)."""
        try:
            return tuple(item.markers())
        except (TypeError, ValueError):
            return ()

    @staticmethod
    def _sides(item):
        """Bodies or markers an item attaches to (``(body, point)`` pairs give the body)."""
        out = []
        for a in ("first", "second", "at"):
            side = getattr(item, a, None)
            if a == "at" and not hasattr(item, "contribution"):
                continue                         # a joint's 'at' is a point
            if isinstance(side, tuple) and side and hasattr(side[0], "n_coords"):
                side = side[0]
            if side is not None and (isinstance(side, Marker) or hasattr(side, "n_coords")):
                out.append(side)
        return out

    # -- lookup -------------------------------------------------------------------
    def joint(self, name: str):
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(name)

    def body(self, name: str):
        for b in self.bodies:
            if b.name == name:
                return b
        raise KeyError(name)

    # -- validation --------------------------------------------------------------
    def problems(self) -> list[str]:
        """Every problem of the model (empty when valid)."""
        out: list[str] = []
        try:
            g = np.asarray(self.gravity, dtype=float)
        except (TypeError, ValueError):   # (set after construction to something else)
            g = np.full(1, np.nan)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            out.append(f"System '{self.name}': gravity must be a finite 3-vector, got {self.gravity}")
        if not self.bodies:
            out.append(f"System '{self.name}': has no bodies")
        why = formulation_problem(self, self.formulation)
        if why:
            out.append(why)
        names: dict[str, str] = {}
        for group, items in (("body", self.bodies), ("joint", self.joints), ("drive", self.drives),
                             ("force element", self.forces), ("sensor", self.sensors),
                             ("velocity constraint", self.constraints)):
            for item in items:
                nm = getattr(item, "name", None)
                if not isinstance(nm, str) or not nm:
                    out.append(f"{group} {item!r}: needs a non-empty name")
                    continue
                if nm in names:
                    out.append(f"{group} '{nm}': name already used by a {names[nm]}")
                names[nm] = group
                out.extend(item.problems())
        body_ids = {id(b) for b in self.bodies}
        fed = [d.feed[0] for d in self.drives                # sensors feeding drives
               if getattr(d, "feed", None) is not None and not d.feed_problem()]
        for item in self.joints + self.forces + self.sensors + fed:
            for side in self._sides(item):
                body = side.body if isinstance(side, Marker) else side
                if getattr(body, "is_ground", False):
                    continue
                if _kind(body) != "body":
                    out.append(f"{type(item).__name__} '{item.name}': attached to {body!r}, "
                               "which is not a body or marker")
                elif id(body) not in body_ids:
                    out.append(f"{type(item).__name__} '{item.name}': body '{body.name}' is not "
                               "in the model")
                if isinstance(side, Marker) and side.body is not body:
                    out.append(f"{type(item).__name__} '{item.name}': marker '{side.name}' "
                               "is not on its body")
        for item in self.constraints:
            for mk in self._velocity_markers(item):
                body = mk.body
                if not getattr(body, "is_ground", False) and id(body) not in body_ids:
                    out.append(f"{type(item).__name__} '{item.name}': body "
                               f"'{getattr(body, 'name', body)}' is not in the model")
        out.extend(_point_mass_offsets(self.joints))
        joint_names = {j.name for j in self.joints}
        for item in self.drives + self.forces + self.sensors:
            ref = getattr(item, "joint", None)
            ref_name = ref if isinstance(ref, str) else getattr(ref, "name", None)
            if ref is not None and ref_name not in joint_names:
                hint = _did_you_mean(ref_name, joint_names)
                out.append(f"{type(item).__name__} '{item.name}': unknown joint '{ref_name}'{hint}")
        return out

    def validate(self) -> System:
        """Raise one :class:`ModelError` listing every problem; return self if valid."""
        probs = self.problems()
        if probs:
            raise ModelError(probs)
        return self

    def assemble(self, **kw):
        """Validate and build the DAE (see :class:`flexmbs.system.assembly.AssembledSystem`)."""
        from flexmbs.system.assembly import AssembledSystem
        self.validate()
        return AssembledSystem(self, **kw)


def formulation_problem(model, formulation: str) -> str | None:
    """The one-line reason ``model`` cannot be written in ``formulation``, or None.

    The joint-coordinate formulations (docs/relative.md) take rigid and flexible bodies,
    joints, drives, sensors, gravity and force elements without
    internal states; other bodies, velocity (nonholonomic) constraints and force elements
    with states are refused by name."""
    if formulation not in FORMULATIONS:
        return (f"System '{model.name}': formulation must be one of "
                f"{', '.join(FORMULATIONS)}, got {formulation!r}")
    if formulation == "absolute":
        return None
    takes = ("rigid", "flexible")
    for b in model.bodies:
        if getattr(b, "kind", None) not in takes:
            return (f"body '{b.name}': formulation '{formulation}' takes "
                    f"{' and '.join(takes)} bodies only, got a {type(b).__name__} "
                    f"(use formulation = 'absolute')")
    for c in model.constraints:
        return (f"velocity constraint '{c.name}': formulation '{formulation}' takes "
                f"position (holonomic) joints only, got a {type(c).__name__} "
                f"(use formulation = 'absolute')")
    for f in model.forces:
        if len(getattr(f, "state_names", ())):
            return (f"force element '{f.name}': formulation '{formulation}' takes force "
                    f"elements without internal states, this one has "
                    f"{len(f.state_names)} (use formulation = 'absolute')")
    return None


#: how far [m] a joint point that holds all three translations (:data:`POINT_JOINTS`)
#: may lie from the point mass it holds (a mesh node set's centre is a few micrometres
#: off): a gross misplacement is refused
POINT_MASS_OFFSET = 1e-2
#: the joints whose point is fixed on both sides: on a point mass (no rotation) an offset
#: ``at`` would carry the mass at a fixed lever from where the joint holds it.  A guide
#: (a sphere in a tube or on a plane, a prismatic, planar or cylindrical joint) leaves
#: translations free, and an offset along or across it changes nothing
POINT_JOINTS = frozenset({"spherical", "revolute", "universal", "fixed"})


def _point_mass_offsets(joints) -> list[str]:
    """A joint of :data:`POINT_JOINTS` on a point mass must sit at the mass point: a point
    mass has no rotation, so a joint point ``at`` elsewhere would carry the mass at a
    fixed offset, a massless lever that never turns (module doc of
    :mod:`flexmbs.bodies.point_mass`); :data:`POINT_MASS_OFFSET` (plus round-off of the
    position) is the tolerance."""
    out = []
    for j in joints:
        if not any(getattr(getattr(side, "body", side), "kind", None) == "point_mass"
                   for side in (getattr(j, "first", None), getattr(j, "second", None))):
            continue                                # (no point mass: nothing to place)
        if getattr(j, "kind", None) not in POINT_JOINTS or not hasattr(j, "resolve") \
                or j.problems():
            continue                                # (others reported by the joint itself)
        try:
            markers = j.resolve()
        except (ValueError, TypeError, AttributeError):
            continue
        for tag, mk in zip(("first", "second"), markers):
            body = getattr(mk, "body", None)
            if getattr(body, "kind", None) != "point_mass":
                continue
            r0 = np.asarray(body.r0, float)
            offset = float(np.linalg.norm(mk.s))
            if offset > POINT_MASS_OFFSET + 1e-9 * float(np.linalg.norm(r0)):
                point = np.round(r0 + mk.s, 12).tolist()
                out.append(f"{type(j).__name__} '{j.name}': its {tag} side is point mass "
                           f"'{body.name}' at {np.round(r0, 12).tolist()}, expected the joint "
                           f"point there, got {point} ({offset:.4g} m away; a point mass has "
                           f"no rotation: put the joint point at the mass, or check the "
                           f"length unit)")
    return out


def _did_you_mean(name, candidates) -> str:
    import difflib
    close = difflib.get_close_matches(str(name), sorted(candidates), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
