"""One variant of a sweep: its case, its run through the case service
(:func:`flexmbs.case.run`) and its row of the summary table.

Per variant, in the output folder ``DIR``: ``<stem>.toml`` (the exact case that was
run), ``<stem>.h5`` (its result, the same code path as ``flexmbs run``) and ``<stem>.log``
(everything the run reported or logged).  A complete result file carries the digest of
the case data it was computed from (``sweep_digest``); a re-run reuses it ("cached")
unless forced.
"""
from __future__ import annotations

import contextlib
import logging
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from flexmbs.errors import CaseError
from flexmbs.parallel import outputs, variants
from flexmbs.parallel.toml_writer import as_read, dumps


@dataclass(frozen=True)
class Context:
    """What every variant of a sweep shares: the raw case (``raw``, of the file ``case``),
    the output folder, the output expressions, the overrides (key path -> value), the
    body cache, the command-line PETSc options and whether complete results are re-run."""

    raw: dict
    case: Path
    out: Path
    outputs: tuple
    overrides: dict
    body_dir: Path
    petsc_args: tuple
    force: bool

    def variant_case(self, v) -> dict:
        """The raw case data of variant ``v`` (:func:`~flexmbs.parallel.variants.variant_case`)."""
        return variants.variant_case(self.raw, self.case, v, overrides=self.overrides)

    def variant_spec(self, v, case_raw: dict):
        """The validated case of variant ``v`` from its raw data, as if read from its
        case file ``DIR/<stem>.toml`` (errors name that file)."""
        from flexmbs.case import spec_from_raw
        return spec_from_raw(as_read(case_raw), self.out / f"{v.stem}.toml")


def row(v, status: str, **extra) -> dict:
    """The table row of variant ``v``: index, varied values, status, result file."""
    return {"variant": v.index, **v.value_dict(), "status": status,
            "result": f"{v.stem}.h5", **extra}


def _is_complete(h5: Path, digest: str) -> bool:
    import h5py
    try:
        with h5py.File(h5, "r") as f:
            return f.attrs.get("status") == "complete" and f.attrs.get("sweep_digest") == digest
    except OSError:
        return False


def _run_info(h5: Path) -> dict:
    import h5py
    import numpy as np
    info = {}
    with h5py.File(h5, "r") as f:
        t = f["time"][()] if "time" in f else np.zeros(0)
        info["t_final"] = float(t[-1]) if len(t) else float("nan")
        for k in ("steps", "rejected_steps", "newton_iterations", "wall_time"):
            v = f.attrs.get(f"sweep_{k}")
            info[k] = float("nan") if v is None else (float(v) if k == "wall_time" else int(v))
    return info


@contextlib.contextmanager
def _own_log(stream):
    """Send stdout, stderr and the root logger to ``stream`` (the variant's log)."""
    root = logging.getLogger()
    saved = root.handlers[:]
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.handlers = [handler]
    try:
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            yield
    finally:
        root.handlers = saved


def _print(message) -> None:
    """A message of the case service, printed as ``flexmbs run`` prints it."""
    print(message.text, file=sys.stderr if message.stderr else sys.stdout)


def run_variant(v, ctx: Context) -> dict:
    """Run one variant through the case service (skipped if its result file is complete
    and from the same case data); never raises: failures are recorded in the returned
    row."""
    from flexmbs.case import run as run_case
    h5, toml, log = (ctx.out / f"{v.stem}{ext}" for ext in (".h5", ".toml", ".log"))
    try:
        case_raw = ctx.variant_case(v)
    except CaseError as exc:
        return row(v, "failed", error=str(exc))
    digest = variants.case_digest(case_raw, [*ctx.petsc_args, *_file_stamps(case_raw)])
    if not ctx.force and _is_complete(h5, digest):
        return _finish(v, "cached", h5, ctx)
    # an earlier result of other settings (or --force) stays until this run completes:
    # only a complete run replaces <stem>.h5 (flexmbs.io.results); the row says so
    replaces = h5.is_file()
    toml.write_text(f"# sweep variant {v.index} of {ctx.case}\n" + dumps(case_raw))
    t0 = time.perf_counter()
    error, status, code, done = "", "complete", 0, None
    with open(log, "w") as stream, _own_log(stream):
        try:
            # no PNG plots (one plots/ folder per DIR) and no XDMF: io.xdmf derives its
            # file names with Path.with_suffix, which cuts a variant name at its last dot
            done = run_case(ctx.variant_spec(v, case_raw), out=ctx.out, body_dir=ctx.body_dir,
                            petsc_args=ctx.petsc_args, xdmf=False, plots=False,
                            on_message=_print, label=str(toml), started=t0)
            code = done.report.exit_status
        except KeyboardInterrupt:
            code = 130
        except Exception as exc:            # noqa: BLE001 - any failure is recorded
            status, error = "failed", f"{type(exc).__name__}: {exc}"
            traceback.print_exc(file=stream)
    wall = time.perf_counter() - t0
    if code >= 128:
        r = row(v, "interrupted", error=f"interrupted (exit status {code})",
                wall_time=wall, **_partial(h5))
        r["_signal"] = code - 128
        return r
    if status == "complete" and (code != 0 or not h5.is_file()):
        status, error = "failed", f"flexmbs run returned {code} without a complete result"
    if status != "complete":
        return row(v, status, error=error.replace(f"{ctx.out}/", "").replace(
            f"{v.stem}.toml: ", ""), wall_time=wall, **_partial(h5))
    import h5py
    stats = getattr(done.result, "stats", None)
    with h5py.File(h5, "a") as f:
        f.attrs["sweep_digest"] = digest
        f.attrs["sweep_variant"] = str(dict(v.values))
        f.attrs["sweep_wall_time"] = wall
        for k in ("steps", "rejected_steps", "newton_iterations"):
            if getattr(stats, k, None) is not None:
                f.attrs[f"sweep_{k}"] = int(getattr(stats, k))
    r = _finish(v, "complete", h5, ctx)
    r["_replaced"] = replaces
    return r


def _file_stamps(case_raw: dict) -> list[str]:
    """Size and modification time of the mesh and body files a variant reads: editing
    one invalidates the variant's result (hashing big meshes on every re-run would not
    pay; the body cache itself hashes the mesh content)."""
    stamps = []
    for b in case_raw.get("bodies", []):
        for k in ("mesh", "body_file"):
            p = Path(str(b.get(k))) if isinstance(b, dict) and b.get(k) else None
            if p is not None and p.is_file():
                st = p.stat()
                stamps.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
    return stamps


def _partial(h5: Path) -> dict:
    """What a failed, diverged or interrupted run left (its file of that status, see
    :func:`flexmbs.io.results.status_path`): the file and the time reached, or none."""
    from flexmbs.io.results import status_path, steps_in
    for status in ("failed", "diverged", "interrupted", "running"):
        p = Path(status_path(h5, status))
        if p.is_file():
            n, t = steps_in(p)                 # (also a killed run's file)
            return {"result": p.name, **({"t_final": t} if n else {})}
    return {"result": ""}


def _finish(v, status: str, h5: Path, ctx: Context) -> dict:
    info = _run_info(h5)
    r = row(v, status)
    try:
        r.update(outputs.evaluate(ctx.outputs, h5, info))
    except (OSError, KeyError, ValueError) as exc:
        r["error"] = f"outputs: {exc}"
    return r
