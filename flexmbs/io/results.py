"""HDF5 result files: written so that nothing computed is lost.

Layout (all SI units, stated in each dataset's ``unit`` attribute):

    /time                              (n,)            s
    /bodies/<body>/q, qd               (n, n_b)        body coordinates and rates
    /joints/<joint>/reaction           (n, 6)          force [N] and torque [N m] on the
                                                       second body, in the joint frame
    /joints/<joint>/coordinates        (n, k)          joint angles [rad] / displacements [m]
    /sensors/<sensor>                  (n, k)          sensor outputs (``columns`` attribute)
    /energy/<kind>                     (n,)            J
    /hotspots/<spot>/stress            (n, k, 6)       Pa, Voigt xx, yy, zz, yz, xz, xy, body
                                                       frame, at the spot's k nodes (attribute
                                                       ``nodes``; ``damage``: Miner sums)
    /hotspots/<spot>/von_mises         (n, k)          Pa
    /hotspots/<spot>/principal         (n, k, 3)       Pa, s1 >= s2 >= s3
    /solver/<counter>                  (n,)            Newton iterations, Jacobian evaluations
    /restart/q, qd, qdd, a, lam        (n, ...)        the integrator's state at each output
                                                       step (``flexmbs run --restart``)
    /checkpoint                        (k,)            what the integrator continues
                                                       from besides the state (its Newton
                                                       matrix, time grid; a flat vector)
    /checkpoint_row                    ()              the row it goes with (-1: none)
    /committed_rows                    ()              rows complete in every dataset

and the attributes ``status`` (running, complete, interrupted, failed, diverged),
``message``, ``model``, the run settings and ``outputs`` (the files made from it).

File names (:func:`status_path`): a run writes ``<name>.running.h5`` and renames it when
it ends: to ``<name>.h5`` only when it is complete (replacing the previous result
atomically, :func:`os.replace`), else to ``<name>.interrupted.h5``, ``<name>.failed.h5``
or ``<name>.diverged.h5``, so that a run that does not finish never replaces a complete
result.  A killed run (SIGKILL, power cut) leaves ``<name>.running.h5``.

Writing.  Rows are collected in memory and written in blocks, at most
:data:`FLUSH_SECONDS` (1 s) apart and at the end; each block is flushed, then
``/committed_rows`` is set and flushed.  The file is written in HDF5's
single-writer/multiple-reader mode (SWMR), whose ordered metadata writes keep it
readable at every moment, so a killed run loses at most the output steps of its last
second.  Such a file still carries SWMR's "open for write" mark: :func:`open_result`
opens it (SWMR read), and the next run into the same folder copies it to a plain
``<name>.interrupted.h5``.  Chunks are not cached (``rdcc_nbytes =
0``): a failed write then fails at once and the file can still be closed (with a chunk
cache HDF5 2.0 crashes when it closes a file whose cached chunks cannot be written).

Faults.  Any failed write (disk full, I/O error, no permission) raises
:class:`~flexmbs.errors.OutputError` naming the file and the system's reason; the rows
written before it are kept (``/committed_rows`` tells how many).

Concurrency.  :class:`OutputLock` (``fcntl.flock`` on ``.<name>.lock`` in the output folder)
keeps two runs from writing the same results at once; the kernel releases it when its
process ends, however it ends, so a lock file left by a dead run never blocks.
"""
from __future__ import annotations

import contextlib
import dataclasses
import errno as _errno
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np

from flexmbs.errors import FlexmbsError, OutputError, OutputInUseError

log = logging.getLogger(__name__)

#: the statuses of a result file; each but "complete" names its file (:func:`status_path`)
STATUSES = ("running", "complete", "interrupted", "failed", "diverged")
#: HDF5 format bounds: SWMR needs the 1.10 format; files stay readable by HDF5 >= 1.10
LIBVER = ("v110", "v110")
_SUFFIXES = (".h5", ".hdf5", ".hdf")
#: the longest time [s] a written row waits in memory (a killed run loses at most these)
FLUSH_SECONDS = 1.0


# -- names ------------------------------------------------------------------------------------
def _split(path: str | os.PathLike) -> tuple[str, str]:
    """``(stem, suffix)`` with the suffix ``.h5`` (or ``.hdf5``, ``.hdf``) or ''; a name may
    hold dots (sweep variants ``case__drives[0].omega=40``), so only these are cut."""
    p = os.fspath(path)
    for s in _SUFFIXES:
        if p.endswith(s):
            return p[:-len(s)], s
    return p, ""


