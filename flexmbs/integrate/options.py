"""PETSc options handling for the solvers of ``flexmbs.integrate``.

Modelled on firedrake's ``OptionsManager``: every solver owns a mandatory options
prefix (``fmbs_`` by default); its options are, in increasing precedence,

1. the defaults of :data:`DIRECT_LU` (``-ksp_type preonly -pc_type lu`` with MUMPS when
   PETSc has it, else PETSc's own LU),
2. the ``petsc_options`` dict given by the caller,
3. whatever is already in the global options database under the prefix (the command
   line, or :func:`petsc_options_from_args`).

Levels 1 and 2 are inserted into the global database only while the solver is set up
or solves (:meth:`OptionsManager.inserted`) and removed afterwards, so two solvers with
different prefixes never see each other's options.
"""
from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Mapping, Sequence

from petsc4py import PETSc

__all__ = ["NEWTON_DEFAULTS", "TS_DEFAULTS", "OptionsManager", "check_option_names",
           "check_option_values", "default_direct_lu",
           "OptionValueError", "check_option_combinations", "judge_option_names",
           "solver_defaults", "unused_option_names",
           "petsc_options_from_args", "petsc_options_inserted", "parse_petsc_args",
           "BROAD_TYPES", "REMOVAL_HOOKS", "SUB_PREFIX", "enum_names", "run_config",
           "setup_reads", "solver_available"]

log = logging.getLogger(__name__)

#: called as ``hook(prefix, parameters, added)`` just before :meth:`OptionsManager.inserted`
#: removes the options it ``added`` (full names) from the global database; the first
#: hook only (:class:`~flexmbs.integrate.unread.OptionsReport` while a report is open)
REMOVAL_HOOKS: list = []


#: Fragments of option names that PETSc reads during a solve (not in ``setFromOptions``);
#: also every ``mat_*`` option (factor packages read theirs when the factor is created).
_SOLVE_TIME = ("view", "monitor", "reason", "test", "log", "error", "draw")


def _has_package(name: str) -> bool:
    try:
        return bool(PETSc.Sys.hasExternalPackage(name))
    except (AttributeError, PETSc.Error):  # pragma: no cover - very old petsc4py
        return False


def default_direct_lu() -> dict[str, str]:
    """Default options: a sparse direct LU: SuperLU, else UMFPACK, else MUMPS, else PETSc's own LU.

    PETSc's native LU does not pivot, so it needs ``pc_factor_nonzeros_along_diagonal``
    on the saddle-point matrices ``[[S, G^T], [G, 0]]`` with their zero block.
    """
    opts = {"ksp_type": "preonly", "pc_type": "lu"}
    if _has_package("superlu"):
        # serial multibody Newton matrices are small: SuperLU and UMFPACK factor them in
        # microseconds where MUMPS takes ~0.3 ms; SuperLU keeps full accuracy on the
        # extreme stiffness ratios of the damping test (h omega = 1e7), where UMFPACK's
        # solution degrades to 1e-2.  MUMPS remains the choice for large or parallel
        # problems (``-fmbs_pc_factor_mat_solver_type mumps``).
        opts["pc_factor_mat_solver_type"] = "superlu"
    elif _has_package("umfpack") or _has_package("suitesparse"):   # Debian: "suitesparse"
        opts["pc_factor_mat_solver_type"] = "umfpack"
    elif _has_package("mumps"):
        opts["pc_factor_mat_solver_type"] = "mumps"
    else:
        opts["pc_factor_mat_solver_type"] = "petsc"
        opts["pc_factor_nonzeros_along_diagonal"] = "1e-14"
    return opts


def _to_str(value: object) -> str | None:
    if value is None or value is True:
        return None  # a flag
    if value is False:
        return "false"
    return str(value)


# -- validation of type names -----------------------------------------------------------------
def enum_names(enum) -> tuple[str, ...]:
    return tuple(sorted({str(getattr(enum, a)) for a in dir(enum) if not a.startswith("_")
                         and isinstance(getattr(enum, a), str)}))


