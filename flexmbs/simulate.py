"""``simulate(model, t_end, dt)``: from a model to a recorded trajectory.

1. assemble the DAE (:class:`~flexmbs.system.assembly.AssembledSystem`);
2. consistent positions from the bodies' initial poses (minimum-norm Newton, THEORY §8.3);
3. the rank test of ``G`` there; redundant rows are named and dropped (§5.9.1);
4. consistent velocities, accelerations and multipliers;

   (steps 1-4 are :func:`prepare`; a caller that has already prepared the model, e.g.
   to report its degrees of freedom first, hands the :class:`Prepared` model to
   ``simulate(..., assembled=)`` or ``static_equilibrium(..., assembled=)``, and the
   system is assembled and checked once)
5. generalized-α (or PETSc TS) integration; at every output step the time, body
   coordinates, joint coordinates and reactions, sensors and energies are recorded in
   memory and, if ``output`` is given, appended to an HDF5 file (``flexmbs.io.results``)
   with the integrator's state, from which ``simulate(..., restart=file)`` continues.

The result file is written as ``<name>.running.h5`` and renamed when the run ends:
``<name>.h5`` if complete, else ``<name>.interrupted.h5``, ``.failed.h5`` or
``.diverged.h5`` (docs/errors.md); ``Result.path`` and the ``result_path`` attribute of
the exception a run ends with name the file that holds the steps.
"""
from __future__ import annotations

