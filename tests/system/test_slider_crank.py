"""Rigid slider-crank at constant crank speed.

References:
* slider position, closed form: x = a cos(phi) + sqrt(b^2 - a^2 sin^2(phi)), phi = omega t;
* joint reactions by hand (planar Newton-Euler, e.g. Shigley's *Theory of Machines*):
  slider: m3 xdd = F_Cx; rod: m2 a_2 = F_B - F_C + m2 g and
  I_2 thetadd = (r_B - c_2) x F_B - (r_C - c_2) x F_C, three equations for F_B and F_Cy.
The all-revolute planar model is spatially over-constrained: the rank test removes the
out-of-plane rows; the in-plane reactions stay unique and are what we check.
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.constraints.drives import AngularVelocityDrive
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.kinematics.rotation import matrix_from_axis_angle

A_, B_, OMEGA, G, W, RHO = 0.1, 0.4, 30.0, 9.81, 0.01, 7850.0


def model():
    phi0 = 0.0
    crank = fm.RigidBody.box("crank", (A_, W, W), RHO, com=(A_ / 2, 0, 0),
                             omega0=(0, 0, OMEGA))
    Bp = np.array([A_, 0, 0])
    rod = fm.RigidBody.box("rod", (B_, W, W), RHO, com=(B_ / 2, 0, 0), r0=Bp)
    Cp = np.array([A_ + B_, 0, 0])
    slider = fm.RigidBody.box("slider", (0.05, 0.03, 0.03), RHO, r0=Cp)
    m = fm.System(gravity=(0, -G, 0), name="slider_crank")
    m.add(fm.Revolute("A", fm.ground, crank, at=(0, 0, 0), axis="z"),
          fm.Revolute("B", crank, rod, at=Bp, axis="z"),
          fm.Revolute("C", rod, slider, at=Cp, axis="z"),
          Prismatic("D", fm.ground, slider, at=Cp, axis="x"),
          AngularVelocityDrive("drive", joint="A", omega=OMEGA))
    del phi0
    return m, crank, rod, slider


@pytest.fixture(scope="module")
def run():
    m, crank, rod, slider = model()
    return fm.simulate(m, 0.5, 5e-4, rho_inf=0.8), rod, slider


def closed_form(t):
    phi = OMEGA * t
    s = np.sqrt(B_**2 - A_**2 * np.sin(phi) ** 2)
    x = A_ * np.cos(phi) + s
    theta = -np.arcsin(A_ * np.sin(phi) / B_)          # rod angle from +x
    return phi, theta, x


def derivs(f, t, h=1e-5):
    return (f(t + h) - f(t - h)) / (2 * h), (f(t + h) - 2 * f(t) + f(t - h)) / h**2


def test_slider_position(run):
    res, _, slider = run
    x_sim = res.body_q("slider")[:, 0]
    x_ref = closed_form(res.t)[2]
    assert np.abs(x_sim - x_ref).max() < 1e-6
    assert res.dof.mobility == 0          # the drive takes the one freedom


def test_reactions_by_hand(run):
    res, rod, slider = run
    m2, I2, m3 = rod.m, rod.I_S[2, 2], slider.m
    for k in (200, 333, 517, 801):        # arbitrary output steps
        t = res.t[k]
        phi, theta, x = closed_form(t)
        _, xdd = derivs(lambda s: closed_form(s)[2], t)
        thd, thdd = derivs(lambda s: closed_form(s)[1], t)
        rB = A_ * np.array([np.cos(phi), np.sin(phi)])
        rC = np.array([x, 0.0])
        c2 = 0.5 * (rB + rC)
        # COM acceleration of the rod: average of B's and C's accelerations
        aB = -A_ * OMEGA**2 * np.array([np.cos(phi), np.sin(phi)])
        a2 = 0.5 * (aB + np.array([xdd, 0.0]))
        FCx = m3 * xdd
        cross = lambda u, v: u[0] * v[1] - u[1] * v[0]
        # unknowns FBx, FBy, FCy:  m2 a2 = FB - FC + m2 g ;  I2 thdd = (rB-c2) x FB - (rC-c2) x FC
        Amat = np.array([[1, 0, 0], [0, 1, -1],
                         [-(rB - c2)[1], (rB - c2)[0], -(rC - c2)[0]]])
        rhs = np.array([m2 * a2[0] + FCx, m2 * a2[1] + m2 * G,
                        I2 * thdd - (rC - c2)[1] * FCx])
        FBx, FBy, FCy = np.linalg.solve(Amat, rhs)
        # reactions are reported in the joint frame at Q: for B that frame turns with the
        # rod (angle theta), for C it is fixed to the slider (which does not rotate)
        c, s_ = np.cos(theta), np.sin(theta)
        FBx, FBy = c * FBx + s_ * FBy, -s_ * FBx + c * FBy
        rB_sim, rC_sim = res.reactions["B"][k, :2], res.reactions["C"][k, :2]
        scale = max(abs(FBx), abs(FBy), 1.0)
        assert np.allclose(rB_sim, [FBx, FBy], atol=1e-3 * scale), (t, rB_sim, FBx, FBy)
        assert np.allclose(rC_sim, [FCx, FCy], atol=1e-3 * scale), (t, rC_sim, FCx, FCy)