def _slepc_enum(name: str):
    try:
        from slepc4py import SLEPc
    except ImportError:   # pragma: no cover - SLEPc is optional
        return None
    return getattr(SLEPc, name).Type


def _petsc_object(kind: str):
    return {"KSP": PETSc.KSP, "PC": PETSc.PC, "SNES": PETSc.SNES, "TS": PETSc.TS}[kind]


#: option-name suffix -> (what, known names or a callable giving them, PETSc class to try)
_TYPE_OPTIONS = (
    ("pc_factor_mat_solver_type", "a factorization package",
     lambda: enum_names(PETSc.Mat.SolverType), None),
    ("newton_mat_type", "a Newton matrix type", lambda: ("aij", "auto", "dense"), None),
    ("ksp_type", "a KSP type", lambda: enum_names(PETSc.KSP.Type), "KSP"),
    ("pc_type", "a PC type", lambda: enum_names(PETSc.PC.Type), "PC"),
    ("snes_type", "a SNES type", lambda: enum_names(PETSc.SNES.Type), "SNES"),
    ("ts_type", "a TS type", lambda: enum_names(PETSc.TS.Type), "TS"),
    ("eps_type", "a SLEPc EPS type", lambda: enum_names(_slepc_enum("EPS") or object), None),
    ("st_type", "a SLEPc ST type", lambda: enum_names(_slepc_enum("ST") or object), None),
)

#: factorization packages and the external package that provides them
_PACKAGE_OF = {"umfpack": "suitesparse", "cholmod": "suitesparse", "klu": "suitesparse",
               "spqr": "suitesparse", "mkl_cpardiso": "mkl_cpardiso",
               "mkl_pardiso": "mkl_pardiso"}


def solver_available(name: str) -> bool:
    if name == "petsc":
        return True
    return _has_package(name) or (name in _PACKAGE_OF and _has_package(_PACKAGE_OF[name]))


def _type_available(kind: str, name: str) -> bool:
    """Whether this PETSc build can make a ``kind`` object of type ``name``."""
    obj = _petsc_object(kind)().create(comm=PETSc.COMM_SELF)
    try:
        obj.setType(name)
        return True
    except PETSc.Error:
        return False
    finally:
        obj.destroy()


def check_option_values(options: Mapping[str, object], where: str = "PETSc option") -> None:
    """``ValueError`` naming the first option whose value is not a type PETSc knows.

    Checked: every option ending in ``ksp_type``, ``pc_type``, ``snes_type``, ``ts_type``,
    ``pc_factor_mat_solver_type``, ``newton_mat_type`` (flexmbs' own), ``eps_type`` and
    ``st_type`` (SLEPc), under any prefix (``-fmbs_pc_type``, ``-flexmbs_eps_st_pc_type``),
    against the type names of petsc4py/slepc4py and whether this build provides them.
    Other options are left to PETSc.
    """
    import difflib
    for key, val in options.items():
        name = str(key).lstrip("-")
        for suffix, what, known, kind in _TYPE_OPTIONS:
            if name != suffix and not name.endswith("_" + suffix):
                continue
            if val is None or val is True or str(val).strip() == "":
                raise ValueError(f"{where} -{name}: expected {what} name, got no value")
            text = str(val)
            names = known()
            check = text.lower() if suffix == "newton_mat_type" else text
            if names and check not in names:
                close = difflib.get_close_matches(text.lower(), names, n=1, cutoff=0.7)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise ValueError(f"{where} -{name}: expected {what} known to PETSc, got "
                                 f"'{text}'{hint}; known: {', '.join(names)}")
            if suffix == "pc_factor_mat_solver_type" and not solver_available(text):
                have = [n for n in names if solver_available(n)]
                raise ValueError(f"{where} -{name}: expected a factorization package of "
                                 f"this PETSc build, got '{text}', which it was built "
                                 f"without; available: {', '.join(have)}")
            if kind is not None and not _type_available(kind, text):
                raise ValueError(f"{where} -{name}: expected {what} of this PETSc build, "
                                 f"got '{text}', which it was built without")
            break


