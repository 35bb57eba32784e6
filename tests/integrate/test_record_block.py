"""The recorder of ``simulate`` takes a block of outputs at once
(``_Recorder.record_block``, called by ``GeneralizedAlpha._emit_block`` with the rows a
call of the compiled loop passed).

Reference: the same runs with the rows handed to the recorder one by one (the recorder
without its block entry, as a callback that may stop the run is called), which must
record the same values to the last bit: every ``Result`` array, every dataset of the
result file with its checkpoint, and a health failure found at an output inside a block
(reported at that output, the rows before it kept)."""
import importlib
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.compiled import use_compiled
from flexmbs.errors import DivergenceError
from flexmbs.io import results
from flexmbs.system import health

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from test_output_blocks import flexible_pendulum, rigid_pendulum, same_results  # noqa: E402

simulate_module = importlib.import_module("flexmbs.simulate")

pytestmark = pytest.mark.skipif(not use_compiled(), reason="the compiled loop's blocks "
                                "(FLEXMBS_KERNELS=reference has no compiled loop)")


@pytest.fixture
def blocks(monkeypatch):
    """The recorder's block calls and the rows they held."""
    count = {"calls": 0, "rows": 0}
    record_block = simulate_module._Recorder.record_block

    def counted(self, t, *args):
        count["calls"] += 1
        count["rows"] += len(t)
        return record_block(self, t, *args)
    monkeypatch.setattr(simulate_module._Recorder, "record_block", counted)
    return count


def row_by_row(monkeypatch):
    monkeypatch.setattr(simulate_module._Recorder, "record_block", None)


def same_files(pa, pb):
    """Every dataset of two result files ``==``, the checkpoint and its row too."""
    with h5py.File(pa) as fa, h5py.File(pb) as fb:
        names = []
        fa.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        other = []
        fb.visititems(lambda n, o: other.append(n) if isinstance(o, h5py.Dataset) else None)
        assert names and sorted(names) == sorted(other)
        assert "checkpoint" in names
        for n in names:
            np.testing.assert_array_equal(fa[n][()], fb[n][()], err_msg=n)


def cart_pendulum():
    """A pendulum on a cart (prismatic along x, revolute about z), a box on a
    cylindrical joint along y falling along it, one on a planar joint (its coordinates
    row by row): every joint whose coordinates stack, and one whose do not."""
    cart = fm.RigidBody.box("cart", (0.2, 0.1, 0.1), 1000.0)
    rod = fm.RigidBody.box("rod", (0.6, 0.02, 0.02), 7850.0, r0=(0.3, 0.0, 0.0))
    b = fm.RigidBody.box("b", (0.1, 0.06, 0.04), 1000.0, r0=(0.5, 1.0, 0.0))
    a = fm.RigidBody.box("a", (0.1, 0.06, 0.04), 1000.0, r0=(0.1, 2.0, 0.0))
    return fm.System(gravity=(0.0, -9.81, 0.0), name="cart").add(
        fm.Prismatic("guide", fm.ground, cart, at=(0.0, 0.0, 0.0), axis="x"),
        fm.Revolute("pin", cart, rod, at=(0.0, 0.0, 0.0), axis="z"),
        fm.Cylindrical("cy", fm.ground, b, at=(0.5, 1.0, 0.0), axis="y"),
        fm.Planar("pl", fm.ground, a, at=(0.1, 2.0, 0.0), axis="z"))


@pytest.mark.parametrize("build, t_end, dt, every", [(rigid_pendulum, 0.3, 1e-3, 1),
                                                     (rigid_pendulum, 0.3, 1e-3, 3),
                                                     (cart_pendulum, 0.2, 1e-3, 1),
                                                     (flexible_pendulum, 0.02, 1e-4, 1)])
