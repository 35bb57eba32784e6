"""Linearisation and eigenanalysis of rigid models against closed-form frequencies.

References (any vibrations text, e.g. Meirovitch, *Fundamentals of Vibrations*, 2001):
* compound pendulum pinned at O, small oscillations: ``f = sqrt(m g d / I_O) / 2 pi``;
* mass-spring(-damper): ``w = sqrt(k / m)``, ``zeta = d / (2 sqrt(k m))``;
* a two-mass chain ground-k-m-k-m: ``w^2 = (3 -+ sqrt 5) / 2 * k / m``.
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.kinematics.rotation import matrix_from_axis_angle
from flexmbs.post import equilibrium, linearize, modes, null_space, steady_state

G = 9.81


def test_null_space_orthonormal_and_redundant_rows():
    Gm = np.array([[1.0, 0, 0, 0], [2.0, 0, 0, 0], [0, 1.0, 1.0, 0]])
    N = null_space(Gm)
    assert N.shape == (4, 2)
    assert np.allclose(N.T @ N, np.eye(2))
    assert np.allclose(Gm @ N, 0.0)


def test_pendulum_small_oscillation():
    L = 1.0
    R0 = matrix_from_axis_angle([0, 0, 1], -np.pi / 2)   # rod x axis pointing down
    rod = fm.RigidBody.box("rod", (L, 0.02, 0.02), rho=7850.0, com=(L / 2, 0, 0), R0=R0)
    model = fm.System(gravity=(0, -G, 0))
    model.add(fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))
    asm = model.assemble()
    st = equilibrium(asm)
    assert np.abs(st.qdd).max() < 1e-9
    res = modes(linearize(asm, st))
    f_ref = np.sqrt(rod.m * G * L / 2 / rod.I_O[2, 2]) / (2 * np.pi)
    assert res.frequencies.size == 1
    assert res.frequencies[0] == pytest.approx(f_ref, rel=1e-8)
    assert abs(res.damping_ratios[0]) < 1e-10
    # the mode shape is a rotation about the pin: tip moves along x, origin does not
    shape = res.shapes[:, 0]
    assert np.allclose(shape[:3], 0.0, atol=1e-12)


def test_spring_mass_damper():
    m, k, d = 2.0, 800.0, 4.0
    mass = fm.PointMass("m", m, r0=(1.0, 0, 0))
    spring = PointToPointSpringDamper("s", fm.ground.marker("o"), mass, k=k, d=d)
    model = fm.System().add(mass, spring)
    asm = model.assemble()
    res = modes(linearize(asm, equilibrium(asm)))
    assert res.frequencies.size == 1          # y, z are free drift (s = 0), dropped
    assert res.frequencies[0] == pytest.approx(np.sqrt(k / m) / (2 * np.pi), rel=1e-10)
    assert res.damping_ratios[0] == pytest.approx(d / (2 * np.sqrt(k * m)), rel=1e-10)
    assert np.allclose(np.abs(res.shapes[:, 0]), [1, 0, 0])
    all_modes = modes(linearize(asm, equilibrium(asm)), oscillatory_only=False)
    assert all_modes.frequencies.size > 1


def test_two_mass_chain():
    m, k = 1.5, 600.0
    a = fm.PointMass("a", m, r0=(1.0, 0, 0))
    b = fm.PointMass("b", m, r0=(2.0, 0, 0))
    model = fm.System().add(
        a, b,
        PointToPointSpringDamper("s1", fm.ground.marker("o"), a, k=k),
        PointToPointSpringDamper("s2", a, b, k=k))
    asm = model.assemble()
    f = modes(linearize(asm, equilibrium(asm))).frequencies
    w2 = np.array([(3 - np.sqrt(5)) / 2, (3 + np.sqrt(5)) / 2]) * k / m
    assert np.allclose(f, np.sqrt(w2) / (2 * np.pi), rtol=1e-10)


def test_steady_state_rigid_drive_is_consistent():
    """A body spun by a drive: the relative equilibrium has the drive's rate and no free
    coordinates (ker G is empty), so there are no modes."""
    disk = fm.RigidBody.box("disk", (0.2, 0.2, 0.02), rho=7850.0, com=(0.05, 0, 0))
    from flexmbs.constraints.drives import AngularVelocityDrive
    model = fm.System()
    model.add(fm.Revolute("J", fm.ground, disk, at=(0, 0, 0), axis="z"))
    # System.add classifies drives as sensors (they have ``measure``): append directly
    model.drives.append(AngularVelocityDrive("drive", joint="J", omega=10.0))
    asm = model.assemble()
    st = steady_state(asm, t=0.0)
    assert np.abs(asm.residual(st.q, st.qd, st.qdd, st.lam, 0.0)).max() < 1e-8
    assert np.abs(asm.constraint(st.q, 0.0)).max() < 1e-10
    lin = linearize(asm, st)
    assert lin.n_dof == 0
    # centripetal force on the pin: m |c| omega^2
    _, gamma = asm.constraint_rates(st.q, st.qd, 0.0)
    assert np.abs(asm.constraint_jacobian(st.q, 0.0) @ st.qdd + gamma).max() < 1e-8
    f, _ = asm.reactions(st.q, st.lam, 0.0)["J"]
    assert np.linalg.norm(f) == pytest.approx(disk.m * 0.05 * 100.0, rel=1e-8)
