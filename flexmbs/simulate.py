"""``simulate(model, t_end, dt)``: from a model to a recorded trajectory.

1. assemble the DAE (:class:`~flexmbs.system.assembly.AssembledSystem`);
2. consistent positions from the bodies' initial poses (minimum-norm Newton, THEORY §8.3);
3. the rank test of ``G`` there; redundant rows are named and dropped (§5.9.1);
4. consistent velocities, accelerations and multipliers;
5. generalized-α (or PETSc TS) integration; at every output step the time, body
   coordinates, joint coordinates and reactions, sensors and energies are recorded in
   memory and, if ``output`` is given, appended to an HDF5 file (``flexmbs.io.results``).
"""
from __future__ import annotations

import logging
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from flexmbs.errors import (
    ConvergenceError, DivergenceError, ModelError, SingularConfigurationError,
)
from flexmbs.integrate.consistent import consistent_initial_conditions, consistent_positions
from flexmbs.io.results import ResultWriter
from flexmbs.system import dof, health

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

    def body_q(self, name: str) -> np.ndarray:
        return self.q[:, self.bodies[name]]


#: the conditioning of the active constraint rows is measured every this many outputs
CONDITIONING_EVERY = 16


class _Recorder:
    """Records the output steps (all steps, or those at ``out_times`` and ``t0``) and
    watches the run's health there (:mod:`flexmbs.system.health`): divergence, the rows
    dropped as redundant at the start, the conditioning of the active rows."""

    def __init__(self, asm, writer: ResultWriter | None, progress, t_end, out_times=None,
                 t0=0.0, scales: health.Scales | None = None):
        self.asm, self.writer, self.progress, self.t_end = asm, writer, progress, t_end
        self.out_times = None if out_times is None else np.concatenate([[t0], out_times])
        self.rows: dict[str, list] = {}
        self.t0 = _time.perf_counter()
        self.scales = scales
        self.n_records = 0
        self.last = None            # (t, q) of the last output
        self.worst = (1.0, 0.0, "")  # smallest conditioning seen: (ratio, t, row label)

    def watch(self, t, q) -> None:
        """The health checks of one output step; raises what it finds."""
        self.last = (t, q)
        if self.scales is None:
            return
        what = health.divergence(self.scales, q)
        if what is not None:
            raise DivergenceError(f"the run diverged: {what}", t=t)
        asm = self.asm
        v, label = health.dropped_violation(asm, q, t)
        if v > health.DROPPED_TOL:
            raise SingularConfigurationError(
                f"{label}, dropped as redundant at the start, is violated by {v:.3g}: the "
                f"rows were dependent only in the starting position (a singular or toggle "
                f"configuration), not redundant; start the model away from it", t=t)
        if self.n_records % CONDITIONING_EVERY == 0 and 0 < asm.n_lam <= 400:
            ratio, i = health.conditioning(asm.constraint_jacobian(q, t).toarray())
            if ratio < self.worst[0]:
                self.worst = (ratio, t, asm.active_row_labels[i])
            if ratio < health.SINGULAR_RATIO:
                raise SingularConfigurationError(
                    f"singular configuration: the active constraint rows lost rank "
                    f"(sigma_min/sigma_max = {ratio:.2e}), the row most involved is "
                    f"{asm.active_row_labels[i]}", t=t)

    def __call__(self, t, q, qd, qdd, lam, stats):
        if self.out_times is not None:
            tol = 1e-9 * max(1.0, abs(self.t_end))
            if not np.any(np.abs(self.out_times - t) <= tol):
                return bool(self.progress(t, self.t_end, stats)) if self.progress else False
        self._record(t, q, qd, qdd, lam, stats)
        if self.progress is not None:
            return bool(self.progress(t, self.t_end, stats))
        return False

    def _record(self, t, q, qd, qdd, lam, stats):
        asm = self.asm
        self.watch(t, q)
        self.n_records += 1
        rec = {"time": (t, "s")}
        for b in asm.bodies:
            s = asm.body_slices[b.name]
            rec[f"bodies/{b.name}/q"] = (q[s], "m | Euler parameters")
            rec[f"bodies/{b.name}/qd"] = (qd[s], "m/s | 1/s")
        for name, (f, m) in asm.reactions(q, lam, t).items():
            rec[f"joints/{name}/reaction"] = (np.concatenate([f, m]), "N | N m",
                                              ("Fx", "Fy", "Fz", "Mx", "My", "Mz"))
        for name, c in asm.joint_coordinates(q).items():
            rec[f"joints/{name}/coordinates"] = (c, "rad | m", asm.model.joint(name).coordinate_names)
        for s in asm.sensors:
            states = tuple(asm.marker_kinematics(m, q, qd, qdd) for m in asm.sensor_markers[s.name])
            rec[f"sensors/{s.name}"] = (s.measure(states), getattr(s, "unit", ""),
                                        getattr(s, "columns", None))
        for k, v in asm.energy(q, qd, t).items():
            rec[f"energy/{k}"] = (v, "J")
        rec["solver/newton_iterations"] = (getattr(stats, "newton_iterations", 0), "1")
        rec["solver/jacobian_evaluations"] = (getattr(stats, "jacobian_evaluations", 0), "1")
        rec["lam"] = (lam, "N | N m")
        for k, v in rec.items():
            self.rows.setdefault(k, []).append(np.asarray(v[0], dtype=float))
        if self.writer is not None:
            self.writer.append({k: v for k, v in rec.items() if k != "lam"})

    def arrays(self, prefix):
        n = len(prefix)
        return {k[n:].split("/")[0]: np.array(v) for k, v in self.rows.items() if k.startswith(prefix)}


