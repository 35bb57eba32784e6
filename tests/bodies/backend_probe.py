"""Numbers computed by whichever kernel backend the process runs (``FLEXMBS_KERNELS``), for
``test_backends_agree.py``; ``python backend_probe.py OUT.npz`` writes them.

* body level: residual and tangent ``(K, C, M)`` of a damped flexible body with geometric
  stiffening, the same body linear, and a rigid body, at random states;
* system level: residual and Newton matrices ``(K, C, M)`` of an assembled system
  (ground - revolute - rigid crank - revolute - flexible rod - spherical - point mass) at
  random states with Lagrange multipliers;
* a short simulation of that system (50 steps of 1 ms, rho_inf = 0.9): coordinates,
  multipliers and total energy at every step.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from flexcases import beam_cb, pendulum_cb, random_unit_e  # noqa: E402

import flexmbs as fm  # noqa: E402
from flexmbs.kinematics.frames import position  # noqa: E402

G = np.array([0.3, -9.81, 0.2])


def crank_rod_mass() -> fm.System:
    """Ground - revolute - rigid crank - revolute - flexible rod (2 modes) - spherical -
    point mass, in a consistent initial position, gravity -y."""
    crank = fm.RigidBody.box("crank", (0.3, 0.02, 0.02), 7850.0, com=(0.15, 0, 0))
    rod = fm.FlexibleBody("rod", pendulum_cb(2), r0=(0.3, 0.0, 0.0))
    tip = rod.node_marker("tip", int(np.argmax(rod.body.points[:, 0])))
    mass = fm.PointMass("m", 0.5, r0=position(tip, rod.initial_q()))
    model = fm.System(gravity=(0, -9.81, 0))
    model.add(crank, rod, mass,
              fm.Revolute("J1", fm.ground, crank, at=(0.0, 0.0, 0.0), axis="z"),
              fm.Revolute("J2", crank.marker("end", s=(0.3, 0, 0)), rod["pin"], axis="z"),
              fm.Spherical("J3", tip, mass.marker("c")))
    return model


def _random_q(asm, rng):
    q = rng.normal(size=asm.n_q)
    for b in asm.bodies:
        s = asm.body_slices[b.name]
        if b.n_coords >= 7:
            q[s.start + 3:s.start + 7] = random_unit_e(rng)
            q[s.start + 7:s.stop] *= 1e-3
    return q


def probe() -> dict[str, np.ndarray]:
    """The numbers of the module docstring, by name."""
    out = {}
    rng = np.random.default_rng(20)
    bodies = {"flexible": fm.FlexibleBody("f", beam_cb(3, damping=1e-3)),
              "flexible_linear": fm.FlexibleBody("f", beam_cb(3), stiffening=False),
              "rigid": fm.RigidBody.box("r", (0.3, 0.05, 0.02), 7850.0, com=(0.1, 0.01, 0))}
    for name, b in bodies.items():
        n = b.n_coords
        for i in range(3):
            q = np.concatenate([rng.normal(size=3), random_unit_e(rng),
                                2e-2 * rng.normal(size=n - 7)])
            qd, qdd = rng.normal(size=n), rng.normal(size=n)
            out[f"{name}/residual/{i}"] = b.residual(q, qd, qdd, G)
            for key, X in zip("KCM", b.tangent(q, qd, qdd, G), strict=True):
                out[f"{name}/{key}/{i}"] = X
    model = crank_rod_mass()
    asm = model.assemble()
    for i in range(3):
        q, qd, qdd = _random_q(asm, rng), rng.normal(size=asm.n_q), rng.normal(size=asm.n_q)
        lam = rng.normal(size=asm.n_lam)
        out[f"system/residual/{i}"] = np.asarray(asm.residual(q, qd, qdd, lam, 0.1))
        for key, X in zip("KCM", asm.tangent(q, qd, qdd, lam, 0.1), strict=True):
            out[f"system/{key}/{i}"] = X.toarray()
    res = fm.simulate(model, 0.05, 1e-3, rho_inf=0.9)
    out["simulation/q"], out["simulation/lam"] = res.q, res.lam
    out["simulation/energy"] = res.energy["total"]
    return out


if __name__ == "__main__":
    np.savez(sys.argv[1], **probe())
