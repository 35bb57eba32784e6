"""A validated case (:class:`~flexmbs.case.loader.CaseSpec`) -> the Python model.

Each TOML item maps onto one constructor of the Python API: the class registered for its
``type`` (:mod:`flexmbs.case.kinds`; ``[[joints]] type = "revolute"`` ->
:class:`~flexmbs.constraints.revolute.Revolute`, ...), called with the item's keys as
keyword arguments.  Flexible bodies given by a ``mesh`` are reduced once and cached
(:mod:`flexmbs.case.cache`).  Errors raised by the API while building are re-raised as
:class:`CaseError` naming the file and the key path; model-level problems
(:meth:`System.problems`) likewise name the file.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from flexmbs.case import folders, kinds
from flexmbs.case import schema as S
from flexmbs.case.loader import CaseSpec
from flexmbs.errors import BodyFileError, CaseError, FlexmbsError
from flexmbs.forces.contact_law import ContactLaw
from flexmbs.forces.friction_law import FrictionLaw

log = logging.getLogger(__name__)


@dataclass
class BuiltCase:
    """The model of a case: ``system`` plus what the CLI needs besides it."""

    case: CaseSpec
    system: object
    bodies: dict = field(default_factory=dict)          # name -> body object
    flexible: dict = field(default_factory=dict)        # name -> FlexibleBody
    body_files: dict = field(default_factory=dict)      # name -> (path, "cached"|"new"|"given")


#: keys that place the side named by another key at an inertial point: ``(body, point)``
_POINT_OF = {"first": "first_at", "second": "second_at", "at": "point"}


#: inline-table key kinds made into law objects (contact elements; a joint's ``friction``
#: where it is a field of the joint, the clearance_revolute's)
_LAWS = {"contact_law": ContactLaw, "friction_law": FrictionLaw,
         "friction": lambda **v: FrictionLaw(**{k: v[k] for k in S.LAW_FRICTION_KEYS if k in v})}


def _value(key: S.Key, value):
    """A checked value as its constructor takes it: time-function tables become
    :class:`~flexmbs.kinematics.time_functions.TimeFunction` objects, arrays tuples."""
    if key.kind == "function":
        return time_function(value)
    if key.kind in _LAWS and value is not None:
        return _LAWS[key.kind](**value)
    if key.kind in ("floats", "ints", "vec6"):
        return None if value is None else tuple(value)
    return value


def time_function(spec):
    """A number, vector or time-function table -> argument of a drive or load.

    A table ``{type = ...}`` makes the class registered for its type, with the table's
    values in the order of the schema's keys (that of the class's fields)."""
    if not isinstance(spec, dict):
        return spec
    keys = S.FUNCTION[spec["type"]].values()
    return kinds.FUNCTIONS[spec["type"]](*(_value(k, spec[k.name]) for k in keys))


def _arguments(cls, item: dict, keys: dict, side, joints: dict | None = None,
               points: bool = True) -> dict:
    """Keyword arguments of ``cls`` for a validated case ``item`` with schema ``keys``.

    Every key of the item that is a field of ``cls`` (``type`` and the attachment points
    of :data:`_POINT_OF` are not) is passed under its own name: a reference
    ``"BODY.MARKER"`` as the side ``side(item, key, point_key)``, a joint name as the
    joint object of ``joints`` (force elements; drives take the name), a time-function
    table as its object, arrays as tuples.  With ``points=False`` (joints, whose
    ``at``/``second_at`` are fields that place the joint frames) a side is never
    ``(body, point)``.
    """
    fields = {f.name for f in dataclasses.fields(cls)}
    out = {}
    for key in keys.values():
        name = key.name
        if name not in fields or name not in item:
            continue
        value = item[name]
        if key.kind == "ref":
            value = None if value is None else side(item, name,
                                                    _POINT_OF.get(name) if points else None)
        elif name == "joint" and joints is not None:
            value = joints[value]
        else:
            value = _value(key, value)
        out[name] = value
    return out


def rotation_matrix(orientation) -> np.ndarray:
    from flexmbs.constraints.base import parse_axis
    from flexmbs.kinematics.rotation import matrix_from_axis_angle
    if orientation is None:
        return np.eye(3)
    if isinstance(orientation, dict):
        return matrix_from_axis_angle(parse_axis(orientation["axis"], "orientation"),
                                      orientation["angle"])
    return np.array(orientation, dtype=float)


def inertia_matrix(val) -> np.ndarray:
    a = np.array(val, dtype=float)
    if a.shape == (3,):
        return np.diag(a)
    if a.shape == (6,):
        xx, yy, zz, xy, xz, yz = a
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    return a


def _rigid(b: dict):
    from flexmbs.bodies.rigid import RigidBody
    from flexmbs.constraints.base import parse_axis
    from flexmbs.kinematics.rotation import frame_from_axis
    markers = {}
    for name, mk in (b.get("markers") or {}).items():
        R = np.eye(3) if mk["axis"] is None else frame_from_axis(
            parse_axis(mk["axis"], f"marker '{name}'"))
        markers[name] = (np.array(mk["at"]), R)
    kw = {"com": b["com"], "r0": b["position"], "R0": rotation_matrix(b.get("orientation")),
          "v0": b["velocity"], "omega0": b["angular_velocity"], "markers": markers}
    shape = b.get("shape")
    if shape == "box":
        return RigidBody.box(b["name"], b["size"], b["density"], **kw)
    if shape == "cylinder":
        return RigidBody.cylinder(b["name"], b["radius"], b["length"], b["density"],
                                  axis=b["axis"], **kw)
    if shape == "sphere":
        return RigidBody.sphere(b["name"], b["radius"], b["density"], **kw)
    return RigidBody(b["name"], b["m"], inertia_matrix(b["inertia"]), **kw)


#: a gravity larger than this [m/s^2] (about 100 g) gets a warning: mm/s^2 read as m/s^2
GRAVITY_LARGE = 1000.0


def _shape_unit_warning(b: dict, m: float) -> tuple[str, str] | None:
    """(key, warning) if a solid ``shape`` is larger than a mesh declared in metres may be
    (:data:`flexmbs.io.mesh.UNIT_LARGE_M`): its sizes were probably written in millimetres;
    None as well for a body with ``large_shape = true`` (a large solid meant)."""
    from flexmbs.io.mesh import UNIT_LARGE_M
    shape = b.get("shape")
    if b.get("large_shape"):
        return None
    if shape == "box":
        key, dims = "size", list(b["size"])
    elif shape == "cylinder":
        key, dims = "length", [2 * b["radius"], b["length"]]
    elif shape == "sphere":
        key, dims = "radius", [2 * b["radius"]]
    else:
        return None
    if max(dims) <= UNIT_LARGE_M:
        return None
    if shape == "cylinder" and b["length"] < 2 * b["radius"]:
        key = "radius"
    extent = " x ".join(f"{x:.4g}" for x in dims)
    return key, (f"{shape} '{b['name']}' spans {extent} m, mass {m:.3g} kg: the case file "
                 f"is in SI units; if its sizes are in millimetres, divide them by 1000 "
                 f"(if it is meant, large_shape = true)")


def _flexible(case: CaseSpec, b: dict, body_dir: Path, progress, built: BuiltCase):
    from flexmbs.bodies.flexible import FlexibleBody
    from flexmbs.case.cache import reduced_body_file
    from flexmbs.io.bodyfile import load_body
    if b.get("body_file") is not None:
        path, how = Path(b["body_file"]), "given"
    else:
        try:
            path, how = reduced_body_file(b, body_dir, progress=progress)
        except CaseError as exc:
            raise CaseError(f"{case.path.name}: {exc}") from None
    try:
        body = load_body(path)
    except BodyFileError as exc:
        raise CaseError(f"{case.where(b['path'])}: {exc}") from None
    if b.get("mesh") is not None:
        from flexmbs.io.mesh import unit_warning
        warning = unit_warning(body.points, b["unit"], body.m, source=str(b["mesh"]))
        if warning:
            log.warning("%s: %s", case.where(b["path"] + ".unit"), warning)
    built.body_files[b["name"]] = (path, how)
    return FlexibleBody(b["name"], body, r0=np.array(b["position"]),
                        R0=rotation_matrix(b.get("orientation")), v0=np.array(b["velocity"]),
                        omega0=np.array(b["angular_velocity"]), stiffening=b["stiffening"],
                        damping=True, structural_damping=_structural_damping(case, b, body))


def _structural_damping(case: CaseSpec, b: dict, body):
    """The body's ``damping_ratios`` or ``rayleigh_*`` as a damping specification (None:
    the body file's ``D_e``); a ratio list of the wrong length names its key."""
    from flexmbs.bodies.damping import ModalDamping, RayleighDamping
    ratios = b.get("damping_ratios")
    if ratios is not None:
        if len(ratios) != body.n_q:
            raise CaseError(f"{case.where(b['path'] + '.damping_ratios')}: expected "
                            f"{body.n_q} ratios (one per elastic coordinate of the body), "
                            f"got {len(ratios)}")
        return ModalDamping(tuple(ratios))
    alpha, beta = b.get("rayleigh_alpha"), b.get("rayleigh_beta")
    if alpha is None and beta is None:
        return None
    return RayleighDamping(alpha=alpha or 0.0, beta=beta or 0.0)