#: options (without prefix) that flexmbs reads itself, not PETSc's ``setFromOptions``
OWN_OPTIONS = ("newton_mat_type",)
#: the prefix of :func:`check_option_names`'s throw-away solvers
_PROBE_PREFIX = "fmbs_probe_"


#: option-name prefixes of inner solvers (block Jacobi/ASM blocks, field splits, multigrid
#: levels, nonlinear preconditioners): read only when the outer PC or SNES is set up, so a
#: probe's ``setFromOptions`` cannot judge them
SUB_PREFIX = re.compile(r"^(sub|fieldsplit_\w+?|mg_levels(_\d+)?|mg_coarse|redundant|npc|"
                         r"telescope|sub_ksp|sub_pc)_")
#: the broad types of the second probe: an option the run's configuration does not read
#: but one of these does is a warning (it has no effect in this run), not a refusal
BROAD_TYPES = (("ksp_type", "gmres"), ("ksp_type", "fgmres"), ("ksp_type", "cg"),
                ("pc_type", "ilu"), ("pc_type", "bjacobi"), ("pc_type", "asm"),
                ("pc_type", "fieldsplit"), ("pc_type", "mg"), ("pc_type", "lu"),
                ("snes_type", "newtontr"), ("snes_type", "newtonls"),
                ("snes_linesearch_type", "bt"),
                ("ts_type", "bdf"), ("ts_type", "theta"), ("ts_type", "alpha"),
                ("ts_type", "arkimex"), ("ts_type", "rosw"), ("ts_type", "beuler"),
                ("ts_adapt_type", "basic"))


#: Newton defaults (without prefix); ``-<prefix>snes_*`` on the command line wins.
NEWTON_DEFAULTS = {
    "snes_type": "newtonls",
    "snes_linesearch_type": "basic",
    "snes_max_it": 20,
    "snes_rtol": 1e-10,
    "snes_stol": 1e-12,
    "snes_atol": 1e-50,
    "snes_divergence_tolerance": -1,
}

#: PETSc TS defaults of method "ts" (without prefix, :mod:`.ts`)
TS_DEFAULTS = {
    "ts_type": "bdf",
    "ts_bdf_order": 2,
    "ts_adapt_type": "basic",
    "ts_max_snes_failures": -1,
    "ts_max_reject": 50,
    "snes_type": "newtonls",
    "snes_linesearch_type": "basic",
    "snes_rtol": 1e-10,
    "snes_atol": 1e-12,
    "snes_max_it": 20,
}


def solver_defaults(method: str = "genalpha") -> dict[str, object]:
    """The options (without prefix) a solver of ``method`` starts from: the direct LU of
    :func:`default_direct_lu` under the Newton defaults (``"genalpha"``, ``"static"``) or
    the TS defaults (``"ts"``)."""
    if method == "ts":
        return {**default_direct_lu(), **TS_DEFAULTS}
    return {**default_direct_lu(), **NEWTON_DEFAULTS}


def check_option_names(options: Mapping[str, object], where: str = "PETSc option", *,
                       method: str = "genalpha", prefix: str = "fmbs_") -> dict[str, str]:
    """``ValueError`` naming the first of ``options`` (without prefix, as given to a
    solver) that no PETSc solver reads (:func:`judge_option_names`); one WARNING line for
    each that PETSc reads only under another type than this run's (no effect here).
    Returns those (name -> note)."""
    check_option_combinations(options, where, method=method, prefix=prefix)
    try:
        unused, idle = judge_option_names(options, method=method, prefix=prefix)
    except OptionValueError as exc:
        raise OptionValueError(exc.key, exc.value, exc.expected, where) from None
    if unused:
        raise ValueError(f"{where} -{unused[0]}: expected an option (without prefix) that "
                         f"PETSc's SNES, KSP, PC or TS reads (e.g. snes_max_it, ksp_type, "
                         f"pc_factor_mat_solver_type), got '{unused[0]}', which none of "
                         f"them reads: PETSc would ignore it")
    for name, note in idle.items():
        log.warning("%s -%s: %s", where, name, note)
    return idle


