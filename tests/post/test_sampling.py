"""Output-rate aliasing warning (flexmbs.post.sampling): Shannon–Nyquist."""
import numpy as np
import pytest

from flexmbs.post.sampling import alias_frequency, aliasing_warnings


class _Reduced:
    def __init__(self, f):
        self.frequencies = np.asarray(f, dtype=float)


class _Body:
    def __init__(self, name, f):
        self.name, self.body = name, _Reduced(f)


class _Model:
    def __init__(self, *bodies):
        self.bodies = bodies


def test_alias_frequency_is_what_sampling_shows():
    """A 379 Hz sine sampled at 500 Hz equals, at the samples, a 121 Hz sine (up to sign)."""
    f, dt = 379.0, 1.0 / 500.0
    fa = alias_frequency(f, dt)
    assert fa == pytest.approx(121.0)
    t = np.arange(200) * dt
    assert np.allclose(np.cos(2 * np.pi * f * t), np.cos(2 * np.pi * fa * t), atol=1e-9)


def test_warns_for_the_reported_rod_and_not_when_resolved():
    """The reaction plot at 500 Hz of a rod with a 379 Hz mode (the case reported)."""
    model = _Model(_Body("rod", [379.0, 1200.0]), object())
    (line,) = aliasing_warnings(model, 1 / 500)
    assert "'rod'" in line and "379 Hz" in line and "250 Hz" in line and "121 Hz" in line
    assert "output dt <= 0.00066 s" in line
    assert aliasing_warnings(model, 1 / 2000) == []       # 1000 Hz Nyquist > 379 Hz
    assert aliasing_warnings(model, None) == []
