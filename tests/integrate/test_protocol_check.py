"""``isinstance`` against the package's runtime-checkable protocols (the integrator's
capabilities, ``flexmbs.integrate.protocol``, and the packed bodies',
``flexmbs.bodies.pack``; metaclass ``flexmbs.capability.Capability``) lists each
protocol's members once; it must answer as
``typing``'s own runtime check does (the protocols' metaclass's base), on the systems
and steps the integrators meet and on objects that lack a member or set a method to
None."""
import typing

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import pack
from flexmbs.integrate import protocol
from int_models import Pendulum

PROTOCOLS = [v for m in (protocol, pack) for v in vars(m).values()
             if isinstance(v, type(typing.Protocol)) and v.__module__ == m.__name__]


def _typing_check(proto, obj) -> bool:
    return type(typing.Protocol).__instancecheck__(proto, obj)


def _objects():
    sys_ = fm.System(gravity=(0, -9.81, 0))
    a = fm.RigidBody.box("a", (0.4, 0.05, 0.05), 7850.0, com=(0.2, 0, 0))
    sys_.add(a, fm.Revolute("j", fm.ground, a, at=(0, 0, 0), axis="z"),
             fm.PointToPointSpringDamper("s", fm.ground.marker("o", (0, 0.5, 0)),
                                         (a, (0.4, 0, 0)), k=300.0, d=2.0))
    asm = sys_.assemble()
    plan = asm.affine_plan()

    class NoneMethod(Pendulum):
        state_rates = None
        state_indices = np.zeros(0, dtype=int)

    return {"assembled system": asm, "affine plan": plan, "Pendulum DAE": Pendulum(),
            "rigid body": a, "ground": fm.ground,
            "state_rates None": NoneMethod(), "object": object(), "int": 3}


def test_there_are_protocols():
    assert len(PROTOCOLS) >= 14


@pytest.mark.parametrize("name, obj", list(_objects().items()))
def test_isinstance_answers_as_typing(name, obj):
    answers = {p.__name__: isinstance(obj, p) for p in PROTOCOLS}
    assert answers == {p.__name__: _typing_check(p, obj) for p in PROTOCOLS}
    if name == "assembled system":      # (the check is not vacuous)
        assert answers["DAE"] and answers["FirstOrderStates"] and answers["Labelled"]
    if name == "rigid body":
        assert answers["FloatingFrameBody"] and not answers["DAE"]
    if name == "state_rates None":
        assert not answers["FirstOrderStates"] and answers["DAE"]
