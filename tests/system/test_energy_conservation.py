"""Energy bookkeeping of whole models: ``E = T + V_g + V_e`` (with the force elements'
potentials) is a first integral of a conservative model.

Reference: conservation of energy.  Undamped models without drives or non-conservative
loads are run by ``flexmbs.simulate`` with its defaults (generalized-α, rho_inf = 0.9,
which dissipates O(h^2)); the relative drift ``max|E - E0| / max(T, |E0|)`` must be small
and fall at order 2 when dt is halved (slope of log(drift) over log(dt), fitted on three
steps).  Before the force elements had potentials the spring pendulum's "total" rose by
the spring energy, of the order of T itself.  With a damper, ``dE/dt = -d phid^2 <= 0``.
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.cli.run import summary
from flexmbs.kinematics.rotation import matrix_from_axis_angle
from flexmbs.post.energy import energy_exchanges, is_conservative, relative_drift

DTS = (4e-3, 2e-3, 1e-3)


def _arm(angle_deg, name="arm", **kw):
    """A steel bar of 0.5 m along its body x axis, pinned at its end, at angle_deg from
    hanging straight down (about z)."""
    R0 = matrix_from_axis_angle([0, 0, 1], np.deg2rad(angle_deg) - np.pi / 2)
    return fm.RigidBody.box(name, (0.5, 0.03, 0.03), rho=7850.0, com=(0.25, 0, 0), R0=R0, **kw)


def spring_pendulum(d=0.0):
    """Bar on a revolute with a torsion spring (k = 20 N m/rad), released at 60 degrees."""
    arm = _arm(60.0)
    pin = fm.Revolute("pin", fm.ground, arm, at=(0, 0, 0), axis="z")
    model = fm.System(gravity=(0, -9.81, 0), name="spring_pendulum")
    return model.add(pin, fm.RotationalSpringDamper("spring", pin, k=20.0, d=d))


def bushing_mount():
    """Box on a six-component bushing to ground, launched with a 3-D velocity and spin."""
    R0 = matrix_from_axis_angle(np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0), 0.3)
    block = fm.RigidBody.box("block", (0.2, 0.1, 0.05), rho=2700.0, com=(0.05, 0.02, 0.0),
                             R0=R0, v0=(0.1, -0.2, 0.05), omega0=(1.0, -2.0, 3.0))
    model = fm.System(gravity=(0, 0, -9.81), name="bushing_mount")
    return model.add(fm.Bushing("mount", fm.ground, block, K=(4e3, 5e3, 6e3, 40.0, 50.0, 60.0)))


def cord_and_stop():
    """Bar on a revolute pulled by a point-to-point spring and a constant inertial force
    into a smoothed joint stop (engaged from 0.5 rad; the bar swings to about 0.85)."""
    arm = _arm(30.0)
    tip = (arm, matrix_from_axis_angle([0, 0, 1], np.deg2rad(30.0) - np.pi / 2) @ [0.5, 0, 0])
    pin = fm.Revolute("pin", fm.ground, arm, at=(0, 0, 0), axis="z")
    model = fm.System(gravity=(0, -9.81, 0), name="cord_and_stop")
    return model.add(
        pin,
        fm.PointToPointSpringDamper("cord", (fm.ground, (0.6, 0.2, 0.0)), tip, k=300.0, l0=0.3),
        fm.JointStop("stop", pin, lower=-0.4, upper=0.5, k=400.0, smoothing=0.05),
        fm.ExternalForce("push", tip, (3.0, -1.0, 0.0)))


def _drifts(make, t_end=1.0):
    return [relative_drift(fm.simulate(make(), t_end, dt).energy) for dt in DTS]


@pytest.mark.parametrize("make, finest", [(spring_pendulum, 2e-6), (bushing_mount, 2e-4),
                                          (cord_and_stop, 1e-3)])
def test_energy_is_conserved_to_second_order(make, finest):
    assert is_conservative(make())
    drifts = _drifts(make)
    order = np.polyfit(np.log(DTS), np.log(drifts), 1)[0]
    assert drifts[-1] < finest, drifts
    assert abs(order - 2.0) < 0.2, (order, drifts)


def test_spring_energy_is_part_of_the_total():
    """The torsion spring's energy k/2 phi^2 is in potential_elastic (closed form from the
    recorded joint angle), and it is a sizeable part of the exchange with T and V_g."""
    res = fm.simulate(spring_pendulum(), 0.5, 2e-3)
    phi = res.joint_coordinates["pin"][:, 0]
    np.testing.assert_allclose(res.energy["potential_elastic"], 10.0 * phi**2, rtol=1e-12,
                               atol=1e-15)
    assert res.energy["potential_elastic"].max() > res.energy["kinetic"].max()


def test_damped_energy_never_rises():
    """dE/dt = -d phid^2 <= 0: the energy decreases, up to the integrator's error."""
    res = fm.simulate(spring_pendulum(d=0.3), 1.0, 2e-3)
    E, T = res.energy["total"], res.energy["kinetic"]
    assert np.diff(E).max() < 1e-6 * T.max()
    assert E[-1] < E[0] - 0.05 * T.max()
    assert [str(x) for x in energy_exchanges(spring_pendulum(d=0.3))] == \
        ["force element 'spring' (damping d = 0.3 N m s/rad)"]