def status_path(path: str | os.PathLike, status: str) -> str:
    """The file that holds a run of result ``path`` with ``status``: ``path`` itself when
    complete, else ``<stem>.<status>.h5`` (``out/arm.h5`` -> ``out/arm.failed.h5``)."""
    if status not in STATUSES:
        raise ValueError(f"status_path: status must be one of {STATUSES}, got {status!r}")
    if status == "complete":
        return os.fspath(path)
    stem, suffix = _split(path)
    return f"{stem}.{status}{suffix or '.h5'}"


def open_result(path: str | os.PathLike) -> h5py.File:
    """Open a result file for reading, also one left by a killed run (SWMR-marked)."""
    try:
        return h5py.File(path, "r")
    except OSError:
        return h5py.File(path, "r", swmr=True)      # raises OSError if it is not HDF5


def committed_rows(f: h5py.File) -> int:
    """The number of output steps complete in every dataset of an open result file."""
    n = len(f["time"]) if "time" in f else 0
    if "committed_rows" in f:
        n = min(n, int(f["committed_rows"][()]))
    return n


def steps_in(path: str | os.PathLike) -> tuple[int, float]:
    """``(output steps, last time)`` kept in a result file; ``(0, nan)`` if unreadable."""
    try:
        with open_result(path) as f:
            n = committed_rows(f)
            return n, float(f["time"][n - 1]) if n else float("nan")
    except (OSError, KeyError):
        return 0, float("nan")


def listed_outputs(path: str | os.PathLike) -> list[str]:
    """The files made from a result file (its ``outputs`` attribute), relative to its folder."""
    try:
        with open_result(path) as f:
            return [o.decode() if isinstance(o, bytes) else str(o)
                    for o in f.attrs.get("outputs", [])]
    except (OSError, KeyError):
        return []


def list_outputs(path: str | os.PathLike, outputs) -> None:
    """Record ``outputs`` (paths relative to the result file's folder) in its attributes."""
    try:
        with h5py.File(path, "r+") as f:
            f.attrs["outputs"] = [str(o) for o in outputs]
    except (OSError, RuntimeError) as exc:
        raise OutputError.from_exception(exc, path) from None


def add_rows(path: str | os.PathLike, group: str, rows: dict, attrs: dict | None = None) -> None:
    """Write post-processing results into a finished result file: the datasets
    ``/<group>/<name>`` of ``rows`` ``{name: (array with one row per output step, unit)}``
    (replacing earlier ones) and the group's ``attrs``."""
    try:
        with h5py.File(path, "r+") as f:
            n = committed_rows(f)
            for name, (value, _) in rows.items():
                if len(value) != n:
                    raise ValueError(f"{path}: /{group}/{name} has {len(value)} rows, the "
                                     f"file {n} output steps")
            if group in f:
                del f[group]
            g = f.create_group(group)
            for name, (value, unit) in rows.items():
                g.create_dataset(name, data=np.asarray(value, dtype=float)).attrs["unit"] = unit
            for k, v in (attrs or {}).items():
                g.attrs[k] = v
    except (OSError, RuntimeError) as exc:
        raise OutputError.from_exception(exc, path) from None


#: the group of event tables (their own row counts, not one row per output step)
EVENTS_GROUP = "events"


def write_event_table(path: str | os.PathLike, name: str, columns: dict,
                      attrs: dict | None = None) -> None:
    """Write the table ``/events/<name>`` into a finished result file: ``columns``
    ``{column: (array (k,), unit)}`` of floats, or a list of strings (unit ignored),
    all of one length ``k`` (the events of the run, e.g. impacts), and ``attrs``."""
    try:
        with h5py.File(path, "r+") as f:
            top = f.require_group(EVENTS_GROUP)
            if name in top:
                del top[name]
            g = top.create_group(name)
            for col, (value, unit) in columns.items():
                if isinstance(value, list) and value and isinstance(value[0], str):
                    g.create_dataset(col, data=np.array(value, dtype=h5py.string_dtype()))
                else:
                    g.create_dataset(col, data=np.asarray(value, dtype=float)) \
                        .attrs["unit"] = unit
            for k, v in (attrs or {}).items():
                g.attrs[k] = v
    except (OSError, RuntimeError) as exc:
        raise OutputError.from_exception(exc, path) from None


