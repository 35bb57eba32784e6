"""Output paths checked before any expensive work.

A command that will write a folder (``flexmbs run --out``, ``--body-dir``, ``flexmbs plot
--out``) or one file (``flexmbs preprocess -o``) calls :func:`writable_dir` or
:func:`writable_file` first, so a typo or an unwritable location is reported at once, in
one line naming the option, the path, what was expected and what was found, and not after
minutes of preprocessing or simulation.  Writability is tested by creating (and removing)
a small temporary file: permission bits alone do not tell (root ignores them, and a
read-only file system shows writable modes).  Nothing else is created: a missing folder
is only checked to be creatable (its nearest existing ancestor must be a writable folder).
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from flexmbs.errors import CaseError

__all__ = ["same_file", "writable_dir", "writable_file"]


def _kind(path: Path) -> str:
    """What is at ``path`` ("a folder", "an existing file", "the device ...")."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return "nothing"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "an existing file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _try_write(folder: Path) -> str | None:
    """None if a file can be created in ``folder``, else the reason."""
    try:
        fd, name = tempfile.mkstemp(prefix=".flexmbs-write-test-", dir=folder)
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass
    return None


def _exists(p: Path) -> bool:
    try:
        os.lstat(p)
        return True
    except OSError:
        return False


def _existing_ancestor(path: Path) -> Path:
    p = path
    while not _exists(p) and p.parent != p:
        p = p.parent
    return p


def writable_dir(path: str | Path, option: str = "--out", *, test_write: bool = True) -> Path:
    """``path`` as a :class:`Path` if it is, or can be created as, a writable folder.

    Raises :class:`~flexmbs.errors.CaseError` ``"--out 'x': expected a folder, found an
    existing file"`` (or a device such as the null device, a folder that refuses new
    files, a read-only file system, an ancestor that is a file).  ``test_write=False``
    only checks that ``path`` is, or can become, a folder (for a cache that may already
    hold everything needed).
    """
    p = Path(path)
    if str(path) == "":
        raise CaseError(f"{option}: expected a folder, got an empty path")
    kind = _kind(p)
    if kind == "a folder":
        reason = _try_write(p) if test_write else None
        if reason:
            raise CaseError(f"{option} '{p}': expected a writable folder, found a folder "
                            f"that refuses new files ({reason})")
        return p
    if kind != "nothing" or _exists(p):
        found = kind if kind != "nothing" else "a broken symbolic link"
        raise CaseError(f"{option} '{p}': expected a folder, found {found}")
    base = _existing_ancestor(p.absolute())
    if _kind(base) != "a folder":
        raise CaseError(f"{option} '{p}': expected a folder that can be created, but "
                        f"'{base}' is {_kind(base)}, not a folder")
    reason = _try_write(base) if test_write else None
    if reason:
        raise CaseError(f"{option} '{p}': expected a folder that can be created, but "
                        f"'{base}' refuses new files ({reason})")
    return p


def writable_file(path: str | Path, option: str = "-o", *,
                  not_same_as: tuple[str | Path, ...] = ()) -> Path:
    """``path`` as a :class:`Path` if a regular file can be written there.

    The folder must exist (it is not created); an existing regular file is overwritten
    later, so it must not be one of ``not_same_as`` (the inputs of the command).
    Raises :class:`~flexmbs.errors.CaseError` naming ``option`` and the path otherwise.
    """
    p = Path(path)
    if str(path) == "" or p.name in ("", ".", ".."):
        raise CaseError(f"{option} '{path}': expected a file name, got a folder")
    kind = _kind(p)
    if kind not in ("nothing", "an existing file"):
        raise CaseError(f"{option} '{p}': expected a regular file to write, found {kind}")
    for other in not_same_as:
        if same_file(p, other):
            raise CaseError(f"{option} '{p}': expected a new output file, found the input "
                            f"file '{other}' (it would be overwritten); choose another name")
    folder = p.parent if str(p.parent) else Path(".")
    fkind = _kind(folder)
    if fkind == "nothing":
        base = _existing_ancestor(folder.absolute())
        raise CaseError(f"{option} '{p}': expected an existing folder, found no folder "
                        f"'{folder}' (create it first"
                        + (f"; '{base}' is {_kind(base)})" if _kind(base) != "a folder"
                           else ")"))
    if fkind != "a folder":
        raise CaseError(f"{option} '{p}': expected its parent '{folder}' to be a folder, "
                        f"found {fkind}")
    if kind == "an existing file":
        if not os.access(p, os.W_OK):
            raise CaseError(f"{option} '{p}': expected a writable file, found a read-only "
                            "one")
        return p
    reason = _try_write(folder)
    if reason:
        raise CaseError(f"{option} '{p}': expected a writable folder '{folder}', found one "
                        f"that refuses new files ({reason})")
    return p


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` name the same existing file (links and ``..`` resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        try:
            return Path(a).resolve() == Path(b).resolve()
        except (OSError, RuntimeError):
            return False
