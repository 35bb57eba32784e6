"""Drives fed by a sensor (:mod:`flexmbs.constraints.drives`): ``theta_B = k theta_A``
through an angle drive on B fed by an orientation sensor on A.

References: the velocity-ratio coupling ``z . omega_B = k z . omega_A``
(:class:`~flexmbs.constraints.velocity_ratio.VelocityRatio`, a velocity-level second
formulation of the same coupling), the closed-form coupled pendulum
``(I_A + m l^2 + k^2 I_B) thetadd_A = -m g l sin theta_A``, virtual work
``tau_A = -k tau_B`` and central differences of ``g`` and ``G qd``."""
from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.case import build, load_case
from flexmbs.cli.main import main
from flexmbs.errors import CaseError, ModelError
from flexmbs.kinematics.rotation import A_of, e_from_matrix, matrix_from_axis_angle

K = -2.0                                     # theta_B = K theta_A
M_A, L_A, I_A, I_B, G0 = 2.0, 0.5, 0.05, 0.3, 9.81
CASE = Path(__file__).with_name("fed_drive.toml")


def coupled(how: str):
    """Pendulum A (pivot at the origin, centre of mass 0.5 m below, swinging about z at
    3 rad/s) and disc B (axis z through (1, 0, 0)) coupled by a fed drive or a belt."""
    A = fm.RigidBody("A", M_A, np.diag([0.1, 0.1, I_A]), r0=(0.0, -L_A, 0.0),
                     omega0=(0.0, 0.0, 3.0), v0=(3.0 * L_A, 0.0, 0.0))
    B = fm.RigidBody("B", 1.0, np.diag([0.2, 0.2, I_B]), r0=(1.0, 0.0, 0.0),
                     omega0=(0.0, 0.0, 3.0 * K))
    model = fm.System(name=how, gravity=(0.0, -G0, 0.0))
    model.add(fm.Revolute("JA", fm.ground, A, at=(0.0, 0.0, 0.0), axis="z"),
              fm.Revolute("JB", fm.ground, B, at=(1.0, 0.0, 0.0), axis="z"))
    if how == "fed":
        sensor = fm.OrientationSensor("angle_A", first=A, output="xyz")
        model.add(sensor, fm.AngleDrive("follow", "JB", 0.0, feed=(sensor, 2), ratio=K))
    else:
        model.add(fm.VelocityRatio("belt", first=B, second=A, ratio=K))
    return model


@pytest.fixture(scope="module")
def runs():
    return {how: fm.simulate(coupled(how), t_end=1.0, dt=2e-3) for how in ("fed", "belt")}


def test_fed_drive_is_the_ratio_coupling(runs):
    fed, belt = runs["fed"], runs["belt"]
    th_A = fed.joint_coordinates["JA"][:, 0]
    th_B = fed.joint_coordinates["JB"][:, 0]
    assert np.abs(th_A).max() > 1.0                          # a large swing
    assert np.abs(th_B - K * th_A).max() < 1e-10              # the row, to round-off
    # the same trajectory as the velocity-level coupling (the belt's position drifts
    # by its integration error, 1e-6 here)
    assert np.abs(th_A - belt.joint_coordinates["JA"][:, 0]).max() < 1e-5
    assert np.abs(th_B - belt.joint_coordinates["JB"][:, 0]).max() < 2e-5


def test_fed_drive_in_joint_coordinates(runs):
    """The relative (joint-coordinate) formulation holds the fed row as a cut row: the
    same coupling, the same motion to the integrators' error."""
    model = coupled("fed")
    model.formulation = "relative"
    rel = fm.simulate(model, t_end=0.2, dt=2e-3)
    th_A = rel.joint_coordinates["JA"][:, 0]
    assert np.abs(rel.joint_coordinates["JB"][:, 0] - K * th_A).max() < 1e-10
    assert np.abs(th_A - runs["fed"].joint_coordinates["JA"][:len(th_A), 0]).max() < 1e-5


def test_fed_drive_multiplier_is_the_closed_form_torque(runs):
    """B feels only the drive about z: I_B thetadd_B = tau_B = -lam (dg/dtheta_B = 1),
    thetadd_B = K thetadd_A of the coupled pendulum."""
    fed = runs["fed"]
    th_A = fed.joint_coordinates["JA"][:, 0]
    thdd_A = -M_A * G0 * L_A * np.sin(th_A) / (I_A + M_A * L_A**2 + K**2 * I_B)
    lam = fed.lam[:, -1]
    np.testing.assert_allclose(-lam[1:], I_B * K * thdd_A[1:], rtol=1e-3,
                               atol=1e-3 * np.abs(I_B * K * thdd_A).max())


def _about_z(q_b, pivot):
    """``dq_b/dtheta`` of a rigid body turned about the inertial z axis through ``pivot``."""
    h = 1e-6
    e = [e_from_matrix(matrix_from_axis_angle((0, 0, 1), s) @ A_of(q_b[3:7])) for s in (h, -h)]
    e = [x if x @ q_b[3:7] > 0 else -x for x in e]
    return np.concatenate([np.cross((0.0, 0.0, 1.0), q_b[:3] - pivot), (e[0] - e[1]) / (2 * h)])