def test_a_block_recorded_at_once_is_its_rows_recorded_one_by_one(build, t_end, dt, every,
                                                                   blocks, monkeypatch,
                                                                   tmp_path):
    kw = {"rho_inf": 0.9, "output_dt": every * dt}
    new = fm.simulate(build(), t_end, dt, output=str(tmp_path / "new" / "r.h5"), **kw)
    # every output but t0 and the last of each call of the loop came in a block
    assert blocks["calls"] >= 1 and blocks["rows"] > new.t.size // 2
    row_by_row(monkeypatch)
    ref = fm.simulate(build(), t_end, dt, output=str(tmp_path / "ref" / "r.h5"), **kw)
    same_results(new, ref)
    same_files(new.path, ref.path)
    # (the joints' coordinates move: the stacked values are tested on changing frames)
    for c in new.joint_coordinates.values():
        assert np.ptp(c, axis=0).max() > 1e-6


def test_a_health_failure_inside_a_block_is_reported_at_its_output(blocks, monkeypatch,
                                                                   tmp_path):
    """The divergence check fails from t = 0.0505 s on: the first output after it, the
    52nd row (with t0) and inside the first block, is where the run stops, with the
    rows before it in the file, as when the rows come one by one."""
    divergence, t_fail = health.divergence, 0.0505
    q_fail = []

    def failing(scales, q):
        # (the failing output is found by its state: the pendulum's angle there)
        if q_fail and np.array_equal(q, q_fail[0]):
            return "a coordinate went too far (test)"
        return divergence(scales, q)
    full = fm.simulate(rigid_pendulum(), 0.2, 1e-3, rho_inf=0.9, output_dt=1e-3)
    k_fail = int(np.searchsorted(full.t, t_fail))
    q_fail.append(full.q[k_fail])
    clear = health.clear_of_divergence

    def not_clear(scales, q):
        # (the block's test of all rows at once: the failing row is not clear)
        return clear(scales, q) & ~(q == q_fail[0]).all(axis=1)
    monkeypatch.setattr(health, "divergence", failing)
    monkeypatch.setattr(health, "clear_of_divergence", not_clear)
    monkeypatch.setattr(results, "FLUSH_SECONDS", 0.0)

    def run(name):
        with pytest.raises(DivergenceError) as info:
            fm.simulate(rigid_pendulum(), 0.2, 1e-3, rho_inf=0.9, output_dt=1e-3,
                        output=str(tmp_path / name / "r.h5"))
        return info.value
    blocks["calls"] = blocks["rows"] = 0
    new = run("new")
    # one block, the failing row neither its first nor its last
    assert blocks["calls"] == 1 and 1 < k_fail < blocks["rows"]
    row_by_row(monkeypatch)
    ref = run("ref")
    assert new.t == ref.t == full.t[k_fail]
    assert new.result_path.endswith(".diverged.h5")
    same_files(new.result_path, ref.result_path)
    with h5py.File(new.result_path) as f:
        np.testing.assert_array_equal(f["time"][()], full.t[:k_fail])


def test_rows_clear_of_divergence_are_those_divergence_finds_nothing_at():
    """``clear_of_divergence`` of many states at once against ``divergence`` of each:
    states spread across the model bound and a flexible body's elastic bound (and
    non-finite ones); every clear state has no finding, and only states within the
    margin of a bound are left to ``divergence`` without one."""
    rng = np.random.default_rng(3)
    phi = np.abs(rng.standard_normal(5))
    scales = health.Scales(elastic=(("beam", slice(7, 12), phi, 0.4),), size=2.0, n_body=12)
    q = rng.standard_normal((4000, 13))
    q[:, 7:12] *= rng.uniform(0.0, 0.4, (4000, 1)) / (np.abs(q[:, 7:12]) @ phi)[:, None] * 2
    q[:2000:7, 3] = rng.uniform(0.5, 1.5, q[:2000:7, 3].shape) * 2e6
    q[5::97, 2] = np.nan
    q[6::97, 12] = np.inf
    ok = health.clear_of_divergence(scales, q)
    found = np.array([health.divergence(scales, x) is not None for x in q])
    assert ok.any() and found.any()
    assert not (ok & found).any()
    # the rows neither clear nor found lie within the margin of the elastic bound
    u = np.abs(q[:, 7:12]) @ phi
    assert np.all(np.abs(u[~ok & ~found] - 0.4) <= 0.4 * 2 * health.CLEAR_MARGIN)