import logging
import math
import numbers
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from flexmbs.errors import (
    ConvergenceError, DivergenceError, FlexmbsError, ModelError, OutputError,
    SingularConfigurationError,
)
from flexmbs.integrate.consistent import consistent_initial_conditions, consistent_positions
from flexmbs.integrate.events import impact_columns
from flexmbs.integrate.genalpha import Checkpoint
from flexmbs.integrate.options import check_option_names, check_option_values
from flexmbs.integrate.unread import already_warned, reporting
from flexmbs.integrate.settings import DEFAULTS
from flexmbs.io.results import ResultWriter, RestartPoint, read_restart, write_event_table
from flexmbs.system import dof, health
from flexmbs.system.model import System
from flexmbs.system.output_point import OutputPoint

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Result:
    """A recorded simulation (arrays have one row per output step)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    lam: np.ndarray
    bodies: dict            # {body: slice into q}
    sensors: dict           # {sensor: (n, k)}
    reactions: dict         # {joint: (n, 6)}: force [N], torque [N m] in the joint frame
    joint_coordinates: dict  # {joint: (n, k)}
    energy: dict            # {kind: (n,)} [J]
    dof: dof.DofReport
    initial: object         # the ConsistentState
    stats: object
    path: str | None = None
    wall_time: float = 0.0
    extra: dict = field(default_factory=dict)
    state_slices: dict = field(default_factory=dict)   # {force element: slice into q}
    outputs: dict = field(default_factory=dict)  # {element: {signal: (n, k)}} (recorded_signals)
    #: the contact impacts (:class:`~flexmbs.integrate.events.Impact`), in time order
    impacts: tuple = ()
    #: ``{contact: (n, 3)}``: gap [m], gap rate [m/s], normal force [N] per output step
    contacts: dict = field(default_factory=dict)

    def impact_table(self, contact: str | None = None) -> dict:
        """The impacts (of ``contact``, or all) as columns ``{"t" [s], "v_impact" [m/s],
        "peak_force" [N], "t_release" [s]: (k,) arrays, "contact", "body_P", "body_Q":
        names}`` (:func:`~flexmbs.integrate.events.impact_columns`)."""
        rows = [i for i in self.impacts if contact is None or i.contact == contact]
        return {k: v for k, (v, _) in impact_columns(rows).items()}

    def body_q(self, name: str) -> np.ndarray:
        return self.q[:, self.bodies[name]]

    def states(self, name: str) -> np.ndarray:
        """Internal states ``z`` (n, k) of force element ``name`` (its ``state_names``)."""
        if name not in self.state_slices:
            raise KeyError(f"Result: no force element with internal states named {name!r}; "
                           f"those with states: {sorted(self.state_slices)}")
        return self.q[:, self.state_slices[name]]


#: the columns of a contact's output rows ``contacts/<name>``: gap [m] (negative:
#: penetration), its rate [m/s], the normal force [N]
CONTACT_COLUMNS = ("gap", "gap_rate", "F_n")

#: the columns of a joint's reaction rows ``joints/<name>/reaction``: force [N], torque
#: [N m] in the joint frame
REACTION_COLUMNS = ("Fx", "Fy", "Fz", "Mx", "My", "Mz")

#: the conditioning of the active constraint rows is measured every this many outputs
CONDITIONING_EVERY = 16


class _Recorder:
    """Records the output steps (all steps, or those at ``out_times`` and ``t0``) and
    watches the run's health there (:mod:`flexmbs.system.health`): divergence, the rows
    dropped as redundant at the start, the conditioning of the active rows."""

    def __init__(self, asm, writer: ResultWriter | None, progress, t_end, out_times=None,
                 t0=0.0, scales: health.Scales | None = None,
                 prior: RestartPoint | None = None):
        self.asm, self.writer, self.progress, self.t_end = asm, writer, progress, t_end
        #: the reactions and joint coordinates from the rows evaluated once per output
        #: (:mod:`flexmbs.system.output_point`; velocity rows: the system's own)
        self.point = None if asm.n_mu else OutputPoint(asm.layout, asm.constraint_rows,
                                                       asm.model.joints)
        #: ``reaction_rows(q, lam, t) -> {joint: [force, torque] (6,)}`` of the recorded
        #: state
        self.reaction_rows = _rows_of(asm.reactions) if self.point is None else \
            self.point.reaction_rows
        self.out_times = None if out_times is None else np.concatenate([[t0], out_times])
        self.rows: dict[str, list] = {}
        #: ``state() -> (qd, qdd, a)`` of the integrator at the step being recorded (the
        #: restart data), or None (no restart data: the TS integrator)
        self.state = None
        self.skip = 0               # outputs not to record: the first of a continued run
        self.counters = {}          # offsets of the cumulative solver counters
        self.t0 = _time.perf_counter()
        self.scales = scales
        self.dropped = np.flatnonzero(~asm.active)     # rows the rank test dropped at t0
        self.n_records = 0
        self.last = None            # (t, q) of the last output
        self.worst = (1.0, 0.0, "")  # smallest conditioning seen: (ratio, t, row label)
        self._names = {}            # {joint: coordinate names}
        self._keys = {}             # {(joint, what): dataset path}
        #: ``(bodies/<b>/q, bodies/<b>/qd, slice of b in q)`` of each body
        self._body_keys = [(f"bodies/{b.name}/q", f"bodies/{b.name}/qd",
                            asm.body_slices[b.name]) for b in asm.bodies]
        if prior is not None:
            self._take(prior)
        if progress is not None:    # (it may stop the run at any output: row by row)
            self.record_block = None

    def watch(self, t, q, at=None, clear: bool = False) -> None:
        """The health checks of one output step; raises what it finds.  ``at``: its
        constraint rows if evaluated already; ``clear``: known clear of divergence."""
        self.last = (t, q)
        if self.scales is None:
            return
        what = None if clear else health.divergence(self.scales, q)
        if what is not None:
            raise DivergenceError(f"the run diverged: {what}", t=t)
        asm = self.asm
        if at is None and self.point is not None:
            at = asm.constraint_rows.at_state(q, t)
        v, label = (health.dropped_violation(asm, q, t, self.dropped,
                                             None if at is None else at.g_all)
                    if self.dropped.size else (0.0, ""))
        if v > health.DROPPED_TOL:
            raise SingularConfigurationError(
                f"{label}, dropped as redundant at the start, is violated by {v:.3g}: the "
                f"rows were dependent only in the starting position (a singular or toggle "
                f"configuration), not redundant; start the model away from it", t=t)
        if self.n_records % CONDITIONING_EVERY == 0 and 0 < asm.n_lam <= 400:
            G = asm.constraint_jacobian(q, t) if at is None else at.G
            ratio, i = health.conditioning(G.toarray() if hasattr(G, "toarray") else G)
            if ratio < self.worst[0]:
                self.worst = (ratio, t, asm.active_row_labels[i])
            if ratio < health.SINGULAR_RATIO:
                raise SingularConfigurationError(
                    f"singular configuration: the active constraint rows lost rank "
                    f"(sigma_min/sigma_max = {ratio:.2e}), the row most involved is "
                    f"{asm.active_row_labels[i]}", t=t)

    def _at_output_time(self, t: float) -> bool:
        """Whether ``t`` is one of ``out_times`` (ascending), to ``1e-9 max(1, |t_end|)``:
        the times next to ``t`` on either side are the nearest."""
        ts, tol = self.out_times, 1e-9 * max(1.0, abs(self.t_end))
        k = int(ts.searchsorted(t))
        return (k < ts.size and abs(ts[k] - t) <= tol) or (k > 0 and abs(ts[k - 1] - t) <= tol)

    def _key(self, joint: str, what: str) -> str:
        """``joints/<joint>/<what>`` (built once per run)."""
        key = self._keys.get((joint, what))
        if key is None:
            key = self._keys[joint, what] = f"joints/{joint}/{what}"
        return key

    def _coordinate_names(self, joint: str) -> tuple:
        """The ``coordinate_names`` of the model's joint ``joint`` (looked up once)."""
        names = self._names.get(joint)
        if names is None:
            names = self._names[joint] = self.asm.model.joint(joint).coordinate_names
        return names

    def __call__(self, t, q, qd, qdd, lam, stats):
        if self.out_times is not None and not self._at_output_time(t):
            return bool(self.progress(t, self.t_end, stats)) if self.progress else False
        self._record(t, q, qd, qdd, lam, (getattr(stats, "newton_iterations", 0),
                                          getattr(stats, "jacobian_evaluations", 0)))
        if self.progress is not None:
            return bool(self.progress(t, self.t_end, stats))
        return False

    def record_block(self, t, q, qdd, lam, counters, row) -> bool:
        """Record a block of ``k`` output steps at once (the integrator's block entry,
        :meth:`GeneralizedAlpha._emit_block <flexmbs.integrate.genalpha.GeneralizedAlpha.
        _emit_block>`): ``t`` (k,), ``q``, ``qdd`` (k, n_q), ``lam`` (k, n_lam), the
        cumulative ``counters`` ``{newton_iterations, jacobian_evaluations: (k,)}``;
        ``row(i)`` puts the integrator at row ``i`` (what the restart data and the
        writer's checkpoint read) and returns its projected velocities.  The rows are
        recorded and watched in order, as ``k`` calls would: a health check that fails
        raises at its row, the rows before it kept.  Never stops the run (False).

        The rows clear of divergence (:func:`~flexmbs.system.health.clear_of_divergence`,
        all rows at once) up to the first that is not are taken in two passes: their
        velocities projected and their constraint rows evaluated once each, then the
        joint coordinates of all of them at once (:meth:`OutputPoint.
        joint_coordinate_rows <flexmbs.system.output_point.OutputPoint.
        joint_coordinate_rows>`) and their reactions in one compiled call (:meth:`
        OutputPoint.reaction_block <flexmbs.system.output_point.OutputPoint.
        reaction_block>`), and each row recorded with them; the rows from the
        first that is not clear (or whose projection raised) on one by one; an
        interruption (``KeyboardInterrupt``) in the first pass is raised after the rows
        before it are recorded."""
        newton, jac = counters["newton_iterations"], counters["jacobian_evaluations"]
        for a in range(0, len(t), self.CHUNK):     # (a chunk's rows evaluated are held)
            b = a + self.CHUNK
            self._record_rows(t[a:b], q[a:b], qdd[a:b], lam[a:b], newton[a:b], jac[a:b],
                              lambda i, project=True, a=a: row(a + i, project))
        return False

    #: rows of a block evaluated before they are recorded (each holds its constraint
    #: rows, a dense (rows, n_q) G: a whole block of 64 would hold 64)
    CHUNK = 8

    def _record_rows(self, t, q, qdd, lam, newton, jac, row) -> None:
        """:meth:`record_block` on ``k <= CHUNK`` consecutive rows."""
        k, m = len(t), 0
        qd, ats, coords, wrenches = [], [], [], None

        def record(i: int) -> None:
            counts = (int(newton[i]), int(jac[i]))
            if i < m:
                row(i, False)
                self._record(float(t[i]), q[i], qd[i], qdd[i], lam[i], counts, ats[i],
                             coords[i], clear=True,
                             reactions=None if wrenches is None else wrenches[i])
            else:
                self._record(float(t[i]), q[i], row(i), qdd[i], lam[i], counts)
        if self.point is not None:
            clear = np.ones(k, dtype=bool) if self.scales is None else \
                health.clear_of_divergence(self.scales, q)
            m = k if clear.all() else int(np.argmin(clear))
            rows = self.asm.constraint_rows
            try:
                for i in range(m):
                    qd.append(row(i))
                    ats.append(rows.at_state(q[i], float(t[i])))
            except BaseException as exc:    # (an error: that row again at its turn below)
                m = len(ats)
                if not isinstance(exc, Exception):
                    coords = self.point.joint_coordinate_rows(q[:m], ats[:m])
                    for i in range(m):
                        record(i)
                    raise
            coords = self.point.joint_coordinate_rows(q[:m], ats[:m])
            try:
                wrenches = self.point.reaction_block(q[:m], lam[:m], ats[:m])
            except (ArithmeticError, ValueError):   # (a state the arithmetic refuses:
                wrenches = None     # row by row, where it raises at its row)
        for i in range(k):
            record(i)

    def _record(self, t, q, qd, qdd, lam, counts, at=None, coordinates=None, clear=False,
                reactions=None):
        """Record one output step; ``counts``: the solver's cumulative ``(Newton
        iterations, Jacobian evaluations)`` there; ``at``, ``coordinates``,
        ``reactions``: its constraint rows, joint coordinates and reaction rows if
        evaluated already; ``clear``: its coordinates are known clear of divergence."""
        asm = self.asm
        if self.skip:
            self.skip -= 1
            return
        self.watch(t, q, at, clear)
        self.n_records += 1
        rec = {"time": (t, "s")}
        for key_q, key_qd, s in self._body_keys:
            rec[key_q] = (q[s], "m | Euler parameters")
            rec[key_qd] = (qd[s], "m/s | 1/s")
        for f in asm.layout.stateful:
            s = asm.state_slices[f.name]
            rec[f"states/{f.name}/z"] = (q[s], getattr(f, "state_units", ""), f.state_names)
            rec[f"states/{f.name}/zd"] = (qd[s], "", f.state_names)
            if hasattr(f, "recorded_signals"):
                y = asm.forces.measure(getattr(f, "feeds", ()), q, qd)
                ends = tuple(asm.marker_kinematics(m, q, qd, qdd) for m in f.resolve())
                for k, (v, unit, cols) in f.recorded_signals(t, y, q[s], ends).items():
                    rec[f"outputs/{f.name}/{k}"] = (v, unit, cols)
        if reactions is None:
            reactions = self.reaction_rows(q, lam, t) if at is None else \
                self.reaction_rows(q, lam, t, at)
        for name, w in reactions.items():
            rec[self._key(name, "reaction")] = (w, "N | N m", REACTION_COLUMNS)
        if coordinates is None:
            coordinates = asm.joint_coordinates(q) if self.point is None else \
                self.point.joint_coordinates(q, t, at)
        for name, c in coordinates.items():
            rec[self._key(name, "coordinates")] = (c, "rad | m", self._coordinate_names(name))
        for s in asm.sensors:
            states = tuple(asm.marker_kinematics(m, q, qd, qdd) for m in asm.sensor_markers[s.name])
            rec[f"sensors/{s.name}"] = (s.measure(states), getattr(s, "unit", ""),
                                        getattr(s, "columns", None))
        if asm.event_labels:
            gap, gap_rate, F_n = asm.event_gaps(q, qd, t)
            for k, name in enumerate(asm.event_labels):
                rec[f"contacts/{name}"] = (np.array([gap[k], gap_rate[k], F_n[k]]),
                                           "m, m/s, N", CONTACT_COLUMNS)
        energies = asm.energy(q, qd, t) if self.point is None else \
            self.point.energy(asm.forces, q, qd, t)
        for k, v in energies.items():
            rec[f"energy/{k}"] = (v, "J")
        for k, v in zip(("newton_iterations", "jacobian_evaluations"), counts):
            rec[f"solver/{k}"] = (v + self.counters.get(k, 0.0), "1")
        rows = self.rows
        for k, v in rec.items():
            col = rows.get(k)
            if col is None:
                col = rows[k] = []
            col.append(np.asarray(v[0], dtype=float))
        self.rows.setdefault("lam", []).append(np.array(lam, dtype=float))
        if self.writer is not None:
            if self.state is not None:
                qd_int, qdd_int, a = self.state()
                rec.update({"restart/q": (q, "m | Euler parameters"),
                            "restart/qd": (qd_int, "m/s | 1/s"),
                            "restart/qdd": (qdd_int, "m/s^2 | 1/s^2"),
                            "restart/a": (a, "m/s^2 | 1/s^2"),
                            "restart/lam": (lam, "N | N m")})
            self.writer.append(rec)

    def _take(self, prior: RestartPoint) -> None:
        """Start from the rows of the run continued (its last one is this run's first)."""
        for key, (a, _, _) in prior.rows.items():
            if key.startswith("restart/"):
                continue
            self.rows[key] = list(np.asarray(a, dtype=float))
        self.rows["lam"] = list(np.asarray(prior.rows["restart/lam"][0], dtype=float))
        for k in ("newton_iterations", "jacobian_evaluations"):
            col = prior.rows.get(f"solver/{k}")
            self.counters[k] = float(col[0][-1]) if col is not None and len(col[0]) else 0.0
        self.last = (prior.t, prior.q)
        self.n_records = prior.n
        self.skip = 1

    def arrays(self, prefix):
        n = len(prefix)
        return {k[n:].split("/")[0]: np.array(v) for k, v in self.rows.items() if k.startswith(prefix)}