def simulate(model, t_end: float, dt: float, *, t0: float = 0.0, rho_inf: float = 0.9,
             method: str = "genalpha", adaptive: bool = False, rtol: float = 1e-4,
             atol: float = 1e-6, output: str | None = None, output_dt: float | None = None,
             petsc_options: dict | None = None, options_prefix: str = "fmbs_",
             project_velocity: bool = True,
             progress: Callable | None = None,
             integrator_options: dict | None = None) -> Result:
    """Simulate ``model`` (a :class:`~flexmbs.system.model.System`) from ``t0`` to ``t_end``.

    Parameters
    ----------
    t_end, dt : end time and (initial) step [s]
    rho_inf : generalized-α spectral radius at infinite frequency (1: no numerical damping)
    method : "genalpha" or "ts" (PETSc TS on the stabilised index-2 form)
    adaptive : error-controlled step size (``rtol``, ``atol``)
    output : HDF5 result file, written incrementally (kept on failure)
    output_dt : output interval [s] (default: every step)
    petsc_options : PETSc options without prefix, e.g. {"pc_factor_mat_solver_type": "mumps"}
    progress : ``progress(t, t_end, stats) -> stop?`` called at every output step
    integrator_options : further keyword arguments of the generalized-α integrator
        (:class:`~flexmbs.integrate.genalpha.GeneralizedAlpha`), e.g.
        ``{"jacobian_cost": None, "newton_rtol": 1e-6}``
    """
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"simulate: time step dt must be positive, got {dt}")
    if not (np.isfinite(t_end) and t_end > t0):
        raise ValueError(f"simulate: t_end must be greater than t0 = {t0}, got {t_end}")
    asm = model.assemble()
    q_guess, qd_guess = asm.initial_q(), asm.initial_qd()
    q_pos, _ = consistent_positions(asm, q_guess, t0)
    report = dof.analyse(asm, q_pos, t0)
    if report.redundant:
        log.warning(report.summary())
    init = consistent_initial_conditions(asm, q_pos, qd_guess, t0)
    init = _with_guess_report(init, q_guess, qd_guess)
    bad = health.inconsistent_rows(asm, init.q, init.qd, t0)
    if bad:
        raise ModelError([f"{model.name}: inconsistent constraints: {b}" for b in bad])
    out_times = None
    if output_dt is not None:
        out_times = np.arange(t0, t_end + 0.5 * output_dt, output_dt)[1:]
    writer = ResultWriter(output, attrs={"model": model.name}) if output else None
    # generalized-alpha calls progress itself after every step (step_callback); the TS
    # integrator reports every step to the recorder, which then calls it
    recorder = _Recorder(asm, writer, progress if method == "ts" else None, t_end,
                         out_times, t0, scales=health.Scales.of(asm, init.q))
    notes: list[str] = []
    wall = _time.perf_counter()
    try:
        if method == "genalpha":
            from flexmbs.integrate.genalpha import GeneralizedAlpha
            integ = GeneralizedAlpha(asm, **(integrator_options or {}), rho_inf=rho_inf,
                                     options_prefix=options_prefix,
                                     petsc_options=petsc_options, project_velocity=project_velocity)
            notes.extend(integ.notes)
            for note in integ.notes:
                log.info(note)
            try:
                # the recorder at the output times only (it projects the velocities), the
                # progress callback after every step without that cost
                step_cb = None if progress is None else \
                    (lambda t, st: bool(progress(t, t_end, st)))
                traj = integ.run(init.q, init.qd, init.qdd, init.lam, t0, t_end, h=dt,
                                 adaptive=adaptive, rtol=rtol, atol=atol, output_times=out_times,
                                 callback=recorder, store=False,
                                 callback_at_outputs=out_times is not None,
                                 step_callback=step_cb)
            finally:
                integ.destroy()
            stats = traj.stats
        elif method == "ts":
            from flexmbs.integrate.ts import GGLIntegrator
            integ = GGLIntegrator(asm, options_prefix=options_prefix, petsc_options=petsc_options)
            try:
                traj = integ.run(init.q, init.qd, init.lam, t0, t_end, h=dt, rtol=rtol,
                                 atol=atol, output_times=out_times, callback=recorder, store=False)
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
            writer.close(status, str(exc))
        raise exc from None
    if writer is not None:
        writer.close("complete")
    wall = _time.perf_counter() - wall
    rows = recorder.rows
    return Result(
        t=np.array(rows["time"]), q=np.array([r for r in _concat_bodies(rows, asm)]),
        qd=np.array([r for r in _concat_bodies(rows, asm, "qd")]),
        lam=np.array(rows["lam"]) if rows.get("lam") else np.zeros((0, asm.n_lam)),
        bodies=asm.body_slices, sensors=recorder.arrays("sensors/"),
        reactions=recorder.arrays("joints/") and {k[7:-9]: np.array(v) for k, v in rows.items()
                                                  if k.endswith("/reaction")},
        joint_coordinates={k[7:-12]: np.array(v) for k, v in rows.items() if k.endswith("/coordinates")},
        energy=recorder.arrays("energy/"), dof=report, initial=init, stats=stats,
        path=output, wall_time=wall,
        extra={"notes": notes, "conditioning": recorder.worst, "model": model})


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


