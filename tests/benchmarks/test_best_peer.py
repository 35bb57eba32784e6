"""The tolerance rule of the best-peer column (``benchmarks/exudyn/best_peer.py``, stated
in ``compare.py``'s docstring): per code, the loosest Newton tolerance reached from the
tightest through rungs whose key output stays within 1e-7 m of the code's own tight
reference.

* The selection is checked on ladders whose key-output error follows a known law
  ``e(tol) = c tol`` (the answer is the loosest rung below ``bound / c``, by hand), with the 2-norm of a 3-4-5
  triangle, a rung that lands inside the bound again after leaving it, a failed rung,
  and the refusals.
* The ladder of flexmbs itself on the rigid pendulum: the two tightest references agree
  to far below the bound (the reference is converged), the distance from the reference
  shrinks as the tolerance tightens, and flexmbs's default ``newton_rtol`` passes its own
  rule.
"""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "exudyn"))
import best_peer as bp
import compare

LADDER = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4)


def linear_law(c, ref=(0.3, -0.7), tolerances=LADDER):
    """Rungs whose key output is ``ref`` moved by ``c tol`` [m] along (3/5, 4/5)."""
    return [(t, [ref[0] + 0.6 * c * t, ref[1] + 0.8 * c * t]) for t in tolerances]


def test_distance_is_the_two_norm():
    assert bp.distance([1.0, 2.0], [1.0 + 3e-8, 2.0 - 4e-8]) == pytest.approx(5e-8, rel=1e-7)


@pytest.mark.parametrize("c, expected", [(5.0, 1e-8), (0.5, 1e-7), (0.05, 1e-6),
                                         (1e-4, 1e-4)])
def test_loosest_within_follows_the_error_law(c, expected):
    """``e = c tol <= 1e-7`` holds up to ``tol = 1e-7 / c``: the loosest rung below it."""
    tol, d = bp.loosest_within(linear_law(c), (0.3, -0.7))
    assert tol == expected
    assert d == pytest.approx(c * expected, rel=1e-6)


def test_order_of_the_rungs_does_not_matter():
    rungs = linear_law(0.5)
    assert bp.loosest_within(rungs[::-1], (0.3, -0.7))[0] == 1e-7


def test_a_rung_back_inside_after_leaving_is_not_taken():
    rungs = linear_law(0.05)                 # 1e-8 ... 1e-6 within, 1e-5 out
    rungs[4] = (1e-4, [0.3, -0.7])           # 1e-4 exactly on the reference: luck
    assert bp.loosest_within(rungs, (0.3, -0.7))[0] == 1e-6


def test_a_failed_rung_ends_the_walk():
    rungs = linear_law(1e-4)
    rungs[2] = (1e-6, None)
    assert bp.loosest_within(rungs, (0.3, -0.7))[0] == 1e-7


def test_refuses_when_the_tightest_rung_misses():
    with pytest.raises(bp.ToleranceLadderError, match=r"Exudyn, model 'm'.*1e-08\) gives 1\.0"):
        bp.loosest_within(linear_law(100.0), (0.3, -0.7), what="Exudyn, model 'm'")
    with pytest.raises(bp.ToleranceLadderError, match="a failed run"):
        bp.loosest_within([(1e-8, None), (1e-7, [0.3, -0.7])], (0.3, -0.7))
    assert issubclass(bp.ToleranceLadderError, compare.SideBySideError)  # run.py: exit 2


def test_reference_is_the_tightest_that_completed():
    rungs = [(1e-11, [1.0]), (1e-12, None), (1e-10, [2.0])]
    assert bp.reference_of(rungs) == (1e-11, [1.0])
    with pytest.raises(bp.ToleranceLadderError, match="no reference run completed"):
        bp.reference_of([(1e-12, None)], "flexmbs, model 'm'")


def test_choose_splits_reference_and_ladder():
    rows = [{"tolerance": 1e-12, "key": [0.3, -0.7]}, {"tolerance": 1e-11, "key": None},
            *({"tolerance": t, "key": k} for t, k in linear_law(0.5))]
    out = bp.choose(rows, bp.REFERENCE, "m")
    assert out["reference_tolerance"] == 1e-12 and out["tolerance"] == 1e-7
    assert out["ladder"]["1e-06"] == pytest.approx(5e-7, rel=1e-6)


def test_docs_block_keeps_its_markers(tmp_path):
    doc = tmp_path / "performance.md"
    doc.write_text("a\n<!-- stiffening:table -->\nold\n<!-- /stiffening:table -->\nb\n")
    rows = [{"model": "cantilever_10", "runs": 2, "cost": 2.0, "key_difference": 5e-8,
             "off": {"steps_per_s": 1000.0, "newton_per_step": 1.0},
             "on": {"steps_per_s": 500.0, "newton_per_step": 2.0}}]
    compare.write_docs_block(rows, doc, "cmd", marker="stiffening:table",
                             table=compare.stiffening_markdown)
    text = doc.read_text()
    assert text.startswith("a\n<!-- stiffening:table -->\n*Measured ")
    assert text.endswith("<!-- /stiffening:table -->\nb\n") and "old" not in text
    assert "| cantilever, 10 modes | 1,000 | 500 | 2.00 | 1.00 / 2.00 | 5.0e-08 |" in text
    with pytest.raises(compare.SideBySideError, match="exudyn:table"):
        compare.write_docs_block(rows, doc, "cmd")


def test_flexmbs_ladder_on_the_rigid_pendulum(tmp_path):
    import flexmbs_models
    rows = flexmbs_models.ladder("rigid_pendulum", tmp_path,
                                 (*bp.REFERENCE[:2], *bp.FLEXMBS_LADDER))["ladder"]
    (_, ref), (_, ref11) = [(r["tolerance"], r["key"]) for r in rows[:2]]
    assert bp.distance(ref, ref11) < 1e-3 * bp.BOUND          # the reference is converged
    d = [bp.distance(r["key"], ref) for r in rows[2:]]
    assert d[0] <= d[-1] and d[-1] > 0.0                      # looser: farther, not equal
    out = bp.choose(rows, bp.REFERENCE, "flexmbs, rigid_pendulum")
    from flexmbs.integrate.settings import DEFAULTS
    assert out["tolerance"] >= DEFAULTS.newton_rtol           # the default passes the rule
