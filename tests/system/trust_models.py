"""Small healthy models of the solver regression matrix (tests/system/test_solver_matrix.py)
and two unhealthy ones (a toggle chain, conflicting drives)."""
from __future__ import annotations

import numpy as np
from scipy.special import ellipj, ellipk

import flexmbs as fm
from flexmbs.kinematics.rotation import matrix_from_axis_angle

G = 9.81


def pendulum(theta0: float, L: float = 1.0):
    """A bar of length ``L`` pinned at one end, released from rest at ``theta0`` from the
    downward vertical (z axis), gravity -y."""
    R0 = matrix_from_axis_angle([0, 0, 1], theta0 - np.pi / 2)
    rod = fm.RigidBody.box("rod", (L, 0.02, 0.02), rho=7850.0, com=(L / 2, 0, 0), R0=R0)
    model = fm.System(gravity=(0, -G, 0), name="pendulum")
    model.add(fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))
    return model, rod


def pendulum_angle(rod, theta0: float, L: float, t):
    """Exact angle of :func:`pendulum`: ``sin(theta/2) = k sn(K - w0 t, k)``, ``k =
    sin(theta0/2)``, ``w0^2 = m g (L/2) / I_O`` (Lawden, *Elliptic Functions and
    Applications*, 1989, §5.2)."""
    w0 = np.sqrt(rod.m * G * (L / 2) / rod.I_O[2, 2])
    k = np.sin(theta0 / 2)
    sn = ellipj(ellipk(k**2) - w0 * np.asarray(t), k**2)[0]
    return 2 * np.arcsin(k * sn)


def disc(omega: float, damping: float = 0.0):
    """A balanced steel disc (r = 0.1 m, 0.02 m thick) spinning at ``omega`` [rad/s]
    about its axis on a revolute, no gravity; optionally a rotational damper ``d``."""
    d = fm.RigidBody.cylinder("disc", radius=0.1, length=0.02, rho=7850.0,
                              omega0=(0.0, 0.0, omega))
    model = fm.System(gravity=(0, 0, 0), name="disc")
    model.add(d, fm.Revolute("axle", fm.ground, d, at=(0, 0, 0), axis="z"))
    if damping:
        model.add(fm.RotationalSpringDamper("damper", joint=model.joint("axle"), d=damping))
    return model, d


def hanging_loop(n_links: int = 7, l: float = 0.2):
    """A closed planar chain of ``n_links`` steel bars pinned to ground at both ends,
    released from rest under gravity (a 5-DOF closed loop for 7 links).  The bars start
    at the angles -75, -45, -15, 0, 15, 45, 75 degrees, which close exactly."""
    ang = np.deg2rad([-75, -45, -15, 0, 15, 45, 75][:n_links])
    model = fm.System(gravity=(0, -G, 0), name="hanging_loop")
    p, prev, links = np.zeros(3), fm.ground, []
    for i, a in enumerate(ang):
        b = fm.RigidBody.box(f"link{i + 1}", (l, 0.02, 0.01), rho=7850.0, com=(l / 2, 0, 0),
                             r0=p.copy(), R0=matrix_from_axis_angle([0, 0, 1], a))
        model.add(b, fm.Revolute(f"J{i + 1}", prev, b, at=tuple(p), axis="z"))
        p = p + l * np.array([np.cos(a), np.sin(a), 0.0])
        prev = b
        links.append(b)
    model.add(fm.Revolute(f"J{n_links + 1}", prev, fm.ground, at=tuple(p), axis="z"))
    return model, links


def toggle_chain(l: float = 0.5):
    """Two bars pinned to ground at both ends of a straight line of length ``2 l``: at the
    start the chain is straight (a toggle position), where the rank test finds the pin
    between the bars partly redundant; under gravity it is not -- the chain cannot move,
    and dropping the rows would let the pin between the bars come apart."""
    model = fm.System(gravity=(0, -G, 0), name="toggle")
    a = fm.RigidBody.box("a", (l, 0.02, 0.02), rho=7850.0, com=(l / 2, 0, 0))
    b = fm.RigidBody.box("b", (l, 0.02, 0.02), rho=7850.0, com=(l / 2, 0, 0),
                         r0=(l, 0, 0))
    model.add(a, b, fm.Revolute("A", fm.ground, a, at=(0, 0, 0), axis="z"),
              fm.Revolute("B", a, b, at=(l, 0, 0), axis="z"),
              fm.Revolute("C", b, fm.ground, at=(2 * l, 0, 0), axis="z"))
    return model


def conflicting_drives():
    """:func:`disc` with two angular-velocity drives on its axle, omega = 1 and 2 rad/s."""
    model, _ = disc(0.0)
    model.add(fm.AngularVelocityDrive("slow", joint="axle", omega=1.0),
              fm.AngularVelocityDrive("fast", joint="axle", omega=2.0))
    return model
