"""Rigid-body core: shapes, Jacobians, endless spin, TS cross-check, statics, sensors, files.

References are cited per test: numerical quadrature of the mass integrals, central
differences, conservation laws, Hooke's law, and a second integration scheme.
"""
import h5py
import numpy as np
import pytest
from scipy import integrate

import flexmbs as fm
from flexmbs.io.results import read_results
from flexmbs.kinematics.rotation import A_of, G_of, matrix_from_axis_angle


def _quad_inertia(inside, bounds, rho):
    """Mass and inertia about the origin by scipy's tplquad over an indicator domain."""
    (x0, x1), (y0, y1), (z0, z1) = bounds

    def integ(f):
        return integrate.tplquad(lambda z, y, x: rho * f(x, y, z) * inside(x, y, z),
                                 x0, x1, y0, y1, z0, z1, epsabs=1e-12, epsrel=1e-9)[0]
    m = integ(lambda x, y, z: 1.0)
    Ixx = integ(lambda x, y, z: y * y + z * z)
    Izz = integ(lambda x, y, z: x * x + y * y)
    return m, Ixx, Izz


def test_box_against_quadrature():
    """Box inertia vs direct quadrature of int rho (y^2 + z^2) dV."""
    a, b, c, rho = 0.3, 0.2, 0.1, 2700.0
    body = fm.RigidBody.box("b", (a, b, c), rho)
    m, Ixx, Izz = _quad_inertia(lambda x, y, z: 1.0,
                                ((-a / 2, a / 2), (-b / 2, b / 2), (-c / 2, c / 2)), rho)
    assert body.m == pytest.approx(m, rel=1e-9)
    assert body.I_S[0, 0] == pytest.approx(Ixx, rel=1e-9)
    assert body.I_S[2, 2] == pytest.approx(Izz, rel=1e-9)


def test_cylinder_and_sphere_against_quadrature():
    """Cylinder (axis z) and sphere by quadrature in cylindrical/spherical shells."""
    r, L, rho = 0.05, 0.2, 7850.0
    cyl = fm.RigidBody.cylinder("c", r, L, rho, axis="z")
    m = integrate.quad(lambda s: rho * 2 * np.pi * s * L, 0, r)[0]
    Izz = integrate.quad(lambda s: rho * 2 * np.pi * s**3 * L, 0, r)[0]
    Ixx = integrate.dblquad(lambda z, s: rho * 2 * np.pi * s * (0.5 * s * s + z * z),
                            0, r, -L / 2, L / 2)[0]
    assert (cyl.m, cyl.I_S[2, 2], cyl.I_S[0, 0]) == pytest.approx((m, Izz, Ixx), rel=1e-9)
    sph = fm.RigidBody.sphere("s", r, rho)
    m = integrate.quad(lambda s: rho * 4 * np.pi * s * s, 0, r)[0]
    I = integrate.quad(lambda s: rho * 4 * np.pi * s**4 * 2 / 3, 0, r)[0]
    assert (sph.m, sph.I_S[1, 1]) == pytest.approx((m, I), rel=1e-9)


def _fd(f, x, h=1e-6):
    return np.column_stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rigid_body_tangent_against_central_differences(seed):
    rng = np.random.default_rng(seed)
    I = rng.normal(size=(3, 3))
    I = I @ I.T + 3 * np.eye(3)
    body = fm.RigidBody("b", 2.5, I * 0.1, com=rng.normal(size=3) * 0.2)
    q = rng.normal(size=7)
    q[3:] /= np.linalg.norm(q[3:])
    qd, qdd, g = rng.normal(size=7), rng.normal(size=7), np.array([0.3, -9.81, 1.0])
    K, C, M = body.tangent(q, qd, qdd, g)
    tol = 1e-7 * (1 + np.abs(body.residual(q, qd, qdd, g)).max())
    assert np.abs(K - _fd(lambda x: body.residual(x, qd, qdd, g), q)).max() < tol
    assert np.abs(C - _fd(lambda x: body.residual(q, x, qdd, g), qd)).max() < tol
    assert np.abs(M - _fd(lambda x: body.residual(q, qd, x, g), qdd)).max() < tol


