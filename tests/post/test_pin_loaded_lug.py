"""Pin-loaded lug (issue 19): peak von Mises stress at the hole of a flexible lug loaded
through a revolute, from a flexmbs static analysis, against the full FE static solution.

Model: the shipped ``meshes/lug_tet10.msh`` (steel), reduced with free--free modes and
RBE3 markers ``hole`` and ``end`` (``method='free_free'``, ``residual_flexibility``).
The end is fixed to ground; a rigid pin sits in the hole on a revolute (a torsion spring
on the revolute holds its free spin) and is pulled with ``P = 1 kN`` along -x.

Reference: the full FE static solution of the same mesh, ``K u = L_hole^T [-P, 0, 0, 0,
0, 0]`` with ``L_end u = 0`` (the pin load spread over the hole as the RBE3 marker
spreads it, the end held as the fixed joint holds its marker), solved by scipy without
any mode.  The statics of the pin give the wrench at the hole independently of the
multibody solve.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import flexmbs as fm
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import material_from_name
from flexmbs.fe.stress import nodal_stress_modes, von_mises
from flexmbs.io.mesh import read_mesh
from flexmbs.kinematics.rotation import A_of
from flexmbs.kinematics.time_functions import FromCallables
from flexmbs.post.interface_loads import marker_wrenches
from flexmbs.post.recovery import von_mises_stress
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model
from flexmbs.reduction.interfaces import resolve_interface, rigid_modes

MESH = Path(__file__).resolve().parents[2] / "meshes" / "lug_tet10.msh"
P = 1000.0                                                  # [N]
ITFS = (InterfaceSpec("hole", "rbe3"), InterfaceSpec("end", "rbe3"))


@lru_cache(maxsize=None)
def lug_fe():
    return assemble(read_mesh(MESH), material_from_name("steel"))


@lru_cache(maxsize=None)
def reference_von_mises(F_hole=(-P, 0.0, 0.0), gravity=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Nodal von Mises stress [Pa] of the full FE static solution: the force ``F_hole``
    [N] spread over the hole, the weight ``M g`` of the lug, the end marker held."""
    fe = lug_fe()
    L_h, L_e = (resolve_interface(s, fe.mesh, fe.dof_of_node).fit_matrix(fe.n_dof)
                for s in ITFS)
    A = sp.bmat([[fe.K, L_e.T], [L_e, None]], format="csc")
    g_field = rigid_modes(np.asarray(fe.mesh.points), fe.dof_of_node, fe.n_dof)[:, :3]
    f = L_h.T @ np.r_[F_hole, 0.0, 0.0, 0.0] + fe.M @ (g_field @ np.asarray(gravity))
    u = spla.spsolve(A, np.r_[f, np.zeros(6)])[:fe.n_dof]
    return von_mises(nodal_stress_modes(fe, u[:, None])[:, :, 0])


def reference_hole_peak() -> float:
    """Peak nodal von Mises stress [Pa] on the hole of the full FE static solution."""
    return hole_peak(reference_von_mises())


def hole_peak(s_vm: np.ndarray) -> float:
    return float(s_vm[np.unique(lug_fe().mesh.node_set("hole"))].max())


PIN_SIZE = (0.016, 0.016, 0.005)                            # [m], steel box


def pinned_lug(n_modes: int, gravity=(0.0, 0.0, 0.0)):
    """The flexmbs model of the module doc and its static equilibrium."""
    body = reduce_model(lug_fe(), ReductionSettings(
        n_modes=n_modes, interfaces=ITFS, method="free_free", residual_flexibility=True,
        stiffening=False), name="lug")
    lug = FlexibleBody("lug", body, damping=False, stiffening=False)
    pin = fm.RigidBody.box("pin", size=PIN_SIZE, rho=7850.0, r0=body.marker("hole").R)
    model = fm.System(gravity=gravity)
    revolute = fm.Revolute("pin_joint", pin.marker("axis"), lug["hole"], axis="z")
    model.add(fm.Fixed("clamp", fm.ground, lug["end"]), revolute,
              fm.RotationalSpringDamper("pin_spin", joint=revolute, k=1e3),
              fm.ExternalForce("pull", at=pin.marker("centre"), force=(-P, 0.0, 0.0)))
    eq = fm.static_equilibrium(model)
    return body, lug, model.assemble(), eq


