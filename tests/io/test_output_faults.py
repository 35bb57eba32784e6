"""A result file that cannot be written (disk full, I/O error, no permission) ends the run
with one :class:`~flexmbs.errors.OutputError` naming the file and the system's reason,
and the rows written before the fault stay readable (``committed_rows``).

The faults are injected where h5py meets the disk (``Dataset.resize``, ``File.flush``,
``File``) with the errors the system gives (``errno.ENOSPC``, ``EIO``, ``EACCES``); h5py
reports HDF5's failed writes as ``RuntimeError("... errno = 5, error message = ...")``.
"""
import errno
import os

import h5py
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.errors import OutputError
from flexmbs.io import results
from flexmbs.io.results import read_results


def pendulum():
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    return fm.System(gravity=(0, -9.81, 0), name="pend").add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))


@pytest.fixture
def fast_flush(monkeypatch):
    monkeypatch.setattr(results, "FLUSH_SECONDS", 0.0)     # a block per output step


def test_disk_full_while_writing_rows(tmp_path, monkeypatch, fast_flush):
    calls, resize = [0], h5py.Dataset.resize

    def full_after_some_rows(self, *args, **kw):
        calls[0] += 1
        if calls[0] > 400:                 # the disk is full from here on
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return resize(self, *args, **kw)
    monkeypatch.setattr(h5py.Dataset, "resize", full_after_some_rows)
    out = tmp_path / "pend.h5"
    with pytest.raises(OutputError) as info:
        fm.simulate(pendulum(), 0.1, 1e-3, output=str(out))
    err = info.value
    assert str(err) == (f"cannot write {tmp_path / 'pend.running.h5'}: No space left on "
                        f"device [ENOSPC]")
    assert err.errno == errno.ENOSPC and err.result_path == str(tmp_path / "pend.failed.h5")
    monkeypatch.setattr(h5py.Dataset, "resize", resize)
    data = read_results(err.result_path)
    n = len(data["time"])
    assert data["attrs"]["status"] == "failed" and "No space left" in data["attrs"]["message"]
    assert 10 < n < 101
    np.testing.assert_allclose(data["time"], 1e-3 * np.arange(n), rtol=0, atol=1e-15)
    assert data["bodies"]["rod"]["q"].shape == (n, 7)
    assert not out.exists()


def test_io_error_on_flush(tmp_path, monkeypatch, fast_flush):
    flush, calls = h5py.File.flush, [0]

    def failing_flush(self):
        calls[0] += 1
        if calls[0] > 20:
            raise RuntimeError("Unable to synchronously flush file (file write failed: time "
                               "= x, filename = 'pend.running.h5', file descriptor = 5, errno "
                               "= 5, error message = 'Input/output error', buf = 0x0)")
        return flush(self)
    monkeypatch.setattr(h5py.File, "flush", failing_flush)
    with pytest.raises(OutputError, match=r"pend\.running\.h5: Input/output error \[EIO\]$"):
        fm.simulate(pendulum(), 0.1, 1e-3, output=str(tmp_path / "pend.h5"))
    monkeypatch.setattr(h5py.File, "flush", flush)
    data = read_results(tmp_path / "pend.failed.h5")
    assert 5 <= len(data["time"]) <= 11


def test_no_permission_to_create_the_file(tmp_path, monkeypatch):
    File = h5py.File

    def denied(name, mode="r", **kw):
        if mode == "w":
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(name))
        return File(name, mode, **kw)
    monkeypatch.setattr(results.h5py, "File", denied)
    with pytest.raises(OutputError) as info:
        fm.simulate(pendulum(), 0.01, 1e-3, output=str(tmp_path / "pend.h5"))
    assert str(info.value) == (f"cannot write {tmp_path / 'pend.running.h5'}: Permission "
                               f"denied [EACCES]")
    monkeypatch.setattr(results.h5py, "File", File)
    assert os.listdir(tmp_path) == [".pend.lock"]
    fm.simulate(pendulum(), 0.01, 1e-3, output=str(tmp_path / "pend.h5"))  # lock released
