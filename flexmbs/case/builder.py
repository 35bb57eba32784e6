"""A validated case (:class:`~flexmbs.case.loader.CaseSpec`) -> the Python model.

Each TOML item maps onto one constructor of the Python API (``[[joints]] type =
"revolute"`` -> :class:`~flexmbs.constraints.revolute.Revolute`, ...).  Flexible bodies
given by a ``mesh`` are reduced once and cached (:mod:`flexmbs.case.cache`).  Errors
raised by the API while building are re-raised as :class:`CaseError` naming the file and
the key path; model-level problems (:meth:`System.problems`) likewise name the file.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from flexmbs.case import folders
from flexmbs.case.loader import CaseSpec
from flexmbs.errors import BodyFileError, CaseError, FlexmbsError

log = logging.getLogger(__name__)


@dataclass
class BuiltCase:
    """The model of a case: ``system`` plus what the CLI needs besides it."""

    case: CaseSpec
    system: object
    bodies: dict = field(default_factory=dict)          # name -> body object
    flexible: dict = field(default_factory=dict)        # name -> FlexibleBody
    body_files: dict = field(default_factory=dict)      # name -> (path, "cached"|"new"|"given")


def _joint_classes() -> dict:
    from flexmbs.constraints.cylindrical import Cylindrical
    from flexmbs.constraints.fixed import Fixed
    from flexmbs.constraints.helical import Helical
    from flexmbs.constraints.planar import Planar
    from flexmbs.constraints.prismatic import Prismatic
    from flexmbs.constraints.revolute import Revolute
    from flexmbs.constraints.spherical import Spherical
    from flexmbs.constraints.universal import Universal
    return {"revolute": Revolute, "spherical": Spherical, "fixed": Fixed,
            "prismatic": Prismatic, "cylindrical": Cylindrical, "universal": Universal,
            "planar": Planar, "helical": Helical}


def time_function(spec):
    """A number, vector or time-function table -> argument of a drive or load."""
    from flexmbs.kinematics import time_functions as D
    if not isinstance(spec, dict):
        return spec
    kind = spec["type"]
    if kind == "constant":
        return D.Constant(spec["value"])
    if kind == "ramp":
        return D.Ramp(spec["rate"], spec["f0"], spec["t0"])
    if kind == "polynomial":
        return D.Polynomial(tuple(spec["coeffs"]))
    if kind == "sine":
        return D.Sine(spec["amplitude"], spec["omega"], spec["phase"], spec["offset"])
    return D.SpinUp(spec["Omega"], spec["T"], spec["theta0"])


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
                        damping=True)


def build(case: CaseSpec, *, body_dir: str | Path | None = None,
          progress: Callable[[str, float], None] | None = None) -> BuiltCase:
    """Build the :class:`~flexmbs.system.model.System` of ``case``.

    ``body_dir``: folder of the reduced-body cache (default
    :func:`~flexmbs.case.folders.body_cache`);
    ``progress(message, seconds)`` reports preprocessing steps.
    """
    from flexmbs.bodies.ground import ground
    from flexmbs.bodies.point_mass import PointMass
    from flexmbs.system.model import System

    body_dir = Path(body_dir) if body_dir is not None else folders.body_cache()
    system = System(gravity=tuple(case.model["gravity"]), name=case.name)
    built = BuiltCase(case, system)
    for b in case.bodies:
        try:
            if b["type"] == "rigid":
                obj = _rigid(b)
            elif b["type"] == "point_mass":
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
    classes = _joint_classes()
    for j in case.joints:
        kw = {"at": j["at"], "axis": j["axis"]}
        if j["type"] == "helical":
            kw["pitch"] = j["pitch"]
        _make(case, j, system, joints, classes[j["type"]], j["name"], side(j, "first"),
              side(j, "second"), **kw)
    _drives(case, system, joints)
    _forces(case, system, joints, side)
    _sensors(case, system, side)
    problems = system.problems()
    if problems:
        if len(problems) == 1:
            raise CaseError(f"{case.path}: invalid model: {problems[0]}")
        raise CaseError(f"{case.path}: {len(problems)} problems in the model:\n"
                        + "\n".join(f"  - {p}" for p in problems))
    return built


def _make(case, item, system, registry, cls, *args, **kw):
    try:
        obj = cls(*args, **kw)
    except (ValueError, TypeError) as exc:
        raise CaseError(f"{case.where(item['path'])}: {exc}") from None
    problems = obj.problems() if hasattr(obj, "problems") else []
    if problems:
        raise CaseError(f"{case.where(item['path'])}: " + "; ".join(problems))
    system.add(obj)
    if registry is not None:
        registry[item["name"]] = obj
    return obj


def _drives(case, system, joints) -> None:
    from flexmbs.constraints import drives as D
    for d in case.drives:
        kind = d["type"]
        if kind == "angle":
            _make(case, d, system, None, D.AngleDrive, d["name"], d["joint"],
                  angle=time_function(d["angle"]))
        elif kind == "angular_velocity":
            _make(case, d, system, None, D.AngularVelocityDrive, d["name"], d["joint"],
                  omega=d["omega"], phi0=d["phi0"])
        elif kind == "displacement":
            _make(case, d, system, None, D.DisplacementDrive, d["name"], d["joint"],
                  s=time_function(d["s"]))
        else:
            _make(case, d, system, None, D.VelocityDrive, d["name"], d["joint"], v=d["v"],
                  s0=d["s0"])
        joint = joints[d["joint"]]
        coord = "angle" if kind in ("angle", "angular_velocity") else "displacement"
        if coord not in joint.coordinate_names:
            raise CaseError(f"{case.where(d['path'] + '.joint')}: a {kind} drive needs a joint "
                            f"with an {coord} coordinate; \"{d['joint']}\" is "
                            f"{joint.kind} (coordinates: "
                            f"{', '.join(joint.coordinate_names) or 'none'})")


def _forces(case, system, joints, side) -> None:
    from flexmbs.forces.bushing import Bushing
    from flexmbs.forces.external import ExternalForce, ExternalTorque
    from flexmbs.forces.rotational_spring import RotationalSpringDamper
    from flexmbs.forces.spring_damper import PointToPointSpringDamper
    from flexmbs.forces.stops import JointStop
    for f in case.forces:
        kind, name = f["type"], f["name"]
        if kind == "spring_damper":
            _make(case, f, system, None, PointToPointSpringDamper, name,
                  first=side(f, "first", "first_at"), second=side(f, "second", "second_at"),
                  k=f["k"], d=f["d"], l0=f["l0"])
        elif kind == "rotational_spring":
            _make(case, f, system, None, RotationalSpringDamper, name, joint=joints[f["joint"]],
                  k=f["k"], d=f["d"], angle0=f["angle0"])
        elif kind == "bushing":
            _make(case, f, system, None, Bushing, name, first=side(f, "first"),
                  second=side(f, "second"), K=tuple(f["K"]), D=tuple(f["D"]))
        elif kind == "force":
            _make(case, f, system, None, ExternalForce, name, at=side(f, "at", "point"),
                  force=time_function(f["force"]), frame=f["frame"])
        elif kind == "torque":
            _make(case, f, system, None, ExternalTorque, name, at=side(f, "at"),
                  torque=time_function(f["torque"]), frame=f["frame"])
        else:
            _make(case, f, system, None, JointStop, name, joint=joints[f["joint"]],
                  lower=f["lower"], upper=f["upper"], k=f["k"], d=f["d"],
                  smoothing=f["smoothing"], coordinate=f["coordinate"])


def _sensors(case, system, side) -> None:
    from flexmbs import sensors as SN
    classes = {"position": SN.PositionSensor, "velocity": SN.VelocitySensor,
               "acceleration": SN.AccelerationSensor, "orientation": SN.OrientationSensor,
               "angular_velocity": SN.AngularVelocitySensor,
               "angular_acceleration": SN.AngularAccelerationSensor,
               "face_displacement": SN.FaceDisplacementSensor}
    for s in case.sensors:
        kw = {"frame": s["frame"]}
        if "derivative" in s:
            kw["derivative"] = s["derivative"]
        if "output" in s:
            kw["output"] = s["output"]
        if "face" in s:
            kw["face"] = s["face"]
        second = side(s, "second") if s.get("second") is not None else None
        _make(case, s, system, None, classes[s["type"]], s["name"], side(s, "first"),
              second, **kw)


__all__ = ["BuiltCase", "FlexmbsError", "build", "inertia_matrix", "rotation_matrix",
           "time_function"]
