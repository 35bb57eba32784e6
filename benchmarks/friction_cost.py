"""Cost of joint friction per time step (not a test; docs/friction.md).

    .venv/bin/python benchmarks/friction_cost.py [--seconds 5]

A rigid slider-crank (crank 0.1 m, rod 0.4 m, slider 0.0756 kg on x, 0.5 N m crank
torque, gravity -y) with its four joints (three revolutes, one prismatic) is simulated
for 0.2 s at h = 1e-3 s, rho_inf = 0.9, again and again for ``--seconds``, without
friction and with friction in every joint (mu_s = 0.15, mu_k = 0.1, pin radius 5 mm,
normal forces from the reactions).  The table gives the fastest run's cost per step, its
Newton iterations per step and the ratio to the model without friction.  The friction
elements and their bristle states run inside the compiled step (flexmbs.forces.
friction_kernel).  A third row adds to the model without friction one force element
with an internal state and no force (a linear actuator with zero command), which the
compiled step does not cover: its force is added in Python at every Newton iteration
(PETSc then calls the step through Python), the cost of an element left to Python.
"""
from __future__ import annotations

import argparse

import numpy as np
from step_cost import H, T_RUN, fastest_step


def slider_crank(friction: bool, stateful: bool = False):
    import flexmbs as fm
    a, L = 0.1, 0.4
    crank = fm.RigidBody.box("crank", (a, 0.01, 0.01), 7850.0, com=(a / 2, 0, 0))
    rod = fm.RigidBody.box("rod", (L, 0.01, 0.01), 7850.0, com=(L / 2, 0, 0),
                           r0=(a, 0.0, 0.0))
    slider = fm.RigidBody.box("slider", (0.02, 0.02, 0.02), 0.0756 / 8e-6,
                              r0=(a + L, 0.0, 0.0))
    joints = (fm.Revolute("J1", fm.ground, crank, at=(0.0, 0.0, 0.0), axis="z"),
              fm.Revolute("J2", crank, rod, at=(a, 0.0, 0.0), axis="z"),
              fm.Revolute("J3", rod, slider, at=(a + L, 0.0, 0.0), axis="z"),
              fm.Prismatic("J4", fm.ground, slider, at=(a + L, 0.0, 0.0), axis="x"))
    model = fm.System(name="slider_crank", gravity=(0.0, -9.81, 0.0))
    model.add(crank, rod, slider, *joints,
              fm.ExternalTorque("drive", at=crank, torque=(0.0, 0.0, 0.5)))
    if stateful:                     # zero force, one state: the path of stateful models
        model.add(fm.LinearActuator("idle", first=fm.ground, second=(slider, (0.0, 0.1, 0.0)),
                                    command=0.0, tau=1.0))
    if friction:
        law = fm.FrictionLaw(mu_s=0.15, mu_k=0.1)
        model.add(*(fm.JointFriction(f"{j.name}-friction", joint=j, law=law,
                                     pin_radius=None if j.kind == "prismatic" else 0.005)
                    for j in joints))
    return model


def measure(friction: bool, seconds: float, stateful: bool = False) -> tuple[float, float]:
    """Fastest cost per step [s] and Newton iterations per step."""
    best, _, res = fastest_step(slider_crank(friction, stateful), seconds)
    return best, res.stats.newton_iterations / res.stats.steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="time per row [s]")
    args = ap.parse_args()
    rows = [("no friction", measure(False, args.seconds)),
            ("friction in all 4 joints", measure(True, args.seconds)),
            ("no friction, one idle state", measure(False, args.seconds, stateful=True))]
    print_table(rows)


def print_table(rows) -> None:
    """``[(name, (cost per step [s], Newton iterations per step))]`` with the ratio to
    the first row's cost."""
    base = rows[0][1][0]
    print(f"rigid slider-crank, h = {H:g} s, {T_RUN:g} s per run, fastest run")
    print(f"{'model':<30} {'ms/step':>9} {'Newton/step':>12} {'ratio':>7}")
    for name, (cost, its) in rows:
        print(f"{name:<30} {1e3 * cost:9.3f} {its:12.2f} {cost / base:7.2f}")
    assert np.isfinite(base)


if __name__ == "__main__":
    main()