def test_system_tangent_against_central_differences():
    """Assembled K, C, M (bodies, joints, a damped spring) against differences of r; the
    set-up's ``tangent_mass`` is the tangent's ``M``."""
    sys_ = fm.System(gravity=(0, -9.81, 0))
    a = fm.RigidBody.box("a", (0.4, 0.05, 0.05), 7850.0, com=(0.2, 0, 0))
    b = fm.RigidBody.box("b", (0.3, 0.05, 0.05), 7850.0, com=(0.15, 0, 0), r0=(0.4, 0, 0))
    sys_.add(fm.Revolute("j1", fm.ground, a, at=(0, 0, 0), axis="z"),
             fm.Spherical("j2", a, b, at=(0.4, 0, 0)),
             fm.PointToPointSpringDamper("s", fm.ground.marker("o", (0, 0.5, 0)),
                                         (b, (0.7, 0, 0)), k=300.0, d=2.0))
    asm = sys_.assemble()
    rng = np.random.default_rng(3)
    q = asm.normalize(asm.initial_q() + 0.05 * rng.normal(size=asm.n_q))
    qd, qdd = rng.normal(size=asm.n_q), rng.normal(size=asm.n_q)
    lam = rng.normal(size=asm.n_lam)
    K, C, _ = asm.tangent(q, qd, qdd, lam, 0.1)
    assert np.abs(K.toarray() - _fd(lambda x: asm.residual(x, qd, qdd, lam, 0.1), q)).max() < 1e-5
    assert np.abs(C.toarray() - _fd(lambda x: asm.residual(q, x, qdd, lam, 0.1), qd)).max() < 1e-6
    M = asm.tangent_mass(q, qd, qdd, lam, 0.1)          # M alone (the set-up's)
    assert np.abs(M.toarray() - _fd(lambda x: asm.residual(q, qd, x, lam, 0.1), qdd)).max() < 1e-6
    assert (M != asm.tangent(q, qd, qdd, lam, 0.1)[2]).nnz == 0
    # M = M(q): the kept M at the same q (other qd, qdd, lam, t) is the full tangent's
    # there; a changed q gives the new one, and the result is the caller's copy
    qd2, qdd2, lam2 = rng.normal(size=asm.n_q), rng.normal(size=asm.n_q), 0 * lam
    M2 = asm.tangent_mass(q, qd2, qdd2, lam2, 0.7)
    assert (M2 != asm.tangent(q, qd2, qdd2, lam2, 0.7)[2]).nnz == 0
    M2.data[:] = 0.0
    assert (asm.tangent_mass(q, qd2, qdd2, lam2, 0.7) != M).nnz == 0
    q3 = asm.normalize(q + 0.05 * rng.normal(size=asm.n_q))
    M3 = asm.tangent_mass(q3, qd, qdd, lam, 0.1)
    assert (M3 != asm.tangent(q3, qd, qdd, lam, 0.1)[2]).nnz == 0 and (M3 != M).nnz > 0


def test_body_spins_indefinitely():
    """Free asymmetric body spinning about its major axis for 30 revolutions: the Euler
    parameters stay unit, angular momentum (inertial) and energy are conserved, and the
    rotation angle grows as omega t (torque-free rotation about a principal axis)."""
    body = fm.RigidBody.box("spinner", (0.3, 0.2, 0.1), 1000.0, omega0=(0, 0, 60.0))
    model = fm.System(name="spin").add(body)
    res = fm.simulate(model, 3.0, 1e-3, rho_inf=0.9)
    q, qd = res.body_q("spinner"), res.qd[:, res.bodies["spinner"]]
    assert np.abs(np.linalg.norm(q[:, 3:7], axis=1) - 1).max() < 1e-10
    L = np.array([A_of(x[3:7]) @ body.I_S @ A_of(x[3:7]).T @ (2 * G_of(x[3:7]) @ v[3:7])
                  for x, v in zip(q, qd)])
    # measured: 2.2e-6 (momentum) and 4.3e-6 (energy) relative over 30 revolutions, the
    # O(h^2) start-up error of generalized-alpha's velocity at h omega = 0.06, no trend
    nL = np.linalg.norm(L[0])
    assert np.abs(L - L[0]).max() < 5e-6 * nL
    assert np.ptp(res.energy["total"]) < 1e-5 * res.energy["total"][0]
    angle = np.unwrap(np.array([np.arctan2(A_of(x[3:7])[1, 0], A_of(x[3:7])[0, 0]) for x in q]))
    # phase error of the second-order scheme, O((h omega)^2): measured 7.7e-5 relative
    assert angle[-1] == pytest.approx(60.0 * 3.0, rel=2e-4)