def unused_option_names(options: Mapping[str, object], *, method: str | None = None,
                        prefix: str = "fmbs_") -> list[str]:
    """The names of ``options`` that no PETSc solver reads under any type
    (:func:`judge_option_names`); ``method`` None: under neither method's defaults."""
    if method is None:
        unread = None
        for m in ("genalpha", "ts"):
            u = set(judge_option_names(options, method=m, prefix=prefix)[0])
            unread = u if unread is None else unread & u
        return [k for k in (str(k).lstrip("-") for k in options) if k in unread]
    return judge_option_names(options, method=method, prefix=prefix)[0]


class OptionValueError(ValueError):
    """A PETSc option whose value PETSc cannot read as its type (``snes_rtol = "1e-8x"``):
    ``key`` (without prefix), ``value`` and ``expected`` (e.g. "a real number")."""

    def __init__(self, key: str | None, value: object, expected: str, where: str = "PETSc option"):
        self.key, self.value, self.expected = key, value, expected
        what = f"-{key}" if key is not None else "(one of the options)"
        super().__init__(f"{where} {what}: expected {expected}, got "
                         f"{'no value' if value is None else repr(str(value))}")


#: PETSc's reader in an error's traceback -> what the value should be
_READERS = (("PetscOptionsInt", "an integer"), ("PetscOptionsReal", "a real number"),
            ("PetscOptionsScalar", "a number"), ("PetscOptionsBool", "a boolean (true/false)"),
            ("PetscOptionsEnum", "one of PETSc's names for it"),
            ("PetscOptionsEList", "one of PETSc's names for it"),
            ("PetscOptionsFList", "one of PETSc's names for it"),
            ("PetscOptionsString", "a string"))


def _expected(text: str) -> str:
    for reader, what in _READERS:
        if reader in text:
            return what
    return "a value PETSc can read for it"


def _probe_once(config: Mapping[str, str | None], names: Sequence[str], ts: bool) -> set[str]:
    from flexmbs.petsc_c import options_used
    glob = PETSc.Options()
    added = [k for k in config if not glob.hasName(_PROBE_PREFIX + k)]
    for k in added:
        v = config[k]
        glob.setValue(_PROBE_PREFIX + k, "" if v is None else v)
    objs = [PETSc.SNES().create(PETSc.COMM_SELF)]
    if ts:
        objs.append(PETSc.TS().create(PETSc.COMM_SELF))
    try:
        for obj in objs:
            obj.setOptionsPrefix(_PROBE_PREFIX)
            obj.setFromOptions()
        return {k for k in names if k in added and options_used(_PROBE_PREFIX + k)}
    finally:
        for obj in objs:
            obj.destroy()
        for k in added:
            glob.delValue(_PROBE_PREFIX + k)


def setup_reads(config: Mapping[str, str | None], names: Sequence[str], ts: bool) -> set[str]:
    """Which of ``names`` a SNES (with its KSP and PC; and a TS if ``ts``) set up from
    ``config`` under a throw-away prefix reads (``PetscOptionsUsed``).  A value PETSc
    cannot read (``snes_max_it = "abc"``, PETSc error 63) is :class:`OptionValueError`
    naming the option: the one whose removal lets the probe pass (non-type options
    tried first), and the type PETSc's reader expected."""
    try:
        return _probe_once(config, names, ts)
    except PETSc.Error as exc:
        expected = _expected(str(exc))
    for k in sorted(config, key=lambda k: k.endswith("_type")):
        try:
            _probe_once({kk: vv for kk, vv in config.items() if kk != k}, (), ts)
        except PETSc.Error:
            continue
        raise OptionValueError(k, config[k], expected)
    raise OptionValueError(None, None, expected)


