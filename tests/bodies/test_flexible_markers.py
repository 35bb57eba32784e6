"""Markers on flexible bodies: frame jets, joints, external loads and marker kinematics.

References: central differences of values (gradients) and of gradients (Hessians) with
step 1e-6; virtual work (a force does ``F . dp``, a torque ``m . dtheta`` with the
virtual rotation ``dtheta = 1/2 sum_j a_j x da_j`` of an orthonormal frame);
finite differences in time along a smooth trajectory for the marker kinematics.
"""
from __future__ import annotations

import numpy as np
import pytest
from flexcases import Local, beam_cb, beam_free, check_jet, context, random_unit_e

import flexmbs as fm
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.constraints.fixed import Fixed
from flexmbs.forces.external import ExternalForce, ExternalTorque
from flexmbs.kinematics import frames as F
from flexmbs.kinematics.jet import Jet
from flexmbs.kinematics.rotation import A_of
from flexmbs.kinematics.torque import marker_torque


@pytest.fixture(scope="module")
def flex():
    return FlexibleBody("beam", beam_cb(3), r0=(0.1, 0.2, 0.3))


@pytest.fixture(scope="module")
def free():
    return FlexibleBody("free", beam_free(4), r0=(1.0, 0.0, 0.0))


def test_interface_marker_data(flex):
    tip = flex["tip"]
    assert np.allclose(tip.s, [1.0, 0.05, 0.05])
    assert tip.Phi.shape == tip.Psi.shape == (3, flex.n_q)
    assert np.abs(tip.Psi).max() > 0
    assert np.allclose(flex["clamp"].Phi, 0.0)                 # the frame interface
    with pytest.raises(KeyError, match="no interface marker 'nope'"):
        flex["nope"]


def test_node_marker_matches_rbe2_interface(flex):
    """At a node of the rigid (RBE2) tip face the node marker translates with the
    interface (Phi = Phi_tip + Psi_tip x lever).  The rotation about the beam axis x uses
    only in-face derivatives, so it equals the interface rotation; the bending rotations
    also see the element's slope normal to the face and are not compared."""
    rb = flex.body
    tip = flex["tip"]
    node = int(rb.marker("tip").nodes[0])
    mk = flex.node_marker("n", node)
    lever = mk.s - tip.s
    Phi_rigid = tip.Phi - np.cross(lever[:, None], tip.Psi, axis=0)
    assert np.allclose(mk.Phi, Phi_rigid, atol=1e-9 * np.abs(tip.Phi).max())
    assert np.allclose(mk.Psi[0], tip.Psi[0], atol=1e-9 * np.abs(tip.Psi).max())


def test_node_rotation_modes_of_linear_fields(flex):
    """Psi = 1/2 curl u is exact for fields the elements interpolate exactly: a rigid
    rotation u = theta x X gives theta at every node; a pure shear u = (y, 0, 0) gives
    (0, 0, -1/2)."""
    import dataclasses

    from flexmbs.bodies.flexible import nodal_rotation_modes
    X = np.asarray(flex.body.points)
    theta = np.array([0.3, -0.7, 1.1])
    modes = np.stack([np.cross(theta, X), np.column_stack([X[:, 1], 0 * X[:, 0], 0 * X[:, 0]])],
                     axis=2)
    Psi = nodal_rotation_modes(dataclasses.replace(flex.body, modes=modes))
    assert np.allclose(Psi[:, :, 0], theta, atol=1e-10)
    assert np.allclose(Psi[:, :, 1], [0.0, 0.0, -0.5], atol=1e-10)


def test_frame_jet_derivatives(flex):
    """Every component of p and of the three axes of a flexible marker, and consistency
    of position/orientation/jacobians with the jets."""
    rng = np.random.default_rng(1)
    loc = Local([flex["tip"]])
    x = loc.random_x(rng, qs=1e-2)
    for vec in range(4):
        for k in range(3):
            check_jet(lambda y, vec=vec, k=k: getattr(loc.frames(y)[0], "pxyz"[vec])[k], x)
    fj = loc.frames(x)[0]
    q_b = x[:-1]
    assert np.allclose(F.position(flex["tip"], q_b), fj.p.v)
    assert np.allclose(F.orientation(flex["tip"], q_b), np.column_stack([fj.x.v, fj.y.v, fj.z.v]))
    JT, JR = F.jacobians(flex["tip"], q_b)
    assert np.allclose(JT, fj.p.d[:, :-1])
    assert np.allclose(JR[:, 7:], A_of(q_b[3:7]) @ flex["tip"].Psi)