def build(case: CaseSpec, *, body_dir: str | Path | None = None,
          progress: Callable[[str, float], None] | None = None) -> BuiltCase:
    """Build the :class:`~flexmbs.system.model.System` of ``case``.

    ``body_dir``: folder of the reduced-body cache (default
    :func:`~flexmbs.case.folders.body_cache`);
    ``progress(message, seconds)`` reports preprocessing steps.
    """
    from flexmbs.bodies.ground import ground
    from flexmbs.bodies.point_mass import PointMass
    from flexmbs.bodies.rigid import RigidBody
    from flexmbs.system.model import System

    body_dir = Path(body_dir) if body_dir is not None else folders.body_cache()
    system = System(gravity=tuple(case.model["gravity"]), name=case.name,
                    formulation=case.model.get("formulation", "absolute"))
    built = BuiltCase(case, system)
    g = float(np.linalg.norm(case.model["gravity"]))
    if g > GRAVITY_LARGE:
        log.warning("%s: |g| = %.4g m/s^2 (%.3g times the earth's): the case file is in SI "
                    "units; if it is in mm/s^2, divide by 1000", case.where("model.gravity"),
                    g, g / 9.80665)
    for b in case.bodies:
        try:
            cls = kinds.BODIES[b["type"]]
            if cls is RigidBody:
                obj = _rigid(b)
                warning = _shape_unit_warning(b, obj.m)
                if warning:
                    log.warning("%s: %s", case.where(b["path"] + "." + warning[0]), warning[1])
            elif cls is PointMass:
                obj = PointMass(b["name"], b["m"], r0=b["position"], v0=b["velocity"])
            else:
                obj = _flexible(case, b, body_dir, progress, built)
                built.flexible[b["name"]] = obj
        except (ValueError, TypeError) as exc:
            raise CaseError(f"{case.where(b['path'])}: {exc}") from None
        built.bodies[b["name"]] = obj
        system.add(obj)

    def side(item: dict, key: str, point_key: str | None = None):
        ref = item[key]
        body_name, _, marker = ref.partition(".")
        body = ground if body_name == "ground" else built.bodies[body_name]
        if marker:
            try:
                return body[marker]
            except KeyError:
                names = ([mk.name for mk in body.body.markers] if hasattr(body, "body")
                         else list(getattr(body, "markers", {})))
                raise CaseError(f"{case.where(item['path'] + '.' + key)}: body "
                                f"\"{body_name}\" has no marker \"{marker}\"; markers: "
                                + (", ".join(names) or "none")) from None
        if point_key and item.get(point_key) is not None:
            return (body, np.array(item[point_key]))
        return body

    joints = {}
    for j in case.joints:
        cls = kinds.JOINTS[j["type"]]
        joint = _make(case, j, system, joints, cls,
                      **_arguments(cls, j, S.JOINT, side, points=False))
        if j.get("friction") is not None and "friction" not in {
                f.name for f in dataclasses.fields(cls)}:
            _joint_friction(case, j, system, joint)
    for c in case.constraints:
        cls = kinds.CONSTRAINTS[c["type"]]
        keys = {**S.CONSTRAINT_COMMON, **S.CONSTRAINT[c["type"]]}
        _make(case, c, system, None, cls, **_arguments(cls, c, keys, side, points=False))
    sensors = _sensors(case, system, side)
    _drives(case, system, joints, side, sensors)
    _forces(case, system, joints, side, sensors)
    problems = system.problems()
    if problems:
        if len(problems) == 1:
            raise CaseError(f"{case.path}: invalid model: {problems[0]}")
        raise CaseError(f"{case.path}: {len(problems)} problems in the model:\n"
                        + "\n".join(f"  - {p}" for p in problems))
    return built


