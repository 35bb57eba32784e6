"""Topology of the relative form and what it refuses (docs/relative.md).

References: the descriptor form's rank test names the same redundant rows of a planar
four-bar's cut joint; Grübler's count gives the joint coordinates of a tree (one per
revolute); every refusal is one line naming the object.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.errors import ModelError
from flexmbs.relative.dae import RelativeDAE
from flexmbs.relative.tree import build_tree
from flexmbs.simulate import prepare
from tests.relative.models import four_bar, pendulum_chain, random_tree


def test_four_bar_is_a_tree_with_one_cut_joint_and_the_same_redundant_rows():
    model = four_bar().validate()
    tree = build_tree(model)
    assert [tj.name for tj in tree.joints] == ["A", "B", "D"]     # first joints first
    assert [j.name for j in tree.cut] == ["C"]
    dae = RelativeDAE(model)
    dropped = dae.drop_redundant(dae.initial_q())
    assert sorted(dropped) == sorted(prepare(four_bar()).dof.redundant)
    assert dae.n_q - dae.n_lam == 1                     # mobility 1


def test_tree_coordinates_and_the_initial_state():
    model = pendulum_chain(4).validate()
    dae = RelativeDAE(model)
    assert dae.n_q == 4 and dae.n_lam == 0
    q_b, qd_b, _, _ = dae.absolute_coordinates(dae.initial_q(), dae.initial_qd())
    for b in model.bodies:                         # beta = 0 is the modelled pose
        s = dae.absolute.body_slices[b.name]
        assert np.allclose(q_b[s][:3], b.r0, atol=1e-14)
        assert np.allclose(qd_b[s][:3], b.v0, atol=1e-12)


def test_a_body_without_a_joint_gets_a_free_joint():
    model = random_tree(5, 6, kinds=(None,)).validate()
    tree = build_tree(model)
    assert all(tj.motion.kind == "free" and tj.joint is None for tj in tree.joints)
    assert tree.n_beta == 6 * 7 and len(tree.e_rows) == 6


def test_a_point_mass_is_refused_in_one_line_a_sensor_is_taken():
    model = pendulum_chain(2)
    model.formulation = "relative"
    model.add(fm.PositionSensor("tip", model.bodies[-1]))
    model.validate()
    model.add(fm.PointMass("mass", 1.0, r0=(0.0, -2.0, 0.0)))
    with pytest.raises(ModelError) as exc:
        model.validate()
    line = str(exc.value)
    assert "body 'mass'" in line and "formulation 'relative'" in line and "\n" not in line


def test_an_unknown_formulation_and_the_ts_method_are_refused():
    model = pendulum_chain(2)
    model.formulation = "minimal"
    with pytest.raises(ModelError, match="formulation must be one of absolute, relative, "
                                         "recursive, got 'minimal'"):
        model.validate()
    model.formulation = "recursive"
    with pytest.raises(ModelError, match="generalized-alpha"):
        fm.simulate(model, 0.01, 1e-3, method="ts")


def test_a_force_element_with_states_is_refused_in_one_line():
    model = pendulum_chain(2)
    model.formulation = "recursive"
    model.add(fm.LinearActuator("act", first=fm.ground.marker("base", (1.0, 0.0, 0.0)),
                                second=model.bodies[-1], command=1.0, tau=0.01))
    with pytest.raises(ModelError) as exc:
        model.validate()
    line = str(exc.value)
    assert "force element 'act'" in line and "internal states" in line and "\n" not in line