@pytest.mark.parametrize("joint", ["revolute", "fixed"])
@pytest.mark.parametrize("pair", ["flex-rigid", "flex-flex"])
def test_joint_jacobian_and_hessian(flex, free, joint, pair):
    """Revolute/Fixed equations between a flexible marker and a rigid body or a second
    flexible body: gradient and Hessian of every equation against central differences."""
    other = fm.RigidBody.box("box", (0.2, 0.1, 0.1), rho=1000.0, r0=(1.0, 0.05, 0.05)) \
        if pair == "flex-rigid" else free
    second = other if pair == "flex-rigid" else free["tip"]
    cls = fm.Revolute if joint == "revolute" else Fixed
    j = cls("J", flex["tip"], second, axis="z")
    P, Q = j.resolve()
    loc = Local([P, Q])
    rng = np.random.default_rng(3)
    x = loc.random_x(rng, qs=1e-2)
    for i in range(j.n_eq):
        def eq(y, i=i):
            fr = loc.frames(y)
            return j.equations(fr[0], fr[1], Jet.variable(loc.n - 1, y[-1], loc.n))[i]
        check_jet(eq, x)


@pytest.mark.parametrize("frame", ["inertial", "body"])
def test_external_force_virtual_work(flex, frame):
    """ExternalForce at a flexible marker: Q . dq = F . dp (dp by central differences of
    the marker position), and dQ/dx against central differences of Q."""
    mk = flex["tip"]
    rng = np.random.default_rng(5)
    f = ExternalForce("F", at=mk, force=(3.0, -2.0, 5.0), frame=frame)
    x = Local([mk]).random_x(rng, qs=1e-2)
    xd = np.append(rng.normal(size=len(x) - 1), 1.0)
    c = f.contribution(context([mk], x, xd))
    Fin = np.array([3.0, -2.0, 5.0]) if frame == "inertial" else \
        F.orientation(mk, x[:-1]) @ np.array([3.0, -2.0, 5.0])
    h = 1e-6
    for _ in range(4):
        dq = rng.normal(size=len(x))
        dq[-1] = 0.0
        dp = (F.position(mk, (x + h * dq)[:-1]) - F.position(mk, (x - h * dq)[:-1])) / (2 * h)
        assert c.Q @ dq == pytest.approx(Fin @ dp, rel=1e-7, abs=1e-9)
    Qf = np.stack([(f.contribution(context([mk], x + h * u, xd, 1)).Q
                    - f.contribution(context([mk], x - h * u, xd, 1)).Q) / (2 * h)
                   for u in np.eye(len(x))], axis=1)
    assert np.allclose(c.dQ_dx, Qf, atol=1e-6 * np.abs(Qf).max())


def virtual_rotation(mk, q_b, dq, h=1e-6):
    """``dtheta = 1/2 sum_j a_j x da_j`` from central differences of the marker axes."""
    Ra = F.orientation(mk, q_b)
    dR = (F.orientation(mk, q_b + h * dq) - F.orientation(mk, q_b - h * dq)) / (2 * h)
    return 0.5 * sum(np.cross(Ra[:, j], dR[:, j]) for j in range(3))