def _make(case, item, system, named, cls, *args, **kw):
    """``cls(*args, **kw)`` added to ``system`` (and to ``named`` by its name); errors and
    problems as :class:`CaseError` naming the item."""
    try:
        obj = cls(*args, **kw)
    except (ValueError, TypeError) as exc:
        raise CaseError(f"{case.where(item['path'])}: {exc}") from None
    problems = obj.problems() if hasattr(obj, "problems") else []
    if problems:
        raise CaseError(f"{case.where(item['path'])}: " + "; ".join(problems))
    system.add(obj)
    if named is not None:
        named[item["name"]] = obj
    return obj


def _joint_friction(case, item, system, joint) -> None:
    """The :class:`~flexmbs.forces.joint_friction.JointFriction` ``JOINT-friction`` of a
    joint's ``friction`` table, added to ``system``."""
    from flexmbs.forces.friction_law import FrictionLaw
    from flexmbs.forces.joint_friction import JointFriction
    spec = dict(item["friction"])
    law = FrictionLaw(*(spec.pop(k, 0.0) for k in ("mu_s", "mu_k", "v_s", "c_v")))
    where = dict(item, path=item["path"] + ".friction")
    _make(case, where, system, None, JointFriction, f"{item['name']}-friction", joint=joint,
          law=law, **spec)


