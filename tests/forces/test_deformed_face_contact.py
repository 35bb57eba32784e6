"""Contact of a sphere with the deformed shape of a face of a flexible body
(flexmbs.forces.deformed_face_contact).

References: the closed-form distance ``rho - R_c - R`` of a point at radius ``rho`` from
a cylinder of radius ``R_c`` (the faceted gap lies within the sagitta
``R_c - sqrt(R_c^2 - h^2/4) ~ h^2 / (8 R_c)`` of it, and its mean error falls at second
order in the largest facet edge ``h``); the FE displacement field of the 9-node face
(quadratic shape functions, a second formulation of the deformed face); Newton's law of
restitution against a rigid face; the mean-plane contact (``FaceContact``) for a flat
face hit at its centre; conservation of momentum and energy through an elastic impact
on a free body; central differences of the assembled residual for the tangent; for the
friction, Coulomb's sliding ``a = g (sin(theta) - mu_k cos(theta))`` on an incline (closed
form), the bristle tolerance ``2 z_s`` of sticking (the law's statics) and the mean-plane
contact with friction (second formulation).
"""
from __future__ import annotations

from pathlib import Path

import gmsh
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.cli.main import main
from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import material_from_name
from flexmbs.forces.deformed_face_contact import DeformedFaceContact, face_mesh
from flexmbs.forces.face_contact import FaceContact
from flexmbs.forces.surface_search import face_triangles
from flexmbs.io.mesh import read_mesh
from flexmbs.parallel.toml_writer import dumps
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model

from .statecheck import check_tangent

MESHES = Path(__file__).resolve().parents[2] / "meshes"
STEEL = material_from_name("steel")
RC, LC, R = 0.05, 0.05, 0.01          # cylinder radius and length, ball radius [m]


def cylinder_body(h: float, folder: Path) -> FlexibleBody:
    """A steel cylinder (radius RC, length LC, axis z) meshed with tet4 of size h [m];
    facet sets 'side' (lateral face) and 'base' (z = 0, the clamp)."""
    gmsh.initialize(["-noenv"], readConfigFiles=False)
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.option.setNumber("General.NumThreads", 1)
        gmsh.model.add("cylinder")
        v = gmsh.model.occ.addCylinder(0, 0, 0, 0, 0, LC, RC)
        gmsh.model.occ.synchronize()
        faces = [t for _, t in gmsh.model.getBoundary([(3, v)], oriented=False)]
        z = {t: gmsh.model.occ.getCenterOfMass(2, t)[2] for t in faces}
        side = [t for t in faces if abs(gmsh.model.occ.getMass(2, t) - 2 * np.pi * RC * LC)
                < 1e-9]
        gmsh.model.addPhysicalGroup(2, side, name="side")
        gmsh.model.addPhysicalGroup(2, [t for t in faces if abs(z[t]) < 1e-9], name="base")
        gmsh.model.addPhysicalGroup(3, [v], name="volume")
        gmsh.option.setNumber("Mesh.MeshSizeMax", h)
        gmsh.option.setNumber("Mesh.MeshSizeMin", h)
        gmsh.model.mesh.generate(3)
        path = folder / f"cylinder_{h:g}.msh"
        gmsh.write(str(path))
    finally:
        gmsh.finalize()
    body = reduce_model(assemble(read_mesh(path), STEEL), ReductionSettings(
        n_modes=4, interfaces=(InterfaceSpec("base"),), frame="interface:base",
        stiffening=False))
    return FlexibleBody("cyl", body)


def contact_block(asm, element):
    return next(fb for fb in asm.forces.layout.force_blocks if fb.element is element)


