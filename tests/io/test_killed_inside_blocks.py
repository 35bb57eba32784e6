"""A run killed (no handler runs) while the compiled loop hands its outputs back in blocks:
the file's checkpoint is always its last row's, and a continuation that is killed too
never leaves fewer rows than the file it continued from (results are never destroyed)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

import flexmbs as fm
from flexmbs.io.results import open_result, committed_rows, status_path

#: a rigid pendulum, every step an output (blocks of outputs), rows written at each
#: one (``FLUSH_SECONDS = 0``), the process ended by ``os._exit`` after ``kill_at`` rows
KILLED = textwrap.dedent("""
    import os, sys
    import flexmbs as fm
    from flexmbs.io import results
    from flexmbs.io.results import ResultWriter
    out, kill_at, restart = sys.argv[1], int(sys.argv[2]), sys.argv[3] or None
    results.FLUSH_SECONDS = 0.0
    append, rows = ResultWriter.append, [0]
    def killed(self, r):
        append(self, r)
        rows[0] += 1
        if rows[0] == kill_at:
            os._exit(9)
    ResultWriter.append = killed
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    model = fm.System(gravity=(0, -9.81, 0), name="pend").add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))
    fm.simulate(model, 0.3, 1e-3, output_dt=1e-3, output=out,
                **({"restart": restart} if restart else {}))
""")


def pendulum():
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
    return fm.System(gravity=(0, -9.81, 0), name="pend").add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))


def run_killed(out, kill_at: int, restart: str = "") -> None:
    r = subprocess.run([sys.executable, "-c", KILLED, str(out), str(kill_at), restart],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 9, r.stderr


def rows_and_checkpoint(path) -> tuple[int, int]:
    with open_result(path) as f:
        return committed_rows(f), int(f["checkpoint_row"][()])


def test_a_killed_continuation_never_leaves_fewer_rows(tmp_path):
    out = tmp_path / "pend.h5"
    running, interrupted = status_path(out, "running"), status_path(out, "interrupted")
    run_killed(out, 100)
    n, cp = rows_and_checkpoint(running)
    assert cp == n - 1 and n >= 100 - 65    # rows wait for a checkpoint (<= one block)
    # continue from it, killed again after 2 rows: the killed file is kept as
    # interrupted, the continuation's shorter file does not replace it
    run_killed(out, 2, running)
    run_killed(out, 2, interrupted)
    for path in (running, interrupted):
        try:
            m, cp = rows_and_checkpoint(path)
        except OSError:
            continue
        assert cp == m - 1
    assert rows_and_checkpoint(interrupted)[0] >= n
    # and the run finished from it is the uninterrupted one, bit for bit
    res = fm.simulate(pendulum(), 0.3, 1e-3, output_dt=1e-3, output=str(out),
                      restart=interrupted)
    full = fm.simulate(pendulum(), 0.3, 1e-3, output_dt=1e-3)
    np.testing.assert_array_equal(res.t, full.t)
    np.testing.assert_array_equal(res.q, full.q)
    np.testing.assert_array_equal(res.lam, full.lam)
