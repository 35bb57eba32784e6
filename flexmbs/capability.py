"""``Capability``: the metaclass of the package's runtime-checkable protocols (the
integrator's capabilities, :mod:`flexmbs.integrate.protocol`; the packed bodies,
:mod:`flexmbs.bodies.pack`), whose ``isinstance`` lists a protocol's members once.

    class FirstOrderStates(Protocol, metaclass=Capability): ...

``isinstance(obj, P)`` holds when every member of ``P`` (its annotated attributes and
methods) is an attribute of ``obj`` and no method member is None there: ``typing``'s
runtime check, which Python 3.11 makes by listing the members again at every call.
"""
from __future__ import annotations

from typing import Protocol

#: names in a protocol's namespace that are not members (as ``typing`` counts them)
_NOT_MEMBERS = frozenset((
    "__abstractmethods__", "__annotations__", "__weakref__", "_is_protocol",
    "_is_runtime_protocol", "__dict__", "__args__", "__slots__", "__next_in_mro__",
    "__parameters__", "__origin__", "__orig_bases__", "__extra__", "__tree_hash__",
    "__doc__", "__subclasshook__", "__init__", "__new__", "__module__", "__qualname__",
    "__protocol_attrs__", "__non_callable_proto_members__", "__type_params__",
    "__firstlineno__", "__static_attributes__", "_MutableMapping__marker", "_gorg"))


#: ``{protocol: ((member, is a method), ...)}``, listed at the first check
_MEMBERS: dict[type, tuple[tuple[str, bool], ...]] = {}


class Capability(type(Protocol)):
    """The metaclass of a runtime-checkable protocol: ``isinstance(obj, P)`` is ``typing``'s
    runtime check (every member of ``P`` is an attribute of ``obj``, and a method member
    is not None there), with the members listed once per protocol; Python 3.11 lists
    them again at every check (~10 us; a run's set-up makes a dozen checks)."""

    def __instancecheck__(cls, instance) -> bool:
        members = _MEMBERS.get(cls)
        if members is None:
            names = {}
            for base in cls.__mro__[:-1]:
                if base.__name__ in ("Protocol", "Generic"):
                    continue
                names.update(dict.fromkeys(base.__dict__))
                names.update(dict.fromkeys(base.__dict__.get("__annotations__", {})))
            members = tuple((m, callable(getattr(cls, m, None))) for m in names
                            if m not in _NOT_MEMBERS and not m.startswith("_abc_"))
            _MEMBERS[cls] = members
        return all(hasattr(instance, m) and (not method or getattr(instance, m) is not None)
                   for m, method in members)
