"""``flexmbs run`` when a file cannot be written: one line naming the file and the
system's reason, exit status 4 (``EXIT_CODES["io error"]``), no traceback, and the results
so far kept (docs/errors.md).

Faults are injected where the files are written (h5py ``Dataset.resize``, matplotlib's
``savefig``, meshio's XDMF writer) with the system's errors, and once for real: a file
size limit (``RLIMIT_FSIZE``) makes the kernel refuse the result file's writes with
``EFBIG``, the way a full disk refuses them with ``ENOSPC`` (HDF5 2.0 used to crash with
SIGSEGV when it then closed the file).
"""
import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py

from arm_case import arm_case

from flexmbs.cli.main import main
from flexmbs.errors import EXIT_CODES
from flexmbs.io import results
from flexmbs.io.results import read_results

CASES = Path(__file__).resolve().parents[2] / "cases"



def arm(tmp_path, t_end=0.05) -> Path:
    case = tmp_path / "arm.toml"
    case.write_text(arm_case(t_end=t_end))
    return case


def last_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def enospc(*args, **kw):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_disk_full_while_writing_results(tmp_path, capsys, monkeypatch):
    case, out = arm(tmp_path), tmp_path / "o"
    assert main(["run", str(case), "--out", str(out), "--quiet", "--no-plots"]) == 0
    monkeypatch.setattr(results, "FLUSH_SECONDS", 0.0)
    calls, resize = [0], h5py.Dataset.resize

    def full_later(self, *args, **kw):
        calls[0] += 1
        return enospc() if calls[0] > 300 else resize(self, *args, **kw)
    monkeypatch.setattr(h5py.Dataset, "resize", full_later)
    rc = main(["run", str(case), "--out", str(out), "--quiet", "--no-plots"])
    monkeypatch.setattr(h5py.Dataset, "resize", resize)
    assert rc == EXIT_CODES["io error"] == 4
    n = len(read_results(out / "arm.failed.h5")["time"])
    assert 5 < n < 51
    assert last_line(capsys) == (
        f"flexmbs run: io error: cannot write {out / 'arm.running.h5'}: No space left on "
        f"device [ENOSPC]; {n} output steps up to t = {(n - 1) * 1e-3:.6g} s saved in "
        f"{out / 'arm.failed.h5'} (status 'failed'); the previous complete result "
        f"{out / 'arm.h5'} is unchanged")
    assert read_results(out / "arm.h5")["attrs"]["status"] == "complete"


def test_disk_full_while_writing_plots(tmp_path, capsys, monkeypatch):
    import matplotlib.figure
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", enospc)
    out = tmp_path / "o"
    assert main(["run", str(arm(tmp_path)), "--out", str(out), "--quiet"]) == 4
    line = last_line(capsys)
    assert line.startswith(f"flexmbs run: io error: cannot write {out / 'plots' / 'arm'}/")
    assert line.endswith(f".png: No space left on device [ENOSPC]; the results are complete "
                         f"in {out / 'arm.h5'}")
    assert read_results(out / "arm.h5")["attrs"]["status"] == "complete"
    assert list((out / "plots" / "arm").iterdir()) == []      # no partial PNG


def test_io_error_while_writing_xdmf(tmp_path, capsys, monkeypatch):
    import meshio

    def eio(*args, **kw):
        raise OSError(errno.EIO, os.strerror(errno.EIO))
    monkeypatch.setattr(meshio.xdmf.TimeSeriesWriter, "write_data", eio)
    text = (CASES / "flexible_pendulum" / "case.toml").read_text()
    case = tmp_path / "case.toml"
    case.write_text(text.replace("../../meshes", str(CASES.parent / "meshes")))
    out = tmp_path / "o"
    rc = main(["run", str(case), "--out", str(out), "--quiet", "--no-plots", "--t-end",
               "0.01", "--body-dir", str(tmp_path / "bodies")])
    assert rc == 4
    xdmf = out / "flexible_pendulum_pendulum.xdmf"
    assert last_line(capsys) == (
        f"flexmbs run: io error: cannot write {xdmf}: Input/output error [EIO]; the results "
        f"are complete in {out / 'flexible_pendulum.h5'}")
    assert sorted(os.listdir(out)) == [".flexible_pendulum.lock", "flexible_pendulum.h5"]


LIMITED = textwrap.dedent("""
    import resource, sys
    from petsc4py import PETSc  # MPI and PETSc start before the limit (shared memory)
    import flexmbs.integrate.genalpha, flexmbs.simulate
    from flexmbs.cli.main import main
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
    sys.exit(main(sys.argv[1:]))
""")


def test_file_size_limit_is_one_line_and_exit_4(tmp_path):
    out = tmp_path / "o"
    r = subprocess.run([sys.executable, "-c", LIMITED, "run", str(arm(tmp_path, 5.0)),
                        "--out", str(out), "--quiet", "--no-plots"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == EXIT_CODES["io error"], r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("flexmbs run ")
    assert lines[1].startswith(f"flexmbs run: io error: cannot write {out / 'arm.running.h5'}"
                               f": File too large [EFBIG]; ")
    assert f"saved in {out / 'arm.failed.h5'} (status 'failed')" in lines[1]
    data = read_results(out / "arm.failed.h5")        # the steps written before the fault
    assert len(data["time"]) >= 1 and data["time"][0] == 0.0
    assert sorted(os.listdir(out)) == [".arm.lock", "arm.failed.h5"]


def test_unwritable_output_folder(tmp_path, capsys, monkeypatch):
    """The result file cannot be created (EACCES; root ignores permission bits, so the
    error is injected)."""
    File = h5py.File

    def denied(name, mode="r", **kw):
        if mode == "w":
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(name))
        return File(name, mode, **kw)
    monkeypatch.setattr(results.h5py, "File", denied)
    out = tmp_path / "o"
    assert main(["run", str(arm(tmp_path)), "--out", str(out), "--quiet"]) == 4
    assert last_line(capsys) == (f"flexmbs run: io error: cannot write "
                                 f"{out / 'arm.running.h5'}: Permission denied [EACCES]; "
                                 f"no output step saved")


FLEX_CHECK = f"""
[model]
name = "beam"

[[bodies]]
name = "beam"
type = "flexible"
mesh = "{CASES.parent / 'meshes' / 'beam_hex27_5x1x1.msh'}"
material = "steel"
modes = 2
interfaces = ["clamp"]

[[joints]]
name = "clamp"
type = "fixed"
first = "ground"
second = "beam.clamp"

[solver]
t_end = 0.01
dt = 1e-3
"""


def test_full_body_dir_is_one_line_and_exit_4(tmp_path):
    """Writing a new body file into --body-dir hits the file size limit (as a full disk
    would): one line naming the body file, exit 4 (it used to end in tracebacks and a
    segmentation fault), and no partial body file left in the cache."""
    case = tmp_path / "case.toml"
    case.write_text(FLEX_CHECK)
    limited = LIMITED.replace("200_000, 200_000", "20_000, 20_000")
    bodies = tmp_path / "bodies"
    r = subprocess.run([sys.executable, "-c", limited, "check", str(case), "--body-dir",
                        str(bodies)], capture_output=True, text=True, timeout=600)
    assert r.returncode == EXIT_CODES["io error"], r.stderr
    err = [x for x in r.stderr.strip().splitlines() if x.startswith("flexmbs check: ")]
    assert err[-1].startswith("flexmbs check: io error: cannot write ") and "[EFBIG]" in err[-1]
    assert "Traceback" not in r.stderr
    assert not any(p.suffix == ".h5" for p in bodies.rglob("*"))
