"""MPI: a sweep of the rigid and of the flexible slider-crank (the main case: elastic
tet10 conrod) over the crank speed on 2 ranks reproduces the serial runs bit for bit.

Reference: each variant run serially by plain ``flexmbs run`` (one process, rank 0) on a
copy of the case with the drive speed edited in the text.  The sweep runs the same
variants over ``mpiexec -n 2`` (round-robin); every dataset of every result file must be
identical (tolerance 1e-12 absolute, measured 0).  Rank 0 compares, the maximum
difference is broadcast and asserted on every rank.  Wall times are printed, not asserted.
"""
import shutil
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

pytestmark = pytest.mark.mpi

ROOT = Path(__file__).resolve().parents[2]
RIGID = ROOT / "cases" / "slider_crank" / "case.toml"
FLEXIBLE = ROOT / "cases" / "main" / "case.toml"
#: (case, text of its drive speed, speeds, t_end [s], result file)
SWEEPS = {"rigid": (RIGID, "omega = 30.0", (20.0, 30.0, 45.0, 60.0), 0.05, "slider_crank.h5"),
          "flexible": (FLEXIBLE, "omega = 150.0", (100.0, 150.0, 200.0, 250.0), 0.004,
                       "flexible_slider_crank.h5")}


def _datasets(path: Path) -> dict:
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset)
                     else None)
    return out


def _max_difference(a: Path, b: Path) -> float:
    da, db = _datasets(a), _datasets(b)
    if set(da) != set(db):
        return float("inf")
    return max(float(np.max(np.abs(da[k] - db[k]), initial=0.0)) if da[k].shape == db[k].shape
               else float("inf") for k in da)


def _serial_runs(folder: Path, case_file: Path, drive: str, omegas, t_end) -> float:
    from flexmbs.cli.main import main
    text = case_file.read_text()
    assert drive in text
    # the copies live elsewhere: make the mesh paths absolute
    text = text.replace('"../../meshes/', f'"{ROOT / "meshes"}/')
    bodies = str(folder.parent / "bodies")
    assert main(["check", str(case_file), "--body-dir", bodies]) == 0   # fill the cache
    t0 = time.perf_counter()
    for w in omegas:
        sub = folder / f"w{w:g}"
        sub.mkdir(parents=True)
        case = sub / "case.toml"
        case.write_text(text.replace(drive, f"omega = {w!r}"))
        code = main(["run", str(case), "--out", str(sub), "--t-end", str(t_end),
                     "--no-plots", "--no-xdmf", "--quiet", "--body-dir", bodies])
        assert code == 0
    return time.perf_counter() - t0


@pytest.mark.parametrize("kind", sorted(SWEEPS))
def test_sweep_on_two_ranks_equals_serial_runs(kind, capsys):
    from mpi4py import MPI

    from flexmbs.parallel.distribute import idle_barrier
    from flexmbs.parallel.sweep import sweep
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    case_file, drive, OMEGAS, T_END, result = SWEEPS[kind]
    folder = Path(comm.bcast(tempfile.mkdtemp(prefix="fmbs_sweep_") if rank == 0 else None))
    try:
        serial_wall = (_serial_runs(folder / "serial", case_file, drive, OMEGAS, T_END)
                       if rank == 0 else 0.0)
        idle_barrier(comm)                  # rank 1 sleeps instead of spinning meanwhile
        t0 = time.perf_counter()
        res = sweep(case_file, [("drives[0].omega", OMEGAS)], out=folder / "sweep",
                    overrides={"solver.t_end": T_END}, comm=comm,
                    body_dir=folder / "bodies")
        comm.Barrier()
        parallel_wall = time.perf_counter() - t0
        diff = None
        if rank == 0:
            diff = max(_max_difference(folder / "serial" / f"w{w:g}" / result,
                                       folder / "sweep" / r["result"])
                       for w, r in zip(OMEGAS, res.rows))
        diff = comm.bcast(diff)
        statuses = comm.allgather(tuple(r["status"] for r in res.rows))
        assert all(s == ("complete",) * len(OMEGAS) for s in statuses)
        assert diff <= 1e-12
        assert [r["drives[0].omega"] for r in res.rows] == list(OMEGAS)
        if rank == 0:
            with capsys.disabled():
                print(f"\n{kind} slider-crank: sweep of {len(OMEGAS)} crank speeds, t_end = {T_END} s: serial "
                      f"flexmbs run {serial_wall:.2f} s, sweep on {size} ranks "
                      f"{parallel_wall:.2f} s (speed-up {serial_wall / parallel_wall:.2f}); "
                      f"max |difference| = {diff:g}")
    finally:
        comm.Barrier()
        if rank == 0:
            shutil.rmtree(folder, ignore_errors=True)


def test_full_disk_on_rank_0_ends_every_rank(tmp_path_factory, monkeypatch):
    """Rank 0 hits ENOSPC writing the sweep table: every rank ends with the same one-line
    error (it used to leave rank 1 waiting in a barrier forever)."""
    import errno

    from mpi4py import MPI

    from flexmbs.errors import OutputError
    from flexmbs.parallel import sweep as sweep_engine
    from flexmbs.parallel import table

    comm = MPI.COMM_WORLD
    folder = Path(comm.bcast(str(tmp_path_factory.mktemp("enospc")) if comm.rank == 0
                             else None))

    def full(*args, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(table, "write_csv", full)
    with pytest.raises(OutputError) as info:
        sweep_engine.sweep(RIGID, [("drives.motor.omega", [20.0, 30.0])], out=folder,
                           overrides={"solver.t_end": 0.002}, comm=comm)
    msg = str(info.value)
    assert "No space left on device [ENOSPC]" in msg and "_sweep.csv" in msg
    comm.Barrier()
