"""Cost of spring-dampers, bushings, point forces, stops and one-sided springs per time
step, compiled against Python (not a test; docs/performance.md).

    .venv/bin/python benchmarks/spring_cost.py [--seconds 5]
    .venv/bin/python benchmarks/spring_cost.py --chain 16 [--steps 200] [--repeat 3]

The rigid slider-crank of ``friction_cost.py`` (no friction, 0.5 N m crank torque) gets
a torsion spring-damper on its crank pin, a 0.05 kg box held to the rod's middle by a
bushing, a spring-damper from the ground to that box, a tabulated (nonlinear) spring
from the ground to the slider and a constant force on the slider; it is simulated for
0.2 s at h = 1e-3 s, rho_inf = 0.9, again and again for ``--seconds`` (fastest run
kept), with the elements in the compiled step (flexmbs.forces.spring_kernel: PETSc calls
the C residual, the compiled loop runs the steps) and with them evaluated in Python at
every Newton iteration (the kernel given no elements, as before it covered them), next
to the slider-crank without them.  Two more rows give the slider-crank with one-sided
elements instead, compiled and in Python: a stop on the slider's prismatic displacement
(closed below -0.15 m, k = 500 N/m, d = 1 N s/m, smoothed over 5 mm; closed for 17 % of
the run), a rope (k = 200 N/m, d = 0.5 N s/m) from the ground to the rod's middle (slack
at the start, taut for 11 %) and a compression spring (k = 100 N/m) from the ground
beyond the slider (engaged near its far end, 31 %).  All rows are measured in one run
(``PYTHONPATH=.`` from the repository root, so that this tree's flexmbs is measured).

``--chain N``: instead, the flexible chain of ``benchmarks/scaling.py`` (N links, 15
coordinates each; above the stacked rows' size from N = 14) with, between each pair of
links, a torsion spring-damper on the pin and alternately a spring-damper or a bushing
from the middle of one link to the middle of the next, a tabulated spring from the
ground to the chain's end, a rope to its middle link and two point forces; ``--steps``
steps at h = 1e-3 s, the elements in one compiled call per residual
(:class:`flexmbs.system.spring_pack.LocalSprings`) and in Python, alternately ``--repeat``
times (fastest kept), with the chain without the elements: process CPU ms per step (after
the first steps), Newton iterations and Newton matrices per step.
"""
from __future__ import annotations

import argparse

from friction_cost import print_table, slider_crank
from step_cost import fastest_step


def with_springs():
    import flexmbs as fm
    from flexmbs.forces.bushing import Bushing
    from flexmbs.forces.external import ExternalForce
    from flexmbs.forces.nonlinear_spring import NonlinearSpring
    from flexmbs.forces.rotational_spring import RotationalSpringDamper
    from flexmbs.forces.spring_damper import PointToPointSpringDamper
    model = slider_crank(False)
    by = {x.name: x for x in (*model.bodies, *model.joints)}
    rod, slider, J1 = by["rod"], by["slider"], by["J1"]
    box = fm.RigidBody.box("box", (0.02, 0.02, 0.02), 0.05 / 8e-6, r0=(0.3, 0.03, 0.0))
    return model.add(
        box,
        RotationalSpringDamper("torsion", joint=J1, k=0.2, d=0.002),
        Bushing("bush", first=(rod, (0.3, 0.0, 0.0)), second=box,
                K=(2e3, 2e3, 2e3, 5.0, 5.0, 5.0), D=(2.0, 2.0, 2.0, 0.01, 0.01, 0.01)),
        PointToPointSpringDamper("spring", first=(fm.ground, (0.3, 0.3, 0.0)), second=box,
                                 k=50.0, d=0.5),
        NonlinearSpring("stop", first=(fm.ground, (0.8, 0.0, 0.0)), second=slider,
                        deflection=(-0.1, 0.0, 0.05), force=(-20.0, 0.0, 2.0)),
        ExternalForce("push", at=slider, force=(-0.5, 0.0, 0.0)))


def with_stops():
    import flexmbs as fm
    from flexmbs.forces.one_sided import CompressionSpring, Rope
    from flexmbs.forces.stops import JointStop
    model = slider_crank(False)
    by = {x.name: x for x in (*model.bodies, *model.joints)}
    rod, slider, J4 = by["rod"], by["slider"], by["J4"]
    return model.add(
        JointStop("slide-stop", joint=J4, lower=-0.15, k=500.0, d=1.0, smoothing=0.005,
                  coordinate="displacement"),
        Rope("rope", first=(fm.ground, (0.3, 0.3, 0.0)), second=(rod, (0.3, 0.0, 0.0)),
             k=200.0, d=0.5, l0=0.31),
        CompressionSpring("buffer", first=(fm.ground, (0.6, 0.0, 0.0)), second=slider,
                          k=100.0, l0=0.11))


def measure(model, seconds: float, python: bool = False) -> tuple[float, float]:
    """Fastest cost per step [s] and Newton iterations per step (``python``: the
    elements evaluated in Python)."""
    from flexmbs.system import spring_pack
    of = spring_pack.SpringPack.__dict__["of"]
    if python:
        empty = spring_pack.SpringPack
        spring_pack.SpringPack.of = classmethod(
            lambda cls, layout, stacked: empty((), (), (), (), (), layout.n_q))
    try:
        best, _, res = fastest_step(model, seconds)
    finally:
        spring_pack.SpringPack.of = of
    return best, res.stats.newton_iterations / res.stats.steps