def cylinder_errors(h: float, folder: Path, n_points: int = 300):
    """Gap and normal errors of the faceted side face against the cylinder, at random
    sphere centres 3 mm off it, and the largest facet edge [m]."""
    cyl = cylinder_body(h, folder)
    ball = fm.PointMass("ball", m=1.0, r0=(RC + R + 3e-3, 0.0, LC / 2))
    c = DeformedFaceContact("c", first=cyl, second=ball, face="side", R=R,
                            law=fm.ContactLaw(K=1e6))
    asm = fm.System().add(cyl, ball, fm.Fixed("fix", fm.ground, cyl["base"]), c).assemble()
    fb = contact_block(asm, c)
    q = np.array(asm.initial_q())
    qd = np.zeros_like(q)
    rng = np.random.default_rng(7)
    gap_err, angle = [], []
    for _ in range(n_points):
        th, zc = rng.uniform(0.0, 2 * np.pi), rng.uniform(0.1 * LC, 0.9 * LC)
        e_r = np.array([np.cos(th), np.sin(th), 0.0])
        q[asm.body_slices["ball"]] = (RC + R + 3e-3) * e_r + (0.0, 0.0, zc)
        g = c.geometry_at(asm.forces.context(fb, q, qd, 0.0, 1))
        gap_err.append(float(g.s.v) - 3e-3)
        angle.append(float(np.arccos(min(1.0, g.n.v @ e_r))))
    mesh = face_mesh(cyl, "side")
    x = mesh.X[mesh.tri]
    h_max = max(np.linalg.norm(x[:, i] - x[:, j], axis=1).max()
                for i, j in ((0, 1), (1, 2), (2, 0)))
    return np.array(gap_err), np.array(angle), h_max


def test_gap_on_a_cylinder_within_the_sagitta_and_second_order(tmp_path):
    """The faceted face is inscribed in the cylinder: 0 <= gap error <= sagitta of the
    longest edge; the mean gap error falls at second order (slope 2 +- 0.3), the normal's
    angle to the radius at first order (below h / R_c)."""
    hs, mean_err, mean_angle = [], [], []
    for h in (0.02, 0.01, 0.005):
        err, angle, h_max = cylinder_errors(h, tmp_path)
        sagitta = RC - np.sqrt(RC ** 2 - h_max ** 2 / 4)
        assert err.min() >= -1e-12 and err.max() <= sagitta * (1 + 1e-9)
        assert angle.max() <= h_max / RC
        hs.append(h_max)
        mean_err.append(err.mean())
        mean_angle.append(angle.mean())
    slope = np.polyfit(np.log(hs), np.log(mean_err), 1)[0]
    assert slope == pytest.approx(2.0, abs=0.3)
    assert np.polyfit(np.log(hs), np.log(mean_angle), 1)[0] == pytest.approx(1.0, abs=0.3)


@pytest.fixture(scope="module")
def bar():
    """The clamped steel bar 1.0 x 0.1 x 0.1 m (hex27, 20 x 2 x 2), faces clamp / tip."""
    body = reduce_model(assemble(read_mesh(MESHES / "beam_hex27_20x2x2.msh"), STEEL),
                        ReductionSettings(n_modes=6, interfaces=(InterfaceSpec("clamp"),),
                                          frame="interface:clamp", stiffening=False))
    return FlexibleBody("bar", body)


def quad9_shape(xi: float, eta: float) -> np.ndarray:
    """Lagrange shape functions of the 9-node quadrangle (gmsh order) at (xi, eta)."""
    def lagrange(t):
        return np.array([t * (t - 1) / 2, 1 - t * t, t * (t + 1) / 2])    # at -1, 0, 1

    a, b = lagrange(xi), lagrange(eta)
    ij = [(0, 0), (2, 0), (2, 2), (0, 2), (1, 0), (2, 1), (1, 2), (0, 1), (1, 1)]
    return np.array([a[i] * b[j] for i, j in ij])


