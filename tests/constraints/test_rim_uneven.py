"""The rim of an elastic wheel with nodes unevenly spaced in angle (a ring of an
unstructured or graded mesh; :mod:`flexmbs.constraints.rim_curve`: circle part by least
squares plus a periodic cubic spline), against independent references:

* a circle through unevenly spaced nodes (off-centre, tilted axis) and rigid-body mode
  rows are reproduced to round-off, with their first and second derivatives (closed form);
* a smooth non-circular rest converges at the cubic spline's orders, 4 in ``u`` and 2
  in ``u''`` (convergence rate), and ``u``, ``u'``, ``u''`` are continuous at the nodes;
* the ring of meshes/ring_hex27_24.msh with its node angles remapped (rim steps 0.7 to
  1.3 times the mean; ``uneven_mesh`` of test_rim_rolling.py) is the circle of radius
  0.1 m (closed form) and, very stiff, rolls as the rigid
  :class:`~flexmbs.constraints.rolling.Rolling` disc (a second formulation) with its
  contact point at rest and T + V conserved;
* a graded tet10 ring meshed by gmsh (rim steps 0.03 to 0.074 rad), soft, rolls and
  turns with its contact point at rest and T + V conserved (drift falling with dt);
* evenly spaced rims keep the trigonometric rule (its basis and coefficients, bit for
  bit);
* uneven node sets that are no ring are one-line refusals.
"""
from __future__ import annotations

from pathlib import Path

import gmsh
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.constraints.rim_curve import rim_curve, trig_basis, trig_coefficients
from flexmbs.constraints.velocity import fixed_motion
from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.io.mesh import read_mesh
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model

from .test_rim_rolling import FLOOR, GRAV, R_RIM, RHO, centre_gap, elastic_model, ring, start

AXIS = np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)
CENTRE = np.array([0.3, -0.2, 0.05])


