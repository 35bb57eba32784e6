"""A spatial three-loop linkage of seven flexible links, for the side by side with Exudyn.

Topology (1 rigid-body freedom, 3 closed loops, 10 joints): a crank turns about the
vertical axis y on a revolute at the origin O; three couplers hang from the crank pin B
on universal joints (each blocks its coupler's spin about the coupler's axis); each
coupler ends on a spherical joint at the tip C_k of a rocker, which turns on a revolute
at the ground point O_k.  Every loop O -> B -> C_k -> O_k is a spatial RUSR four-bar;
the three share the crank.

    ground --R(O)-- crank --U(B)--+-- coupler_1 --S(C_1)-- rocker_1 --R(O_1)-- ground
                                  +-- coupler_2 --S(C_2)-- rocker_2 --R(O_2)-- ground
                                  +-- coupler_3 --S(C_3)-- rocker_3 --R(O_3)-- ground

Grübler: 7 x 6 - (4 x 5 + 3 x 4 + 3 x 3) = 1, plus the elastic coordinates.  All links
are one steel box beam ``L`` x 20 x 20 mm (hex27, 20 x 1 x 1 cells, RBE2 end faces
``hole_A``, ``hole_B``), reduced once by Craig--Bampton (frame at ``hole_A``, 6
constraint modes of ``hole_B`` + ``n_modes`` fixed-interface modes) and placed seven
times.  Each rocker stands perpendicular to its coupler and turns about
``e_k x d_k`` (transmission angle 90 deg at t = 0).  Released from rest under gravity
-y [m/s^2].
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

L = 0.4                       # link length [m] (pin to pin)
SECTION = 0.02                # square section side [m]
N_MODES = 14                  # fixed-interface modes; + 6 constraint modes = 20 per link
#: coupler directions d_k from the crank pin B (unit vectors after normalising)
COUPLERS = ((0.2, -0.4, 1.0), (0.8, -0.4, -0.6), (-0.7, -0.4, -0.7))
#: a direction per rocker; the rocker e_k is its part perpendicular to d_k
ROCKER_HINTS = ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (1.0, 0.0, -1.0))
CRANK = (1.0, 0.0, 0.0)       # crank direction from O, turning about y
#: joint table: (name, kind, first body, its interface, second body, its interface)
JOINTS = (("O", "revolute", "ground", "", "crank", "hole_A"),
          *((f"U{k}", "universal", "crank", "hole_B", f"coupler_{k}", "hole_A")
            for k in (1, 2, 3)),
          *((f"S{k}", "spherical", f"coupler_{k}", "hole_B", f"rocker_{k}", "hole_B")
            for k in (1, 2, 3)),
          *((f"R{k}", "revolute", "ground", "", f"rocker_{k}", "hole_A") for k in (1, 2, 3)))
#: equations per joint kind (VDI 2243: revolute u = 5, universal 4, spherical 3)
N_EQ = {"revolute": 5, "universal": 4, "spherical": 3}


def _unit(v) -> np.ndarray:
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def link_frame(x, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """Rotation (columns x, y, z) whose x column is the link direction ``x``."""
    x = _unit(x)
    z = np.cross(x, up)
    if np.linalg.norm(z) < 1e-6:
        z = np.cross(x, (1.0, 0.0, 0.0))
    z = _unit(z)
    return np.column_stack([x, np.cross(z, x), z])


def geometry() -> dict:
    """Pin points [m] and link directions: ``O, B, C_k, O_k``, ``d_k`` (couplers),
    ``e_k`` (rockers, from O_k to C_k) and ``n_k`` (rocker axes)."""
    origin = np.zeros(3)
    B = origin + L * _unit(CRANK)
    g = {"O": origin, "B": B}
    for k, (d, h) in enumerate(zip(COUPLERS, ROCKER_HINTS, strict=True), start=1):
        d = _unit(d)
        h = np.asarray(h, float)
        e = _unit(h - (h @ d) * d)
        C = B + L * d
        g.update({f"d{k}": d, f"e{k}": e, f"n{k}": _unit(np.cross(e, d)), f"C{k}": C,
                  f"O{k}": C - L * e})
    return g


def link_mesh(tmp: str | Path):
    """The beam mesh of every link (``hole_A`` at x = 0, ``hole_B`` at x = L)."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "scenarios"
                           / "flexible"))
    from flexcase_models import box_beam_mesh
    return box_beam_mesh(Path(tmp) / "link.msh", (L, SECTION, SECTION), (20, 1, 1),
                         faces=("hole_A", "hole_B"))