def _drives(case, system, joints, side, sensors) -> None:
    for d in case.drives:
        kind, cls = d["type"], kinds.DRIVES[d["type"]]
        args = _arguments(cls, d, S.DRIVE_COMMON | S.DRIVE[kind], side)
        if args.get("feed") is not None:          # "SENSOR.COMPONENT" -> (sensor, index)
            args["feed"] = feed(case, d, "feed", args["feed"], sensors)
            why = cls(**args).feed_problem()
            if why:
                raise CaseError(f"{case.where(d['path'] + '.feed')}: {why}")
        else:
            for key in ("ratio", "y0"):
                if key in d and d[key] != S.DRIVE_COMMON[key].default:
                    raise CaseError(f"{case.where(d['path'] + '.' + key)}: only valid with "
                                    "'feed' (a drive fed by a sensor)")
        _make(case, d, system, None, cls, **args)
        joint = joints[d["joint"]]
        coord = cls.coordinate            # the joint coordinate it drives
        if coord not in joint.coordinate_names:
            raise CaseError(f"{case.where(d['path'] + '.joint')}: {_a(kind)} {kind} drive needs "
                            f"a joint with {_a(coord)} {coord} coordinate; \"{d['joint']}\" is "
                            f"{joint.kind} (coordinates: "
                            f"{', '.join(joint.coordinate_names) or 'none'})")


def _a(word: str) -> str:
    """The indefinite article of ``word``."""
    return "an" if word[:1] in "aeiou" else "a"


#: keys of controllers naming sensor components "SENSOR.COMPONENT" (one, or a list)
_FEED_KEYS = {"measure": False, "rate": False, "feeds": True}


def feed(case, item: dict, key: str, ref: str, sensors: dict) -> tuple:
    """``(sensor, component index)`` of ``"SENSOR.COMPONENT"`` (a column of the sensor's
    output, e.g. ``"angle.z"``); a :class:`CaseError` naming ``key`` if there is none."""
    name = ref.partition(".")[0]
    if name not in sensors:
        raise CaseError(f"{case.where(item['path'] + '.' + key)}: no sensor \"{name}\" "
                        f"(sensors: {', '.join(sensors) or 'none'})")
    cols = sensors[name].columns
    if ref not in cols:
        raise CaseError(f"{case.where(item['path'] + '.' + key)}: sensor \"{name}\" has no "
                        f"component \"{ref}\"; components: {', '.join(cols)}")
    return sensors[name], cols.index(ref)


def _forces(case, system, joints, side, sensors) -> None:
    for f in case.forces:
        cls = kinds.FORCES[f["type"]]
        args = _arguments(cls, f, S.FORCE_COMMON | S.FORCE[f["type"]], side, joints)
        for key, many in _FEED_KEYS.items():
            if args.get(key) is not None:
                refs = args[key] if many else (args[key],)
                feeds = tuple(feed(case, f, key, r, sensors) for r in refs)
                args[key] = feeds if many else feeds[0]
        _make(case, f, system, None, cls, **args)


def _sensors(case, system, side) -> dict:
    """The case's sensors added to ``system``: ``{name: sensor}``."""
    named = {}
    for s in case.sensors:
        cls = kinds.SENSORS[s["type"]]
        _make(case, s, system, named, cls,
              **_arguments(cls, s, S.SENSOR_COMMON | S.SENSOR[s["type"]], side))
    return named


__all__ = ["BuiltCase", "FlexmbsError", "build", "inertia_matrix", "rotation_matrix",
           "time_function"]
