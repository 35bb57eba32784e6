"""PETSc options given to preprocessing that no solver read: one warning line each.

``flexmbs preprocess MESH ... -flexmbs_eps_eps_tol 1e-10`` puts its PETSc options in the
global database for the whole command.  The prefix was checked before (``flexmbs.cli.
main``: an option with no solver prefix of preprocessing is refused); a name misspelt
after the prefix, or an option of a solver this run never set up (the eigen solve chose
scipy for a small mesh), would be ignored in silence.  An :class:`UnreadOptions` open
around the reduction records the prefix of every PETSc solver set up
(:func:`set_prefix`, which each solver of preprocessing calls) and the eigen solver
backends chosen (:func:`note_backend`); when it closes normally, each given option that
PETSc never read (``PetscOptionsUsed``) gives ONE line, naming it, its value, and why:

* no solver with its prefix was set up in this run: "not read in this run (no PETSc
  solver with prefix -P was set up: the eigen solve used <backends>)", with the
  ``--eigensolver`` choices that run PETSc solvers when only scipy ran;
* a throw-away solver of that prefix's kind reads the name (``setFromOptions``; a factor
  package's ``mat_<package>_*`` counts as read when this PETSc has that package): "not
  read in this run (it has no effect with the solver settings this run used)";
* none reads it: "PETSc never read it and no solver with prefix -P reads it: check the
  name".

The prefixes and their solvers' kinds: :data:`KINDS`.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

__all__ = ["KINDS", "UnreadOptions", "note_backend", "prefix_of", "set_prefix"]

#: preprocessing's PETSc prefixes and the kind of object set up under each
KINDS = {"flexmbs_eps_": "eps", "flexmbs_factor_": "ksp", "flexmbs_static_": "ksp",
         "flexmbs_lobpcg_": "ksp", "flexmbs_partition_": "partitioning"}
#: the prefix of the probes' throw-away objects
PROBE = "flexmbs_unread_probe_"

_OPEN: list[UnreadOptions] = []


def prefix_of(name: str) -> str | None:
    """The longest of preprocessing's prefixes (:data:`KINDS`) that option ``name``
    (without the dash) starts with, or None."""
    return next((p for p in sorted(KINDS, key=len, reverse=True) if name.startswith(p)),
                None)


def set_prefix(obj, prefix: str) -> None:
    """``obj.setOptionsPrefix(prefix)``, recorded by the open :class:`UnreadOptions`."""
    obj.setOptionsPrefix(prefix)
    for rep in _OPEN:
        rep.prefixes.add(prefix)


def note_backend(backend: str) -> None:
    """Record the eigen solver backend chosen (``scipy``, ``slepc``, ...)."""
    for rep in _OPEN:
        rep.backends.add(backend)


class UnreadOptions:
    """``with UnreadOptions(given) as rep: ...; rep.lines()`` (module docstring);
    ``given``: the options inserted (full names without the dash, value or None)."""

    def __init__(self, given: Mapping[str, str | None]):
        self.given = dict(given)
        self.prefixes: set[str] = set()
        self.backends: set[str] = set()

    def __enter__(self) -> UnreadOptions:
        _OPEN.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _OPEN.remove(self)

    def lines(self) -> list[str]:
        """One line per given option PETSc never read in this run."""
        from flexmbs.petsc_c import options_used
        out = []
        for name, value in self.given.items():
            if options_used(name):
                continue
            prefix = prefix_of(name)
            shown = f"-{name}" + ("" if value is None else f" {value}")
            out.append(f"command line {shown}: {self._why(name, value, prefix)}")
        return out

    def _why(self, name: str, value: str | None, prefix: str | None) -> str:
        if prefix is None:
            return ("PETSc never read it and it has none of preprocessing's prefixes "
                    f"({', '.join('-' + p for p in KINDS)}): check the name")
        key = name[len(prefix):]
        if not reads(KINDS[prefix], key, value):
            return (f"PETSc never read it and no solver with prefix -{prefix} reads it: "
                    f"check the name")
        if prefix not in self.prefixes:
            used = ", ".join(sorted(self.backends)) or "no eigen solve"
            hint = "" if self.backends - {"scipy"} else (
                "; PETSc solvers run with --eigensolver slepc, slepc-amg or lobpcg, "
                "docs/preprocessing.md")
            return (f"not read in this run (no PETSc solver with prefix -{prefix} was set "
                    f"up: the eigen solve used {used}{hint})")
        return "not read in this run (it has no effect with the solver settings this run used)"


def reads(kind: str, key: str, value: str | None) -> bool:
    """Whether a throw-away object of ``kind`` (``eps``, ``ksp``, ``partitioning``) set
    up from the options database with ``key`` (and ``value``) under :data:`PROBE` reads
    it; ``mat_<package>_*`` (read when that factor package factors) when this PETSc has
    that package."""
    from petsc4py import PETSc

    from flexmbs.petsc_c import options_used
    if key.startswith("mat_") or "_mat_" in key:
        packages = [str(v).lower() for k, v in vars(PETSc.Mat.SolverType).items()
                    if not k.startswith("_") and isinstance(v, str)]
        tail = key.split("mat_", 1)[1] if key.startswith("mat_") else key.split("_mat_", 1)[1]
        if any(tail.startswith(p + "_") for p in packages):
            return True
    opts = PETSc.Options()
    name = PROBE + key
    opts.setValue(name, "" if value is None else value)
    try:
        with _probe(kind) as obj:
            obj.setOptionsPrefix(PROBE)
            with contextlib.suppress(PETSc.Error):
                obj.setFromOptions()
        return options_used(name)
    finally:
        opts.delValue(name)


@contextlib.contextmanager
def _probe(kind: str) -> Iterator:
    from petsc4py import PETSc
    if kind == "eps":
        from slepc4py import SLEPc
        obj = SLEPc.EPS().create(comm=PETSc.COMM_SELF)
    elif kind == "partitioning":
        obj = PETSc.MatPartitioning().create(comm=PETSc.COMM_SELF)
    else:
        obj = PETSc.KSP().create(comm=PETSc.COMM_SELF)
    try:
        yield obj
    finally:
        obj.destroy()