def run_config(options: Mapping[str, object], method: str, prefix: str):
    """``(prefix, global entries, config)``: the options (without prefix) the solver of
    ``method`` sees: its defaults, under ``options``, under the global database's
    ``<prefix>*`` entries (the command line)."""
    pre = prefix if prefix.endswith("_") else prefix + "_"
    glob = {k[len(pre):]: (v if v != "" else None) for k, v in PETSc.Options().getAll().items()
            if k.startswith(pre) and len(k) > len(pre)}
    config = {**{k: _to_str(v) for k, v in solver_defaults(method).items()},
              **{str(k).lstrip("-"): _to_str(v) for k, v in options.items()}, **glob}
    return pre, glob, config


#: TS types of second-order equations (``TSSetI2Function``): the GGL form of method "ts"
#: is first order, and PETSc crashes on them (a segmentation fault) rather than refusing
_SECOND_ORDER_TS = ("alpha2",)


def check_option_combinations(options: Mapping[str, object], where: str = "PETSc option",
                              *, method: str | None = "genalpha",
                              prefix: str = "fmbs_") -> None:
    """``ValueError`` (one line: the key, what is expected, what was found) for option
    values that end the process instead of failing: ``pc_type ilu`` with SuperLU (the
    default factor package; its ILU aborts the process, "MC64 functionality not
    available" in this build) and, for ``method`` "ts", a second-order TS type
    (``ts_type alpha2``, a segmentation fault).  ``method`` None: the method-independent
    checks only."""
    pre, glob, config = run_config(options, method or "genalpha", prefix)

    def shown(key):
        return f"-{pre}{key}" if key in glob else f"-{key}"
    if config.get("pc_type") == "ilu" and config.get("pc_factor_mat_solver_type") == "superlu":
        raise ValueError(f"{where} {shown('pc_type')}: expected a preconditioner that the "
                         f"factor package superlu can make (lu), or ilu with "
                         f"pc_factor_mat_solver_type petsc, got 'ilu' with superlu, whose "
                         f"ILU aborts the process (MC64 not available in this build)")
    if method == "ts" and config.get("ts_type") in _SECOND_ORDER_TS:
        raise ValueError(f"{where} {shown('ts_type')}: expected a TS type of first-order "
                         f"equations for method 'ts' (bdf, beuler, theta, alpha, arkimex, "
                         f"rosw), got '{config['ts_type']}', a type of second-order "
                         f"equations (PETSc would crash)")


def judge_option_names(options: Mapping[str, object], *, method: str = "genalpha",
                       prefix: str = "fmbs_") -> tuple[list[str], dict[str, str]]:
    """PETSc's own verdict on the names of ``options`` (without prefix, as given to the
    solver of ``method`` under ``prefix``): ``(unused, idle)``.

    First probe: the run's configuration (:func:`solver_defaults` of ``method``, under
    ``options``, under the global database's ``<prefix>*`` entries, as the solver sees
    them) goes to a throw-away SNES (and TS for ``method`` "ts") under a probe prefix,
    ``setFromOptions``, and ``PetscOptionsUsed`` (the ``-options_left`` report) tells
    which names were read.  Second probe, for the names left: the same with one type
    changed at a time (:data:`BROAD_TYPES`); a name read there is ``idle`` (mapped to a
    note: read only with that type, this run's type, no effect); a name no probe reads
    is ``unused`` (a typo, ``snes_typo``).  Not judged: options read only while solving
    (``mat_*`` of the factor packages, viewers and monitors, :data:`_SOLVE_TIME`),
    flexmbs's own (:data:`OWN_OPTIONS`) and inner solvers' (``sub_*``,
    ``fieldsplit_*``, ``mg_levels_*``, ... :data:`SUB_PREFIX`), read at the PC's setup.
    """
    given = [str(k).lstrip("-") for k in options]
    judged = [k for k in given if k not in OWN_OPTIONS and not k.startswith("mat_")
              and not any(w in k for w in _SOLVE_TIME) and not SUB_PREFIX.match(k)]
    pre, glob, config = run_config(options, method, prefix)
    if not judged and not glob:      # (the global entries' values are still read once)
        return [], {}
    ts = method == "ts"
    try:
        read = setup_reads(config, judged, ts)
    except OptionValueError as exc:      # a global entry: named with its prefix
        if exc.key in glob:
            raise OptionValueError(pre + exc.key, exc.value, exc.expected) from None
        raise
    left = [k for k in judged if k not in read]
    idle: dict[str, str] = {}
    if not ts and left:                  # a TS option under a method without a PETSc TS
        read = setup_reads({**{k: _to_str(v) for k, v in solver_defaults("ts").items()},
                       **config}, left, True)
        for k in read:
            idle[k] = f"read only by method 'ts' (PETSc TS), this run uses '{method}': no effect"
        left = [k for k in left if k not in read]
    for key, value in BROAD_TYPES:
        if not left:
            break
        if config.get(key) == value:
            continue
        read = setup_reads({**config, key: value}, left, True)
        run = config.get(key) or "PETSc's default"
        for k in read:
            idle[k] = (f"read only under another {key} (e.g. {value}), this run uses "
                       f"{run}: no effect")
        left = [k for k in left if k not in read]
    return left, idle