def ring_points(phi, radius=R_RIM):
    """Points at angles ``phi`` on the circle of ``radius`` about ``CENTRE`` normal to
    ``AXIS``, and the in-plane unit vectors ``(e1, e2)`` of the angle."""
    e1 = np.cross(AXIS, [0.0, 0.0, 1.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(AXIS, e1)
    radius = np.broadcast_to(radius, np.shape(phi))
    return CENTRE + np.outer(radius * np.cos(phi), e1) + np.outer(radius * np.sin(phi), e2), \
        e1, e2


def graded_angles(N, jitter=0.2):
    """``N`` angles graded around the circle (steps 0.6 to 1.4 of the mean), jittered by
    up to ``jitter`` of the mean step."""
    k = 2.0 * np.pi * np.arange(N) / N
    rng = np.random.default_rng(0)
    return k + 0.4 * np.sin(k) + jitter * (2.0 * np.pi / N) * rng.uniform(-1, 1, N)


def test_circle_and_rigid_modes_to_round_off():
    N = 30
    phi = graded_angles(N)
    X, e1, e2 = ring_points(phi)
    # mode rows: translation and small rotation fields (v = t, v = w x (X - o))
    w, t, o = np.array([0.3, -1.0, 0.5]), np.array([1.0, 2.0, -0.5]), np.array([0.1, 0.0, 0.2])
    modes = np.stack([np.tile(t, (N, 1)), np.cross(w, X - o)], axis=2)
    perm = np.random.default_rng(1).permutation(N)          # node ids in any order
    curve = rim_curve(X, modes, perm, AXIS, "x")
    assert curve.spline is not None
    q_e = np.array([0.7, -0.4])
    U = curve.coefficients(q_e)
    # psi from the first node; the curve's angle is phi_1 + psi about the fitted centre
    phi_1 = phi[curve.nodes[0]]
    err = np.zeros(3)
    for psi in np.linspace(-1.0, 7.5, 97):
        p, _, _ = ring_points(np.array([phi_1 + psi]))
        c, s = np.cos(phi_1 + psi), np.sin(phi_1 + psi)
        dp, ddp = R_RIM * (-s * e1 + c * e2), -R_RIM * (c * e1 + s * e2)
        exact = (p[0] + t * q_e[0] + np.cross(w, p[0] - o) * q_e[1],
                 dp + np.cross(w, dp) * q_e[1], ddp + np.cross(w, ddp) * q_e[1])
        err = np.maximum(err, [np.abs(curve.point(U, psi, k) - exact[k]).max()
                               for k in range(3)])
    print("circle + rigid modes: u, u', u'' errors", err)
    assert err.max() < 1e-12                                   # measured 1.8e-13 (u'')
    assert np.abs(curve.centre - CENTRE).max() < 1e-14
    assert np.abs(np.tensordot(curve.B_nodes, curve.Phi_c, axes=1)
                  - modes[curve.nodes]).max() < 1e-14                           # nodes


def test_smooth_rest_converges_at_the_spline_orders():
    """Nodal values ``f = cos 3 phi + sin 5 phi`` (not in the circle part): the maximum
    error of ``u`` falls at order 4, of ``u''`` at order 2 as the nodes double; ``u``,
    ``u'``, ``u''`` do not jump at a node."""
    errs = []
    for N in (40, 80, 160):
        phi = graded_angles(N, jitter=0.0)
        X, _, _ = ring_points(phi)
        f = lambda a: np.cos(3 * a) + np.sin(5 * a)                       # noqa: E731
        f2 = lambda a: -9 * np.cos(3 * a) - 25 * np.sin(5 * a)            # noqa: E731
        modes = np.zeros((N, 3, 1))
        modes[:, 0, 0] = f(phi)
        curve = rim_curve(X, modes, np.arange(N), AXIS, "x")
        phi_1 = phi[curve.nodes[0]]
        psi = np.linspace(0.0, 2.0 * np.pi, 2001)
        Phi = curve.Phi_c[:, 0, 0]                             # coefficients of f
        e0 = max(abs(curve.basis(a) @ Phi - f(phi_1 + a)) for a in psi)
        e2 = max(abs(curve.basis(a, 2) @ Phi - f2(phi_1 + a)) for a in psi)
        errs.append((e0, e2))
        # continuous (u''' bounded) at an inner node and across the periodic seam
        for knot in (curve.angle_of_node(N // 3), 0.0, 2.0 * np.pi):
            for k in range(3):
                jump = curve.basis(knot - 1e-9, k) @ Phi - curve.basis(knot + 1e-9, k) @ Phi
                assert abs(jump) < 1e-9 * 10 ** (k + 2)
    errs = np.array(errs)
    rates = np.log2(errs[:-1] / errs[1:])
    print("errors", errs.tolist(), "rates", rates.tolist())
    assert np.all(rates[:, 0] > 3.5) and np.all(rates[:, 1] > 1.6)


def test_uneven_mesh_rim_is_the_circle():
    curve = elastic_model(2e9, uneven=0.15)[1].curve()
    assert curve.n == 48 and curve.spline is not None
    steps = np.diff(np.append(curve.spline.psi_k, 2.0 * np.pi)) / (2.0 * np.pi / 48)
    assert steps.min() < 0.75 and steps.max() > 1.25
    U = curve.coefficients(np.zeros(ring(2e9, uneven=0.15).M_e.shape[0]))
    psi = np.linspace(0.0, 2.0 * np.pi, 301)
    loc = np.array([(curve.point(U, p) - curve.centre) @ curve.frame for p in psi])
    d1 = np.array([curve.point(U, p, 1) for p in psi])
    d2 = np.array([curve.point(U, p, 2) @ curve.frame for p in psi])
    radial = loc[:, :2] / np.hypot(loc[:, 0], loc[:, 1])[:, None]
    print("radius", np.abs(np.hypot(loc[:, 0], loc[:, 1]) - R_RIM).max(),
          "|u'|", np.abs(np.linalg.norm(d1, axis=1) - R_RIM).max(),
          "u''", np.abs(d2[:, :2] + R_RIM * radial).max())
    assert np.abs(np.hypot(loc[:, 0], loc[:, 1]) - R_RIM).max() < 1e-12
    assert np.abs(loc[:, 2]).max() < 1e-15
    assert np.abs(np.linalg.norm(d1, axis=1) - R_RIM).max() < 1e-12
    assert np.abs(d2[:, :2] + R_RIM * radial).max() < 1e-12


def test_stiff_uneven_ring_rolls_as_the_rigid_disc():
    """E = 2e13 Pa (flattening 5e-9 m), upright, 20 rad/s, 0.1 s: the centres of the
    elastic and the rigid wheel agree to 1e-8 m, the normal contact is held (< 1e-10 m),
    the contact point has no velocity (< 1e-10 m/s) and T + V is conserved up to the
    integrator's drift over the first 0.05 s, falling at order 2 or more with dt (as for
    the evenly spaced ring)."""
    drift = []
    for dt in (1e-3, 5e-4):
        run = []
        if dt == 1e-3:
            dist, gap = centre_gap(2e13, 0.0, -20.0, 0.0, dt, uneven=0.15, run=run)
            model, res = run
        else:
            model, roll = elastic_model(2e13, uneven=0.15)
            res = fm.simulate(model, t_end=0.05, dt=dt, rho_inf=1.0)
            gap = max(abs(roll.gap(fixed_motion(FLOOR), q)) for q in res.q)
        asm = model.assemble()
        c = [asm.velocity_constraint(q, qd, t) for t, q, qd in zip(res.t, res.q, res.qd)]
        first = res.t <= 0.05 + 1e-12
        E, T = res.energy["total"][first], res.energy["kinetic"][first]
        drift.append(np.abs(E - E[0]).max() / T.max())
        print("dt", dt, "gap", gap, "rows", np.abs(c).max(), "energy drift", drift[-1])
        assert gap < 1e-10 and np.abs(c).max() < 1e-10
    print("centres", dist)
    assert dist < 1e-8
    assert drift[1] < 1e-6 and drift[0] / drift[1] > 4.0


def test_evenly_spaced_rim_keeps_the_trigonometric_rule():
    """The mesh file's rim (evenly spaced to 1.5e-10 rad) takes the trigonometric rule
    unchanged: DFT coefficients of the nodal values in angular order and the basis of
    :func:`trig_basis`, bit for bit, which interpolate the nodes."""
    model, roll = elastic_model(2e8)
    curve = roll.curve()
    assert curve.spline is None
    body = ring(2e8)
    X = np.asarray(body.points, float)[curve.nodes]
    assert np.array_equal(curve.X_c, trig_coefficients(X))
    modes = np.asarray(body.modes, float)[curve.nodes]
    assert np.array_equal(curve.Phi_c, trig_coefficients(modes))
    for psi in (0.0, 0.3, 2.0 + 1e-20j, 5.9):
        for k in range(3):
            assert np.array_equal(curve.basis(psi, k), trig_basis(psi, 48, k))
    assert np.abs(curve.B_nodes @ curve.X_c - X).max() < 1e-15


@pytest.mark.parametrize("points, message", [
    ("duplicate", "must be at distinct angles about the wheel axis"),
    ("half", "must go around the wheel axis, but they leave a gap of"),
    ("disc", "must form a ring about the wheel axis (a circle to 5 %)"),
    ("few", "the rim needs a ring of at least 8 nodes, got 7"),
    ("tilted", "must lie in one plane normal to the wheel axis"),
    ("annulus", "must form a convex ring about the wheel axis"),
])
def test_uneven_refusals_are_one_line(points, message):
    phi = graded_angles(20)
    X = {"duplicate": ring_points(np.append(phi, phi[3]),
                                  np.append(np.full(20, R_RIM), 0.098))[0],
         "half": ring_points(0.5 * phi)[0],
         "disc": ring_points(phi, np.where(np.arange(20) % 2, R_RIM, 0.08))[0],
         "few": ring_points(phi[:7])[0],
         "tilted": ring_points(phi)[0] + np.outer(np.sin(phi), AXIS) * 0.01,
         # a face's nodes at two radii within 5 %: a zig-zag, not a rim
         "annulus": ring_points(graded_angles(60), np.where(np.arange(60) % 2, R_RIM,
                                                             0.97 * R_RIM))[0]}[points]
    with pytest.raises(ValueError) as info:
        rim_curve(X, np.zeros((len(X), 3, 1)), np.arange(len(X)), AXIS, "RimRolling 'r'")
    text = str(info.value)
    print(text)
    assert text.startswith("RimRolling 'r': ") and message in text and "\n" not in text


def graded_tet_ring(folder: Path) -> Path:
    """The ring (radii 0.09 / 0.1 m, width 0.02 m, axis z) in tet10 by gmsh, graded from
    6 mm elements at x = 0.1 m to 15 mm at x = -0.1 m, split at z = 0 so that its outer
    mid-plane circle is the 1D group "rim"."""
    gmsh.initialize(["-noenv"], readConfigFiles=False)
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.option.setNumber("General.NumThreads", 1)
        gmsh.model.add("ring")
        occ = gmsh.model.occ
        halves = [occ.cut([(3, occ.addCylinder(0, 0, z0, 0, 0, 0.01, R_RIM))],
                          [(3, occ.addCylinder(0, 0, z0, 0, 0, 0.01, 0.09))])[0][0]
                  for z0 in (-0.01, 0.0)]
        occ.fragment([halves[0]], [halves[1]])
        occ.synchronize()
        rim = [c for _, c in gmsh.model.getEntities(1)
               if abs(occ.getCenterOfMass(1, c)[2]) < 1e-9
               and abs(occ.getMass(1, c) - 2 * np.pi * R_RIM) < 1e-6]
        gmsh.model.addPhysicalGroup(1, rim, name="rim")
        gmsh.model.addPhysicalGroup(3, [v for _, v in gmsh.model.getEntities(3)],
                                    name="volume")
        field = gmsh.model.mesh.field.add("MathEval")
        gmsh.model.mesh.field.setString(field, "F", "0.006 + 0.009 * (0.1 - x) / 0.2")
        gmsh.model.mesh.field.setAsBackgroundMesh(field)
        for name in ("MeshSizeExtendFromBoundary", "MeshSizeFromPoints",
                     "MeshSizeFromCurvature"):
            gmsh.option.setNumber(f"Mesh.{name}", 0)
        gmsh.model.mesh.generate(3)
        gmsh.model.mesh.setOrder(2)
        path = folder / "ring_tet10_graded.msh"
        gmsh.write(str(path))
    finally:
        gmsh.finalize()
    return path


@pytest.mark.slow
def test_soft_graded_tet_ring_rolls_with_its_contact_at_rest(tmp_path):
    """A real unstructured rim: the soft (E = 2e8 Pa) graded tet10 ring, tilted 0.2 rad,
    5 rad/s, turning at 1 rad/s for 0.05 s: rows < 1e-10 m/s, the normal contact held
    (< 1e-10 m), T + V drifting at order 2 or more in dt (the rolling does no work)."""
    fe = assemble(read_mesh(graded_tet_ring(tmp_path)),
                  Material(E=2e8, nu=0.3, rho=RHO, name="ring"))
    body = reduce_model(fe, ReductionSettings(
        n_modes=4, interfaces=(InterfaceSpec("rim", "rbe3", "equal"),), frame="mean_axis"),
        name="ring")
    drift = []
    for dt in (1e-3, 5e-4):
        r0, R0, v0, omega0 = start(0.2, -5.0, 1.0)
        wheel = fm.FlexibleBody("wheel", body, r0=r0, R0=R0, v0=v0, omega0=omega0)
        model = fm.System(gravity=(0.0, 0.0, -GRAV), name="tet_wheel")
        roll = fm.RimRolling("roll", plane=FLOOR, wheel=wheel, rim="rim")
        model.add(wheel, roll)
        curve = roll.curve()
        steps = np.diff(np.append(curve.spline.psi_k, 2.0 * np.pi))
        assert curve.n > 100 and steps.max() / steps.min() > 2.0          # graded
        res = fm.simulate(model, t_end=0.05, dt=dt, rho_inf=1.0)
        asm = model.assemble()
        c = [asm.velocity_constraint(q, qd, t) for t, q, qd in zip(res.t, res.q, res.qd)]
        gap = max(abs(roll.gap(fixed_motion(FLOOR), q)) for q in res.q)
        E, T = res.energy["total"], res.energy["kinetic"]
        drift.append(np.abs(E - E[0]).max() / T.max())
        print("dt", dt, "rows", np.abs(c).max(), "gap", gap, "drift", drift[-1],
              "q_e", np.abs(res.q[:, 7:]).max())
        assert np.abs(c).max() < 1e-10 and gap < 1e-10
        assert np.abs(res.q[:, 7:]).max() > 1e-5                          # it deforms
    assert drift[1] < 1e-6 and drift[0] / drift[1] > 3.0
