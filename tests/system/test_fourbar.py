"""Four-bar linkage: closed loop, DOF bookkeeping, motion against minimal coordinates.

* planar four-bar as R-R-S-U: Grübler's count 6*3 - (5+5+3+4) = 1 (THEORY (2.71)) with no
  passive constraints, so the rank test finds none;
* spatial four-bar of four revolutes: Grübler gives 6*3 - 4*5 = -2 although the mechanism
  moves (THEORY §5.9.1): the rank test must find 3 redundant rows, name them, and the
  simulation must still run — and agree with the R-R-S-U model (a second formulation);
* both against the minimal-coordinate Lagrange equation (2.82) integrated by scipy.
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.system import dof

from fourbar import build, minimal_solution

PHI0, PHID0, T_END, H = np.deg2rad(30.0), 6.0, 1.0, 1e-3


@pytest.fixture(scope="module")
def rrsu():
    model, _ = build(PHI0, PHID0, "RRSU")
    return model, fm.simulate(model, T_END, H, rho_inf=0.9)


@pytest.fixture(scope="module")
def rrrr():
    model, _ = build(PHI0, PHID0, "RRRR")
    return model, fm.simulate(model, T_END, H, rho_inf=0.9)


def crank_angle(res):
    return PHI0 + np.unwrap(res.joint_coordinates["A"][:, 0])


def test_planar_grubler_and_rank(rrsu):
    model, res = rrsu
    assert dof.grubler(model) == 1
    assert res.dof.mobility == 1
    assert res.dof.redundant == ()


def test_loop_closure(rrsu):
    model, res = rrsu
    asm = model.assemble()
    worst = max(np.abs(asm.constraint(q, t)).max() for q, t in zip(res.q, res.t))
    assert worst < 1e-10


def test_planar_motion_against_minimal_coordinates(rrsu):
    _, res = rrsu
    ref = minimal_solution(PHI0, PHID0, res.t)
    # measured 2.7e-3, 6.8e-4, 1.7e-4 rad at h = 2e-3, 1e-3, 5e-4: second order
    assert np.abs(crank_angle(res) - ref).max() < 1e-3


def test_spatial_redundancy_named_and_runs(rrrr, rrsu):
    model, res = rrrr
    assert dof.grubler(model) == -2
    assert res.dof.mobility == 1
    assert len(res.dof.redundant) == 3
    assert all(lab.startswith(("joint 'C'", "joint 'D'")) for lab in res.dof.redundant)
    assert res.t[-1] == pytest.approx(T_END)
    # same motion as the non-redundant model (the reactions differ, the motion must not)
    assert np.abs(crank_angle(res) - crank_angle(rrsu[1])).max() < 1e-6
