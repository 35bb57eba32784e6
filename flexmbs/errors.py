"""Exceptions of flexmbs.

Every message names the object (or file and key), what was expected and what was
found, e.g. ``Revolute 'J2': axis must have shape (3,), got (2,)``.
"""
from __future__ import annotations


class FlexmbsError(Exception):
    """Base class of all flexmbs errors; the CLI prints its message without a traceback."""


class MeshError(FlexmbsError):
    """A mesh file that cannot be used: unreadable, unsupported elements, bad geometry."""


class BodyFileError(FlexmbsError):
    """A reduced-body (HDF5) file that is missing, of the wrong version or inconsistent."""


class ExternalModelError(FlexmbsError):
    """Another FE code's files that cannot make a body (``flexmbs import`` / ``export``):
    a missing piece, a wrong shape, unreadable data; names the file or piece, what was
    expected and what was found (docs/external_bodies.md)."""


class ModelError(FlexmbsError):
    """An invalid multibody model; ``problems`` lists every problem found."""

    def __init__(self, problems: list[str] | str):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        if len(self.problems) == 1:
            msg = self.problems[0]
        else:
            msg = f"{len(self.problems)} problems in the model:\n" + "\n".join(
                f"  - {p}" for p in self.problems)
        super().__init__(msg)


class CaseError(FlexmbsError):
    """An invalid case file: names the file, the key path, what was expected and found."""


class ConvergenceError(FlexmbsError):
    """A nonlinear solve that did not converge.

    Parameters
    ----------
    reason : what failed (e.g. "Newton diverged: residual 3.1e+04 after 25 iterations")
    t : simulated time [s] at which it failed
    step : step number at which it failed
    """

    def __init__(self, reason: str, t: float | None = None, step: int | None = None):
        self.reason, self.t, self.step = reason, t, step
        where = "" if t is None else f" at t = {t:.6g} s" + ("" if step is None else f" (step {step})")
        super().__init__(f"{reason}{where}")


class SingularConfigurationError(ConvergenceError):
    """The constraint rows lost rank during a run (a toggle or dead-centre position), or a
    row dropped as redundant at the start came apart: the joints are named."""


class DivergenceError(FlexmbsError):
    """A run whose motion grew far beyond the model's scale (status ``diverged``).

    Parameters
    ----------
    reason : what grew, and how far
    t : simulated time [s] at which it was detected
    """

    def __init__(self, reason: str, t: float | None = None):
        self.reason, self.t = reason, t
        super().__init__(reason if t is None else f"{reason} at t = {t:.6g} s")


class OutputError(FlexmbsError):
    """A file of a run that could not be written (disk full, I/O error, no permission):
    names the file and the system's reason; the results written so far are kept
    (docs/errors.md).  Exit status 4.

    Parameters
    ----------
    path : the file that could not be written
    errno : the system error number (``errno.ENOSPC``, ...), if known
    reason : the system's text, e.g. "No space left on device"
    kept : what was kept, e.g. "120 output steps up to t = 0.12 s saved in out/a.failed.h5"
    """

    def __init__(self, path, reason: str, errno: int | None = None, kept: str = ""):
        import errno as _errno
        self.path, self.reason, self.errno, self.kept = str(path), reason, errno, kept
        code = f" [{_errno.errorcode[errno]}]" if errno in _errno.errorcode else ""
        super().__init__(f"cannot write {self.path}: {reason}{code}"
                         + (f"; {kept}" if kept else ""))

    def __reduce__(self):
        """Picklable (sent from one MPI rank to the others)."""
        return (OutputError, (self.path, self.reason, self.errno, self.kept))

    def keeping(self, kept: str) -> OutputError:
        """The same error, saying what was kept."""
        err = OutputError(self.path, self.reason, self.errno, kept)
        err.__dict__.update({k: v for k, v in self.__dict__.items() if k != "kept"})
        return err

    @classmethod
    def from_exception(cls, exc: BaseException, path) -> OutputError:
        """From the ``OSError`` (or the ``RuntimeError`` h5py raises when HDF5 could not
        write, its message holding ``errno = 28, error message = '...'``) of a write."""
        import os
        import re
        code = getattr(exc, "errno", None)
        text = str(exc)
        if not isinstance(code, int):
            m = re.search(r"errno = (\d+)", text)
            code = int(m.group(1)) if m else None
        if isinstance(code, int) and code > 0:
            reason = os.strerror(code)
        else:
            reason = (getattr(exc, "strerror", None)
                      or (text.splitlines()[0] if text else type(exc).__name__))
        return cls(path, reason, code if isinstance(code, int) and code > 0 else None)


class OutputInUseError(FlexmbsError):
    """Another run writes the same results into the same output folder (exit status 2)."""


#: exit status of the command line for each outcome (docs/solver.md)
EXIT_CODES = {"complete": 0, "user error": 2, "failed": 3, "io error": 4, "diverged": 5}