def test_virtual_work_tau_A_is_minus_k_tau_B(runs):
    """The drive's reaction ``-G^T lam`` on B and its induced load on A, as torques about
    the bearings' axes (virtual rotations), satisfy tau_A = -K tau_B, tau_B = -lam."""
    fed = runs["fed"]
    asm = coupled("fed").assemble()
    for i in (40, 250, 480):
        q, lam = fed.q[i], fed.lam[i]
        G = asm.constraint_jacobian(q, fed.t[i]).toarray()
        gen = -G[-1] * lam[-1]
        tau_A = gen[0:7] @ _about_z(q[0:7], np.zeros(3))
        tau_B = gen[7:14] @ _about_z(q[7:14], np.array([1.0, 0.0, 0.0]))
        assert abs(tau_B) > 1e-3
        assert tau_A == pytest.approx(-K * tau_B, rel=1e-7)
        assert tau_B == pytest.approx(-lam[-1], rel=1e-7)


def derivative_system():
    """Three bodies in general position: a revolute and a prismatic joint, an angle drive
    fed by a Cardan angle between two moving bodies and a displacement drive fed by a
    relative position resolved in a moving frame, both with time functions."""
    rng = np.random.default_rng(4)

    def body(name):
        e = rng.normal(size=4)
        return fm.RigidBody(name, 1.0, np.diag([0.1, 0.12, 0.15]), r0=rng.normal(size=3),
                            R0=A_of(e / np.linalg.norm(e)))
    a, b, c = body("a"), body("b"), body("c")
    s_ang = fm.OrientationSensor("s_ang", first=b.marker("m", s=(0.1, 0.2, 0.0)), second=c,
                                 output="xyz")
    s_pos = fm.PositionSensor("s_pos", first=a, second=c.marker("n", s=(0.0, 0.3, 0.1)),
                              frame="second")
    model = fm.System(name="derivs")
    model.add(fm.Revolute("J1", a, b, at=(0.1, 0.2, 0.3), axis=(0.2, 1.0, 0.1)),
              fm.Prismatic("J2", fm.ground, c, at=(0.0, 0.5, 0.0), axis="x"),
              s_ang, s_pos,
              fm.AngleDrive("d1", "J1", fm.Sine(0.3, 2.0), feed=(s_ang, 0), ratio=0.7),
              fm.DisplacementDrive("d2", "J2", fm.Ramp(0.2, 0.0), feed=(s_pos, 1),
                                   ratio=-1.3, y0=0.05))
    return model.assemble()


def central(f, x, h=1e-6):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))], -1)


@pytest.mark.parametrize("seed", [0, 1])
def test_fed_rows_derivatives_against_central_differences(seed):
    asm = derivative_system()
    rng = np.random.default_rng(seed)
    q = asm.normalize(asm.initial_q() + 0.2 * rng.standard_normal(asm.n_q))
    qd, t = rng.standard_normal(asm.n_q), 0.37
    drive_rows = [i for i, lab in enumerate(asm.active_row_labels) if lab.startswith("drive")]
    assert len(drive_rows) == 2
    G = asm.constraint_jacobian(q, t).toarray()
    np.testing.assert_allclose(G, central(lambda x: asm.constraint(x, t), q), atol=1e-7)
    # the sensors' bodies are in the drive rows: d1 (joint a-b) reads c, d2 (ground-c) a
    assert np.abs(G[drive_rows[0], 14:21]).max() > 1e-2
    assert np.abs(G[drive_rows[1], 0:7]).max() > 1e-2
    # gamma = d2g/dt2 - G qdd = d/dt (G qd + g_t) along (q + s qd, t + s)
    g_t, gamma = asm.constraint_rates(q, qd, t)

    def gdot(s):
        return asm.constraint_jacobian(q + s * qd, t + s) @ qd \
            + asm.constraint_time_derivative(q + s * qd, t + s)
    h = 1e-6
    np.testing.assert_allclose(gamma, (gdot(h) - gdot(-h)) / (2 * h), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g_t, central(lambda s: asm.constraint(q, s[0]), np.array([t]))[:, 0],
                               atol=1e-7)
    # d(G^T lam)/dq
    lam = rng.standard_normal(asm.n_lam)
    H = asm.constraint_force_jacobian(q, lam, t).toarray()
    H_fd = central(lambda x: asm.constraint_jacobian(x, t).T @ lam, q)
    np.testing.assert_allclose(H, H_fd, atol=1e-6 * (1 + np.abs(H_fd).max()))