def _rows_of(reactions: Callable) -> Callable:
    """``(q, lam, t) -> {joint: [force, torque] (6,)}`` of ``reactions(q, lam, t) ->
    {joint: (force, torque)}``."""
    return lambda q, lam, t: {name: np.concatenate(w) for name, w in
                              reactions(q, lam, t).items()}


def _outputs(rows) -> dict:
    """``{element: {signal: (n, k)}}`` of the rows ``outputs/<element>/<signal>``."""
    out: dict = {}
    for k, v in rows.items():
        if k.startswith("outputs/"):
            _, name, sig = k.split("/")
            out.setdefault(name, {})[sig] = np.array(v)
    return out


def output_times(t0: float, t_end: float, output_dt: float) -> np.ndarray:
    """The output times after ``t0``: ``t0 + k output_dt`` before ``t_end``, and ``t_end``
    itself, always (the last interval is shorter when ``output_dt`` does not divide
    ``t_end - t0``; ``output_dt > t_end - t0`` gives ``t_end`` alone)."""
    if not (np.isfinite(output_dt) and output_dt > 0):
        raise ValueError(f"simulate: output_dt must be positive, got {output_dt}")
    tol = 1e-9 * output_dt
    k = np.arange(1, int(np.floor((t_end - t0) / output_dt + 1e-9)) + 1)
    times = t0 + k * output_dt
    return np.append(times[times < t_end - tol], t_end)


