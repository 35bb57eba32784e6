"""Invalid models: each is answered by one clear error that names the object.

Reference: the contract of STYLE.md ("say which object, what was expected and what was
found"); every row asserts the exception type and the words that identify the object
and the problem.
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.constraints.drives import AngularVelocityDrive, FromCallables
from flexmbs.constraints.prismatic import Prismatic
from flexmbs.forces.external import ExternalForce
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.forces.stops import JointStop

I3 = 0.01 * np.eye(3)


def bar(name="bar", **kw):
    return fm.RigidBody(name, 1.0, I3, com=(0.5, 0, 0), **kw)


def pendulum(body=None, **joint_kw):
    b = body if body is not None else bar()
    kw = {"at": (0, 0, 0), "axis": "z", **joint_kw}
    return fm.System(gravity=(0, -9.81, 0)).add(fm.Revolute("pin", fm.ground, b, **kw))


def nan_force():
    b = bar()
    nan = FromCallables(lambda t: np.array([np.nan if t > 0.01 else 0.0, 0, 0]),
                        lambda t: np.zeros(3), lambda t: np.zeros(3))
    return pendulum(b).add(ExternalForce("thruster", at=b, force=nan))


def stiff_stop():
    """A pendulum falling onto an unsmoothed stop of stiffness 1e12 N m/rad: the kink and
    the stiffness defeat Newton even after step cuts."""
    b = bar()
    pin = fm.Revolute("pin", fm.ground, b, at=(0, 0, 0), axis="z")
    return fm.System(gravity=(0, -9.81, 0)).add(
        pin, JointStop("stop", joint=pin, lower=-0.3, upper=0.3, k=1e12))


def unreachable():
    b = bar()
    m = fm.System(gravity=(0, -9.81, 0))
    m.add(fm.Spherical("left", fm.ground, b.marker("a", (0, 0, 0)) if False else b, at=(0, 0, 0)),
          fm.Spherical("right", fm.ground.marker("far", (5.0, 0, 0)), b.marker("tip", (1.0, 0, 0))))
    return m


def duplicate():
    a, b = bar("twin"), bar("twin", r0=(1, 0, 0))
    return fm.System().add(fm.Revolute("j1", fm.ground, a, at=(0, 0, 0), axis="z"),
                           fm.Revolute("j2", a, b, at=(1, 0, 0), axis="z"))


def self_joint():
    b = bar()
    return fm.System().add(fm.Revolute("loop", b.marker("m1"), b.marker("m2"), axis="z"))


def unknown_joint_drive():
    return pendulum().add(AngularVelocityDrive("motor", joint="pn", omega=1.0))


def not_in_model_sensor():
    from flexmbs.sensors.translation import PositionSensor
    stray = bar("stray")
    return pendulum().add(PositionSensor("s", stray.marker("m")))


def point_mass_off_its_joint():
    """The mass at (0.7, 0.3, 0), the pin at (0.5, 0, 0): |offset| = sqrt(0.2^2 + 0.3^2)."""
    p = fm.PointMass("slider", 0.5, r0=(0.7, 0.3, 0.0))
    return fm.System().add(fm.Spherical("pin", fm.ground, p, at=(0.5, 0.0, 0.0)))


CASES = [
    # (id, model factory, exception, words that must appear in the message)
    ("negative mass", lambda: pendulum(fm.RigidBody("bar", -2.0, I3)), fm.ModelError,
     ["RigidBody 'bar'", "mass must be positive", "-2.0"]),
    ("zero mass", lambda: pendulum(fm.RigidBody("bar", 0.0, I3)), fm.ModelError,
     ["RigidBody 'bar'", "mass must be positive"]),
    ("inertia not SPD", lambda: pendulum(fm.RigidBody("bar", 1.0, np.diag([1.0, -1.0, 1.0]))),
     fm.ModelError, ["RigidBody 'bar'", "positive definite"]),
    ("inertia not symmetric", lambda: pendulum(fm.RigidBody("bar", 1.0, [[1, 0.5, 0], [0, 1, 0],
                                                                         [0, 0, 1]])),
     fm.ModelError, ["RigidBody 'bar'", "symmetric"]),
    ("inertia triangle inequality", lambda: pendulum(fm.RigidBody("bar", 1.0, np.diag([1, 1, 3.0]))),
     fm.ModelError, ["RigidBody 'bar'", "triangle inequality"]),
    ("inertia wrong shape", lambda: pendulum(fm.RigidBody("bar", 1.0, np.eye(2))), fm.ModelError,
     ["RigidBody 'bar'", "I_S must have shape (3, 3)", "(2, 2)"]),
    ("R0 not a rotation", lambda: pendulum(bar(R0=2 * np.eye(3))), fm.ModelError,
     ["RigidBody 'bar'", "R0 must be a rotation matrix"]),
    ("zero axis", lambda: pendulum(axis=(0, 0, 0)), fm.ModelError,
     ["Revolute 'pin'", "axis must be a non-zero vector"]),
    ("axis wrong shape", lambda: pendulum(axis=(0, 1)), fm.ModelError,
     ["Revolute 'pin'", "axis must have shape (3,)", "(2,)"]),
    ("axis bad name", lambda: pendulum(axis="w"), fm.ModelError,
     ["Revolute 'pin'", "axis must be 'x', 'y', 'z'", "'w'"]),
    ("joint point not finite", lambda: pendulum(at=(0, np.nan, 0)), fm.ModelError,
     ["Revolute 'pin'", "'at' must be a finite point"]),
    ("drive on unknown joint", unknown_joint_drive, fm.ModelError,
     ["AngularVelocityDrive 'motor'", "unknown joint 'pn'", "did you mean 'pin'"]),
    ("duplicate names", duplicate, fm.ModelError, ["'twin'", "name already used"]),
    ("joint body to itself", self_joint, fm.ModelError, ["Revolute 'loop'", "to itself"]),
    ("joint without location", lambda: fm.System().add(fm.Revolute("j", fm.ground, bar(),
                                                                    axis="z")),
     fm.ModelError, ["Revolute 'j'", "give 'at'"]),
    ("gravity wrong shape", lambda: fm.System(gravity=(0, -9.81)).add(bar()), fm.ModelError,
     ["gravity must be a finite 3-vector"]),
    ("no bodies", lambda: fm.System(name="empty"), fm.ModelError, ["System 'empty'", "no bodies"]),
    ("negative spring stiffness", lambda: pendulum().add(PointToPointSpringDamper(
        "spring", fm.ground.marker("o", (0, 1, 0)), bar("b2", r0=(0, 2, 0)), k=-5.0)),
     fm.ModelError, ["'spring'", "k"]),
    ("stop limits reversed", lambda: pendulum().add(JointStop("stop", joint="pin", lower=1.0,
                                                              upper=-1.0, k=1e3)),
     fm.ModelError, ["'stop'", "lower"]),
    ("point mass off its joint point", point_mass_off_its_joint, fm.ModelError,
     ["Spherical 'pin'", "second side is point mass 'slider' at [0.7, 0.3, 0.0]",
      "expected the joint point there, got [0.5, 0.0, 0.0]",
      f"({np.hypot(0.2, 0.3):.4g} m away"]),
    ("sensor on a body not in the model", not_in_model_sensor, fm.ModelError,
     ["'s'", "body 'stray' is not in the model"]),
]


@pytest.mark.parametrize("case_id, factory, exc, words", CASES, ids=[c[0] for c in CASES])
def test_validation_errors(case_id, factory, exc, words):
    with pytest.raises(exc) as info:
        factory().validate()
    msg = str(info.value)
    for w in words:
        assert w in msg, (case_id, msg)
    assert "Traceback" not in msg


def test_unknown_marker_name():
    with pytest.raises(KeyError, match="RigidBody 'bar': no marker 'tip'"):
        bar()["tip"]


def test_initial_conditions_cannot_be_assembled():
    with pytest.raises(fm.ConvergenceError, match="cannot be assembled|did not converge|stagnat"):
        fm.simulate(unreachable(), 0.01, 1e-3)


def test_nan_from_force_law_names_the_element():
    with pytest.raises(fm.ConvergenceError) as info:
        fm.simulate(nan_force(), 0.05, 1e-3)
    assert "force element 'thruster'" in str(info.value)
    assert info.value.t is not None and info.value.step is not None


def test_newton_divergence_is_a_convergence_error():
    with pytest.raises(fm.ConvergenceError) as info:
        fm.simulate(stiff_stop(), 1.0, 1e-2)
    assert "Newton" in str(info.value) and " s (step " in str(info.value)


@pytest.mark.parametrize("kw, words", [({"dt": -1e-3}, "time step dt must be positive"),
                                       ({"t_end": -1.0}, "t_end must be greater")])
def test_bad_solver_settings(kw, words):
    args = {"t_end": 0.1, "dt": 1e-3, **kw}
    with pytest.raises(ValueError, match=words):
        fm.simulate(pendulum(), args.pop("t_end"), args.pop("dt"))


@pytest.mark.parametrize("args, kw, words", [
    (([1], 0.1, 1e-3), {}, "model: expected a flexmbs System .* got list"),
    ((None, "0.1", 1e-3), {}, "t_end: expected a number of seconds, got '0.1' .str."),
    ((None, 0.1, None), {}, "dt: expected a number of seconds, got None"),
    ((None, 0.1, 1e-3), {"t0": True}, "t0: expected a number of seconds, got True")])
def test_arguments_of_the_wrong_type_are_named(args, kw, words):
    """A list for the model or a string for a time: a TypeError naming the argument,
    what was expected and what was found (was an AttributeError inside the assembly)."""
    args = (pendulum() if args[0] is None else args[0], *args[1:])
    with pytest.raises(TypeError, match=words):
        fm.simulate(*args, **kw)


def test_a_misspelt_petsc_type_is_named_before_the_run():
    with pytest.raises(ValueError, match="simulate: petsc_options -ksp_type: expected a KSP "
                                         "type known to PETSc, got 'gmress' .did you mean 'gmres'"):
        fm.simulate(pendulum(), 0.1, 1e-3, petsc_options={"ksp_type": "gmress"})


def test_an_unknown_petsc_option_name_is_named_before_the_run():
    """PETSc's own verdict: an option that none of its SNES, KSP, PC or TS reads
    (``PetscOptionsUsed`` after ``setFromOptions``) would be ignored silently; the real
    ones next to it pass (SNES, TS, KSP/PC by type, a factor package's ``mat_*`` option,
    read only at the factorisation, and flexmbs's own ``newton_mat_type``)."""
    with pytest.raises(ValueError) as err:
        fm.simulate(pendulum(), 0.1, 1e-3, petsc_options={"snes_max_it": 5, "snes_typo": 1})
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("simulate: petsc_options -snes_typo: expected an option")
    assert "got 'snes_typo'" in text and "PETSc would ignore it" in text
    with pytest.raises(ValueError, match="static_equilibrium: petsc_options -ksp_tpye"):
        fm.static_equilibrium(pendulum(), petsc_options={"ksp_tpye": "gmres"})
    from flexmbs.integrate.options import check_option_names
    check_option_names({"snes_max_it": 5, "ts_type": "beuler", "ksp_type": "gmres",
                        "ksp_gmres_restart": 40, "pc_type": "jacobi", "snes_monitor": None,
                        "mat_mumps_icntl_24": 1, "newton_mat_type": "aij", "-snes_rtol": 1e-3})
    r = fm.simulate(pendulum(), 0.01, 1e-3, petsc_options={"snes_max_it": 30})
    assert r.t[-1] == pytest.approx(0.01)


@pytest.mark.parametrize("opts, key, expected", [
    ({"snes_max_it": "abc"}, "snes_max_it", "an integer"),
    ({"snes_rtol": "1e-8x"}, "snes_rtol", "a real number"),
    ({"ts_adapt_type": "none", "ts_max_snes_failures": "many"}, "ts_max_snes_failures",
     "an integer"),
    ({"snes_linesearch_damping": [0.5], "snes_max_it": 5}, "snes_linesearch_damping",
     "a real number"),
])
def test_a_bad_petsc_option_value_is_one_line(opts, key, expected):
    """PETSc's error 63 in setFromOptions (an unreadable value) is one ValueError line
    naming the option, the type PETSc's reader expected and the value, before the run."""
    from petsc4py import PETSc
    with pytest.raises(ValueError) as err:
        fm.simulate(pendulum(), 0.01, 1e-3, petsc_options=opts)
    assert not isinstance(err.value, PETSc.Error)
    text = str(err.value)
    assert "\n" not in text
    assert text == (f"simulate: petsc_options -{key}: expected {expected}, got "
                    f"{str(opts[key])!r}")


def test_options_that_would_end_the_process_are_refused():
    """pc_type ilu with SuperLU (the default factor package; its ILU aborts the process,
    "MC64 functionality not available") and ts_type alpha2 with method "ts" (a TS of
    second-order equations: a segmentation fault on the first-order GGL form): one line
    naming the key, what is expected and what was found, before the run.  ilu with PETSc's
    own factorisation, and alpha2 under genalpha (no PETSc TS: a warning) pass."""
    from flexmbs.integrate.options import check_option_names
    with pytest.raises(ValueError) as err:
        fm.simulate(pendulum(), 0.01, 1e-3, petsc_options={"pc_type": "ilu"})
    text = str(err.value)
    assert "\n" not in text and text.startswith("simulate: petsc_options -pc_type: expected")
    assert "got 'ilu' with superlu" in text
    with pytest.raises(ValueError) as err:
        fm.simulate(pendulum(), 0.01, 1e-3, method="ts", petsc_options={"ts_type": "alpha2"})
    text = str(err.value)
    assert "\n" not in text and text.startswith("simulate: petsc_options -ts_type: expected a "
                                                "TS type of first-order equations")
    assert "got 'alpha2'" in text
    check_option_names({"pc_type": "ilu", "pc_factor_mat_solver_type": "petsc"})
    check_option_names({"ts_type": "alpha"}, method="ts")
    check_option_names({"ts_type": "alpha2"}, method="genalpha")


def test_an_option_of_another_type_is_a_warning_not_a_refusal(caplog):
    """ksp_gmres_restart and ksp_rtol are read only by a Krylov KSP: under the default
    preonly KSP PETSc ignores them (one WARNING line naming the option, the type that
    reads it and this run's), where no probe reads snes_typo (refused)."""
    from flexmbs.integrate.options import check_option_names
    for opts in ({"ksp_gmres_restart": 40}, {"ksp_rtol": 1e-8},
                 {"ksp_type": "preonly", "ksp_gmres_restart": 40}):
        caplog.clear()
        with caplog.at_level("WARNING", logger="flexmbs.integrate.options"):
            check_option_names(opts, where="w")
        lines = [r.getMessage() for r in caplog.records]
        name = [k for k in opts if k != "ksp_type"][0]
        assert len(lines) == 1 and lines[0].startswith(f"w -{name}: read only under "
                                                       f"another ksp_type")
        assert "this run uses preonly: no effect" in lines[0]
    with pytest.raises(ValueError, match="-snes_typo"):
        check_option_names({"snes_typo": 1, "ksp_rtol": 1e-8})


def test_options_of_the_run_configuration_are_accepted(caplog):
    """The probe is the real solver's configuration: the method's own defaults (ts:
    ts_type bdf, so ts_bdf_order is read and changes the run), the global database's
    ``<prefix>*`` entries (fmbs_ksp_type gmres: ksp_gmres_restart read), and inner
    solvers' options (sub_pc_type under pc_type bjacobi, read at the PC's setup) are not
    judged: none refused, none warned."""
    from petsc4py import PETSc
    from flexmbs.integrate.options import check_option_names
    with caplog.at_level("WARNING", logger="flexmbs.integrate.options"):
        check_option_names({"ts_bdf_order": 3, "ts_adapt_safety": 0.8}, method="ts")
        check_option_names({"pc_type": "bjacobi", "sub_pc_type": "ilu",
                            "fieldsplit_0_pc_type": "lu", "mg_levels_ksp_type": "cg"})
        glob = PETSc.Options()
        glob.setValue("fmbs_ksp_type", "gmres")
        try:
            check_option_names({"ksp_gmres_restart": 50})
        finally:
            glob.delValue("fmbs_ksp_type")
    assert not caplog.records
    # ts_bdf_order changes the run: order 3 takes other steps than the default order 2
    r2 = fm.simulate(pendulum(), 0.05, 1e-3, method="ts")
    r3 = fm.simulate(pendulum(), 0.05, 1e-3, method="ts", petsc_options={"ts_bdf_order": 3})
    assert len(r2.t) != len(r3.t) or not np.array_equal(r2.q, r3.q)
    # under genalpha (no PETSc TS) it is a warning naming the method
    with caplog.at_level("WARNING", logger="flexmbs.integrate.options"):
        check_option_names({"ts_bdf_order": 3}, where="w")
    assert "read only by method 'ts'" in caplog.records[-1].getMessage()


def test_a_positional_name_of_system_is_named():
    """``fm.System("x")`` puts the name where gravity goes: one TypeError naming the
    class, the argument, what was expected and what was found, at construction (it was a
    float conversion error of the validation)."""
    with pytest.raises(TypeError) as err:
        fm.System("x")
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("System: gravity (the first positional argument): expected a "
                           "3-vector [m/s^2], got 'x' (str)")
    assert "fm.System(name='x')" in text
    with pytest.raises(TypeError, match=r"System: name: expected a string, got 3 \(int\)"):
        fm.System(name=3)
    assert fm.System((0.0, -9.81, 0.0), "m").gravity == (0.0, -9.81, 0.0)
    # gravity replaced later by a string: the validation names it, no conversion error
    m = pendulum()
    m.gravity = "down"
    with pytest.raises(fm.ModelError, match="gravity must be a finite 3-vector, got down"):
        m.validate()


def test_point_mass_at_its_joint_point_is_valid():
    """The same joint with 'at' at the mass, or with no 'at' (the mass point): valid."""
    for at in ((0.7, 0.3, 0.0), None):
        p = fm.PointMass("slider", 0.5, r0=(0.7, 0.3, 0.0))
        kw = {} if at is None else {"at": at}
        first = fm.ground if at is not None else fm.ground.marker("o", (0.7, 0.3, 0.0))
        fm.System().add(fm.Spherical("pin", first, p, **kw)).validate()


def test_a_point_mass_on_a_guide_may_have_its_joint_point_along_the_guide():
    """A ball in a tube tilted 30 degrees, 'at' on the tube's axis 0.5 m up from the ball:
    a guide leaves the translation free, so the offset changes nothing -- the ball slides
    as s(t) = s0 + g sin(30 deg) t^2 / 2 (closed form), not refused."""
    from flexmbs.constraints.sphere_in_tube import SphereInTube
    a = np.radians(30.0)
    ax = np.array([np.cos(a), -np.sin(a), 0.0])
    p = fm.PointMass("ball", 1.0, r0=0.5 * ax)
    model = fm.System(gravity=(0, -9.81, 0)).add(p, SphereInTube("tube", fm.ground, p,
                                                                  at=(0, 0, 0), axis=ax))
    res = fm.simulate(model, 0.5, 1e-3)
    s = 0.5 + 0.5 * 9.81 * np.sin(a) * 0.5 ** 2
    np.testing.assert_allclose(res.body_q("ball")[-1, :3], s * ax, atol=1e-5)
