"""A joint keeps the markers of its frame (``Joint.resolve``) and a rigid body its data
checks (``RigidBody.problems``) after the first call: both objects are immutable, but a
joint's ``at`` / ``axis`` may be an array the caller still holds.  Reference: a new joint
or body made from the same values."""
import numpy as np

import flexmbs as fm


def _same_markers(a, b) -> bool:
    return all(np.array_equal(m.s, n.s) and np.array_equal(m.R, n.R) and m.body is n.body
               for m, n in zip(a, b))


def test_markers_follow_a_changed_at_and_axis_array():
    body = fm.RigidBody.box("a", (0.4, 0.05, 0.05), 7850.0, com=(0.2, 0, 0),
                            r0=(0.1, 0.2, 0.0))
    at, axis = np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    j = fm.Revolute("j", fm.ground, body, at=at, axis=axis)
    first = j.resolve()
    assert j.resolve() is first                      # kept: the same values
    at[:] = (0.3, -0.1, 0.05)
    axis[:] = (0.0, 1.0, 1.0)
    moved = j.resolve()
    assert moved is not first
    assert _same_markers(moved, fm.Revolute("k", fm.ground, body, at=(0.3, -0.1, 0.05),
                                            axis=(0.0, 1.0, 1.0)).resolve())
    assert not _same_markers(moved, first)


def test_body_checks_once_and_hands_out_a_copy():
    bad = fm.RigidBody("b", 2.0, np.diag([1.0, 1.0, 5.0]))     # triangle inequality
    found = bad.problems()
    assert len(found) == 1 and "triangle inequality" in found[0]
    found.append("changed by the caller")
    assert bad.problems() == fm.RigidBody("b", 2.0, np.diag([1.0, 1.0, 5.0])).problems()
    assert fm.RigidBody.box("ok", (0.1, 0.2, 0.3), 1000.0).problems() == []