@dataclass(frozen=True)
class Prepared:
    """A model assembled at its consistent initial state (steps 1-4 of the module doc).

    ``asm`` is the assembled DAE (its redundant rows marked inactive by the rank test),
    ``positions`` the consistent positions from the initial poses (where the rank test
    was made), ``dof`` the rank test's report, ``initial`` the consistent state at
    ``t0``, whose ``max_dq`` and ``max_dqd`` measure how far the bodies' initial poses and
    velocities were moved to satisfy the constraints.
    """

    model: object
    t0: float
    asm: object
    positions: np.ndarray
    dof: dof.DofReport
    initial: object         # ConsistentState

    @property
    def moved(self) -> tuple[float, float]:
        """``(max |dq|, max |dqd|)`` [SI units] of the initial assembly."""
        return self.initial.max_dq, self.initial.max_dqd


def prepare(model, t0: float = DEFAULTS.t0) -> Prepared:
    """Assemble ``model``, make its initial state consistent at ``t0`` and run the rank
    test of the constraint Jacobian there (:func:`flexmbs.system.dof.analyse`).

    Raises :class:`~flexmbs.errors.ConvergenceError` when no consistent positions are
    found, :class:`~flexmbs.errors.ModelError` for constraints that the consistent state
    still violates."""
    asm = model.assemble()
    q_guess, qd_guess = asm.initial_q(), asm.initial_qd()
    try:
        q_pos, _ = consistent_positions(asm, q_guess, t0)
        report = dof.analyse(asm, q_pos, t0)
        init = consistent_initial_conditions(asm, q_pos, qd_guess, t0)
    except ArithmeticError as exc:      # a force law or joint refusing the initial state
        raise ModelError(f"{model.name}: the initial state (t = {t0} s) cannot be "
                         f"evaluated: {str(exc) or type(exc).__name__}") from None
    init = _with_guess_report(init, q_guess, qd_guess, asm.state_indices)
    bad = health.inconsistent_rows(asm, init.q, init.qd, t0)
    if bad:
        raise ModelError([f"{model.name}: inconsistent constraints: {b}" for b in bad])
    return Prepared(model, t0, asm, q_pos, report, init)


def _check_prepared(model, t0: float, assembled: Prepared, where: str) -> None:
    """``assembled`` must be ``model`` prepared at ``t0``."""
    if assembled.model is not model or assembled.t0 != t0:
        raise ValueError(f"{where}: assembled= holds model '{assembled.model.name}' at "
                         f"t0 = {assembled.t0}, not model '{model.name}' at t0 = {t0}")


def _prepared(model, t0: float, assembled: Prepared | None) -> Prepared:
    """``assembled`` if it is ``model`` prepared at ``t0``, else ``prepare(model, t0)``."""
    if assembled is None:
        return prepare(model, t0)
    _check_prepared(model, t0, assembled, "simulate")
    return assembled


def _check_arguments(model, **times) -> None:
    """``model`` a :class:`~flexmbs.system.model.System` and the times real numbers [s]:
    a TypeError naming the argument, what was expected and what was found (not an
    AttributeError deep inside the assembly)."""
    if not isinstance(model, System):
        raise TypeError(f"simulate: model: expected a flexmbs System (fm.System), got "
                        f"{type(model).__name__}")
    for name, v in times.items():
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"simulate: {name}: expected a number of seconds, got {v!r} "
                            f"({type(v).__name__})")