@pytest.mark.parametrize("frame", ["inertial", "body"])
def test_marker_torque_virtual_work(flex, frame):
    """``marker_torque``: Q . dq = m . dtheta at q_e = 0 (orthonormal axes), and its
    dQ/dq against central differences at a deformed state."""
    mk = flex["tip"]
    rng = np.random.default_rng(9)
    m_loc = np.array([1.0, -4.0, 2.5])
    q_b = np.concatenate([rng.normal(size=3), random_unit_e(rng), np.zeros(flex.n_q)])
    Q, dQ, _ = marker_torque(mk, q_b, m_loc, frame=frame)
    m_in = m_loc if frame == "inertial" else F.orientation(mk, q_b) @ m_loc
    for _ in range(4):
        dq = rng.normal(size=len(q_b))
        dq[3:7] -= (dq[3:7] @ q_b[3:7]) * q_b[3:7]                 # keep |e| = 1
        assert Q @ dq == pytest.approx(m_in @ virtual_rotation(mk, q_b, dq), rel=1e-7, abs=1e-9)
    q_b[7:] = 1e-2 * rng.normal(size=flex.n_q)
    Q, dQ, _ = marker_torque(mk, q_b, m_loc, frame=frame)
    h = 1e-6
    dQf = np.stack([(marker_torque(mk, q_b + h * u, m_loc, frame=frame)[0]
                     - marker_torque(mk, q_b - h * u, m_loc, frame=frame)[0]) / (2 * h)
                    for u in np.eye(len(q_b))], axis=1)
    assert np.allclose(dQ, dQf, atol=1e-7 * np.abs(dQf).max())


def test_external_torque_on_flexible_marker(flex):
    mk = flex["tip"]
    rng = np.random.default_rng(2)
    x = Local([mk]).random_x(rng, qs=0.0)
    c = ExternalTorque("M", at=mk, torque=(1.0, 2.0, 3.0)).contribution(
        context([mk], x, np.append(np.zeros(len(x) - 1), 1.0)))
    Q, _, _ = marker_torque(mk, x[:-1], np.array([1.0, 2.0, 3.0]))
    assert np.allclose(c.Q[:-1], Q)


def test_marker_kinematics_along_trajectory(flex):
    """``AssembledSystem.marker_kinematics`` on a flexible marker along a smooth
    trajectory q(t) (rotation about a tilted axis, elastic oscillation): velocity and
    acceleration against central differences of the position and velocity; angular
    velocity against 1/2 sum a_j x da_j/dt of the axes (exact to O(|Psi q_e|) = 1e-5);
    angular acceleration against differences of the angular velocity."""
    model = fm.System(gravity=(0, 0, 0))
    model.add(flex)
    asm = model.assemble()
    mk = flex["tip"]
    n = flex.n_q
    amp = 1e-4 * np.linspace(1, 2, n)
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])

    def traj(t):
        th = 1.3 * t + 0.4 * t * t
        e = np.concatenate([[np.cos(th / 2)], np.sin(th / 2) * axis])
        r = np.array([np.sin(t), 0.5 * t * t, -t])
        return np.concatenate([r, e, amp * np.sin(40 * t + np.arange(n))])

    def d(f, t, h=1e-5):
        return (f(t + h) - f(t - h)) / (2 * h)

    t = 0.37
    q, qd, qdd = traj(t), d(traj, t), d(lambda s: d(traj, s), t, 1e-4)
    st = asm.marker_kinematics(mk, q, qd, qdd)
    pos = lambda s: F.position(mk, traj(s))                         # noqa: E731
    assert np.allclose(st.p, pos(t))
    assert np.allclose(st.v, d(pos, t), rtol=1e-7, atol=1e-8)
    assert np.allclose(st.a, d(lambda s: d(pos, s), t, 1e-4), rtol=1e-5, atol=1e-5)
    Ra, dR = F.orientation(mk, q), d(lambda s: F.orientation(mk, traj(s)), t)
    w_axes = 0.5 * sum(np.cross(Ra[:, j], dR[:, j]) for j in range(3))
    assert np.allclose(st.omega, w_axes, rtol=1e-4, atol=1e-4 * np.linalg.norm(w_axes))

    def omega_at(s):
        qs, qds = traj(s), d(traj, s)
        return asm.marker_kinematics(mk, qs, qds, np.zeros_like(qs)).omega
    assert np.allclose(st.alpha, d(omega_at, t, 1e-4), rtol=1e-5, atol=1e-5)