def fe_displacement(facets, X, u, yz):
    """The FE field ``u`` (N, 3) of the 9-node facets of a face x = const at the
    reference point ``yz``: ``(u_x, (u_y, u_z))``."""
    y, z = yz
    facet = next(f for f in facets if X[f, 1].min() <= y <= X[f, 1].max()
                 and X[f, 2].min() <= z <= X[f, 2].max())
    c0, e1, e3 = X[facet[0], 1:], X[facet[1], 1:] - X[facet[0], 1:], X[facet[3], 1:] - X[
        facet[0], 1:]                           # a rectangle: the bilinear map is affine
    xi, eta = 2 * (yz - c0) @ e1 / (e1 @ e1) - 1, 2 * (yz - c0) @ e3 / (e3 @ e3) - 1
    w = quad9_shape(xi, eta) @ u[facet]
    return w[0], w[1:]


def test_gap_on_a_bent_flat_face_follows_the_fe_displacement(bar):
    """Tip face bent by the first mode (tip deflection ~ 1 mm): the gap equals
    ``x_Q - R - (L + u_x(y, z))`` with ``u_x`` the FE field of the 9-node facet under the
    sphere (to 1e-3 of ``u_x``'s variation over the face), where the mean plane is off by
    the face's rotation."""
    y, z = 0.037, 0.061
    ball = fm.PointMass("ball", m=1.0, r0=(1.0 + R + 1e-3, y, z))
    law = fm.ContactLaw(K=1e6)
    c = DeformedFaceContact("c", first=bar, second=ball, face="tip", R=R, law=law)
    m = FaceContact("m", first=bar, second=ball, face="tip", R=R, law=law)
    asm = fm.System().add(bar, ball, fm.Fixed("fix", fm.ground, bar["clamp"]), c,
                          m).assemble()
    q = np.array(asm.initial_q())
    body = bar.body
    qe = np.zeros(body.n_q)
    tip = next(f for f in body.faces if f.name == "tip")
    qe[0] = 1e-3 / np.abs(body.modes[tip.facets][..., 0]).max(axis=-1).max()
    q[asm.body_slices["bar"].start + 7:asm.body_slices["bar"].stop] = qe
    s, _, _ = asm.event_gaps(q, np.zeros_like(q), 0.0)
    u = np.asarray(body.modes) @ qe                                 # (N, 3) FE nodal field
    X = np.asarray(body.points)
    yz = np.array([y, z])
    for _ in range(5):           # the material point (Y, Z) displaced under the centre
        ux, uyz = fe_displacement(tip.facets, X, u, yz)
        yz = np.array([y, z]) - uyz
    reference = (1.0 + R + 1e-3) - R - (1.0 + ux)
    spread = np.ptp(u[tip.facets.ravel(), 0])
    assert spread > 1e-5
    assert s[0] == pytest.approx(reference, abs=1e-3 * spread)
    assert abs(s[1] - reference) > 0.05 * spread


def drop(bar, element_cls, e, v=1.0, at=(0.054, 0.057), t_end=0.012):
    ball = fm.PointMass("ball", m=1.0, r0=(1.0 + R + 1e-3, *at), v0=(-v, 0.0, 0.0))
    c = element_cls("c", first=bar, second=ball, face="tip", R=R,
                    law=fm.ContactLaw(K=1e7, n=1.5, e=e))
    model = fm.System().add(bar, ball, fm.Fixed("fix", fm.ground, bar["clamp"]), c,
                            fm.Cylindrical("guide", fm.ground, ball, at=(1.0 + R, *at),
                                           axis="x"))
    return fm.simulate(model, t_end=t_end, dt=5e-5, adaptive=True, rtol=1e-6, atol=1e-10)


def test_ball_dropped_on_the_bar_tip_rebounds_like_the_rigid_face_and_the_mean_plane(bar):
    """Hunt-Crossley e = 0.8, contact time ~ 5 ms >> the bar's axial period: the ball
    leaves at e v (0.1 %, the rigid-face result); the mean-plane contact, the same face
    hit near its centre, gives the same rebound (1e-4)."""
    res = drop(bar, DeformedFaceContact, 0.8)
    imp = res.impact_table()
    assert len(imp["t"]) == 1 and np.isfinite(imp["t_release"][0])
    v_out = res.qd[-1, res.bodies["ball"]][0]
    assert v_out == pytest.approx(0.8, rel=1e-3)
    ref = drop(bar, FaceContact, 0.8)
    assert v_out == pytest.approx(ref.qd[-1, ref.bodies["ball"]][0], rel=1e-4)


