"""The reactions of an output block's rows at once (:meth:`OutputPoint.reaction_block`,
:func:`~flexmbs.system.output_point_kernel.joint_wrenches` per row of the stacked
arguments) against one state at a time (:meth:`OutputPoint.reaction_rows`, itself
checked against the joints' jets in ``test_output_point.py``): the same wrenches to the
last bit on either backend; rows the block cannot take (a sparse ``G``, rows of different
sizes) are left to the row route (None)."""
import numpy as np
import pytest
from test_output_point import MODELS, _state

import flexmbs.compiled
from flexmbs.system.output_point import OutputPoint
from flexmbs.system.output_rows import RowsAt


def _rows(which, k=5):
    asm, q, _, lam, t = _state(which)
    rng = np.random.default_rng(11)
    qs = q + 1e-2 * rng.normal(size=(k, q.size))
    lams = lam + 50.0 * rng.normal(size=(k, lam.size))
    ts = t + 1e-3 * np.arange(k)
    point = OutputPoint(asm.layout, asm.constraint_rows, asm.model.joints)
    ats = [asm.constraint_rows.at_state(qs[i], ts[i]) for i in range(k)]
    return asm, point, qs, lams, ts, ats


@pytest.mark.parametrize("backend", ["compiled", "reference"])
@pytest.mark.parametrize("which", sorted(MODELS))
def test_block_reactions_are_those_of_each_row(which, backend, monkeypatch):
    asm, point, qs, lams, ts, ats = _rows(which)      # (dense G: the stacked rows)
    monkeypatch.setattr(flexmbs.compiled, "KERNELS", backend)
    block = point.reaction_block(qs, lams, ats)
    assert block is not None and len(block) == len(ts)
    scale = 0.0
    for i in range(len(ts)):
        one = point.reaction_rows(qs[i], lams[i], ts[i], ats[i])
        assert list(block[i]) == list(one)
        for name, w in one.items():
            assert np.array_equal(block[i][name], w), (i, name)
            scale = max(scale, np.abs(w).max())
    assert scale > 1.0                                  # not a test of zeros


def test_rows_the_block_cannot_take_are_left_to_the_row_route():
    asm, point, qs, lams, ts, ats = _rows("slider_crank", k=3)
    csr = RowsAt(asm.constraint_rows.constraint_jacobian(qs[1], ts[1]), ats[1].g_t, None,
                 None)
    assert point.reaction_block(qs, lams, [ats[0], csr, ats[2]]) is None
    short = RowsAt(ats[1].G[:-1], ats[1].g_t[:-1], None, ats[1].frames)
    assert point.reaction_block(qs, lams, [ats[0], short, ats[2]]) is None
    assert point.reaction_block(qs[:0], lams[:0], []) is None