def test_summary_of_a_conservative_model():
    model = spring_pendulum()
    res = fm.simulate(model, 0.2, 2e-3)
    line = next(x for x in summary(res, 1.0, model).splitlines() if "energy" in x)
    assert line.endswith("of max(T, |E0|) (no drive, damper or external work)"), line
    assert "energy conserved to" in line
    value = float(line.split("energy conserved to ")[1].split()[0])
    assert value == pytest.approx(relative_drift(res.energy), rel=1e-2)
    assert value < 1e-5


def driven_double_pendulum():
    """Two bars: the first driven at constant speed, the second on a damped torsion spring
    with an applied torque and a sinusoidal force."""
    a1 = _arm(90.0, "a1")
    a2 = fm.RigidBody.box("a2", (0.5, 0.03, 0.03), rho=7850.0, com=(0.25, 0, 0), r0=(0.5, 0, 0))
    pin1 = fm.Revolute("pin1", fm.ground, a1, at=(0, 0, 0), axis="z")
    pin2 = fm.Revolute("pin2", a1, a2, at=(0.5, 0, 0), axis="z")
    model = fm.System(gravity=(0, -9.81, 0), name="driven")
    return model.add(
        pin1, pin2, fm.AngularVelocityDrive("motor", joint="pin1", omega=2.0),
        fm.RotationalSpringDamper("spring", pin2, k=5.0, d=0.5),
        fm.ExternalTorque("tq", a2, (0.0, 0.0, 0.2)),
        fm.ExternalForce("shake", (a2, (1.0, 0, 0)), fm.Sine((0.0, 1.0, 0.0), 10.0)),
        fm.PointToPointSpringDamper("cord", (fm.ground, (1.0, 1.0, 0.0)), (a2, (1.0, 0, 0)),
                                    k=50.0))


def test_summary_names_what_exchanges_energy():
    model = driven_double_pendulum()
    assert not is_conservative(model)
    res = fm.simulate(model, 0.1, 2e-3)
    line = next(x for x in summary(res, 1.0, model).splitlines() if "energy" in x)
    assert "energy conserved" not in line
    for part in ("drive 'motor' (prescribed motion",
                 "force element 'spring' (damping d = 0.5 N m s/rad)",
                 "force element 'tq' (applied torque", "force element 'shake' (time-varying"):
        assert part in line, line
    assert "'cord'" not in line       # an undamped spring exchanges nothing
    # the result carries its model (Result.extra["model"]): the same line without it
    assert next(x for x in summary(res, 1.0).splitlines() if "energy" in x) == line


def test_structural_damping_is_named():
    """A flexible body applying D_e qd_e (damping on, D_e != 0) exchanges energy; with its
    damping switched off, or D_e = 0, it does not (stand-ins with the FlexibleBody fields)."""
    from types import SimpleNamespace as NS

    def model(damping, D_e):
        body = NS(name="rod", damping=damping, body=NS(D_e=D_e))
        return NS(drives=[], forces=[], bodies=[body])

    assert [str(x) for x in energy_exchanges(model(True, np.diag([0.1, 0.2])))] == \
        ["body 'rod' (structural damping D_e qd_e)"]
    assert is_conservative(model(False, np.diag([0.1, 0.2])))
    assert is_conservative(model(True, np.zeros((2, 2))))