@reporting("simulate: petsc_options")
def simulate(model, t_end: float, dt: float, *, t0: float = DEFAULTS.t0,
             rho_inf: float = DEFAULTS.rho_inf, method: str = DEFAULTS.method,
             adaptive: bool = DEFAULTS.adaptive, rtol: float = DEFAULTS.rtol,
             atol: float = DEFAULTS.atol, output: str | None = None,
             output_dt: float | None = None, petsc_options: dict | None = None,
             options_prefix: str = DEFAULTS.options_prefix,
             project_velocity: bool = DEFAULTS.project_velocity,
             progress: Callable | None = None,
             integrator_options: dict | None = None,
             restart: str | None = None, assembled: Prepared | None = None) -> Result:
    """Simulate ``model`` (a :class:`~flexmbs.system.model.System`) from ``t0`` to ``t_end``.

    The defaults are those of :data:`flexmbs.integrate.settings.DEFAULTS`.

    Parameters
    ----------
    t_end, dt : end time and (initial) step [s]
    rho_inf : generalized-α spectral radius at infinite frequency (1: no numerical damping)
    method : "genalpha" or "ts" (PETSc TS on the stabilised index-2 form)
    adaptive : error-controlled step size (``rtol``, ``atol``)
    output : HDF5 result file ``<name>.h5``, written incrementally as
        ``<name>.running.h5`` and renamed when the run ends (module docstring); the
        steps of a run that does not complete are kept under the name of its status
    output_dt : output interval [s] (default: every step); ``t_end`` is always an output
    petsc_options : PETSc options without prefix, e.g. {"pc_factor_mat_solver_type": "mumps"}
    progress : ``progress(t, t_end, stats) -> stop?``, the time ``t`` [s] of the step
        just taken: called at least every 0.05 s of wall time and after the last step
        (generalized-α: :data:`~flexmbs.integrate.genalpha.PROGRESS_SECONDS`, after the
        step that ends that long after the previous call, the compiled time loop's steps
        run in calls that end then; the relative formulations: at the output steps; PETSc
        TS: after every step).  A true value stops the run there, at ``t`` (status
        "interrupted", the output steps up to ``t`` kept; ``Result.t[-1]`` is the last of
        them); an exception raised by it (``KeyboardInterrupt``) stops it too
    integrator_options : further keyword arguments of the generalized-α integrator
        (:class:`~flexmbs.integrate.genalpha.GeneralizedAlpha`), e.g.
        ``{"jacobian_cost": None, "newton_rtol": 1e-6}``
    restart : a result file of this model (of any status, also one left by a killed
        run): continue its run to ``t_end`` (generalized-α only) from its last checkpoint
        when ``dt`` and ``adaptive`` are those of the first run (every row then repeats
        the uninterrupted run to the last bit), else from its last saved output step.
        The rows up to that step are copied to ``output`` and to the returned
        :class:`Result` (docs/errors.md, "Restart")
    assembled : ``prepare(model, t0)``, when the caller has it already: the model is
        then not assembled and checked again
    """
    _check_arguments(model, t_end=t_end, dt=dt, t0=t0)
    check_option_values(petsc_options or {}, where="simulate: petsc_options")
    already_warned(options_prefix, check_option_names(
        petsc_options or {}, where="simulate: petsc_options", method=method,
        prefix=options_prefix))
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"simulate: time step dt must be positive, got {dt}")
    if not (np.isfinite(t_end) and t_end > t0):
        raise ValueError(f"simulate: t_end must be greater than t0 = {t0}, got {t_end}")
    if getattr(model, "formulation", "absolute") != "absolute":
        return _simulate_relative(model, t0, t_end, dt, method=method, restart=restart,
                                  output=output, output_dt=output_dt, progress=progress,
                                  assembled=assembled, rho_inf=rho_inf, adaptive=adaptive,
                                  rtol=rtol, atol=atol, integrator_options=integrator_options,
                                  petsc_options=petsc_options, options_prefix=options_prefix)
    point = resume = None
    if restart is not None:
        if method != "genalpha":
            raise FlexmbsError(f"--restart {restart}: only the generalized-alpha integrator "
                               f"continues a run, this one uses '{method}'")
        point = read_restart(restart)
        resume = None if point.checkpoint is None else Checkpoint.unpack(point.checkpoint)
    prepared = _prepared(model, t0, assembled)
    asm, report, init = prepared.asm, prepared.dof, prepared.initial
    if report.redundant:        # (Result.dof; the CLI prints it once, before the run)
        log.info(report.summary())
    if point is not None:
        _check_restart(point, model, asm, t_end)
    if asm.event_labels and method != "genalpha":
        raise ModelError(f"simulate: contact '{asm.event_labels[0]}' needs the "
                         f"generalized-alpha integrator (it lands on the impacts), got "
                         f"method '{method}'")
    sampled = asm.forces.sampled()
    if sampled and method != "genalpha":
        raise ModelError(f"simulate: sampled controller '{sampled[0].name}' needs the "
                           f"generalized-alpha integrator (it lands on the ticks), got "
                           f"method '{method}'")
    spin = SpinStep(dt, None, "")
    if method == "genalpha":
        spin = spin_step(asm, *((init.q, init.qd, t0) if point is None else
                                (point.q, point.qd, point.t)), rho_inf, dt, adaptive)
        dt = spin.dt
    if resume is not None:
        if resume.fits(dt, adaptive):
            point = point.at_checkpoint()    # the exact continuation
        else:
            resume = None
    t_start = t0 if point is None else point.t
    out_times = None
    if output_dt is not None:
        out_times = output_times(t0, t_end, output_dt)
        out_times = out_times[out_times > t_start + 1e-9 * output_dt]
    writer = None
    if output:
        writer = ResultWriter(output, attrs=_run_attrs(
            model, method=method, t0=t0, t_end=t_end, dt=dt, output_dt=output_dt,
            rho_inf=rho_inf, adaptive=adaptive, n_q=asm.n_q, n_lam=asm.n_lam + asm.n_mu,
            point=point),
            prior=None if point is None else point.rows)
    # generalized-alpha calls progress itself at a wall-time cadence (progress_callback);
    # the TS integrator reports every step to the recorder, which then calls it
    recorder = _Recorder(asm, writer, progress if method == "ts" else None, t_end,
                         out_times, t_start, scales=health.Scales.of(asm, init.q),
                         prior=point)
    notes: list[str] = []
    impacts: tuple = ()
    wall = _time.perf_counter()
    try:
        if method == "genalpha":
            from flexmbs.integrate.genalpha import GeneralizedAlpha, State
            integ = GeneralizedAlpha(asm, **{**DEFAULTS.genalpha_options(),
                                             **(integrator_options or {})}, rho_inf=rho_inf,
                                     options_prefix=options_prefix,
                                     petsc_options=petsc_options,
                                     project_velocity=project_velocity)
            start = init if point is None else point
            a0 = init.qdd if point is None else point.a
            # a continued run takes the Newton test's scales of the run it continues
            scales_from = None if point is None else \
                State(t0, init.q, init.qd, init.qdd, init.qdd, init.lam)
            recorder.state = _state_at_output(integ, (start.qd, start.qdd, a0))
            if writer is not None:
                writer.checkpoint = lambda: _packed(integ.checkpoint())
            notes.extend(integ.notes)
            for note in integ.notes:
                log.info(note)
            for note in ([spin.note] if spin.note else []) + step_notes(model, dt):
                notes.append(note)
                log.warning(note)
            try:
                # the recorder at the output times only (it projects the velocities), the
                # progress callback at a wall-time cadence (not after every step: the
                # compiled time loop then runs many steps per call)
                progress_cb = None if progress is None else \
                    (lambda t, st: bool(progress(t, t_end, st)))
                traj = integ.run(start.q, start.qd, start.qdd, start.lam, t_start, t_end,
                                 h=dt, h_max=spin.h_max, adaptive=adaptive, rtol=rtol,
                                 atol=atol,
                                 output_times=out_times, callback=recorder, store=False,
                                 callback_at_outputs=out_times is not None,
                                 progress_callback=progress_cb, a0=a0, scales_from=scales_from,
                                 resume=resume)
                if writer is not None:      # the final one, before the solver is destroyed
                    final = _packed(integ.checkpoint())
                    writer.checkpoint = lambda: final
            finally:
                integ.destroy()
            stats = traj.stats
            impacts = tuple(getattr(integ, "impacts", ()))
        elif method == "ts":
            from flexmbs.integrate.ts import GGLIntegrator
            integ = GGLIntegrator(asm, options_prefix=options_prefix, petsc_options=petsc_options)
            try:
                traj = integ.run(init.q, init.qd, init.lam, t0, t_end, h=dt, rtol=rtol,
                                 atol=atol, output_times=out_times, callback=recorder, store=False,
                                 output_t0=out_times is not None)
            finally:
                if hasattr(integ, "destroy"):
                    integ.destroy()
            stats = traj.stats
        else:
            raise ValueError(f"simulate: method must be 'genalpha' or 'ts', got '{method}'")
    except BaseException as exc:
        if isinstance(exc, ConvergenceError) and not isinstance(exc, SingularConfigurationError):
            exc = _singular_or(exc, asm, recorder)
        if writer is not None:
            status = ("interrupted" if isinstance(exc, KeyboardInterrupt) else
                      "diverged" if isinstance(exc, DivergenceError) else "failed")
            exc = _closed(writer, status, exc)
        raise exc from None
    path = None
    if writer is not None:
        t_last = float(traj.t[-1]) if len(traj.t) else t_start
        stopped = t_last < t_end - 1e-9 * max(dt, abs(t_end))
        path = writer.close("interrupted" if stopped else "complete",
                            f"stopped by the progress callback at t = {t_last:.6g} s"
                            if stopped else "")
        if impacts:
            write_event_table(path, "impacts", impact_columns(impacts))
    wall = _time.perf_counter() - wall
    return _result(recorder, asm, report, init, stats, path, wall,
                   {"notes": notes, "conditioning": recorder.worst, "model": model,
                    "restart": point}, impacts)