# -- the output-folder lock -------------------------------------------------------------------
class OutputLock:
    """``fcntl.flock`` on ``<folder>/.<name>.lock`` while a run writes ``<name>``'s results.

    Re-entrant within a process (``flexmbs run`` holds it for the whole run, and
    ``simulate`` takes it again for its result file); another process gets
    :class:`~flexmbs.errors.OutputInUseError` naming the folder and the holder's pid.
    """

    _held: dict[str, list] = {}        # lock file -> [open file, depth]

    def __init__(self, folder: str | os.PathLike, name: str):
        self.folder, self.name = Path(folder), name
        self.path = str(self.folder.resolve() / f".{name}.lock")

    @classmethod
    def for_result(cls, path: str | os.PathLike) -> OutputLock:
        p = Path(_split(path)[0])
        return cls(p.parent, p.name)

    def __enter__(self) -> OutputLock:
        import fcntl
        held = self._held.get(self.path)
        if held is not None:
            held[1] += 1
            return self
        from flexmbs.io.paths import writable_dir
        # a file where the folder should be (or above it): a mistake, not a write fault
        writable_dir(self.folder, "output folder", test_write=False)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError.from_exception(exc, exc.filename or self.path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (_errno.EWOULDBLOCK, _errno.EAGAIN, _errno.EACCES):
                raise OutputError.from_exception(exc, self.path) from None
            raise OutputInUseError(
                f"output folder {self.folder} is in use by another flexmbs run "
                f"({self._holder()}) writing '{self.name}'; wait for it to end or choose "
                f"another --out") from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass                                  # the pid is only for the message
        self._held[self.path] = [fd, 1]
        return self

    def _holder(self) -> str:
        try:
            with open(self.path) as f:
                pid = f.read().strip()
            return f"pid {int(pid)}"
        except (OSError, ValueError):
            return "pid unknown"

    def __exit__(self, *exc) -> bool:
        held = self._held.get(self.path)
        if held is not None:
            held[1] -= 1
            if held[1] == 0:
                del self._held[self.path]
                os.close(held[0])                 # releases the flock
        return False


# -- writing ----------------------------------------------------------------------------------
def _kept_longer(path: str, n: int, target: str) -> bool:
    """Whether ``target`` (a file of an earlier run that ``path`` would replace) holds more
    output steps than the ``n`` of ``path``: then ``path`` is removed and ``target`` kept.
    A run that continues from a checkpoint before the last row of ``target`` and stops
    early holds fewer rows (the same ones, up to where it stopped): replacing would lose
    the rest."""
    if not os.path.exists(target):
        return False
    n_old = steps_in(target)[0]
    if n_old <= n:
        return False
    with contextlib.suppress(OSError):
        os.remove(path)
    log.warning("%s holds %d output steps, fewer than the %d of %s: that one is kept",
                path, n, n_old, target)
    return True


def _retire_stale(running: str, final: str) -> str | None:
    """A ``.running.h5`` found while holding the lock was left by a killed run: copy it to
    a plain ``.interrupted.h5`` (clearing SWMR's mark) and remove it, or, if it cannot be
    copied, rename it so; returns the new name."""
    if not os.path.exists(running):
        return None
    target = status_path(final, "interrupted")
    if _kept_longer(running, steps_in(running)[0], target):
        return target
    tmp = target + ".tmp"
    try:
        with open_result(running) as src, h5py.File(tmp, "w", libver=LIBVER) as dst:
            n = committed_rows(src)
            for k, v in src.attrs.items():
                dst.attrs[k] = v
            dst.attrs["status"] = "interrupted"
            dst.attrs["message"] = ("the run was killed; found with status 'running' by a "
                                    "later run")

            def copy(name, obj):
                if isinstance(obj, h5py.Dataset):
                    whole = obj.ndim == 0 or name == "checkpoint"
                    ds = dst.create_dataset(name, data=obj[()] if whole else obj[:n])
                    for k, v in obj.attrs.items():
                        ds.attrs[k] = v
            src.visititems(copy)
        os.replace(tmp, target)
        os.remove(running)
    except (OSError, RuntimeError, KeyError) as exc:
        log.debug("could not copy %s: %s", running, exc)
        with contextlib.suppress(OSError):
            os.remove(tmp)
        try:
            os.replace(running, target)               # as it is (open_result reads it)
            n = steps_in(target)[0]
        except OSError as err:
            raise OutputError.from_exception(err, target) from None
    log.warning("%s was left by a killed run: its %d output steps are kept in %s",
                running, n, target)
    return target


class ResultWriter:
    """Writer of one result file: ``append`` rows, then ``close(status)``.

    Parameters
    ----------
    path : the complete result's name ``<name>.h5``; written as ``<name>.running.h5`` and
        renamed by :meth:`close` (:func:`status_path`)
    attrs : file attributes (model name, run settings)
    prior : rows of an earlier run this one continues, ``{key: (array (n, ...), unit,
        columns)}`` (see :func:`read_restart`)
    flush_seconds, flush_rows : a block of rows is written and flushed when the oldest
        unwritten row is this old (default :data:`FLUSH_SECONDS`), or this many rows wait
    checkpoint : ``() -> flat float vector or None``, the integrator's checkpoint that
        goes with the row just appended; called when :meth:`append` writes a block and
        when a complete run closes (not otherwise: a failed or interrupted integrator may
        have gone on past its last row), and written with it
        (``/checkpoint``, ``/checkpoint_row``); may be set after construction.  When it
        gives None as a block is written, it is asked again at each row appended after,
        and the first checkpoint it gives is written with its row at once
    """

    def __init__(self, path: str | os.PathLike, *, attrs: dict | None = None,
                 prior: dict | None = None, flush_seconds: float | None = None,
                 flush_rows: int = 1024, checkpoint: Callable | None = None):
        self.path = os.fspath(path)
        self.checkpoint = checkpoint
        self.running_path = status_path(self.path, "running")
        #: the file that holds the data (the running name until closed)
        self.final_path = self.running_path
        self.flush_seconds = FLUSH_SECONDS if flush_seconds is None else flush_seconds
        self.flush_rows = flush_rows
        self._lock = OutputLock.for_result(self.path).__enter__()
        try:
            _retire_stale(self.running_path, self.path)
            self.file = h5py.File(self.running_path, "w", libver=LIBVER, rdcc_nbytes=0)
            self.file.attrs["format"] = "flexmbs-result"
            self.file.attrs["version"] = 2
            self.file.attrs["status"] = "running"
            self.file.attrs["started"] = time.strftime("%Y-%m-%dT%H:%M:%S")
            for k, v in (attrs or {}).items():
                self.file.attrs[k] = v
        except (OSError, RuntimeError) as exc:
            self._lock.__exit__()
            raise OutputError.from_exception(exc, self.running_path) from None
        except BaseException:
            self._lock.__exit__()
            raise
        self._specs: dict[str, tuple] = {}          # key -> (row shape, unit, columns)
        self._buffer: dict[str, list] = {}
        self._sets: dict[str, h5py.Dataset] = {}
        self._written: dict[str, int] = {}           # rows written per dataset
        self.n = 0                                   # rows appended
        self.n_committed = 0                         # rows complete in the file
        self._prior = prior or {}
        self._n_prior = len(self._prior["time"][0]) if "time" in self._prior else 0
        self._oldest: float | None = None
        self._checkpoint_due = False    # the last block was written without a checkpoint
        self._closed = False

    # -- rows -------------------------------------------------------------------------------
    def append(self, rows: dict[str, tuple]) -> None:
        """Append one output step: ``{path: (value, unit[, columns])}``; every step has the
        same keys (those of the first)."""
        if self._closed:
            raise ValueError(f"ResultWriter: {self.path} is closed")
        if not self._specs:
            for key, spec in rows.items():
                value = np.asarray(spec[0], dtype=float)
                self._specs[key] = (value.shape, spec[1], spec[2] if len(spec) > 2 else None)
                self._buffer[key] = []
        elif rows.keys() != self._specs.keys():
            raise ValueError(f"ResultWriter: a row with keys {sorted(rows)} after rows with "
                             f"{sorted(self._specs)}")
        for key, spec in rows.items():
            self._buffer[key].append(np.asarray(spec[0], dtype=float))
        self.n += 1
        now = time.perf_counter()
        if self._oldest is None:
            self._oldest = now
        if (not self._sets or now - self._oldest >= self.flush_seconds
                or self.n - self.n_committed >= self.flush_rows or self._checkpoint_due):
            # rows are written only with the integrator's checkpoint of the last one, so
            # that a killed run restarts from its last row (inside a block of outputs the
            # integrator has none: the flush waits for the block's end)
            cp = self.checkpoint() if self.checkpoint is not None else None
            if cp is None and self.checkpoint is not None:
                self._checkpoint_due = True
                return
            self.flush(checkpoint=True, cp=cp)

    def flush(self, checkpoint: bool = False, cp=None) -> None:
        """Write the waiting rows (and with ``checkpoint`` the integrator's checkpoint for
        the last of them: ``cp``, or asked for), flush, then mark them committed (and flush
        again).  A dataset written before a failure is not written twice when this is
        called again."""
        if checkpoint and cp is None and self.checkpoint is not None:
            cp = self.checkpoint()
        self._checkpoint_due = checkpoint and cp is None and self.checkpoint is not None
        self._flush(cp)

    def _flush(self, cp) -> None:
        """:meth:`flush` with the checkpoint ``cp`` (None: none written)."""
        try:
            if not self._sets:
                self._create()
            start = self._n_prior + self.n_committed      # file row of the first waiting
            for key, ds in self._sets.items():
                rows = self._buffer[key][self._written[key] - start:]
                if rows:
                    done = self._written[key]
                    ds.resize(done + len(rows), axis=0)
                    ds[done:] = np.array(rows)
                    self._written[key] = done + len(rows)
            if cp is not None:
                cp = np.asarray(cp, dtype=float)
                if self._checkpoint.shape != cp.shape:
                    self._checkpoint.resize(cp.shape)
                self._checkpoint[:] = cp
                self._checkpoint_row[()] = self._n_prior + self.n - 1
            self.file.flush()
            self._committed[()] = self._n_prior + self.n
            self.file.flush()
        except (OSError, RuntimeError) as exc:
            raise OutputError.from_exception(exc, self.running_path) from None
        self.n_committed = self.n
        for rows in self._buffer.values():
            rows.clear()
        self._oldest = None

    def _create(self) -> None:
        """The datasets (with the rows of a run continued), then SWMR mode: from here on
        no object is added, only rows."""
        prior = self._prior
        for key, (shape, unit, columns) in self._specs.items():
            old = prior.get(key)
            data = np.zeros((0,) + shape) if old is None else np.asarray(old[0], float)
            if old is not None and (data.shape[1:] != shape or len(data) != self._n_prior):
                raise FlexmbsError(f"{self.path}: cannot continue the earlier run: its "
                                   f"'{key}' has shape {data.shape}, this run's rows "
                                   f"{shape}")
            if old is None and self._n_prior:
                raise FlexmbsError(f"{self.path}: cannot continue the earlier run: it has "
                                   f"no '{key}'")
            # chunks of at most 256 rows and 64 KiB (an empty row, e.g. the multipliers of
            # a model without joints: HDF5 chooses, as a chunk cannot have a zero side)
            rows = max(1, min(256, 65536 // max(8 * int(np.prod(shape)), 1)))
            chunks = (rows,) + shape if all(shape) else True
            ds = self.file.create_dataset(key, data=data, maxshape=(None,) + shape,
                                          chunks=chunks, dtype="f8")
            ds.attrs["unit"] = unit
            if columns is not None:
                ds.attrs["columns"] = [str(c) for c in columns]
            self._sets[key] = ds
            self._written[key] = self._n_prior
        self._checkpoint = self.file.create_dataset("checkpoint", shape=(0,), maxshape=(None,),
                                                    chunks=(512,), dtype="f8")
        self._checkpoint_row = self.file.create_dataset("checkpoint_row", data=-1, dtype="i8")
        self._committed = self.file.create_dataset("committed_rows", data=self._n_prior,
                                                   dtype="i8")
        self.file.swmr_mode = True

    # -- the end ----------------------------------------------------------------------------
    def close(self, status: str = "complete", message: str = "") -> str:
        """Write what waits, set ``status`` and rename the file (:func:`status_path`);
        returns the file that holds the data.  Raises :class:`OutputError` when rows could
        not be written; the file is then still closed and renamed, with the rows that were."""
        if self._closed:
            return self.final_path
        self._closed = True
        error: OutputError | None = None
        try:
            if self.n > self.n_committed or not self._sets:
                # a complete run ends with its last row: the integrator's state is that one's
                self.flush(checkpoint=status == "complete")
        except OutputError as exc:
            error = exc
            status = "failed"
            message = message if str(exc) in message else "; ".join(
                m for m in (message, str(exc)) if m)
        n = self._n_prior + self.n_committed if self._sets else 0
        try:
            self.file.close()
        except (OSError, RuntimeError):           # HDF5 closes after a failed first try
            with contextlib.suppress(OSError):
                self.file.close()
        try:
            self._finish(n, status, message)
        except (OSError, RuntimeError) as exc:    # the status could not be set: the name
            error = error or OutputError.from_exception(exc, self.running_path)  # tells it
            if status == "complete":              # never a <name>.h5 that does not say so
                status = "failed"
        try:
            target = status_path(self.path, status)
            if status == "complete" or not _kept_longer(self.running_path, n, target):
                os.replace(self.running_path, target)
            self.final_path = target
        except OSError as exc:
            error = error or OutputError.from_exception(exc, self.running_path)
        finally:
            self._lock.__exit__()
        if status == "complete" and error is None:
            for s in ("interrupted", "failed", "diverged"):  # superseded by this result
                with contextlib.suppress(OSError):
                    os.remove(status_path(self.path, s))
        if error is not None:
            error.result_path = self.final_path
            raise error
        return self.final_path

    def _finish(self, n: int, status: str, message: str) -> None:
        """Set the status (no attribute may change in SWMR mode: reopened), then, as far as
        the disk allows, the message and end time, and cut the datasets to the committed
        rows (a failed write may have left one longer)."""
        with _reopened(self.running_path) as f:
            f.attrs["status"] = status               # first: it needs the least space
            f.flush()
            try:
                f.attrs["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
                if message:
                    f.attrs["message"] = message
                for key in self._sets:
                    if key in f and len(f[key]) > n:
                        f[key].resize(n, axis=0)
                f.flush()
            except (OSError, RuntimeError) as exc:
                log.warning("%s: the end of the run could not be recorded in full (%s)",
                            self.running_path, exc)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close("complete")
        else:
            self.close("failed" if exc_type is not KeyboardInterrupt else "interrupted", str(exc))
        return False


def _reopened(path: str) -> h5py.File:
    """``path`` opened for writing after the run's file was closed.  A write that failed
    (disk full) can leave the file shorter than its superblock says, which HDF5 refuses
    as "truncated": it is then extended to that length (sparse, no disk space needed; the
    missing part held only rows that were not committed) and opened again."""
    import re
    try:
        return h5py.File(path, "r+", rdcc_nbytes=0)
    except OSError as exc:
        m = re.search(r"truncated file: eof = (\d+).*stored_eof = (\d+)", str(exc))
        if m is None or int(m.group(2)) <= int(m.group(1)):
            raise
        os.truncate(path, int(m.group(2)))
        return h5py.File(path, "r+", rdcc_nbytes=0)


# -- reading ----------------------------------------------------------------------------------
def read_results(path: str | os.PathLike) -> dict:
    """Read a result file into nested dicts of numpy arrays (plus ``attrs``); the rows are
    those complete in every dataset (:func:`committed_rows`)."""
    out: dict = {}
    with open_result(path) as f:
        n = committed_rows(f)

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and name not in _NOT_ROWS[1:]:
                node = out
                parts = name.split("/")
                for p in parts[:-1]:
                    node = node.setdefault(p, {})
                whole = obj.ndim == 0 or parts[0] == EVENTS_GROUP
                node[parts[-1]] = obj[()] if whole else obj[:n]
        f.visititems(visit)
        out["attrs"] = dict(f.attrs)
    return out


#: datasets that are not output rows (read_restart; read_results leaves out the checkpoint)
_NOT_ROWS = ("committed_rows", "checkpoint", "checkpoint_row")


@dataclasses.dataclass(frozen=True)
class RestartPoint:
    """The last state saved in a result file, to continue its run from (``t``, ``q``,
    ``qd`` as integrated (not projected), ``qdd``, the auxiliary acceleration ``a``,
    ``lam``), and its rows up to that state, ``{key: (array (n, ...), unit, columns)}``;
    ``checkpoint``, the integrator's checkpoint saved with row ``checkpoint_row`` (or
    ``None``), see :meth:`at_checkpoint`."""

    path: str
    t: float
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    a: np.ndarray
    lam: np.ndarray
    rows: dict
    attrs: dict
    checkpoint: np.ndarray | None = None
    checkpoint_row: int = -1

    @property
    def n(self) -> int:
        return len(self.rows["time"][0])

    def at_checkpoint(self) -> RestartPoint:
        """The point of the row the checkpoint goes with (the last row, or an earlier one
        when the run wrote rows after its last checkpoint, e.g. when it failed): its rows
        up to that row and its state."""
        r = self.checkpoint_row
        if self.checkpoint is None or r == self.n - 1:
            return self
        rows = {k: (a[:r + 1], unit, cols) for k, (a, unit, cols) in self.rows.items()}
        return dataclasses.replace(self, rows=rows, t=float(rows["time"][0][r]), **{
            k: rows[f"restart/{k}"][0][r].copy() for k in RESTART_KEYS})


RESTART_KEYS = ("q", "qd", "qdd", "a", "lam")


def _restart_file(path: str) -> h5py.File:
    """The result file ``path`` open for reading; :class:`FlexmbsError` if it is missing,
    not HDF5 or not a flexmbs result file."""
    try:
        f = open_result(path)
    except FileNotFoundError:
        raise FlexmbsError(f"--restart {path}: no such file") from None
    except OSError as exc:
        raise FlexmbsError(f"--restart {path}: not a readable HDF5 file ({exc})") from None
    if f.attrs.get("format") != "flexmbs-result":
        fmt = f.attrs.get("format")
        f.close()
        raise FlexmbsError(f"--restart {path}: expected a flexmbs result file, got "
                           f"format {fmt!r}")
    return f


def check_restart_file(path: str | os.PathLike, model: str) -> None:
    """Before any work of a run that continues ``path``: the file exists, is a flexmbs
    result file and holds a run of the model named ``model``; :class:`FlexmbsError` naming
    the file, what was expected and what was found otherwise.  (:func:`read_restart`
    reads its state when the model is built.)"""
    path = os.fspath(path)
    with _restart_file(path) as f:
        name = f.attrs.get("model")
    if name is not None and str(name) != model:
        raise FlexmbsError(f"--restart {path}: expected a result of model '{model}' (the "
                           f"case's), found one of model '{name}'")


def read_restart(path: str | os.PathLike) -> RestartPoint:
    """The last complete output step of a result file (complete, interrupted, failed,
    diverged or left by a killed run) and every row up to it."""
    path = os.fspath(path)
    with _restart_file(path) as f:
        missing = [k for k in RESTART_KEYS if f"restart/{k}" not in f]
        if missing:
            raise FlexmbsError(
                f"--restart {path}: the file holds no restart state (missing "
                f"{', '.join('restart/' + k for k in missing)}); it was written by "
                f"flexmbs before version 2 of the result format or by the 'ts' integrator")
        n = committed_rows(f)
        if n == 0:
            raise FlexmbsError(f"--restart {path}: the file holds no complete output step")
        rows: dict = {}

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.ndim >= 1 and name not in _NOT_ROWS:
                cols = obj.attrs.get("columns")
                cols = None if cols is None else [c.decode() if isinstance(c, bytes)
                                                  else str(c) for c in cols]
                rows[name] = (obj[:n], str(obj.attrs.get("unit", "")), cols)
        f.visititems(visit)
        state = {k: rows[f"restart/{k}"][0][n - 1].copy() for k in RESTART_KEYS}
        cp, r = None, -1
        if "checkpoint" in f and "checkpoint_row" in f:
            r = int(f["checkpoint_row"][()])
            if 0 <= r < n and f["checkpoint"].size:   # (a row not committed: not usable)
                cp = f["checkpoint"][:]
            else:
                r = -1
        return RestartPoint(path=path, t=float(rows["time"][0][n - 1]), rows=rows,
                            attrs=dict(f.attrs), checkpoint=cp, checkpoint_row=r, **state)
