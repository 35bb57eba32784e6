"""TOML case files: format (:mod:`.schema`), validation (:mod:`.loader`), model
(:mod:`.builder`) and the cache of reduced flexible bodies (:mod:`.cache`).

    spec = load_case("cases/main/case.toml")     # CaseError on any problem
    built = build(spec)                          # built.system is a flexmbs System
"""
from flexmbs.case.builder import BuiltCase, build
from flexmbs.case.loader import CaseSpec, load_case

__all__ = ["BuiltCase", "CaseSpec", "build", "load_case"]