def _result(recorder, asm, report, init, stats, path, wall, extra, impacts=()) -> Result:
    """The :class:`Result` of the rows ``recorder`` kept (``impacts``: the contact impacts
    of the run)."""
    rows = recorder.rows
    return Result(
        t=np.array(rows["time"]), q=_concat_bodies(rows, asm),
        qd=_concat_bodies(rows, asm, "qd"),
        lam=np.array(rows["lam"]) if rows.get("lam") else np.zeros((0, asm.n_lam + asm.n_mu)),
        bodies=asm.body_slices, sensors=recorder.arrays("sensors/"),
        reactions=recorder.arrays("joints/") and {k[7:-9]: np.array(v) for k, v in rows.items()
                                                  if k.endswith("/reaction")},
        joint_coordinates={k[7:-12]: np.array(v) for k, v in rows.items() if k.endswith("/coordinates")},
        energy=recorder.arrays("energy/"), dof=report, initial=init, stats=stats,
        path=path, wall_time=wall, state_slices=dict(asm.state_slices),
        outputs=_outputs(rows), impacts=impacts, contacts=recorder.arrays("contacts/"),
        extra=extra)


def _simulate_relative(model, t0, t_end, dt, *, method, restart, output, output_dt,
                       progress, assembled, **settings) -> Result:
    """:func:`simulate` of a model in joint coordinates (``model.formulation`` "relative"
    or "recursive", :mod:`flexmbs.relative.run`).  The outputs are those of the
    descriptor form at the bodies' state, the joint reactions those of the backward
    sweep (:mod:`flexmbs.relative.reactions`); ``Result.lam`` holds the multipliers of
    the relative DAE (normalisations, cut joints)."""
    from flexmbs.relative.run import run_relative
    if method != "genalpha" or restart is not None:
        raise ModelError(f"System '{model.name}': formulation '{model.formulation}' runs "
                         f"with the generalized-alpha integrator from the start only "
                         f"(method '{method}', restart {restart!r})")
    prepared = _prepared(model, t0, assembled)
    asm, report, init = prepared.asm, prepared.dof, prepared.initial
    out_times = None if output_dt is None else output_times(t0, t_end, output_dt)
    writer = None
    if output:
        writer = ResultWriter(output, attrs=_run_attrs(
            model, method=method, t0=t0, t_end=t_end, dt=dt, output_dt=output_dt,
            rho_inf=settings["rho_inf"], adaptive=settings["adaptive"], n_q=asm.n_q,
            n_lam=asm.n_lam, point=None, formulation=model.formulation))
    recorder = _Recorder(asm, writer, progress, t_end, None, t0,
                         scales=health.Scales.of(asm, init.q))
    wall = _time.perf_counter()

    beta: list = []

    def on_output(s) -> bool:
        beta.append(s.beta)
        recorder.reaction_rows = _rows_of(lambda q, lam, t: s.reactions)
        return bool(recorder(s.t, s.q, s.qd, s.qdd, s.lam, s.stats))

    try:
        dae, traj, dropped = run_relative(model, t0, t_end, dt, formulation=model.formulation,
                                          on_output=on_output, output_times=out_times,
                                          **settings)
    except BaseException as exc:
        if writer is not None:
            exc = _closed(writer, "diverged" if isinstance(exc, DivergenceError) else
                          "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
                          exc)
        raise exc from None
    path = None if writer is None else writer.close("complete", "")
    notes = [f"formulation '{model.formulation}': {dae.n_q} joint coordinates, "
             f"{dae.n_lam} constraint rows"] + [f"{lab}: redundant, dropped" for lab in dropped]
    notes.extend(stalled_newton_notes(getattr(dae, "newton_counts", None)))
    return _result(recorder, asm, report, init, traj.stats, path,
                   _time.perf_counter() - wall,
                   {"notes": notes, "conditioning": recorder.worst, "model": model,
                    "restart": None, "formulation": model.formulation, "tree": dae.tree,
                    "beta": np.array(beta), "beta_labels": dae.coordinate_labels})


