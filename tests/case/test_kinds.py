"""The registry of case-file kinds (flexmbs.case.kinds) is the one list of types: the
classes declare their kind, the schema's types and tables follow it, the builder makes
the registered class for every type, and the public API exports every registered class."""
import dataclasses
from pathlib import Path

import pytest

import flexmbs as fm
from flexmbs.case import build, kinds, load_case
from flexmbs.case import schema as S
from flexmbs.constraints.revolute import Revolute

EVERY_KIND = Path(__file__).resolve().parent / "every_kind.toml"
#: keys that place a side and are no constructor arguments (flexmbs.case.builder)
POINT_KEYS = {"first_at", "second_at", "point"}


def _fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("section", sorted(kinds.SECTIONS))
def test_each_kind_is_the_class_attribute(section):
    for kind, cls in kinds.SECTIONS[section].items():
        assert cls.kind == kind and cls.__dict__["kind"] == kind


def test_schema_types_and_tables_follow_the_registry():
    assert S.JOINT_TYPES == tuple(kinds.JOINTS)
    for types, tables, reg in ((S.CONSTRAINT_TYPES, S.CONSTRAINT, kinds.CONSTRAINTS),
                               (S.DRIVE_TYPES, S.DRIVE, kinds.DRIVES),
                               (S.FORCE_TYPES, S.FORCE, kinds.FORCES),
                               (S.SENSOR_TYPES, S.SENSOR, kinds.SENSORS),
                               (S.FUNCTION_TYPES, S.FUNCTION, kinds.FUNCTIONS)):
        assert types == tuple(reg) and set(tables) == set(reg)


def test_every_case_key_is_a_constructor_argument():
    """The builder passes an item's keys by name: each one must be a field of the class
    (``pitch`` is a key of every joint table but only a field of the helical joint; the
    keys of ``S.JOINT_ONLY`` only fields of the types listed there; those of
    ``S.JOINT_ELEMENTS`` make a force element of the joint instead)."""
    for kind, cls in kinds.JOINTS.items():
        keys = set(S.JOINT) - {"type"} - ({"pitch"} if kind != "helical" else set())
        keys -= set(S.JOINT_ELEMENTS)
        keys -= {k for k, types in S.JOINT_ONLY.items() if kind not in types}
        assert keys <= _fields(cls), kind
    for common, tables, reg in ((S.CONSTRAINT_COMMON, S.CONSTRAINT, kinds.CONSTRAINTS),
                                (S.DRIVE_COMMON, S.DRIVE, kinds.DRIVES),
                                (S.FORCE_COMMON, S.FORCE, kinds.FORCES),
                                (S.SENSOR_COMMON, S.SENSOR, kinds.SENSORS)):
        for kind, cls in reg.items():
            keys = set(common) | set(tables[kind])
            assert keys - {"type"} - POINT_KEYS <= _fields(cls), kind
    for kind, cls in kinds.FUNCTIONS.items():       # time functions: keys in field order
        assert len(S.FUNCTION[kind]) == len(dataclasses.fields(cls)), kind


def test_public_api_exports_every_registered_class():
    for cls in kinds.classes():
        assert getattr(fm, cls.__name__) is cls and cls.__name__ in fm.__all__
    assert len(set(fm.__all__)) == len(fm.__all__)


def test_registry_wants_one_declared_kind_per_class():
    with pytest.raises(ValueError, match="kind 'revolute' is already that of Revolute"):
        kinds.registry(Revolute, Revolute)

    @dataclasses.dataclass(frozen=True, eq=False)
    class Hinge(Revolute):          # inherits Revolute's kind but does not declare one
        pass

    with pytest.raises(TypeError, match="Hinge: a case-file kind must be declared"):
        kinds.registry(Hinge)


def test_builder_makes_the_registered_class_of_every_type():
    system = build(load_case(EVERY_KIND)).system
    for items, reg in ((system.constraints, kinds.CONSTRAINTS), (system.drives, kinds.DRIVES),
                       (system.forces, kinds.FORCES), (system.sensors, kinds.SENSORS)):
        made = {type(obj).kind for obj in items}
        assert all(type(obj) is reg[type(obj).kind] for obj in items)
        # face kinds and rim rolling need a flexible body; a clearance_revolute is made
        # of a planar joint and a pin_in_hole_contact (its parts)
        assert made == set(reg) - {"face_displacement", "face_contact",
                                   "deformed_face_contact", "rim_rolling"}
    joints = {type(j).kind for j in system.joints} - {None}   # (None: a rolling contact)
    assert joints == set(kinds.JOINTS) - {"clearance_revolute"}
    loads = [d.angle for d in system.drives if d.kind == "angle"]
    loads += [d.s for d in system.drives if d.kind == "displacement"]
    loads += [f.force for f in system.forces if f.kind == "force"]
    loads += [f.torque for f in system.forces if f.kind == "torque"]
    functions = {type(v).kind for v in loads if isinstance(v, fm.TimeFunction)}
    assert functions == set(kinds.FUNCTIONS)
