"""Models shared by the relative-coordinate tests: random trees, a planar pendulum
chain, a spatial chain of six revolutes and a four-bar (tree + cut joint)."""
from __future__ import annotations

import numpy as np

import flexmbs as fm
from flexmbs.kinematics.rotation import matrix_from_axis_angle

#: the joint kinds of a random tree; None: the body has no joint (a free joint in the tree)
JOINTS = ("Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical", None)


def random_rotation(rng) -> np.ndarray:
    return matrix_from_axis_angle(rng.normal(size=3), rng.uniform(0, np.pi))


def random_body(rng, name: str) -> fm.RigidBody:
    """A rigid body with a random mass, a random (physical) inertia, a centre of mass
    off the origin, and a random initial pose and twist."""
    Q = random_rotation(rng)
    I_S = Q @ np.diag(rng.uniform(0.8, 1.2, 3)) @ Q.T
    return fm.RigidBody(name, m=rng.uniform(0.5, 2.0), I_S=I_S, com=rng.normal(0, 0.2, 3),
                        r0=rng.normal(0, 1.0, 3), R0=random_rotation(rng),
                        v0=rng.normal(size=3), omega0=rng.normal(size=3))


def random_tree(seed: int, n: int, kinds=JOINTS) -> fm.System:
    """``n`` bodies, each hung on the ground or an earlier body by a random joint kind
    at a random point about a random axis, or free (no joint)."""
    rng = np.random.default_rng(seed)
    model = fm.System(gravity=(0.3, -9.81, 0.5), name=f"tree{seed}")
    bodies = []
    for i in range(n):
        b = random_body(rng, f"b{i}")
        k = int(rng.integers(0, len(bodies) + 1))
        parent = fm.ground if k == 0 else bodies[k - 1]
        kind = kinds[int(rng.integers(0, len(kinds)))]
        at, axis = rng.normal(0, 1.0, 3), rng.normal(size=3)
        model.add(b)
        if kind is not None:
            model.add(getattr(fm, kind)(f"J{i}", parent, b, at=at, axis=axis))
        bodies.append(b)
    return model


def link(name: str, start, end, m: float = 1.0, omega=(0.0, 0.0, 0.0)) -> fm.RigidBody:
    """A slender rod of mass ``m`` from ``start`` to ``end`` (origin at its middle),
    turning with ``omega`` [rad/s] about the inertial origin."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    L = np.linalg.norm(end - start)
    It = m * L * L / 12.0
    axis = (end - start) / L
    helper = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    y = np.cross(helper, axis)
    y /= np.linalg.norm(y)
    R0 = np.column_stack([axis, y, np.cross(axis, y)])
    r0, omega = 0.5 * (start + end), np.asarray(omega, float)
    return fm.RigidBody(name, m=m, I_S=np.diag([0.1 * It, It, It]), r0=r0, R0=R0,
                        omega0=omega, v0=np.cross(omega, r0))


def pendulum_chain(n: int = 3, L: float = 0.5, omega: float = 2.0,
                   child_first: bool = False) -> fm.System:
    """``n`` rods of length ``L`` [m] on revolutes about z, hanging at a slant, started
    turning together at ``omega`` [rad/s] about the ground pivot; ``child_first``: each
    joint names the lower rod as its first side."""
    model = fm.System(gravity=(0.0, -9.81, 0.0), name="pendulum_chain")
    parent = fm.ground
    u = L * np.array([np.sin(0.3), -np.cos(0.3), 0.0])
    for i in range(n):
        b = link(f"rod{i}", i * u, (i + 1) * u, omega=(0.0, 0.0, omega))
        sides = (b, parent) if child_first else (parent, b)
        model.add(b, fm.Revolute(f"J{i}", *sides, at=i * u, axis="z"))
        parent = b
    return model


def spherical_chain(n: int = 4, L: float = 0.4) -> fm.System:
    """``n`` rods of length ``L`` [m] on spherical joints (one Euler normalisation row
    each), hanging at a slant in the x-y plane, started turning together at 2 rad/s
    about the x axis through the ground pivot (out of the plane)."""
    model = fm.System(gravity=(0.0, -9.81, 0.0), name=f"spherical_chain{n}")
    parent = fm.ground
    u = L * np.array([np.sin(0.4), -np.cos(0.4), 0.0])
    for i in range(n):
        b = link(f"rod{i}", i * u, (i + 1) * u, omega=(2.0, 0.0, 0.0))
        model.add(b, fm.Spherical(f"J{i}", parent, b, at=i * u))
        parent = b
    return model


def spatial_chain() -> fm.System:
    """Six revolutes about different axes, links along a bent line hanging from the
    first joint (a spatial open chain), started turning at 1 rad/s about the vertical
    first joint axis."""
    model = fm.System(gravity=(0.0, 0.0, -9.81), name="chain6")
    axes = ["z", "y", "x", "y", (1.0, 1.0, 0.0), "x"]
    pts = [np.array([0.0, 0.0, 0.0])]
    for d in ([0.0, 0.0, -0.3], [0.3, 0.1, -0.1], [0.1, 0.3, -0.2], [0.1, 0.0, -0.3],
              [0.0, 0.2, -0.2], [0.2, 0.0, -0.2]):
        pts.append(pts[-1] + np.array(d))
    parent = fm.ground
    for i in range(6):
        b = link(f"link{i}", pts[i], pts[i + 1], m=1.0 - 0.1 * i, omega=(0.0, 0.0, 1.0))
        model.add(b, fm.Revolute(f"J{i}", parent, b, at=pts[i], axis=axes[i]))
        parent = b
    return model


def four_bar() -> fm.System:
    """Crank, coupler and rocker on revolutes about z (ground pivots 0.8 m apart); the
    last joint closes the loop (a cut joint in the tree)."""
    A, B, C, D = (np.array(p, float) for p in ((0, 0, 0), (0.2, 0.25, 0), (0.75, 0.7, 0),
                                                (0.8, 0, 0)))
    crank, coupler, rocker = link("crank", A, B), link("coupler", B, C), link("rocker", D, C)
    model = fm.System(gravity=(0.0, -9.81, 0.0), name="four_bar")
    model.add(crank, coupler, rocker,
              fm.Revolute("A", fm.ground, crank, at=A, axis="z"),
              fm.Revolute("B", crank, coupler, at=B, axis="z"),
              fm.Revolute("D", fm.ground, rocker, at=D, axis="z"),
              fm.Revolute("C", coupler, rocker, at=C, axis="z"))
    return model


def driven_chain() -> fm.System:
    """The pendulum chain with its first joint driven (angle 0.3 sin(3 t) rad, which
    starts at the chain's 0.9 rad/s), a torsion spring-damper in the second joint and
    an axial spring-damper from a ground point to the last rod's tip."""
    model = pendulum_chain(3, omega=0.9)
    rods = model.bodies
    model.add(fm.AngleDrive("drive", joint="J0", angle=fm.Sine(amplitude=0.3, omega=3.0)),
              fm.RotationalSpringDamper("torsion", joint=model.joint("J1"), k=20.0, d=0.5),
              fm.PointToPointSpringDamper("spring", first=fm.ground.marker("anchor",
                                                                            (1.0, 0.0, 0.0)),
                                          second=rods[2].marker("tip", (0.25, 0.0, 0.0)),
                                          k=50.0, d=1.0))
    return model