def test_elastic_impact_on_a_free_body_conserves_momentum_and_energy():
    """A ball hits the tip face of a free bar off-centre (Hertz, no damping, rho_inf = 1):
    linear momentum of ball and bar is conserved (1e-7 of m v: the Newton tolerance; the
    force on the bar is exactly opposite to the ball's), the total energy (kinetic,
    elastic, contact) to 1e-3 of the initial kinetic energy; the ball rebounds at
    (M - m) / (M + m) v of a rigid elastic collision (M = 78.5 kg; 2e-3: the energy left
    in the bar's vibration, off-centre rotation negligible)."""
    body = reduce_model(assemble(read_mesh(MESHES / "beam_hex27_20x2x2.msh"), STEEL),
                        ReductionSettings(n_modes=6, stiffening=False))
    bar = FlexibleBody("bar", body)
    v = 1.0
    ball = fm.PointMass("ball", m=1.0, r0=(1.0 + R + 1e-3, 0.03, 0.07), v0=(-v, 0.0, 0.0))
    c = DeformedFaceContact("c", first=bar, second=ball, face="tip", R=R,
                            law=fm.ContactLaw(K=1e8, n=1.5))
    res = fm.simulate(fm.System().add(bar, ball, c), t_end=0.006, dt=2e-5, rho_inf=1.0)
    assert len(res.impact_table()["t"]) == 1
    p = [bar.momentum(res.q[k, res.bodies["bar"]], res.qd[k, res.bodies["bar"]])[0]
         + res.qd[k, res.bodies["ball"]] for k in range(len(res.t))]
    np.testing.assert_allclose(np.array(p), np.array([[-v, 0.0, 0.0]] * len(p)),
                               atol=1e-7 * v)
    E = res.energy["total"]
    assert np.abs(E - E[0]).max() < 1e-3 * 0.5 * v ** 2
    M = bar.m
    assert res.qd[-1, res.bodies["ball"]][0] == pytest.approx((M - 1.0) / (M + 1.0) * v,
                                                             rel=2e-3)


@pytest.mark.parametrize("friction_model", [None, "bristle", "regularised"])
def test_tangent_against_central_differences(tmp_path, friction_model):
    """Normal force of a ball pressed 1 mm into the side face of a free cylinder (the
    face interior; Hunt-Crossley with its held approach speed), without and with either
    friction law (sliding at the random velocities of the check)."""
    cyl = cylinder_body(0.02, tmp_path)
    rho = RC + R - 1e-3
    ball = fm.PointMass("ball", m=1.0, r0=(rho * np.cos(1.0), rho * np.sin(1.0), 0.027))
    rough = {} if friction_model is None else {
        "friction": fm.FrictionLaw(mu_s=0.3, mu_k=0.2), "friction_model": friction_model,
        "v_eps": 0.5}
    c = DeformedFaceContact("c", first=cyl, second=ball, face="side", R=R,
                            law=fm.ContactLaw(K=1e5, n=1.5, e=0.7), **rough)
    model = fm.System().add(cyl, ball, c)
    asm = model.assemble()
    q = np.array(asm.initial_q())
    assert asm.event_gaps(q, np.zeros_like(q), 0.0)[2][0] > 0.0
    check_tangent(model, np.random.default_rng(5), scale=1e-6, rtol=1e-5, atol=1e-6)


MU_S, MU_K, Z_S, M_BALL, G = 0.5, 0.4, 1e-5, 2.0, 9.81