@pytest.mark.parametrize("n_modes", [12, 24])
def test_pin_loaded_lug_peak_stress(n_modes):
    body, lug, asm, eq = pinned_lug(n_modes)
    W = marker_wrenches(asm, lug, eq.q, eq.lam)
    # statics of the pin: the lug gets the pull at its hole, no moment (pin on the axis)
    assert W["hole"] == pytest.approx([-P, 0, 0, 0, 0, 0], abs=1e-5 * P)  # Newton tolerance
    # the clamp: the joint reaction on the lug by AssembledSystem.reactions, about the
    # same point but in the joint frame, which the end marker's elastic rotation (~1e-6
    # rad) turns against the body frame
    assert W["end"][:3] == pytest.approx(eq.reactions["clamp"][:3], abs=1e-5 * P)
    assert W["end"][3:] == pytest.approx(eq.reactions["clamp"][3:], abs=1e-9 * P * 0.08)
    q_e = eq.body_q("lug")[7:]
    ref = reference_hole_peak()
    corrected = hole_peak(von_mises_stress(body, q_e, W))
    modal = hole_peak(von_mises_stress(body, q_e))
    assert abs(corrected / ref - 1.0) < 0.02            # issue 19: within 2 %
    assert abs(corrected / ref - 1.0) < 1e-5            # MAM is exact at equilibrium
    # the mode-only recovery misses it (by +17.7 % and -21.2 %: docs/stresses.md)
    assert abs(modal / ref - 1.0) > 0.1


CASE = MESH.parents[1] / "cases" / "pin_loaded_lug" / "case.toml"


def run_case(case: Path, out: Path, monkeypatch) -> None:
    from flexmbs.cli.main import main
    monkeypatch.setenv("FLEXMBS_BODY_CACHE", str(out / "bodies"))
    assert main(["run", str(case), "--out", str(out), "--quiet"]) == 0


def last_frame(xdmf: Path) -> tuple[float, dict]:
    import meshio
    with meshio.xdmf.TimeSeriesReader(xdmf) as r:
        points, _ = r.read_points_cells()
        t, point_data, _ = r.read_data(r.num_steps - 1)
    assert np.array_equal(points, np.asarray(lug_fe().mesh.points))
    return t, point_data


def test_shipped_case_writes_the_corrected_stress(tmp_path, monkeypatch):
    """``cases/pin_loaded_lug`` (the model above, 12 modes, from the case file and the
    CLI): the von Mises field of its static XDMF output at the hole."""
    run_case(CASE, tmp_path, monkeypatch)
    _, fields = last_frame(tmp_path / "pin_loaded_lug_lug_static.xdmf")
    assert hole_peak(fields["von_mises"]) == pytest.approx(reference_hole_peak(), rel=1e-4)