def chain_with_springs(body_file, n: int, springs: bool = True):
    """The scaling chain of ``n`` links with the force elements of the module docstring."""
    import flexmbs as fm
    from flexmbs.forces.bushing import Bushing
    from flexmbs.forces.external import ExternalForce
    from flexmbs.forces.nonlinear_spring import NonlinearSpring
    from flexmbs.forces.one_sided import Rope
    from flexmbs.forces.rotational_spring import RotationalSpringDamper
    from flexmbs.forces.spring_damper import PointToPointSpringDamper
    from scaling import LINK, build
    model, _ = build("chain", n, body_file)
    if not springs:
        return model
    links = [b for b in model.bodies]
    joints = {j.name: j for j in model.joints}
    for i in range(1, n):
        model.add(RotationalSpringDamper(f"t{i}", joint=joints[f"J{i}"], k=2.0 + i, d=0.01,
                                         angle0=0.02))
        mid0, mid1 = ((i - 0.5) * LINK[0], 0.0, 0.0), ((i + 0.5) * LINK[0], 0.0, 0.0)
        if i % 2:
            model.add(PointToPointSpringDamper(f"s{i}", first=(links[i - 1], mid0),
                                               second=(links[i], mid1), k=300.0, d=0.5,
                                               l0=0.19))
        else:
            model.add(Bushing(f"b{i}", first=(links[i - 1], mid0), second=(links[i], mid1),
                              K=(50.0, 80.0, 60.0, 2.0, 3.0, 4.0),
                              D=(0.5, 0.5, 0.5, 0.01, 0.01, 0.01)))
    end = n * LINK[0]
    return model.add(
        NonlinearSpring("nl", first=(fm.ground, (end, -0.3, 0.0)), second=links[-1]["x1"],
                        deflection=(-0.1, 0.0, 0.05, 0.2), force=(-3.0, 0.0, 0.8, 9.0), d=0.1),
        Rope("rope", first=(fm.ground, (0.5 * end, 0.2, 0.0)),
             second=(links[n // 2], ((n // 2 + 0.5) * LINK[0], 0.0, 0.0)), k=200.0, d=0.5,
             l0=0.1),
        ExternalForce("push", at=links[3]["x1"], force=(0.5, -1.0, 0.0)),
        ExternalForce("follow", at=links[-1]["x1"], force=(0.0, 0.3, 0.0), frame="body"))


def chain_rows(n: int, steps: int, repeat: int) -> None:
    """Print the chain rows of the module docstring (all measured in this process)."""
    import tempfile
    from pathlib import Path

    import flexmbs
    from flexmbs.system.assembly import AssembledSystem
    from scaling import reduce_link, time_steps
    print(f"flexmbs from {Path(flexmbs.__file__).parent}")
    compiled = AssembledSystem.local_springs
    with tempfile.TemporaryDirectory() as tmp:
        body_file = str(Path(tmp) / "link.npz")
        reduce_link(body_file)
        cases = [("elements compiled", True, False), ("elements in Python", True, True),
                 ("no force elements", False, False)]
        best = {}
        for _ in range(repeat):             # alternately, fastest kept
            for name, springs, python in cases:
                if python:
                    AssembledSystem.local_springs = lambda self: None
                try:
                    row = time_steps(chain_with_springs(body_file, n, springs), steps)
                finally:
                    AssembledSystem.local_springs = compiled
                if name not in best or row["cpu_ms_per_step"] < best[name]["cpu_ms_per_step"]:
                    best[name] = row
    base = best["elements compiled"]["cpu_ms_per_step"]
    print(f"flexible chain, {n} links, n_q = {best['no force elements']['n_coords']}, "
          f"{steps} steps at h = 1e-3 s, fastest of {repeat} (process CPU)")
    print(f"{'model':<22} {'CPU ms/step':>12} {'Newton/step':>12} {'matrices/step':>14} "
          f"{'ratio':>7}")
    for name, _, _ in cases:
        r = best[name]
        print(f"{name:<22} {r['cpu_ms_per_step']:12.2f} {r['newton_per_step']:12.2f} "
              f"{r['jacobians_per_step']:14.3f} {r['cpu_ms_per_step'] / base:7.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="time per row [s]")
    ap.add_argument("--chain", type=int, default=0, help="the flexible chain of N links")
    ap.add_argument("--steps", type=int, default=200, help="chain: steps per run")
    ap.add_argument("--repeat", type=int, default=3, help="chain: runs per row")
    args = ap.parse_args()
    if args.chain:
        chain_rows(args.chain, args.steps, args.repeat)
        return
    rows = [("no force elements", measure(slider_crank(False), args.seconds)),
            ("5 elements, compiled", measure(with_springs(), args.seconds)),
            ("5 elements, in Python", measure(with_springs(), args.seconds, python=True)),
            ("stop, rope, buffer, compiled", measure(with_stops(), args.seconds)),
            ("stop, rope, buffer, in Python", measure(with_stops(), args.seconds,
                                                     python=True))]
    print_table(rows)


if __name__ == "__main__":
    main()
