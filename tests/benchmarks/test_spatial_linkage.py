"""The spatial three-loop linkage of the side by side with Exudyn
(``benchmarks/exudyn/spatial_linkage.py``): its flexmbs side and the joint table from which
the Exudyn side rebuilds it.

* Mobility by the rank test of ``G`` at t = 0 against Grübler's count from the joint table
  with the VDI 2243 equation counts (revolute 5, universal 4, spherical 3):
  ``6 n_b + n_b n_q - sum u_g = 42 + 140 - 41 = 141`` (1 rigid-body freedom and the 140
  elastic coordinates), no redundant row: each loop is a spatial RUSR four-bar, which has
  none (a planar RRRR loop would have three).
* The pin points close the three loops: the initial assembly moves nothing.
* Mass: seven links of ``rho L b^2`` (the reduced mass is the integral of rho).
* The exported joint frames: the rocker revolutes turn about ``e_k x d_k``, perpendicular
  to rocker and coupler; the universal cross axes (x on the crank, y on the coupler) are
  both perpendicular to the coupler ``d_k``, so its spin about its own axis is locked.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "exudyn"))
import spatial_linkage as sl

from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model
from flexmbs.simulate import prepare

STEEL = Material(E=2.1e11, nu=0.3, rho=7850.0, name="steel")


@pytest.fixture(scope="module")
def linkage(tmp_path_factory):
    mesh = sl.link_mesh(tmp_path_factory.mktemp("mesh"))
    settings = ReductionSettings(n_modes=sl.N_MODES,
                                 interfaces=(InterfaceSpec("hole_A", "rbe2"),
                                             InterfaceSpec("hole_B", "rbe2")),
                                 frame="interface:hole_A", static_modes=False,
                                 stiffening=False)
    body = reduce_model(assemble(mesh, STEEL), settings, name="link")
    model, bodies = sl.build(body)
    return body, model, bodies


def test_mobility_is_grubler_from_the_joint_table(linkage):
    body, model, _ = linkage
    assert body.n_q == 6 + sl.N_MODES == 20
    expected = 6 * 7 + 7 * 20 - (4 * 5 + 3 * 4 + 3 * 3)
    assert sl.grubler_with_modes(body.n_q) == expected == 141
    report = prepare(model).dof
    assert report.redundant == ()
    assert report.mobility == report.grubler == expected


def test_pins_close_the_loops(linkage):
    _, model, _ = linkage
    max_dq, max_dqd = prepare(model).moved
    assert max_dq < 1e-12 and max_dqd < 1e-12


def test_mass_is_seven_links(linkage):
    _, _, bodies = linkage
    m = sum(b.m for b in bodies.values())
    assert m == pytest.approx(7 * STEEL.rho * sl.L * sl.SECTION**2, rel=1e-10)


def test_joint_table_frames(linkage):
    _, model, _ = linkage
    g = sl.geometry()
    t = sl.joint_table(model)
    assert len(t["joint_kind"]) == 10
    R_J = t["joint_R"]
    for R in R_J:
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    for k, (name, kind, at, R) in enumerate(zip(t["joint_name"], t["joint_kind"],
                                                t["joint_at"], R_J, strict=True)):
        name = str(name)
        pin = {"O": g["O"], "U": g["B"], "S": g.get(f"C{name[-1]}"),
               "R": g.get(f"O{name[-1]}")}[name[0]]
        np.testing.assert_allclose(at, pin, atol=1e-12, err_msg=f"joint {k} '{name}'")
        if kind == "revolute" and name != "O":
            e, d = g[f"e{name[1]}"], g[f"d{name[1]}"]
            np.testing.assert_allclose(R[:, 2], np.cross(e, d) / np.linalg.norm(np.cross(e, d)),
                                       atol=1e-12)
            assert abs(R[:, 2] @ e) < 1e-12
        if kind == "universal":
            d = g[f"d{name[1]}"]
            assert abs(R[:, 0] @ d) < 1e-12 and abs(R[:, 1] @ d) < 1e-12


@pytest.mark.slow
def test_exudyn_rebuilds_the_same_linkage(tmp_path):
    """A second code: Exudyn (its own venv, ``benchmarks/exudyn/make_env.sh``; skipped
    without it) rebuilt from the exported mesh, M, K, poses and joint table, with gravity
    as consistent nodal forces, gives the coupler's mid-span node at t = 0.2 s within the
    Newton tolerance of ours (the full 1 s run: 3e-9 m, docs/performance.md)."""
    import compare
    import flexmbs_models

    import flexmbs as fm
    if not compare.VENV_PY.exists():
        pytest.skip(f"no Exudyn venv at {compare.VENV}")
    model, data, key = flexmbs_models.build("spatial_linkage_7x20", tmp_path)
    data["t_end"] = 0.2
    np.savez(tmp_path / "linkage.npz", **data)
    ours = key(fm.simulate(model, 0.2, data["h"], rho_inf=data["rho_inf"], output_dt=0.2))
    theirs = compare.run_exudyn(compare.VENV_PY, tmp_path / "linkage.npz", nodal_gravity=True)
    node = int(data["key_node"])
    start = data["coupler_1_r0"] + data["coupler_1_R0"] @ data["link_X"][node]
    moved = np.linalg.norm(np.subtract(ours, start))
    assert moved > 1e-3                                 # the check is not trivially met
    assert np.linalg.norm(np.subtract(ours, theirs["key"])) < 1e-7
