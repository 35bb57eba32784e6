"""The sparse compiled constraint rows of a system of any size (``LocalRows``, used by the
residual and ``constraint`` above ``stacked.MAX_N`` coordinates) against the
block-by-block rows (``ConstraintRows.rows``).

Two formulations of the same rows: every marker frame on its own body's coordinates and
every row on its two markers' in one compiled pass, gathered into the CSR pattern of
``G``, versus joint by joint through ``PairFrames``/``LabelRows`` and the drive's own
``WeightedRow.evaluate``.  Checked on small models with the size switch lowered to 0
(rigid slider-crank with a drive and inactive rows, a point-mass slider, a flexible
pendulum) and on a chain of 50 flexible links (450 coordinates) at the real switch.
"""
import numpy as np
import pytest
from test_dense_rows import _flexible_pendulum, _point_mass_slider_crank, blockwise_rows
from test_slider_crank import model as slider_crank

import flexmbs as fm
from flexmbs.compiled import use_compiled
from flexmbs.system import constraint_rows
from flexmbs.system.assembly import AssembledSystem
from flexmbs.system.local_rows_kernel import local_rows
from flexmbs.system.stacked import MAX_N

pytestmark = pytest.mark.skipif(not use_compiled(), reason="compares the compiled kernels "
                                "with their references (FLEXMBS_KERNELS=reference)")


def flexible_chain(n: int) -> fm.System:
    """``n`` flexible pendulum rods (0.02 x 0.02 x 1 m, 2 modes) pinned end to end in z."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bodies"))
    from flexcases import pendulum_cb
    body = pendulum_cb(2)
    links = [fm.FlexibleBody(f"link{i}", body, r0=(float(i), 0.0, 0.0)) for i in range(n)]
    model = fm.System(gravity=(0, -9.81, 0), name=f"flexible_chain_{n}")
    model.add(fm.Revolute("pin", fm.ground, links[0]["pin"], axis="z"))
    for i in range(1, n):
        model.add(fm.Revolute(f"J{i}", links[i - 1], links[i]["pin"], at=(float(i), 0, 0),
                              axis="z"))
    return model


@pytest.mark.parametrize("which", ["slider_crank", "point_mass", "flexible_pendulum",
                                   "chain_50"])
def test_local_rows_equal_blockwise_rows(which, monkeypatch):
    if which != "chain_50":
        monkeypatch.setattr(constraint_rows, "STACKED_MAX_N", 0)
    model = {"slider_crank": lambda: slider_crank()[0], "point_mass": _point_mass_slider_crank,
             "flexible_pendulum": _flexible_pendulum,
             "chain_50": lambda: flexible_chain(50)}[which]()
    asm = AssembledSystem(model)
    if which == "slider_crank":
        asm.active = np.arange(asm.n_rows_all) % 5 != 3       # some rows inactive
    if which == "chain_50":
        assert asm.n_q > MAX_N
    rows = asm.constraint_rows
    assert rows.stacked() is None and rows.local() is not None
    rng = np.random.default_rng(2)
    q = asm.initial_q() + 1e-2 * rng.normal(size=asm.n_q)
    t = 0.37
    g_local = rows.constraint(q, t)
    G_local = rows.constraint_jacobian(q, t).toarray()
    g_blocks, G_blocks = blockwise_rows(asm, q, t)
    assert g_local.shape == (asm.n_lam,)
    assert np.abs(g_local - g_blocks).max() <= 1e-14 * max(1.0, np.abs(g_blocks).max())
    # the kernel run as Python (numpy checks every index the compiled code trusts)
    lr = rows.local()
    maps = lr.gather(rows.active, *rows.pattern())
    g_py, data_py = np.empty(len(maps[0])), np.empty(len(maps[1]))
    local_rows.py_func(q, *lr.kernel_data, *lr.drive_weights(t), *maps, g_py, data_py)
    assert np.array_equal(g_py, g_local) and np.array_equal(data_py, rows.G_data(q, t))
    assert np.abs(G_local - G_blocks).max() <= 1e-14 * np.abs(G_blocks).max()
    lam = rng.normal(size=asm.n_lam)          # the residual's G^T lam
    qd, qdd = rng.normal(size=asm.n_q), rng.normal(size=asm.n_q)
    r_lam = asm.residual(q, qd, qdd, lam, t) - asm.residual(q, qd, qdd, 0 * lam, t)
    ref = G_blocks.T @ lam
    assert np.abs(r_lam - ref).max() <= 1e-12 * np.abs(ref).max()
    # the constraint Hessian sum: one compiled call against the block-by-block sums
    hv = asm.hessian.local_values(q, lam, t)
    ref = np.concatenate([Hs.ravel() for _, Hs in asm.hessian.sums(q, lam, t)])
    assert hv.shape == ref.shape
    assert np.abs(hv - ref).max() <= 1e-12 * np.abs(ref).max()


def _newton_dense(asm, q, qd, qdd, lam, t):
    return asm.newton_matrix(q, qd, qdd, lam, t, 250.0, 30.0, 1.0).toarray()


def test_chain_70_newton_matrix_and_trajectory_equal_blockwise(monkeypatch):
    """A chain of 70 flexible links (630 coordinates, above both old size switches): the
    Newton matrix with the compiled sparse rows and Hessian equals the block-by-block
    one, and a falling-chain trajectory equals the block-by-block path's to the Newton
    tolerance."""
    model = flexible_chain(70)
    asm = AssembledSystem(model)
    assert asm.n_q > MAX_N and asm.constraint_rows.local() is not None
    rng = np.random.default_rng(3)
    q = asm.initial_q() + 1e-2 * rng.normal(size=asm.n_q)
    qd, qdd = rng.normal(size=asm.n_q), rng.normal(size=asm.n_q)
    lam, t = rng.normal(size=asm.n_lam), 0.1
    A_local = _newton_dense(asm, q, qd, qdd, lam, t)
    ref = AssembledSystem(model)
    ref.constraint_rows._local_rows = False                 # block by block
    A_ref = _newton_dense(ref, q, qd, qdd, lam, t)
    assert A_local.shape == (asm.n_q + asm.n_lam,) * 2
    assert np.abs(A_local - A_ref).max() <= 1e-12 * np.abs(A_ref).max()

    steps, h = 20, 1e-3
    res = fm.simulate(model, steps * h, h, output_dt=h)
    monkeypatch.setattr(constraint_rows.ConstraintRows, "local", lambda self: None)
    res_ref = fm.simulate(model, steps * h, h, output_dt=h)
    assert res.q.shape == res_ref.q.shape == (steps + 1, asm.n_q)
    dq = np.abs(res.q - res_ref.q).max()
    assert np.abs(res.q[-1] - res.q[0]).max() > 1e-4          # the chain moved
    assert dq <= 1e-6 * np.abs(res_ref.q[-1] - res_ref.q[0]).max()