def parse_petsc_args(args: Sequence[str]) -> dict[str, str | None]:
    """``-key value`` pairs (and bare ``-flag``) of a CLI argument list as a dict, checked
    (:func:`check_option_values`) but not inserted; ``ValueError`` on a bad list."""
    parsed: dict[str, str | None] = {}
    key: str | None = None

    def is_key(a: str) -> bool:
        if not a.startswith("-") or a == "-" or a == "--":
            return False
        try:
            float(a)
        except ValueError:
            return True
        return False

    for arg in list(args):
        if arg == "--":
            continue
        if is_key(arg):
            if key is not None:
                parsed[key] = None
            key = arg.lstrip("-")
            if not key or not all(c.isalnum() or c == "_" for c in key):
                raise ValueError(f"PETSc option list: expected -name with letters, digits "
                                 f"and _, got {arg!r}")
        elif key is not None:
            parsed[key] = arg
            key = None
        else:
            raise ValueError(f"PETSc option list: value {arg!r} does not follow a -key")
    if key is not None:
        parsed[key] = None
    check_option_values(parsed)
    return parsed


def petsc_options_from_args(args: Sequence[str]) -> dict[str, str | None]:
    """Insert ``-key value`` pairs (and bare ``-flag``) of a CLI argument list into the
    global PETSc options database; returns what was inserted.

    ``["-fmbs_ksp_type", "gmres", "-fmbs_snes_monitor"]`` sets ``fmbs_ksp_type=gmres`` and
    the flag ``fmbs_snes_monitor``.  A negative number is a value, not a key.  Arguments
    not starting with ``-`` and not following a key, and type names PETSc does not know
    (``-fmbs_pc_type nonexistent``, :func:`check_option_values`) raise ``ValueError``
    before anything is inserted.
    """
    opts = PETSc.Options()
    inserted = parse_petsc_args(args)
    for k, v in inserted.items():
        opts.setValue(k, v if v is not None else "")
        log.debug("PETSc option -%s %s", k, v)
    return inserted


@contextlib.contextmanager
def petsc_options_inserted(args: Sequence[str]) -> Iterator[dict[str, str | None]]:
    """:func:`petsc_options_from_args` for the duration of a ``with`` block: on leaving it
    the options database is as before (a second run in the same process does not inherit
    the first one's command-line options)."""
    opts = PETSc.Options()
    before = {k: opts.getString(k) if opts.hasName(k) else None
              for k in parse_petsc_args(args)}       # (raises ValueError before inserting)
    inserted = petsc_options_from_args(args)
    try:
        yield inserted
    finally:
        for k, v in before.items():
            if v is None:
                opts.delValue(k)
            else:
                opts.setValue(k, v)


