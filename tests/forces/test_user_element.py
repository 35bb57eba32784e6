"""The user force element of docs/control.md (a public base class with a residual, a
tangent and an internal state) runs as written: its lag follows the closed form."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import flexmbs as fm

from .statecheck import check_tangent

DOC = Path(__file__).resolve().parents[2] / "docs" / "control.md"


def documented_class():
    code = re.search(r"### Writing your own element\s+```python\n(.*?)```", DOC.read_text(),
                     re.S).group(1)
    space: dict = {}
    exec(compile(code, str(DOC), "exec"), space)
    return space["Lagged"]


def model(Lagged):
    mass = fm.PointMass("m", 1.0, r0=(1.0, 0.0, 0.0))
    system = fm.System(gravity=(0.0, 0.0, 0.0))
    system.add(mass, Lagged("lag", fm.ground.marker("o"), mass, tau=0.1))
    return system


def test_documented_element_lags_its_command_and_has_a_consistent_tangent():
    """``F' = (100 N - F) / tau``, F(0) = 0: ``F = 100 (1 - exp(-t/tau))`` (tau = 0.1 s)."""
    Lagged = documented_class()
    check_tangent(model(Lagged), np.random.default_rng(3))
    r = fm.simulate(model(Lagged), t_end=0.3, dt=1e-3)
    F = 100.0 * (1.0 - np.exp(-r.t / 0.1))
    assert np.abs(r.states("lag")[:, 0] - F).max() < 1e-3
