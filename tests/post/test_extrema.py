"""Maximum over time of a nodal field.  Reference: numpy's max/argmax over the whole
stacked field (the blocked evaluation must give the same), and the von Mises field of
post.recovery at every time (second formulation)."""
import numpy as np
import pytest

from flexmbs.post import extrema
from flexmbs.post.extrema import max_over_time, von_mises_maximum
from flexmbs.post.recovery import von_mises_stress


def test_blocked_maximum_equals_the_maximum_of_the_stacked_field(monkeypatch):
    monkeypatch.setattr(extrema, "BLOCK", 7)          # several blocks, a partial last one
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0.0, 1.0, 50))
    f = rng.normal(size=(50, 40))
    m = max_over_time(t, lambda b: f[b])
    assert np.array_equal(m.value, f.max(axis=0))
    assert np.array_equal(m.time, t[np.argmax(f, axis=0)])


def test_a_repeated_maximum_keeps_its_first_time(monkeypatch):
    monkeypatch.setattr(extrema, "BLOCK", 2)
    t = np.array([0.0, 0.1, 0.2, 0.3, 0.4])
    f = np.array([[1.0], [3.0], [2.0], [3.0], [0.0]])
    m = max_over_time(t, lambda b: f[b])
    assert m.value[0] == 3.0 and m.time[0] == 0.1


def test_von_mises_maximum_of_a_body():
    rng = np.random.default_rng(2)

    class Body:
        stress_modes = rng.normal(size=(20, 6, 3)) * 1e8
    t = np.linspace(0.0, 1.0, 130)
    q_e = rng.normal(size=(130, 3)) * 1e-3
    m = von_mises_maximum(Body, t, q_e)
    field = von_mises_stress(Body, q_e)
    assert m.value == pytest.approx(field.max(axis=0), rel=1e-14)
    assert np.array_equal(m.time, t[np.argmax(field, axis=0)])


def test_no_time_is_an_error():
    with pytest.raises(ValueError, match="at least one output time"):
        max_over_time([], lambda b: np.zeros((0, 3)))


def test_peak_over_the_nodes_is_the_other_order_of_the_maximum(monkeypatch):
    """``von_mises_peak`` (max over nodes at each time, in blocks of 7 times) against
    ``von_mises_maximum`` (max over time at each node): the largest values of the two
    agree, and each time's peak is the largest nodal value that ``max_over_time`` sees
    there (node index: the first largest)."""
    monkeypatch.setattr(extrema, "BLOCK", 7)
    rng = np.random.default_rng(5)

    class Body:
        stress_modes = rng.normal(size=(25, 6, 4)) * 1e8
    t = np.linspace(0.0, 1.0, 40)
    q_e = rng.normal(size=(40, 4)) * 1e-3
    p, i = extrema.von_mises_peak(Body, q_e)
    m = von_mises_maximum(Body, t, q_e)
    assert p.max() == pytest.approx(m.value.max(), rel=1e-14)
    assert t[np.argmax(p)] == m.time[np.argmax(m.value)]
    field = von_mises_stress(Body, q_e)
    assert np.array_equal(i, np.argmax(field, axis=1))
    assert p == pytest.approx(field[np.arange(40), i], rel=1e-14)
