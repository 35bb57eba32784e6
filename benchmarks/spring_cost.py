"""Cost of spring-dampers, bushings, point forces, stops and one-sided springs per time
step, compiled against Python (not a test; docs/performance.md).

    .venv/bin/python benchmarks/spring_cost.py [--seconds 5]

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="time per row [s]")
    args = ap.parse_args()
    rows = [("no force elements", measure(slider_crank(False), args.seconds)),
            ("5 elements, compiled", measure(with_springs(), args.seconds)),
            ("5 elements, in Python", measure(with_springs(), args.seconds, python=True)),
            ("stop, rope, buffer, compiled", measure(with_stops(), args.seconds)),
            ("stop, rope, buffer, in Python", measure(with_stops(), args.seconds,
                                                     python=True))]
    print_table(rows)


if __name__ == "__main__":
    main()
