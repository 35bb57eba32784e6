"""Under MPI an error on one rank ends every rank with a message, never a hang.

Spawns ``mpiexec -n 2`` itself (a serial test): rank 0 runs ``flexmbs check`` on a case
file that does not exist while rank 1 waits in a barrier, as a rank does in the next
collective step of a sweep or a distributed preprocessing.  Without the guard rank 1
would wait forever (the subprocess would hit its time bound).
"""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import sys
    from mpi4py import MPI
    from flexmbs.cli.main import main
    if MPI.COMM_WORLD.Get_rank() == 0:
        sys.exit(main(["check", "no_such_case.toml"]))
    MPI.COMM_WORLD.Barrier()
""")


@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="needs mpiexec")
def test_error_on_one_rank_ends_all_ranks(tmp_path):
    script = tmp_path / "one_rank_fails.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    proc = subprocess.run(["mpiexec", "-n", "2", sys.executable, str(script)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "flexmbs check: error:" in proc.stderr and "no_such_case.toml" in proc.stderr
    assert "ends all 2 ranks" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="needs mpiexec")
def test_run_under_mpiexec_is_refused_in_one_line(tmp_path):
    """``mpiexec -n 2 flexmbs run`` used to make two processes write one result file
    (h5py tracebacks, an unreadable file): now one line from rank 0, exit 2, no file."""
    from pathlib import Path
    case = Path(__file__).resolve().parents[2] / "cases" / "slider_crank" / "case.toml"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    proc = subprocess.run(["mpiexec", "-n", "2", sys.executable, "-m", "flexmbs.cli.main",
                           "run", str(case), "--out", str(tmp_path / "o"), "--t-end", "0.01"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = [x for x in proc.stderr.splitlines() if x.startswith("flexmbs run: error:")]
    assert len(lines) == 1 and "2 MPI ranks" in lines[0] and "sweep" in lines[0]
    assert not (tmp_path / "o").exists()
