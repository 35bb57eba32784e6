"""TOML case files: format (:mod:`.schema`), validation (:mod:`.loader`), model
(:mod:`.builder`), the cache of reduced flexible bodies (:mod:`.cache`) and the service
that runs a case (:mod:`.service`).

    spec = load_case("cases/main/case.toml")     # CaseError on any problem
    built = build(spec)                          # built.system is a flexmbs System
    done = run(spec, out="results")              # done.result, done.report
"""
from flexmbs.case.builder import BuiltCase, build
from flexmbs.case.loader import CaseSpec, load_case, spec_from_raw
from flexmbs.case.service import CaseRun, Message, Overrides, Report, run

__all__ = ["BuiltCase", "CaseRun", "CaseSpec", "Message", "Overrides", "Report", "build",
           "load_case", "run", "spec_from_raw"]