def stalled_newton_notes(counts) -> list[str]:
    """One line when the recursive route's modified Newton iteration stalled
    (``RelativeDAE.newton_counts``): how many of its articulated Newton matrices took the
    full matrix by GMRES, and how many of those fell back to the dense tangent (O(n^2)
    residual evaluations per matrix: a cost the user should see); none otherwise."""
    if not counts or not counts.get("krylov"):
        return []
    line = (f"recursive Newton: {counts['krylov']} of {counts['articulated']} Newton "
            f"matrices stalled the modified iteration and took the full matrix by GMRES "
            f"({counts['gmres']} iterations)")
    if counts.get("dense"):
        line += (f"; {counts['dense']} solves fell back to the dense tangent (O(n^2) "
                 f"residual evaluations per matrix: a smaller step avoids it)")
    return [line]


class SpinStep(NamedTuple):
    """The step of a generalized-α run with a constrained body spinning at ``Omega``:
    ``dt`` [s] (the requested one, or it divided by ``k``), ``h_max`` [s] (a bound for
    the adaptive step, ``None`` without one), ``note`` (one line, ``""`` if none)."""

    dt: float
    h_max: float | None
    note: str


#: the steps kept below this share of the spin limit
SPIN_STEP_SHARE = 0.95


def step_notes(model, dt: float) -> list[str]:
    """One warning per force element whose ``max_step`` [s] (the largest step that
    resolves its own dynamics, e.g. the bristles of joint friction) is below ``dt``."""
    out = []
    for f in model.forces:
        h_max = getattr(f, "max_step", None)
        if h_max is not None and dt > h_max:
            out.append(f"{type(f).__name__} '{f.name}': the time step {dt:g} s is above "
                       f"{h_max:g} s, which its {f.max_step_reason}")
    return out


def spin_step(asm, q, qd, t0: float, rho_inf: float, dt: float,
              adaptive: bool) -> SpinStep:
    """The step that keeps generalized-α's spurious multiplier mode from growing.

    With constraints, index-3 generalized-α's multiplier error follows a recursion with
    the root ``-rho_inf``, which a body spinning at ``Omega`` amplifies by about
    ``1 + Omega h``: it stays bounded for ``h <= h_lim = (1 - rho_inf) / (rho_inf
    Omega)`` (:func:`flexmbs.system.health.spin_step_limit`, docs/solver.md).  A
    requested ``dt`` above ``0.95 h_lim`` is divided by the smallest integer ``k`` that
    brings it below (the steps stay on the grid ``t0 + j dt``, output times are kept);
    an adaptive step is bounded by ``0.95 h_lim``.  At ``rho_inf = 1`` (``h_lim = 0``) no
    step helps: the note warns that the run will diverge.  Only a body whose spin axis
    can turn counts (:func:`flexmbs.system.health.rotation_freedoms` >= 2): a crank on a
    revolute has no gyroscopic coupling and runs at any spin."""
    if not asm.n_lam:
        return SpinStep(dt, None, "")
    # the bodies whose spin could bound the step, fastest first
    fast = [(name, Omega) for name, Omega in health.spins(asm, q, qd) if Omega > 0.0 and (
        adaptive or dt > SPIN_STEP_SHARE * health.spin_step_limit(rho_inf, Omega))]
    freedoms = health.rotation_freedoms(asm, q, t0, [name for name, _ in fast])
    for name, Omega in fast:
        if freedoms[name] >= 2:
            return _spin_step(name, Omega, health.spin_step_limit(rho_inf, Omega), rho_inf,
                              dt, adaptive)
    return SpinStep(dt, None, "")


def _spin_step(name: str, Omega: float, h_lim: float, rho_inf: float, dt: float,
               adaptive: bool) -> SpinStep:
    """:func:`spin_step` for body ``name`` spinning at ``Omega`` [rad/s]."""
    if h_lim == 0.0:
        rho_ok = 1.0 / (1.0 + 2.0 * Omega * dt)
        return SpinStep(dt, None, (
            f"body '{name}' spins at {Omega:.4g} rad/s: with constraints and rho_inf = "
            f"{rho_inf:g}, generalized-alpha's spurious multiplier mode grows at any dt; "
            f"expect the run to diverge: use rho_inf <= {rho_ok:.2f} at dt = {dt:g} s "
            f"(docs/solver.md)"))
    h_cap = SPIN_STEP_SHARE * h_lim
    if not math.isfinite(h_cap):
        return SpinStep(dt, None, "")
    if dt <= h_cap:
        return SpinStep(dt, h_cap if adaptive else None, "")
    k = math.ceil(dt / h_cap * (1.0 - 1e-12))
    return SpinStep(dt / k, h_cap if adaptive else None, (
        f"body '{name}' spins at {Omega:.4g} rad/s: with constraints, generalized-alpha "
        f"(rho_inf = {rho_inf:g}) needs steps below (1 - rho_inf)/(rho_inf Omega) = "
        f"{h_lim:.3g} s, so it takes {k} steps of {dt / k:.4g} s per dt = {dt:g} s "
        f"(docs/solver.md)"))


def _closed(writer: ResultWriter, status: str, exc: BaseException) -> BaseException:
    """Close the result file of a run that ended with ``exc``; the exception to raise,
    with ``result_path``, the file that holds the steps.  An I/O error on closing wins:
    the run's own error is then in its ``run_error``."""
    try:
        exc.result_path = writer.close(status, str(exc))
    except OutputError as err:
        if err is not exc and not isinstance(exc, OutputError):
            err.run_error = exc
            return err
        exc.result_path = err.result_path
    return exc


def _run_attrs(model, *, point: RestartPoint | None, **settings) -> dict:
    """The result file's attributes: the model, the run settings and what it continues."""
    attrs = {"model": model.name}
    attrs.update({k: v for k, v in settings.items() if v is not None})
    if point is not None:
        attrs["restarted_from"] = point.path
        attrs["restart_time"] = point.t
    return attrs