def incline(bar, element_cls, tan_theta: float, y0: float = 0.015):
    """A ball (point mass M_BALL, radius R) on the bar's tip face (normal +x), loaded by
    the weight ``M g`` of an incline of slope ``tan_theta`` (downhill +y) as a force on
    the ball alone (the bar carries no weight), starting at the static penetration of a
    linear law K = 1e7 N/m."""
    theta = np.arctan(tan_theta)
    weight = M_BALL * G * np.array([-np.cos(theta), np.sin(theta), 0.0])
    delta = M_BALL * G * np.cos(theta) / 1e7
    ball = fm.PointMass("ball", m=M_BALL, r0=(1.0 + R - delta, y0, 0.061))
    c = element_cls("c", first=bar, second=ball, face="tip", R=R,
                    law=fm.ContactLaw(K=1e7, n=1.0, e=0.5),
                    friction=fm.FrictionLaw(mu_s=MU_S, mu_k=MU_K), stiction_deformation=Z_S)
    return fm.System(gravity=(0.0, 0.0, 0.0)).add(
        bar, ball, c, fm.Fixed("fix", fm.ground, bar["clamp"]),
        fm.ExternalForce("weight", at=ball, force=tuple(weight))), c


def test_ball_sticks_on_the_deformed_face_below_mu_s(bar):
    """tan(theta) = 0.3 < mu_s = 0.5: over 2 s the ball moves less than 2 z_s = 2e-5 m
    relative to the face's material point under it (the bristle deflection plus the
    pre-sliding slip of the step load; the face itself moves with the bar's bending,
    ~1e-6 m), the bristles settle at tan(theta) z_s / mu_s (1 %), and over the last
    second the slip changes by less than z_s / 20 = 5e-7 m (the bar's vibration settling;
    the regularised law, v_eps = 1e-4 m/s, would creep ~1e-4 m in that time)."""
    tan_theta = 0.3
    model, c = incline(bar, DeformedFaceContact, tan_theta)
    res = fm.simulate(model, t_end=2.0, dt=2e-3, output_dt=0.02)
    y_ball = res.body_q("ball")[:, 1]
    mesh = face_mesh(bar, "tip")
    near = c.nearest(res.body_q("bar")[0], res.body_q("ball")[0, 0:3])
    rows = mesh.Phi[mesh.tri[near.k]]                   # (3, 3, n_q): the three nodes
    u_y = np.einsum("i,inq,tq->tn", near.b, rows, res.body_q("bar")[:, 7:])[:, 1]
    slip = (y_ball - y_ball[0]) - (u_y - u_y[0])
    assert np.abs(slip).max() < 2 * Z_S
    z = res.states("c")[:, 1:4]
    assert z[-1, 1] == pytest.approx(tan_theta * Z_S / MU_S, rel=1e-2)
    late = res.t >= 1.0
    assert np.abs(slip[late] - slip[-1]).max() < Z_S / 20


def test_ball_slides_on_the_deformed_face_like_coulomb_and_the_mean_plane(bar):
    """tan(theta) = 0.7 > mu_s: the ball slides with a = g (sin(theta) - mu_k cos(theta))
    (2e-3: the bar's compliance under the 16 N contact load; the ball crosses several
    facets), and the mean-plane face_contact with the same friction gives the same
    speed (2e-3)."""
    tan_theta = 0.7
    theta = np.arctan(tan_theta)
    a_ref = G * (np.sin(theta) - MU_K * np.cos(theta))
    v = {}
    for cls in (DeformedFaceContact, FaceContact):
        res = fm.simulate(incline(bar, cls, tan_theta)[0], t_end=0.2, dt=1e-3,
                          output_dt=0.01)
        vy = res.qd[:, res.bodies["ball"]][:, 1]
        i, j = np.searchsorted(res.t, 0.1), len(res.t) - 1
        assert (vy[j] - vy[i]) / (res.t[j] - res.t[i]) == pytest.approx(a_ref, rel=2e-3)
        v[cls] = vy[-1]
    assert v[DeformedFaceContact] == pytest.approx(v[FaceContact], rel=2e-3)