def test_feedback_loop_on_its_own_joint_is_refused():
    """A drive fed by the Cardan angle of its own joint with ratio 1 has g = sin(f(t)):
    no gradient (singular); ratio 2 is a regular (if odd) equation theta = -f(t)."""
    disc = fm.RigidBody("disc", 1.0, np.diag([0.2, 0.2, 0.3]))
    for ratio, singular in ((1.0, True), (2.0, False)):
        sensor = fm.OrientationSensor("own", first=disc, output="xyz")
        model = fm.System(name="loop").add(
            fm.Revolute("J", fm.ground, disc, at=(0.0, 0.0, 0.0), axis="z"), sensor,
            fm.AngleDrive("d", "J", 0.1, feed=(sensor, 2), ratio=ratio))
        if singular:
            with pytest.raises(ModelError, match="AngleDrive 'd': feed 'own' with ratio 1 "
                                                 "cancels the driven coordinate"):
                model.assemble()
        else:
            model.assemble()


def test_non_position_sensors_are_refused():
    disc = fm.RigidBody("disc", 1.0, np.diag([0.2, 0.2, 0.3]))
    w = fm.AngularVelocitySensor("w", first=disc)
    rv = fm.OrientationSensor("rv", first=disc)                  # rotvec
    for sensor, what in ((w, "AngularVelocitySensor"), (rv, "OrientationSensor with output "
                                                            "'rotvec'")):
        drive = fm.AngleDrive("d", "J", 0.0, feed=(sensor, 2))
        (msg,) = drive.problems()
        assert msg.startswith(f"AngleDrive 'd': feed: sensor '{sensor.name}' ({what}) is not "
                              "a position-level sensor")
    assert fm.AngleDrive("d", "J", 0.0, feed=(rv, 2), ratio=np.nan).problems()[0] \
        .startswith("AngleDrive 'd': feed: sensor 'rv'")
    pos = fm.PositionSensor("p", first=disc)
    assert "ratio must be a finite number" in \
        fm.DisplacementDrive("d", "J", 0.0, feed=(pos, 0), ratio=np.nan).problems()[0]


def test_case_file_follows_the_crank(tmp_path):
    """The crank swings theta = 1.2 sin(3 t) (its angle drive, closed form); the fed
    follower turns -0.5 of it."""
    rc = main(["run", str(CASE), "--out", str(tmp_path), "--quiet", "--no-plots"])
    assert rc == 0
    with h5py.File(tmp_path / "fed_drive.h5") as f:
        assert f.attrs["status"] == "complete"
        t, crank, follower = (np.reshape(f[k][()], (len(f["time"]), -1))[:, 0] for k in (
            "time", "joints/crank_bearing/coordinates", "joints/follower_bearing/coordinates"))
    np.testing.assert_allclose(crank, 1.2 * np.sin(3.0 * t), atol=1e-9)
    np.testing.assert_allclose(follower, -0.5 * crank, atol=1e-10)


def _case(tmp_path, *edits):
    """The case file with the ``(old, new)`` text replacements ``edits``."""
    p = tmp_path / "case.toml"
    text = CASE.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    p.write_text(text)
    return p


_FEED = 'feed = "crank_angle.c_z"'


@pytest.mark.parametrize(("edits", "message"), [
    ([(_FEED, 'feed = "crank_anlge.c_z"')],
     r'case\.toml: drives\[1\]\.feed: no sensor "crank_anlge" \(sensors: crank_angle\)'),
    ([('output = "xyz"', 'output = "rotvec"'), (_FEED, 'feed = "crank_angle.z"')],
     r"case\.toml: drives\[1\]\.feed: AngleDrive 'follow': feed: sensor 'crank_angle' "
     r"\(OrientationSensor with output 'rotvec'\) is not a position-level sensor"),
    ([('type = "orientation"', 'type = "angular_velocity"'), ('output = "xyz"', ""),
      (_FEED, 'feed = "crank_angle.z"')],
     r"case\.toml: drives\[1\]\.feed: AngleDrive 'follow': feed: sensor 'crank_angle' "
     r"\(AngularVelocitySensor\) is not a position-level sensor"),
    ([(_FEED, "")], r"case\.toml: drives\[1\]\.ratio: only valid with 'feed'"),
])
def test_case_refusals_name_the_drive_and_key(tmp_path, edits, message):
    with pytest.raises(CaseError, match=message) as exc:
        build(load_case(_case(tmp_path, *edits)))
    assert "\n" not in str(exc.value)


def test_cli_refuses_a_singular_feedback_loop(tmp_path, capsys):
    """The follower fed by its own angle with ratio 1: g = sin(-f(t)), singular."""
    path = _case(tmp_path, ('first = "crank"\noutput', 'first = "follower"\noutput'),
                 ("ratio = -0.5", "ratio = 1.0"))
    rc = main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet", "--no-plots"])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert "Traceback" not in err
    assert "AngleDrive 'follow': feed 'crank_angle' with ratio 1 cancels" in \
        err.splitlines()[-1]


def test_check_reports_the_feed(capsys):
    """`flexmbs check` names the feed; the fed row counts as a constraint: two bodies
    (12 freedoms) less two revolutes (10) and two drives leave 0 (Grübler)."""
    assert main(["check", str(CASE)]) == 0
    out = capsys.readouterr().out
    assert "drive  follow           AngleDrive on 'follower_bearing', fed by crank_angle.c_z " \
           "x -0.5" in out
    assert "degrees of freedom: 0 (Grübler count 0)" in out