def _check_restart(point: RestartPoint, model, asm, t_end: float) -> None:
    """A restart file must be of this model, with its coordinates, and end before t_end."""
    where = f"--restart {point.path}"
    name = point.attrs.get("model")
    if name is not None and str(name) != model.name:
        raise FlexmbsError(f"{where}: the file holds model '{name}', the case model "
                           f"'{model.name}'")
    if point.q.shape != (asm.n_q,) or point.lam.shape != (asm.n_lam + asm.n_mu,):
        raise FlexmbsError(f"{where}: the file's state has {point.q.size} coordinates and "
                           f"{point.lam.size} multipliers, the model {asm.n_q} and "
                           f"{asm.n_lam + asm.n_mu}: not a run of this model")
    if not point.t < t_end:
        raise FlexmbsError(f"{where}: its last saved step is at t = {point.t:.6g} s, not "
                           f"before t_end = {t_end:.6g} s: nothing to continue (a later "
                           f"--t-end extends the run)")


def _packed(checkpoint: Checkpoint | None) -> np.ndarray | None:
    """The flat vector of ``checkpoint`` (None: none goes with the output being written,
    one the compiled loop passed on its way to a later one)."""
    return None if checkpoint is None else checkpoint.pack()


def _state_at_output(integ, start) -> Callable:
    """``() -> (qd, qdd, a)`` of the state being output: the integrator's last accepted
    step (``start`` = (qd, qdd, a) before the first), what a restart continues from (the
    output callback receives neither the unprojected velocity nor ``a``)."""
    def state():
        s = getattr(integ, "last_state", None)
        if s is None:
            return start
        return s.qd.copy(), s.qdd.copy(), s.a.copy()
    return state


def _singular_or(exc: ConvergenceError, asm, recorder) -> ConvergenceError:
    """A failed Newton solve at a singular configuration is reported as one: the rank
    test of the active rows at the last output state (the joints that lost rank)."""
    if recorder.last is None or asm.n_lam == 0 or asm.n_lam > 2000:
        return exc
    t, q = recorder.last
    G = asm.constraint_jacobian(q, t).toarray()
    keep = dof.independent_rows(G, asm.redundancy_tol)
    if keep.all():
        return exc
    lost = [lab for lab, k in zip(asm.active_row_labels, keep) if not k]
    return SingularConfigurationError(
        f"singular configuration: the constraint rows {', '.join(lost)} became dependent "
        f"on the others near t = {t:.6g} s (a toggle or dead-centre position, where the "
        f"reactions are not defined), and the step failed: {exc.reason}", t=exc.t,
        step=exc.step)


def _concat_bodies(rows, asm, key="q") -> np.ndarray:
    """The rows ``(n, n_q)`` of ``q`` (``key`` "q") or ``qd`` ("qd"): the bodies'
    coordinates and the force elements' internal states, column block by block."""
    n = len(rows["time"])
    zkey = "z" if key == "q" else "zd"
    if n == 0:
        return np.array([])
    return np.concatenate([np.array(rows[f"bodies/{b.name}/{key}"]) for b in asm.bodies]
                          + [np.array(rows[f"states/{f.name}/{zkey}"])
                             for f in asm.layout.stateful], axis=1)


def _with_guess_report(init, q_guess, qd_guess, states=()):
    """Re-measure what moved against the user's original guess (not the projected one);
    the rates of the internal ``states`` are set by their ODEs, not moved."""
    import dataclasses
    dq, dqd = np.abs(init.q - q_guess), np.abs(init.qd - qd_guess)
    dqd[np.asarray(states, dtype=int)] = 0.0
    return dataclasses.replace(init, max_dq=float(dq.max(initial=0.0)), i_dq=int(np.argmax(dq)),
                               max_dqd=float(dqd.max(initial=0.0)), i_dqd=int(np.argmax(dqd)))


@dataclass(frozen=True)
class Equilibrium:
    """A static equilibrium: coordinates, multipliers, reactions and the DOF report."""

    q: np.ndarray
    lam: np.ndarray
    bodies: dict
    reactions: dict
    joint_coordinates: dict
    dof: dof.DofReport

    def body_q(self, name: str) -> np.ndarray:
        return self.q[self.bodies[name]]


@reporting("static_equilibrium: petsc_options", prefix=DEFAULTS.static_options_prefix)
def static_equilibrium(model, *, t: float = DEFAULTS.t0,
                       load_steps: int = DEFAULTS.load_steps,
                       petsc_options: dict | None = None,
                       assembled: Prepared | None = None) -> Equilibrium:
    """Static equilibrium ``r(q, 0, 0, lam, t) = 0, g(q, t) = 0`` from the initial poses
    (Newton on PETSc SNES with ``[[K, G^T], [G, 0]]``; see ``flexmbs.integrate.static``).

    ``assembled``: ``prepare(model, t)``, when the caller has it already (the model is
    then not assembled and checked again); the solve starts from its positions.

    A model with joint friction has no unique static equilibrium (a sticking joint holds
    any load below its limit): :class:`~flexmbs.errors.ModelError` naming the element."""
    from flexmbs.integrate.static import solve_static
    already_warned(DEFAULTS.static_options_prefix, check_option_names(
        petsc_options or {}, where="static_equilibrium: petsc_options",
        prefix=DEFAULTS.static_options_prefix))
    sticking = [f.name for f in model.forces if getattr(f, "statically_indeterminate", False)]
    if sticking:
        raise ModelError(f"static_equilibrium: joint friction {', '.join(map(repr, sticking))} "
                         "makes the static equilibrium indeterminate (a sticking joint holds "
                         "any load below mu_s N); remove the friction or simulate to rest")
    if assembled is None:
        asm = model.assemble()
        q_pos, _ = consistent_positions(asm, asm.initial_q(), t)
        report = dof.analyse(asm, q_pos, t)
    else:
        _check_prepared(model, t, assembled, "static_equilibrium")
        asm, q_pos, report = assembled.asm, assembled.positions, assembled.dof
    sol = solve_static(asm, q_pos, t=t, load_steps=load_steps, petsc_options=petsc_options,
                       options_prefix=DEFAULTS.static_options_prefix)
    reac = {k: np.concatenate(v) for k, v in asm.reactions(sol.q, sol.lam, t).items()}
    return Equilibrium(sol.q, sol.lam, asm.body_slices, reac, asm.joint_coordinates(sol.q), report)
