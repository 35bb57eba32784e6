"""The dense constraint rows of a whole system (``StackedRows.dense``, used by the residual
and ``constraint``) against the block-by-block rows (``_rows``, which build ``G``).

Two formulations of the same rows: all marker frames and label rows of the system in one
compiled pass, normalisations and drive rows added in place, versus joint by joint through
``PairFrames``/``LabelRows`` and the drive's own ``WeightedRow.evaluate``.  Checked on the
rigid slider-crank (a drive, redundant rows removed) and a flexible pendulum.
"""
import numpy as np
import pytest
from test_slider_crank import model as slider_crank

import flexmbs as fm
from flexmbs.system.assembly import AssembledSystem


def _flexible_pendulum():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flexible"))
    from flexcases import pendulum_cb
    beam = fm.FlexibleBody("beam", pendulum_cb(3))
    return fm.System(gravity=(0, -9.81, 0)).add(
        fm.Revolute("pin", fm.ground, beam["pin"], axis="z"))


@pytest.mark.parametrize("which", ["slider_crank", "flexible_pendulum"])
def test_dense_rows_equal_blockwise_rows(which):
    model = slider_crank()[0] if which == "slider_crank" else _flexible_pendulum()
    asm = AssembledSystem(model)
    if which == "slider_crank":
        asm.active = np.arange(asm.n_rows_all) % 5 != 3       # some rows inactive
    assert asm._stacked().complete
    rng = np.random.default_rng(1)
    q = asm.initial_q() + 1e-2 * rng.normal(size=asm.n_q)
    t = 0.37
    g_dense, G_dense = asm._dense_rows(q, t)
    parts = asm._rows(q, t, 2)                # order 2: the blockwise path, no stacking
    g_blocks = np.concatenate([V for _, V, _, _ in parts])
    G_blocks = np.zeros_like(G_dense)
    r0 = 0
    for bi, V, D, _ in parts:
        G_blocks[r0:r0 + len(V), asm.blocks[bi].idx] = D[:, :-1]
        r0 += len(V)
    assert g_dense.shape == (asm.n_lam,)
    assert np.abs(g_dense - g_blocks).max() <= 1e-14
    assert np.abs(G_dense - G_blocks).max() <= 1e-14 * np.abs(G_blocks).max()
    # the residual's G^T lam
    lam = rng.normal(size=asm.n_lam)
    qd, qdd = rng.normal(size=asm.n_q), rng.normal(size=asm.n_q)
    r_lam = asm.residual(q, qd, qdd, lam, t) - asm.residual(q, qd, qdd, 0 * lam, t)
    assert np.abs(r_lam - G_blocks.T @ lam).max() <= 1e-12 * np.abs(G_blocks.T @ lam).max()