class OptionsManager:
    """Options of one PETSc solver object under a mandatory ``prefix``.

    Parameters
    ----------
    prefix : options prefix, e.g. ``"fmbs_"`` (a trailing ``_`` is added if missing)
    defaults : lowest-precedence options (without prefix), e.g. :func:`default_direct_lu`
    petsc_options : the caller's options (without prefix); override ``defaults``

    Options already present in the global database under ``prefix`` (command line) win
    over both; they are never touched.
    """

    def __init__(self, prefix: str, defaults: Mapping[str, object] | None = None,
                 petsc_options: Mapping[str, object] | None = None):
        if not prefix:
            raise ValueError("OptionsManager: an options prefix is mandatory, got ''")
        self._prefix = prefix if prefix.endswith("_") else prefix + "_"
        merged = dict(defaults or {})
        merged.update({k.lstrip("-"): v for k, v in (petsc_options or {}).items()})
        glob = PETSc.Options()
        # command-line / global options win: drop what is already set there
        self._parameters = {k: _to_str(v) for k, v in merged.items()
                            if not glob.hasName(self._prefix + k)}
        self._given = {k.lstrip("-") for k in (petsc_options or {})}
        self._read_at_solve = any(k.startswith("mat_") or any(w in k for w in _SOLVE_TIME)
                                  for k in self._parameters)

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def read_at_solve(self) -> bool:
        """Whether some of this manager's options are read while solving rather than by
        ``setFromOptions`` (viewers, monitors, tests, factor-package ``mat_*`` options):
        then :meth:`inserted` is needed around every solve, not only the first ones."""
        return self._read_at_solve

    @property
    def parameters(self) -> dict[str, str | None]:
        """The options this manager inserts (without prefix), a copy."""
        return dict(self._parameters)

    def value(self, key: str) -> str | None:
        """The effective value of option ``key`` (without prefix): the global database's
        if set there, else this manager's; None when unset (or set without a value)."""
        glob = PETSc.Options()
        if glob.hasName(self._prefix + key):
            return glob.getString(self._prefix + key, None) or None
        return self._parameters.get(key)

    def is_default(self, key: str) -> bool:
        """Whether option ``key`` keeps this manager's default (neither the caller's
        ``petsc_options`` nor the global database set it)."""
        return key not in self._given and not PETSc.Options().hasName(self._prefix + key)

    def set_default(self, key: str, value: object) -> None:
        """Replace the default of ``key`` (no effect where the caller or the global
        database set it)."""
        if self.is_default(key):
            self._parameters[key] = _to_str(value)

    def remove_default(self, key: str) -> None:
        """Drop the default of ``key`` (unless the caller or the global database set it)."""
        if self.is_default(key):
            self._parameters.pop(key, None)

    @contextlib.contextmanager
    def inserted(self) -> Iterator[None]:
        """Insert this solver's options into the global database for the block's duration."""
        glob = PETSc.Options()
        added = []
        try:
            for k, v in self._parameters.items():
                name = self._prefix + k
                if glob.hasName(name):  # set meanwhile by someone else: theirs wins
                    continue
                glob.setValue(name, "" if v is None else v)
                added.append(name)
            yield
        finally:
            if REMOVAL_HOOKS:        # (which options PETSc read: sampled here, not per step)
                REMOVAL_HOOKS[0](self._prefix, self._parameters, added)
            for name in added:
                glob.delValue(name)

    def set_from_options(self, obj) -> None:
        """``obj.setOptionsPrefix(prefix)`` and ``obj.setFromOptions()`` with the options in."""
        obj.setOptionsPrefix(self._prefix)
        with self.inserted():
            try:
                obj.setFromOptions()
            except PETSc.Error:      # a value PETSc cannot read: name it (OptionValueError)
                glob = PETSc.Options()
                config = {k[len(self._prefix):]: v for k, v in glob.getAll().items()
                          if k.startswith(self._prefix)}
                setup_reads(config, (), isinstance(obj, PETSc.TS))
                raise