def place(reduced, name: str, start, direction, **kw):
    """A :class:`FlexibleBody` of ``reduced`` with ``hole_A`` at ``start`` [m] and the
    link axis along ``direction``: ``R0 = link_frame(direction)``,
    ``r0 = start - R0 R_A`` (``R_A``: the hole_A reference point, body frame)."""
    import flexmbs as fm
    R0 = link_frame(direction)
    r0 = np.asarray(start, float) - R0 @ np.asarray(reduced.marker("hole_A").R)
    return fm.FlexibleBody(name, reduced, r0=r0, R0=R0, **kw)


def build(reduced, gravity=(0.0, -9.81, 0.0), stiffening=False):
    """``(model, bodies)``: the linkage of the module doc, all links from ``reduced``
    (hole_A -> hole_B of length L), joints in the order of :data:`JOINTS`."""
    import flexmbs as fm
    g = geometry()
    bodies = {"crank": place(reduced, "crank", g["O"], g["B"] - g["O"], stiffening=stiffening)}
    for k in (1, 2, 3):
        bodies[f"coupler_{k}"] = place(reduced, f"coupler_{k}", g["B"], g[f"d{k}"],
                                       stiffening=stiffening)
        bodies[f"rocker_{k}"] = place(reduced, f"rocker_{k}", g[f"O{k}"], g[f"e{k}"],
                                      stiffening=stiffening)
    cls = {"revolute": fm.Revolute, "universal": fm.Universal, "spherical": fm.Spherical}
    model = fm.System(gravity=gravity, name="spatial_linkage")
    model.add(*bodies.values())
    for name, kind, b1, i1, b2, i2 in JOINTS:
        first = fm.ground if b1 == "ground" else bodies[b1][i1]
        second = bodies[b2][i2]
        if name == "O":
            axis = (0.0, 1.0, 0.0)
        elif kind == "revolute":
            axis = g[f"n{name[1]}"]
        elif kind == "universal":
            axis = g[f"d{name[1]}"]        # cross axes perpendicular to the coupler
        else:
            axis = None
        model.add(cls[kind](name, first, second, axis=None if axis is None else tuple(axis)))
    return model, bodies


def joint_table(model) -> dict:
    """The joints as arrays for the Exudyn side: kinds, body and interface names of both
    sides, inertial joint point ``at`` [m] and joint frame ``R_J`` (columns x, y, z:
    revolute axis z; universal cross axes x on the first body and y on the second)."""
    from flexmbs.bodies.attach import initial_pose
    at, R_J = [], []
    for j in model.joints:
        P, _ = j.resolve()
        r0, A0 = initial_pose(P.body)
        at.append(r0 + A0 @ P.s)
        R_J.append(A0 @ P.R)
    cols = list(zip(*JOINTS, strict=True))
    return {"joint_name": np.array(cols[0]), "joint_kind": np.array(cols[1]),
            "joint_first": np.array(cols[2]), "joint_first_itf": np.array(cols[3]),
            "joint_second": np.array(cols[4]), "joint_second_itf": np.array(cols[5]),
            "joint_at": np.array(at), "joint_R": np.array(R_J)}


def grubler_with_modes(n_modes_per_body: int) -> int:
    """``6 n_b + sum n_q - sum u_g`` from the joint table (the mobility when no row is
    redundant)."""
    n_b = 7
    return 6 * n_b + n_b * n_modes_per_body - sum(N_EQ[j[1]] for j in JOINTS)