def test_an_interruption_while_a_block_is_projected_keeps_the_rows_before_it(
        blocks, monkeypatch, tmp_path):
    """Ctrl-C (``KeyboardInterrupt``) in the projection of the 40th output, inside a
    block: the rows before it are in the ``.interrupted.h5`` file, as when the rows come
    one by one (where that projection comes right before its row is recorded)."""
    from flexmbs.integrate import genalpha
    full = fm.simulate(rigid_pendulum(), 0.2, 1e-3, rho_inf=0.9, output_dt=1e-3)
    k_stop = 40
    project = genalpha.project_velocities

    def interrupted(dae, q, qd, t, **kw):
        if np.array_equal(q, full.q[k_stop]):
            raise KeyboardInterrupt("test")
        return project(dae, q, qd, t, **kw)
    monkeypatch.setattr(genalpha, "project_velocities", interrupted)

    def run(name):
        with pytest.raises(KeyboardInterrupt) as info:
            fm.simulate(rigid_pendulum(), 0.2, 1e-3, rho_inf=0.9, output_dt=1e-3,
                        output=str(tmp_path / name / "r.h5"))
        return info.value.result_path
    blocks["calls"] = 0
    new = run("new")
    assert blocks["calls"] == 1
    row_by_row(monkeypatch)
    ref = run("ref")
    assert new.endswith(".interrupted.h5")
    same_files(new, ref)
    with h5py.File(new) as f:
        np.testing.assert_array_equal(f["time"][()], full.t[:k_stop])


def test_checkpoints_written_inside_blocks_cut_by_the_progress_cadence(blocks, monkeypatch,
                                                                         tmp_path):
    """A progress callback cuts the compiled loop's calls (every 50 steps here, as on a
    slow model) and the file is flushed at every row: the checkpoints written are those
    of the row route, row for row (a row before a block's last has none: a restart from
    it would not repeat the run's steps)."""
    from flexmbs.integrate import genalpha
    monkeypatch.setattr(genalpha.Cadence, "steps", lambda self, block_steps: 50)
    monkeypatch.setattr(results, "FLUSH_SECONDS", 0.0)
    written = []
    flush = results.ResultWriter._flush

    def logged(self, cp):
        if cp is not None:
            written.append((self.n - 1, np.asarray(cp).copy()))
        return flush(self, cp)
    monkeypatch.setattr(results.ResultWriter, "_flush", logged)

    def run(name):
        written.clear()
        fm.simulate(rigid_pendulum(), 0.2, 1e-3, rho_inf=0.9, output_dt=1e-3,
                    progress=lambda t, t_end, st: False, output=str(tmp_path / name / "r.h5"))
        return list(written)
    block = run("block")
    assert blocks["rows"] > 0
    row_by_row(monkeypatch)
    row = run("row")
    assert [k for k, _ in block] == [k for k, _ in row] and len(row) > 2
    for (_, a), (_, b) in zip(block, row):
        np.testing.assert_array_equal(a, b)


def test_the_clear_rows_of_a_block_take_the_block_reactions(blocks, monkeypatch, tmp_path):
    """The reactions of a block's rows clear of divergence come from
    ``OutputPoint.reaction_block``: no row goes to ``reaction_rows`` but t0 and the
    rows outside blocks, and a block route that raises is not hidden."""
    from flexmbs.system.output_point import OutputPoint
    one = {"rows": 0}
    reaction_rows = OutputPoint.reaction_rows

    def counted(self, *args):
        one["rows"] += 1
        return reaction_rows(self, *args)
    monkeypatch.setattr(OutputPoint, "reaction_rows", counted)
    res = fm.simulate(cart_pendulum(), 0.2, 1e-3, rho_inf=0.9, output_dt=1e-3)
    assert blocks["rows"] > res.t.size // 2
    assert one["rows"] == res.t.size - blocks["rows"]

    def broken(self, *args):
        raise RuntimeError("broken block route")
    monkeypatch.setattr(OutputPoint, "reaction_block", broken)
    with pytest.raises(RuntimeError, match="broken block route"):
        fm.simulate(cart_pendulum(), 0.2, 1e-3, rho_inf=0.9, output_dt=1e-3)
