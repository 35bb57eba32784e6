"""PETSc options the user gave that no solver read during a run: one warning line each.

:func:`~.options.check_option_names` judges option names before a run with throw-away
solvers' ``setFromOptions``; options read only while solving (the factor packages'
``mat_*``, viewers and monitors, inner solvers' ``sub_*``) and command-line options
cannot be judged that way.  An :class:`OptionsReport` open around a run watches them:

* an option of a solver's ``petsc_options`` is in the global database only while the
  solver sets up or solves (:meth:`~.options.OptionsManager.inserted`); just before it is
  removed, ``PetscOptionsUsed`` tells whether PETSc read it (:func:`note`), so an option
  read at any solve counts as read.  Nothing is sampled per step beyond those inserts;
* a command-line option stays in the database for the whole run: sampled at the end.

At the end of the outermost report (a normal exit, not an exception and not the
interpreter's exit) each option never read gives ONE line naming it, its value and where
it came from, and why: "check the name" when no solve reads it under any configuration
that option's family changes (a typo), else "not read in this run (it has no effect with
<what this run used>)".  A line already given in this process (same option, value, place
and text) is not repeated; ``reset=True`` (each case-file run) forgets them.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping

from petsc4py import PETSc

from flexmbs.reduction.petsc_options import KINDS as PREPROCESSING
from flexmbs.reduction.petsc_options import prefix_of as preprocessing_prefix
from flexmbs.reduction.petsc_options import reads as preprocessing_reads

from .options import (
    BROAD_TYPES,
    OWN_OPTIONS,
    REMOVAL_HOOKS,
    SUB_PREFIX,
    OptionValueError,
    check_option_combinations,
    enum_names,
    run_config,
    setup_reads,
    solver_available,
    solver_defaults,
)
from .settings import DEFAULTS

__all__ = ["OptionsReport", "already_warned", "note", "reporting"]

log = logging.getLogger(__name__)

#: the open reports, outermost first (only the outermost one reports)
_OPEN: list[OptionsReport] = []
#: the lines given in this process: (option, value, where, text)
_WARNED: set[tuple[str, str, str, str]] = set()
#: the prefix of the probes' throw-away solvers
_PROBE = "fmbs_unread_probe_"
#: the run's settings shown in "it has no effect with ..."
_SHOWN = ("ksp_type", "pc_type", "pc_factor_mat_solver_type")


def note(prefix: str, parameters: Mapping[str, str | None], added: Iterable[str]) -> None:
    """Called by :meth:`~.options.OptionsManager.inserted` before it removes ``added``
    (full names): which watched ones PETSc read; ``parameters``: the solver's options
    (without ``prefix``), the configuration this run used under ``prefix``."""
    if not _OPEN:
        return
    rep = _OPEN[0]
    if prefix not in rep.used_config:
        glob = PETSc.Options().getAll()            # (getAll does not mark options read)
        # ts_type only where this solver is a TS (its options have one): a command-line
        # -<prefix>ts_type under generalized-alpha set up no TS
        rep.used_config[prefix] = {k: glob.get(prefix + k, parameters.get(k))
                                   for k in _SHOWN + ("snes_type", "ts_type")
                                   if k != "ts_type" or k in parameters}
    pending = rep.pending
    if not pending:
        return
    from flexmbs.petsc_c import options_used
    for name in added:
        if name in pending and options_used(name):
            del pending[name]


def already_warned(prefix: str, names: Iterable[str]) -> None:
    """Drop ``names`` (without ``prefix``) from the open report: warned before the run
    (:func:`~.options.check_option_names`: read only under another type)."""
    if _OPEN:
        for k in names:
            _OPEN[0].pending.pop(prefix + k, None)


def reporting(where: str, *, prefix: str | None = None):
    """Decorator: the solve runs under an :class:`OptionsReport` watching its keyword
    ``petsc_options`` (named ``where``), under ``prefix`` (default: its keyword
    ``options_prefix``) for its keyword ``method`` ("static" with a fixed ``prefix``)."""
    def wrap(fn):
        @functools.wraps(fn)
        def solve(*args, **kw):
            pre = prefix or kw.get("options_prefix", DEFAULTS.options_prefix)
            method = "static" if prefix else kw.get("method", DEFAULTS.method)
            with OptionsReport(method=method) as rep:
                rep.watch(kw.get("petsc_options") or {}, where, prefix=pre)
                return fn(*args, **kw)
        return solve
    return wrap


class _Entry:
    __slots__ = ("key", "prefix", "value", "label", "in_db")

    def __init__(self, key, prefix, value, label, in_db):
        self.key, self.prefix, self.value, self.label, self.in_db = (
            key, prefix, value, label, in_db)


class OptionsReport:
    """``with OptionsReport(method=...) as rep: rep.watch(options, where, prefix=...)``
    around a run (see the module docstring).  Nested reports hand what they watch to the
    outermost one, which reports when it ends.

    Parameters
    ----------
    method : the run's method ("genalpha", "ts", "static"), for the probes
    reset : forget the lines given before (a case-file run)
    emit : called with each line (default: a WARNING of this module's logger)
    """

    def __init__(self, *, method: str = "genalpha", reset: bool = False,
                 emit: Callable[[str], None] | None = None):
        self.method, self.reset = method, reset
        self.emit = emit or (lambda line: log.warning("%s", line))
        self.pending: dict[str, _Entry] = {}
        self.used_config: dict[str, dict[str, str | None]] = {}
        self.sources: dict[str, str] = {}
        self.prefixes: list[str] = []

    def __enter__(self) -> OptionsReport:
        if self.reset:
            _WARNED.clear()
        _OPEN.append(self)
        if note not in REMOVAL_HOOKS:
            REMOVAL_HOOKS.insert(0, note)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        outermost = _OPEN and _OPEN[0] is self
        _OPEN.remove(self)
        if not _OPEN and note in REMOVAL_HOOKS:
            REMOVAL_HOOKS.remove(note)
        # the guard: a run ended by an exception (also GeneratorExit, SystemExit) or by
        # the interpreter's exit reports nothing (its solvers may never have solved)
        if outermost and exc_type is None and not sys.is_finalizing():
            try:
                lines = self.lines()
            except Exception as err:       # never let the report end a finished run
                log.warning("PETSc options not read in this run could not be checked: %s",
                            err)
                return
            for line in lines:
                self.emit(line)

    def source(self, options: Mapping[str, object], where: str) -> None:
        """Name the place of ``options`` (without prefix) for the lines, e.g. the case
        file's key; an inner :meth:`watch` of the same keys keeps this name."""
        top = _OPEN[0] if _OPEN else self
        for k in options:
            top.sources.setdefault(str(k).lstrip("-"), where)

    def watch(self, options: Mapping[str, object], where: str, *, prefix: str,
              in_db: bool = False) -> None:
        """Watch ``options``: a solver's ``petsc_options`` (without ``prefix``), or with
        ``in_db`` options already in the global database (full names, the command line;
        ``prefix`` then ""), named ``where`` in the lines."""
        top = _OPEN[0] if _OPEN else self
        if prefix and prefix not in top.prefixes:
            top.prefixes.append(prefix)
        for k, v in options.items():
            key = str(k).lstrip("-")
            name = prefix + key
            if name in top.pending or key in OWN_OPTIONS or (     # (read by flexmbs)
                    in_db and any(key.endswith("_" + o) for o in OWN_OPTIONS)):
                continue
            label = top.sources.get(key, where) if not in_db else where
            value = None if v is None or v is True else "false" if v is False else str(v)
            top.pending[name] = _Entry(key, prefix, value, label, in_db)

    def lines(self) -> list[str]:
        """The lines of the options never read (sampling the command line's now)."""
        from flexmbs.petsc_c import options_used
        glob = PETSc.Options()
        out = []
        for name, e in list(self.pending.items()):
            if e.in_db and (options_used(name) or not glob.hasName(name)):
                continue             # (hasName marks it read: asked after options_used)
            shown = f"-{name}" if e.in_db else f"-{e.key}"
            value = "" if e.value is None else f" {e.value}"
            text = self._why(name, e)
            key = (name, e.value or "", e.label, text)
            if key in _WARNED:
                continue
            _WARNED.add(key)
            out.append(f"{e.label} {shown}{value}: {text}")
        return out

    def _why(self, name: str, e: _Entry) -> str:
        prefix, key = e.prefix, e.key
        if e.in_db:                  # a command-line name: the longest solver prefix
            known = sorted(set(self.prefixes) | _flexmbs_prefixes(), key=len, reverse=True)
            prefix = next((p for p in known if name.startswith(p)), "")
            key = name[len(prefix):]
        if not prefix and e.in_db:
            pre = preprocessing_prefix(name)
            if pre is not None:
                if not preprocessing_reads(PREPROCESSING[pre], name[len(pre):], e.value):
                    return (f"PETSc never read it and no solver with prefix -{pre} reads "
                            f"it: check the name")
                return (f"not read in this run (an option of preprocessing: no PETSc "
                        f"solver with prefix -{pre} was set up; bodies are preprocessed "
                        f"when their body file is missing or stale, and a small mesh's "
                        f"eigen solve uses scipy)")
        if not prefix:
            return ("PETSc never read it in this run, and it has no flexmbs solver prefix "
                    f"({', '.join('-' + p for p in sorted(_flexmbs_prefixes()))}): check the name")
        used = self.used_config.get(prefix)
        method = "static" if prefix == _static_prefix() else self.method
        config = _config(method, prefix, {key: e.value})
        found = _family_reads(key, config, method)
        if found is None:
            return ("PETSc never read it in this run and no solver configuration reads "
                    "it: check the name")
        if used is None:
            return (f"not read in this run (it has no effect: no PETSc solver with prefix "
                    f"-{prefix} set up or solved in this run)")
        setting, note_ = found
        if setting == "ts_type" and not used.get("ts_type"):
            return (f"not read in this run (it has no effect without a PETSc TS: method "
                    f"'{method}'; PETSc TS is method 'ts')")
        if setting is None:
            shown = ", ".join(f"{k} {used[k]}" for k in _SHOWN if used.get(k))
            return f"not read in this run (it has no effect with {shown})"
        return (f"not read in this run (it has no effect with {setting} "
                f"{used.get(setting) or config.get(setting) or note_})")


def _flexmbs_prefixes() -> set[str]:
    return {DEFAULTS.options_prefix, DEFAULTS.static_options_prefix}


def _static_prefix() -> str:
    return DEFAULTS.static_options_prefix


def _config(method: str, prefix: str, extra: Mapping[str, str | None]) -> dict:
    """The configuration the solver of ``method`` under ``prefix`` sees, with ``extra``."""
    return run_config(extra, "ts" if method == "ts" else "genalpha", prefix)[2]


# -- the probes: does some configuration read the name? --------------------------------------
def _family_reads(key: str, config: dict, method: str) -> tuple[str | None, str] | None:
    """None when no probe reads option ``key`` (a typo); else ``(setting, fallback)``: the
    setting whose value decides whether it is read (None: the run's own configuration
    reads it when solving, so this run skipped that solve), ``fallback`` its value when
    the run did not set it."""
    ts = method == "ts"
    if key in _solve_probe(config, key, ts):
        return None, ""
    if key.startswith("mat_"):
        pkg = _factor_package(key)
        lu = {**config, "ksp_type": "preonly", "pc_type": "lu",
              "pc_factor_mat_solver_type": pkg}
        found = pkg is not None and key in _solve_probe(lu, key, ts)
        return ("pc_factor_mat_solver_type", "") if found else None
    if SUB_PREFIX.match(key):
        for pc in ("bjacobi", "asm"):
            if key in _solve_probe({**config, "ksp_type": "gmres", "pc_type": pc}, key, ts):
                return "pc_type", ""
        return None
    try:
        if not ts and setup_reads({**{k: None if v is None else str(v) for k, v in
                                      solver_defaults("ts").items()}, **config}, [key], True):
            return "ts_type", ""
        for setting, value in BROAD_TYPES:
            if config.get(setting) != value and setup_reads({**config, setting: value},
                                                            [key], True):
                return setting, "PETSc's default"
    except (OptionValueError, PETSc.Error):     # its value is unreadable: PETSc read it
        return None, ""
    return None


def _factor_package(key: str) -> str | None:
    """``mumps`` for ``mat_mumps_icntl_14`` (a factor package of PETSc's names), if this
    PETSc build has it."""
    names = sorted(enum_names(PETSc.Mat.SolverType), key=len, reverse=True)
    pkg = next((n for n in names if key.startswith(f"mat_{n}_")), None)
    return pkg if pkg is not None and solver_available(pkg) else None


@contextlib.contextmanager
def _quiet():
    """fd 1 and 2 to /dev/null: a probe's viewers and monitors print nothing (as they
    are, when either is closed)."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        saved = [os.dup(1), os.dup(2)]
    except (OSError, ValueError):          # a closed descriptor: nothing to silence
        yield
        return
    if not sys.stdout or not sys.stderr:
        for fd in saved:
            os.close(fd)
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def _solve_probe(config: Mapping[str, str | None], key: str, ts: bool) -> set[str]:
    """``{key}`` if a solve (a SNES on the 3 x 3 system ``A x = b``, and a TS on
    ``u' = -A u`` if ``ts``) set up from ``config`` under a throw-away prefix reads it
    (``PetscOptionsUsed``), else empty.  Configurations whose factor package aborts the
    process (:func:`~.options.check_option_combinations`) are not solved."""
    from flexmbs.petsc_c import options_used
    try:
        check_option_combinations(config, method="ts" if ts else None, prefix=_PROBE)
    except ValueError:
        return set()
    glob = PETSc.Options()
    added = [k for k in config if not glob.hasName(_PROBE + k)]
    for k in added:
        glob.setValue(_PROBE + k, "" if config[k] is None else config[k])
    comm = PETSc.COMM_SELF
    A = PETSc.Mat().createAIJ((3, 3), nnz=3, comm=comm)
    for i in range(3):
        A.setValue(i, i, 4.0)
        if i:
            A.setValue(i, i - 1, 1.0)
            A.setValue(i - 1, i, 1.0)
    A.assemble()
    b = A.createVecLeft()
    b.set(1.0)
    x, f = b.duplicate(), b.duplicate()
    objs = [PETSc.SNES().create(comm)]
    try:
        with _quiet():
            snes = objs[0]
            snes.setOptionsPrefix(_PROBE)
            snes.setFunction(lambda s, u, r: (A.mult(u, r), r.axpy(-1.0, b)), f)
            snes.setJacobian(lambda s, u, J, P: None, A, A)
            with contextlib.suppress(PETSc.Error):
                snes.setFromOptions()
                snes.solve(None, x)
            if ts:
                t = PETSc.TS().create(comm)
                objs.append(t)
                t.setOptionsPrefix(_PROBE)
                Am = A.copy()
                Am.scale(-1.0)
                objs.append(Am)
                t.setRHSFunction(lambda s, tt, u, r: Am.mult(u, r), f.duplicate())
                t.setRHSJacobian(lambda s, tt, u, J, P: None, Am, Am)
                t.setTimeStep(0.01)
                t.setMaxSteps(2)
                t.setExactFinalTime(PETSc.TS.ExactFinalTime.STEPOVER)
                with contextlib.suppress(PETSc.Error):
                    t.setFromOptions()
                    t.solve(b.copy())
        return {key} if key in added and options_used(_PROBE + key) else set()
    finally:
        for o in (*objs, A, b, x, f):
            o.destroy()
        for k in added:
            glob.delValue(_PROBE + k)