def _concat_bodies(rows, asm, key="q"):
    n = len(rows["time"])
    for i in range(n):
        yield np.concatenate([rows[f"bodies/{b.name}/{key}"][i] for b in asm.bodies])


def _with_guess_report(init, q_guess, qd_guess):
    """Re-measure what moved against the user's original guess (not the projected one)."""
    import dataclasses
    dq, dqd = np.abs(init.q - q_guess), np.abs(init.qd - qd_guess)
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


def static_equilibrium(model, *, t: float = 0.0, load_steps: int = 1,
                       petsc_options: dict | None = None) -> Equilibrium:
    """Static equilibrium ``r(q, 0, 0, lam, t) = 0, g(q, t) = 0`` from the initial poses
    (Newton on PETSc SNES with ``[[K, G^T], [G, 0]]``; see ``flexmbs.integrate.static``)."""
    from flexmbs.integrate.static import solve_static
    asm = model.assemble()
    q_pos, _ = consistent_positions(asm, asm.initial_q(), t)
    report = dof.analyse(asm, q_pos, t)
    sol = solve_static(asm, q_pos, t=t, load_steps=load_steps, petsc_options=petsc_options)
    reac = {k: np.concatenate(v) for k, v in asm.reactions(sol.q, sol.lam, t).items()}
    return Equilibrium(sol.q, sol.lam, asm.body_slices, reac, asm.joint_coordinates(sol.q), report)