def test_problems_are_one_line_each(bar):
    ball = fm.PointMass("ball", m=1.0)
    probs = DeformedFaceContact("c", first=bar, second=ball, face="nope", R=-1.0,
                                law=fm.ContactLaw(K=1.0),
                                friction=fm.FrictionLaw(mu_s=0.1, mu_k=0.1),
                                friction_model="dry").problems()
    assert probs == [
        "DeformedFaceContact 'c': friction_model must be one of bristle, regularised, got "
        "'dry'",
        "DeformedFaceContact 'c': radius R must be >= 0 [m], got -1.0",
        "DeformedFaceContact 'c': flexible body 'bar' has no face 'nope' (has: clamp, tip)"]


CASE = {
    "model": {"name": "tap", "gravity": [-9.81, 0.0, 0.0]},
    "bodies": [{"name": "beam", "type": "flexible", "material": "steel", "modes": 4,
                "mesh": str(MESHES / "beam_hex27_5x1x1.msh"), "interfaces": ["clamp"],
                "frame": "interface:clamp"},
               {"name": "ball", "type": "point_mass", "m": 0.1,
                "position": [1.011, 0.05, 0.05]}],
    "joints": [{"name": "clamp", "type": "fixed", "first": "ground",
                "second": "beam.clamp"}],
    "forces": [{"name": "tap", "type": "deformed_face_contact", "first": "beam",
                "face": "tip", "second": "ball", "R": 0.01,
                "law": {"K": 1e7, "n": 1.5, "e": 0.8}}],
    "solver": {"t_end": 0.05, "dt": 1e-3},
}


def test_case_file_kind(tmp_path, capsys):
    """The case-file kind ``deformed_face_contact``: a valid case checks, with friction
    too; a wrong friction model is one line naming the key (exit 2)."""
    case = tmp_path / "case.toml"
    case.write_text(dumps(CASE))
    args = ["check", str(case), "--body-dir", str(tmp_path / "b")]
    assert main(args) == 0
    rough = dict(CASE["forces"][0], friction={"mu_s": 0.2, "mu_k": 0.2})
    case.write_text(dumps(dict(CASE, forces=[rough])))
    assert main(args) == 0
    case.write_text(dumps(dict(CASE, forces=[dict(rough, friction_model="dry")])))
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "forces[0].friction_model" in err and "dry" in err


def test_face_facets_survive_the_body_file(bar, tmp_path):
    """The facets of each face are written to and read back from the body file; the tip
    face's triangles face +x (outward) and tile its 0.1 x 0.1 m^2 area."""
    from flexmbs.io.bodyfile import load_body, save_body
    save_body(tmp_path / "bar.h5", bar.body)
    back = {f.name: f for f in load_body(tmp_path / "bar.h5").faces}
    for f in bar.body.faces:
        np.testing.assert_array_equal(back[f.name].facets, f.facets)
    mesh = face_mesh(bar, "tip")
    x = mesh.X[mesh.tri]
    n = np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]) * mesh.sign[:, None] / 2
    assert np.all(n[:, 0] > 0) and n[:, 0].sum() == pytest.approx(0.01, rel=1e-12)


@pytest.mark.parametrize("k", [3, 4, 6, 8, 9])
def test_facet_split_tiles_the_facet(k):
    """The linear triangles of a (curved-edge free) facet with k nodes (gmsh order, mid-side
    nodes at the edge midpoints) tile it: same orientation, total area = the facet's."""
    corners = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    c = corners[:3] if k in (3, 6) else corners
    area = 1.0 if k in (3, 6) else 2.0
    mids = [(c[i] + c[(i + 1) % len(c)]) / 2 for i in range(len(c))]
    centre = [c.mean(axis=0)] if k == 9 else []
    pts = np.array([*c, *(mids if k in (6, 8, 9) else []), *centre])
    tri = face_triangles(np.arange(k)[None, :])
    x = pts[tri]
    n = np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0])[:, 2] / 2
    assert np.all(n > 0) and n.sum() == pytest.approx(area, rel=1e-14)