def test_ts_scheme_agrees_with_generalized_alpha():
    """Second formulation: PETSc TS (BDF on the stabilised index-2 GGL form) against
    generalized-alpha on the compound pendulum, same motion to within the schemes' error."""
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0),
                           R0=matrix_from_axis_angle([0, 0, 1], -0.5))
    model = fm.System(gravity=(0, -9.81, 0)).add(fm.Revolute("pin", fm.ground, rod,
                                                             at=(0, 0, 0), axis="z"))
    out = np.linspace(0.05, 1.0, 20)
    ga = fm.simulate(model, 1.0, 1e-3, rho_inf=0.9, output_dt=0.05)
    ts = fm.simulate(model, 1.0, 1e-3, method="ts", rtol=1e-7, atol=1e-9, output_dt=0.05)
    a_ga = ga.joint_coordinates["pin"][-20:, 0]
    a_ts = ts.joint_coordinates["pin"][-20:, 0]
    assert np.allclose(ga.t[-20:], out) and np.allclose(ts.t[-20:], out)
    assert np.abs(a_ga - a_ts).max() < 1e-4
    # both record t0 and the output times (TS left out t0 before): the same rows, the
    # same consistent initial state
    assert ts.t.shape == ga.t.shape and np.allclose(ts.t, ga.t, rtol=0, atol=1e-12)
    assert ts.t[0] == 0.0
    assert np.allclose(ts.q[0], ga.q[0], rtol=0, atol=1e-12)
    odd = fm.simulate(model, 0.1, 1e-3, method="ts", output_dt=0.013)
    assert np.allclose(odd.t, np.r_[0.0, np.arange(1, 8) * 0.013, 0.1])


def test_static_equilibrium_hanging_spring():
    """A block hanging from a vertical spring, guided by a prismatic joint: extension
    m g / k (Hooke), reaction-free guide; a second block on a pendulum at rest hangs down."""
    k, m = 2000.0, 3.0
    block = fm.RigidBody("block", m, 0.01 * np.eye(3), r0=(0, -0.5, 0))
    model = fm.System(gravity=(0, -9.81, 0))
    model.add(fm.Prismatic("guide", fm.ground, block, at=(0, -0.5, 0), axis="y"),
              fm.PointToPointSpringDamper("spring", fm.ground.marker("top", (0, 0, 0)), block,
                                          k=k, l0=0.5))
    eq = fm.static_equilibrium(model)
    assert eq.body_q("block")[1] == pytest.approx(-0.5 - m * 9.81 / k, rel=1e-10)
    assert np.abs(eq.reactions["guide"][:3]).max() < 1e-9


def test_sensors_and_result_file(tmp_path):
    """Sensors are recorded at every output step and agree with the body coordinates;
    the HDF5 file holds the same rows (written incrementally, status 'complete')."""
    rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0),
                           R0=matrix_from_axis_angle([0, 0, 1], -1.0))
    tip = rod.marker("tip", (1.0, 0, 0))
    model = fm.System(gravity=(0, -9.81, 0), name="pend")
    model.add(fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"),
              fm.PositionSensor("tip_pos", tip), fm.VelocitySensor("tip_vel", tip))
    path = tmp_path / "pend.h5"
    res = fm.simulate(model, 0.2, 1e-3, output=str(path))
    q = res.body_q("rod")
    tip_q = np.array([x[:3] + A_of(x[3:7]) @ [1.0, 0, 0] for x in q])
    assert np.abs(res.sensors["tip_pos"] - tip_q).max() < 1e-12
    v_fd = np.gradient(tip_q, res.t, axis=0)
    assert np.abs(res.sensors["tip_vel"][5:-5] - v_fd[5:-5]).max() < 1e-3
    data = read_results(path)
    assert data["attrs"]["status"] == "complete"
    assert np.allclose(data["time"], res.t)
    assert np.allclose(data["sensors"]["tip_pos"], res.sensors["tip_pos"])
    assert data["joints"]["pin"]["reaction"].shape == (len(res.t), 6)
    with h5py.File(path) as f:
        assert f["energy/total"].attrs["unit"] == "J"


def test_failed_run_keeps_steps(tmp_path):
    """A run that fails mid-way leaves a readable file with every step up to the failure."""
    rod = fm.RigidBody("bar", 1.0, 0.01 * np.eye(3), com=(0.5, 0, 0))
    bad = fm.FromCallables(lambda t: np.array([0, np.nan if t > 0.0205 else 0.0, 0]),
                           lambda t: np.zeros(3), lambda t: np.zeros(3))
    model = fm.System(gravity=(0, -9.81, 0)).add(
        fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"),
        fm.ExternalForce("f", at=rod, force=bad))
    path = tmp_path / "fail.h5"
    with pytest.raises(fm.ConvergenceError):
        fm.simulate(model, 0.1, 1e-3, output=str(path))
    data = read_results(tmp_path / "fail.failed.h5")      # docs/errors.md: file names
    assert data["attrs"]["status"] == "failed"
    # steps up to the failure, including the partial steps of the step-size cuts
    assert len(data["time"]) >= 21 and 0.020 <= data["time"][-1] < 0.0206
    assert np.allclose(data["time"][:21], np.arange(21) * 1e-3)