@pytest.mark.parametrize("change,expected", [
    (('"hole:rbe3", "end:rbe3"', '"hole", "end:rbe3"'),
     "bodies[0]: method 'free_free': interfaces are markers on the free body and must be "
     "rbe3 (\"NAME:rbe3\"), got rbe2 for ['hole']"),
    (('method = "free_free"', 'method = "freefree"'),
     "bodies[0].method: expected one of auto, free_free, got \"freefree\""),
    (("residual_flexibility = true", "residual_flexibility = 1"),
     "bodies[0].residual_flexibility"),
])
def test_case_mistakes_in_one_line(tmp_path, monkeypatch, capsys, change, expected):
    from flexmbs.cli.main import main
    monkeypatch.setenv("FLEXMBS_BODY_CACHE", str(tmp_path / "bodies"))
    text = CASE.read_text().replace("../../meshes/lug_tet10.msh", str(MESH))
    assert change[0] in text
    case = tmp_path / "case.toml"
    case.write_text(text.replace(*change))
    assert main(["run", str(case), "--out", str(tmp_path), "--quiet"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(err) == 1 and expected in err[0]


def test_quasi_static_time_run_writes_the_corrected_stress(tmp_path, monkeypatch, read_xdmf):
    """The same case as a time simulation: the pull ramped from 0 to 1 kN over 5 ms
    (100 generalized-alpha steps, rho_inf = 0.5), far slower than the lug's lowest
    period (0.36 ms free-free), so the last XDMF frame is quasi-static."""
    text = CASE.read_text().replace("../../meshes/lug_tet10.msh", str(MESH))
    text = text.replace("force = [-1000.0, 0.0, 0.0]",
                        "force = {type = \"ramp\", rate = [-2.0e5, 0.0, 0.0]}")
    text = text.replace('[analysis]\ntype = "static"\n',
                        "[solver]\nt_end = 5e-3\ndt = 5e-5\nrho_inf = 0.5\n\n"
                        "[output]\ndt = 1e-3\nplots = false\n")
    text += '\n[[hotspots]]\nname = "hole"\nbody = "lug"\nnode_set = "hole"\n'
    case = tmp_path / "case.toml"
    case.write_text(text)
    run_case(case, tmp_path, monkeypatch)
    t, fields = last_frame(tmp_path / "pin_loaded_lug_lug.xdmf")
    assert t == pytest.approx(5e-3)
    rel = hole_peak(fields["von_mises"]) / reference_hole_peak() - 1.0
    assert abs(rel) < 0.02                  # issue 19
    assert abs(rel) < 1e-3                  # quasi-static: 1 / (omega T) << 1
    # the hot spot on the hole and the max-over-time field of the mechanism file carry
    # the same correction: the ramp peaks at its end, at the reference's peak
    import h5py
    with h5py.File(tmp_path / "pin_loaded_lug.h5") as f:
        spot = np.asarray(f["hotspots/hole/von_mises"])
    assert spot[-1].max() / reference_hole_peak() - 1.0 == pytest.approx(rel, abs=1e-12)
    _, frames = read_xdmf(tmp_path / "pin_loaded_lug_mechanism.xdmf", [5e-3])
    vm_max = frames[0]["lug"][2]["von_mises_max"]
    assert hole_peak(vm_max) / reference_hole_peak() - 1.0 == pytest.approx(rel, abs=1e-12)



def test_wrenches_of_a_force_element_and_of_a_joint_on_its_first_side():
    """The pull applied straight to the hole marker (a force element, no pin) and the
    clamp written lug-first: the same wrenches (statics) and the same corrected stress."""
    body = reduce_model(lug_fe(), ReductionSettings(
        n_modes=12, interfaces=ITFS, method="free_free", residual_flexibility=True,
        stiffening=False), name="lug")
    lug = FlexibleBody("lug", body, damping=False, stiffening=False)
    model = fm.System()
    model.add(fm.Fixed("clamp", lug["end"], fm.ground),
              fm.ExternalForce("pull", at=lug["hole"], force=(-P, 0.0, 0.0)))
    eq = fm.static_equilibrium(model)
    W = marker_wrenches(model.assemble(), lug, eq.q, eq.lam)
    assert W["hole"] == pytest.approx([-P, 0, 0, 0, 0, 0], abs=1e-5 * P)
    # statics of the lug in its deformed shape (body frame, moments about the end)
    q_e = eq.body_q("lug")[7:]
    p = {k: body.marker(k).R + body.marker(k).Phi @ q_e for k in ("hole", "end")}
    F_h, M_h = W["hole"][:3], W["hole"][3:]
    assert W["end"][:3] == pytest.approx(-F_h, abs=1e-9 * P)
    assert W["end"][3:] == pytest.approx(-M_h - np.cross(p["hole"] - p["end"], F_h),
                                         abs=1e-9 * P * 0.08)
    corrected = hole_peak(von_mises_stress(body, q_e, W))
    assert corrected == pytest.approx(reference_hole_peak(), rel=1e-5)


def test_pin_loaded_lug_under_gravity():
    """With gravity (2000 m/s^2 along -y: 285 N of lug weight bending the lug, the pin's
    weight on the hole), the marker wrenches no longer balance; the inertia relief of
    the residual flexibility spreads their imbalance as the rigid-body field M g, which
    is the weight itself, so the corrected field is still the full FE static field."""
    g = (0.0, -2000.0, 0.0)
    body, lug, asm, eq = pinned_lug(12, gravity=g)
    W = marker_wrenches(asm, lug, eq.q, eq.lam)
    m_pin = 7850.0 * np.prod(PIN_SIZE)
    F_hole = (-P, m_pin * g[1], 0.0)                           # statics of the pin
    A = A_of(eq.body_q("lug")[3:7])         # the bent lug's frame turns ~2e-5 rad
    assert A @ W["hole"][:3] == pytest.approx(F_hole, abs=1e-5 * P)
    ref = reference_von_mises(F_hole, g)
    s_vm = von_mises_stress(body, eq.body_q("lug")[7:], W)
    # the floating frame turns by ~2e-5 rad under the load and the linear reference does
    # not: a second-order difference, 9.3e-5 of the largest stress here and 9.4e-6 at a
    # tenth of the loads (docs/stresses.md)
    assert np.abs(s_vm - ref).max() < 1e-3 * ref.max()
    assert hole_peak(s_vm) == pytest.approx(hole_peak(ref), rel=1e-3)
    assert abs(hole_peak(von_mises_stress(body, eq.body_q("lug")[7:])) / hole_peak(ref)
               - 1.0) > 0.1


def smooth_pull(T_r: float) -> FromCallables:
    """``-P s(t)`` along x, ``s = (1 - cos(pi t / T_r)) / 2`` up to ``T_r``, then 1."""
    d = np.array([-P, 0.0, 0.0])
    w = np.pi / T_r

    def jet(t):
        if t >= T_r:
            return 1.0, 0.0, 0.0
        return 0.5 * (1.0 - np.cos(w * t)), 0.5 * w * np.sin(w * t), 0.5 * w**2 * np.cos(w * t)
    return FromCallables(f=lambda t: jet(t)[0] * d, fd=lambda t: jet(t)[1] * d,
                         fdd=lambda t: jet(t)[2] * d)


def newmark_hole_peaks(force: FromCallables, t_end: float, dt: float) -> np.ndarray:
    """Full FE transient of the same mesh: Newmark average acceleration (trapezoidal,
    unconditionally stable, second order) with the end marker held by a multiplier,
    ``[[K + 4 M / dt^2, L_e^T], [L_e, 0]]`` factored once; the hole peak von Mises [Pa]
    at every step after t = 0."""
    fe = lug_fe()
    L_h, L_e = (resolve_interface(s, fe.mesh, fe.dof_of_node).fit_matrix(fe.n_dof)
                for s in ITFS)
    c, n = 4.0 / dt**2, fe.n_dof
    lu = spla.splu(sp.bmat([[fe.K + c * fe.M, L_e.T], [L_e, None]], format="csc"))
    u, v, a = np.zeros(n), np.zeros(n), np.zeros(n)
    out = []
    for t in dt * np.arange(1, round(t_end / dt) + 1):
        rhs = L_h.T @ np.r_[force(t)[0], 0.0, 0.0, 0.0] + fe.M @ (c * u + 4.0 / dt * v + a)
        u_new = lu.solve(np.r_[rhs, np.zeros(6)])[:n]
        a_new = c * (u_new - u) - 4.0 / dt * v - a
        v, u, a = v + 0.5 * dt * (a + a_new), u_new, a_new
        out.append(u)
    vm = von_mises(np.moveaxis(nodal_stress_modes(fe, np.array(out).T), 2, 0))
    return vm[:, np.unique(lug_fe().mesh.node_set("hole"))].max(axis=1)


@pytest.mark.slow
def test_transient_pull_corrected_stress_history():
    """The pull applied to the hole marker in 0.5 ms (smooth ramp; the lug's lowest
    free-free period is 0.36 ms), held to 1.5 ms, 150 steps of 10 us: the corrected hole
    peak follows the full FE transient at every step, the mode-only one does not.  What
    the correction leaves out (the inertia of the truncated modes; the two integrators)
    is measured, not assumed zero: 0.23 % of the peak (docs/stresses.md)."""
    t_end, dt = 1.5e-3, 1e-5
    force = smooth_pull(0.5e-3)
    ref = newmark_hole_peaks(force, t_end, dt)
    body = reduce_model(lug_fe(), ReductionSettings(
        n_modes=12, interfaces=ITFS, method="free_free", residual_flexibility=True,
        stiffening=False), name="lug")
    lug = FlexibleBody("lug", body, damping=False, stiffening=False)
    model = fm.System()
    model.add(fm.Fixed("clamp", fm.ground, lug["end"]),
              fm.ExternalForce("pull", at=lug["hole"], force=force))
    res = fm.simulate(model, t_end, dt, rho_inf=0.9)
    assert len(res.t) == len(ref) + 1
    asm, sl = model.assemble(), res.bodies["lug"]
    corrected, modal = [], []
    for k in range(1, len(res.t)):
        W = marker_wrenches(asm, lug, res.q[k], res.lam[k], res.t[k], res.qd[k])
        corrected.append(hole_peak(von_mises_stress(body, res.q[k, sl][7:], W)))
        modal.append(hole_peak(von_mises_stress(body, res.q[k, sl][7:])))
    assert np.abs(np.array(corrected) - ref).max() < 0.01 * ref.max()
    assert np.abs(np.array(modal) - ref).max() > 0.1 * ref.max()
