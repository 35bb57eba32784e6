"""Steps per second of flexible models, side by side with Exudyn 1.13.6 (not a test).

Generalized-α, rho_inf = 0.9, h = 1e-3 over 1 s (as in PEER_EXUDYN.md), geometric
stiffening on (K2, K3), each model built and reduced before the clock starts:

* cantilever 1.0 x 0.1 x 0.1 m steel, ``beam_hex27_20x2x2``, Craig–Bampton 10
  fixed-interface modes, RBE2 clamp as frame, ``Fixed`` to ground, gravity -y;
* flexible pendulum 1.0 x 0.02 x 0.02 m, ``pendulum_hex27_25x1x1`` (Exudyn: 50x2x2),
  8 modes, pinned (``Revolute`` at the ``pin`` interface), horizontal start, gravity;
* slider-crank: rigid crank 0.1 m, rod 0.4 x 0.01 x 0.01 m hex27 20x1x1 (meshed here
  with gmsh; interfaces at the end faces), 6 constraint + 6 fixed-interface modes,
  rigid slider; crank driven at 150 rad/s (Exudyn: 0.1 N m crank torque).

    python benchmarks/flexible_steps.py            # table
    python benchmarks/flexible_steps.py --kane     # plus the 20 s Kane spin-up runs
    python benchmarks/flexible_steps.py --crank    # plus the slider-crank mode sequence
    python benchmarks/flexible_steps.py -fmbs_pc_factor_mat_solver_type umfpack  # PETSc options
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scenarios" / "flexible"))

EXUDYN = {"cantilever": 8789, "pendulum": 3140, "slider-crank": 1993}
T_END, H = 1.0, 1e-3


def _imports():
    import flexmbs as fm
    from flexmbs.bodies.flexible import FlexibleBody
    from flexmbs.constraints.fixed import Fixed
    from flexmbs.fe.material import material_from_name
    from flexmbs.io.mesh import read_mesh
    return fm, FlexibleBody, Fixed, material_from_name, read_mesh


def cantilever():
    from flexcase_models import MESHES, reduce_cb
    fm, FlexibleBody, Fixed, material_from_name, read_mesh = _imports()
    body = reduce_cb(read_mesh(MESHES / "beam_hex27_20x2x2.msh"), material_from_name("steel"),
                     10, static_modes=False, name="beam")
    beam = FlexibleBody("beam", body)
    model = fm.System(gravity=(0, -9.81, 0), name="cantilever")
    model.add(Fixed("clamp", fm.ground, beam["clamp"]))
    return model, body.n_q


def pendulum():
    from flexcase_models import MESHES, reduce_cb
    fm, FlexibleBody, _, material_from_name, read_mesh = _imports()
    body = reduce_cb(read_mesh(MESHES / "pendulum_hex27_25x1x1.msh"),
                     material_from_name("steel"), 8, interfaces=("pin",), static_modes=False,
                     name="pendulum")
    beam = FlexibleBody("pendulum", body)
    model = fm.System(gravity=(0, -9.81, 0), name="pendulum")
    model.add(fm.Revolute("pin", fm.ground, beam["pin"], axis="z"))
    return model, body.n_q


def slider_crank(tmp):
    from flexcase_models import box_beam_mesh, reduce_cb, slider_crank_model
    _, _, _, material_from_name, _ = _imports()
    mesh = box_beam_mesh(Path(tmp) / "rod.msh", (0.4, 0.01, 0.01), (20, 1, 1),
                         faces=("hole_A", "hole_B"))
    body = reduce_cb(mesh, material_from_name("steel"), 6, interfaces=("hole_A", "hole_B"),
                     static_modes=False, name="rod")
    return slider_crank_model(body), body.n_q


def run(model, t_end=T_END, h=H):
    """steps/s of ``model`` after a five-step warm-up (it loads the compiled kernels; not
    timed, as imports are not)."""
    import flexmbs as fm
    fm.simulate(model, 5 * h, h, rho_inf=0.9, output_dt=5 * h)
    t0 = time.perf_counter()
    res = fm.simulate(model, t_end, h, rho_inf=0.9, output_dt=0.01)
    wall = time.perf_counter() - t0
    return res, round(t_end / h) / wall


def kane_runs():
    """The 20 s Kane spin-up with and without stiffening, dt = 0.01 s, with the basis of
    the shipped case and tests (6 fixed-interface modes, inertial static modes and 3
    modal derivatives of the in-plane bending vectors), and the quasi-static tip
    deflection at t = 2 s against Euler-Bernoulli."""
    from flexcase_models import MESHES, nearest_node, reduce_cb
    from test_spinup_beam import euler_bernoulli, quasi_static, spinup_model, tip_y

    import flexmbs as fm
    from flexmbs.errors import DivergenceError
    from flexmbs.fe.material import material_from_name
    from flexmbs.io.mesh import read_mesh
    body = reduce_cb(read_mesh(MESHES / "kane_hex27_40x1x1.msh"),
                     material_from_name("aluminium_kane"), 6, static_modes=True, name="kane",
                     modal_derivatives=3, derivative_axis=1)
    tip = nearest_node(body.points, (8.0, body.points[:, 1].max() / 2,
                                     body.points[:, 2].max() / 2))
    for stiff in (True, False):
        print(f"Kane quasi-static tip y at t = 2 s, stiffening={stiff}: "
              f"{quasi_static(body, tip, 2.0, stiff) * 1e3:.4g} mm (Euler-Bernoulli "
              f"{euler_bernoulli(2.0) * 1e3:.4g} mm)")
    for stiff in (True, False):
        t0 = time.perf_counter()
        try:
            res = fm.simulate(spinup_model(body, stiff), 20.0, 0.01, rho_inf=0.8,
                              output_dt=0.1)
        except DivergenceError as exc:
            print(f"Kane spin-up stiffening={stiff}: diverged at t = {exc.t:.2f} s "
                  f"({time.perf_counter() - t0:.1f} s wall)")
            continue
        d = tip_y(body, tip, res.body_q("beam")[:, 7:])
        late = np.abs(d[res.t > 17.0]).max()
        i = int(np.nanargmax(np.abs(d)))
        print(f"Kane spin-up stiffening={stiff}: max |tip y| = {abs(d[i]):.4g} m at "
              f"t = {res.t[i]:.2f} s; max after t = 17 s: {late * 1e3:.3g} mm "
              f"({time.perf_counter() - t0:.1f} s wall)")


def crank_sequence(modes=(2, 4, 8, 12), revolutions=3, h=1e-4):
    from flexcase_models import MESHES, STEEL, midspan_deflection, reduce_cb, slider_crank_model

    import flexmbs as fm
    from flexmbs.io.mesh import read_mesh
    t_end = revolutions * 2 * np.pi / 150.0
    for mesh in ("conrod_tet10.msh",):
        for n in modes:
            body = reduce_cb(read_mesh(MESHES / mesh), STEEL, n, interfaces=("hole_A", "hole_B"),
                             name="rod")
            res = fm.simulate(slider_crank_model(body), t_end, h, rho_inf=0.8, output_dt=2 * h)
            d = midspan_deflection(body, res.body_q("rod")[:, 7:])
            last = res.t > t_end - 2 * np.pi / 150.0
            print(f"{mesh} n_modes={n:2d} n_q={body.n_q:2d}: mid-span deflection in the last "
                  f"revolution max {d[last].max() * 1e3:.4f} mm, min {d[last].min() * 1e3:.4f} mm")


def main(argv):
    petsc = [a for i, a in enumerate(argv) if a.startswith("-fmbs_")
             or (i > 0 and argv[i - 1].startswith("-fmbs_") and not a.startswith("-"))]
    if petsc:
        from flexmbs.integrate import petsc_options_from_args
        petsc_options_from_args(petsc)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in (("cantilever", cantilever), ("pendulum", pendulum),
                            ("slider-crank", lambda: slider_crank(tmp))):
            model, n_q = build()
            _, rate = run(model)
            rows.append((name, n_q, rate))
    print(f"{'model':<14}{'n_q':>5}{'flexmbs steps/s':>18}{'Exudyn steps/s':>17}{'ratio':>8}")
    for name, n_q, rate in rows:
        print(f"{name:<14}{n_q:>5}{rate:>18.0f}{EXUDYN[name]:>17,}{rate / EXUDYN[name]:>8.3f}")
    if "--kane" in argv:
        kane_runs()
    if "--crank" in argv:
        crank_sequence()


if __name__ == "__main__":
    main(sys.argv[1:])
