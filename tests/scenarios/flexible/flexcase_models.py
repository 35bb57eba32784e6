"""Shared builders for the flexible reference cases (meshes made in tmp dirs with gmsh)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

import flexmbs as fm
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.constraints.drives import AngularVelocityDrive
from flexmbs.fe.assemble import assemble
from flexmbs.fe.material import Material
from flexmbs.io.mesh import read_mesh
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model

ROOT = Path(__file__).resolve().parents[3]
MESHES = ROOT / "meshes"
STEEL = Material(E=2.1e11, nu=0.3, rho=7850.0, name="steel")


def box_beam_mesh(path, size, n, cell="hex27", faces=("clamp", "tip")):
    """Write a structured box beam with ``meshes/make_meshes.py`` and read it."""
    spec = importlib.util.spec_from_file_location("make_meshes", MESHES / "make_meshes.py")
    mm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mm)
    mm.box_beam(str(Path(path).resolve()), tuple(size), tuple(n), cell, faces)
    return read_mesh(path)


def reduce_cb(mesh, material, n_modes, interfaces=("clamp",), frame=None,
              static_modes=True, name="body", damping=0.0, stiffening=True,
              modal_derivatives=0, derivative_axis=None):
    """Craig–Bampton reduction with RBE2 interfaces (frame: first interface);
    ``stiffening`` computes K2, K3."""
    fe = assemble(mesh, material)
    frame = frame or f"interface:{interfaces[0]}"
    settings = ReductionSettings(n_modes=n_modes,
                                 interfaces=tuple(InterfaceSpec(i, "rbe2") for i in interfaces),
                                 frame=frame, static_modes=static_modes, damping=damping,
                                 stiffening=stiffening, modal_derivatives=modal_derivatives,
                                 derivative_axis=derivative_axis)
    return reduce_model(fe, settings, name=name)


def steel_rod(directory, *, static_modes=False, damping=0.0):
    """The steel rod of the joint-coordinate checks: 0.4 x 0.01 x 0.01 m, 20 x 1 x 1
    hex27, interfaces ``hole_A`` (its frame) and ``hole_B``, two fixed-interface modes
    (with ``static_modes`` also those of the interfaces), ``damping`` ratio, no K2/K3."""
    mesh = box_beam_mesh(Path(directory) / "rod.msh", (0.4, 0.01, 0.01), (20, 1, 1),
                         faces=("hole_A", "hole_B"))
    return reduce_cb(mesh, STEEL, 2, interfaces=("hole_A", "hole_B"),
                     static_modes=static_modes, name="rod", damping=damping,
                     stiffening=False)


def rotating_beam_model(body, Omega, *, stiffening=True, damping=False):
    """Cantilever clamped to a hub of radius 0 spinning about z at ``Omega`` [rad/s]."""
    beam = FlexibleBody("beam", body, omega0=(0.0, 0.0, Omega), damping=damping,
                        stiffening=stiffening)
    model = fm.System(name="rotating_beam")
    model.add(fm.Revolute("hub", fm.ground, beam["clamp"], axis="z"))
    # System.add classifies drives as sensors (they have ``measure``): append directly
    model.drives.append(AngularVelocityDrive("drive", joint="hub", omega=Omega))
    return model


def nearest_node(points, x):
    return int(np.argmin(np.linalg.norm(np.asarray(points) - np.asarray(x, float), axis=1)))


def slider_crank_model(rod_body, *, omega=150.0, crank_length=0.1, stiffening=True,
                       damping=True, slider_mass=0.0756):
    """Rigid crank (steel bar 10 x 10 mm) pivoted at ``R_A - (crank_length, 0, 0)``,
    flexible rod from its interface ``hole_A`` (``R_A``) to ``hole_B`` (``R_B``, on the x
    axis through ``R_A``; e.g. the conrod mesh), rigid slider on that axis; the crank
    turns at ``omega`` [rad/s] (``AngularVelocityDrive``).  At t = 0
    the mechanism is at the outer dead centre and the rod starts undeformed with the
    rigid-mechanism velocities."""
    from flexmbs.constraints.prismatic import Prismatic
    a = crank_length
    R_A = rod_body.marker("hole_A").R
    R_B = rod_body.marker("hole_B").R
    length = float(np.linalg.norm(R_B - R_A))
    # velocities of the rigid mechanism at dead centre: rod turns at -a omega / l about B
    w_rod = -a * omega / length
    v_A = np.array([0.0, a * omega, 0.0])
    pivot = R_A - np.array([a, 0.0, 0.0])
    crank = fm.RigidBody.box("crank", (a, 0.01, 0.01), 7850.0, com=(a / 2, 0, 0),
                             r0=pivot, omega0=(0, 0, omega))
    # frame R = mesh axes (origin at the mesh origin, not necessarily at hole A)
    rod = FlexibleBody("rod", rod_body, v0=v_A + np.cross([0, 0, w_rod], -R_A),
                       omega0=(0, 0, w_rod), stiffening=stiffening, damping=damping)
    slider = fm.RigidBody.box("slider", (0.02, 0.02, 0.02), slider_mass / 8e-6,
                              r0=R_B.copy())
    model = fm.System(name="slider_crank")
    model.add(fm.Revolute("J1", fm.ground, crank, at=tuple(pivot), axis="z"),
              fm.Revolute("J2", crank, rod["hole_A"], axis="z"),
              fm.Revolute("J3", rod["hole_B"], slider, axis="z"),
              Prismatic("J4", fm.ground, slider, at=tuple(R_B), axis="x"))
    model.drives.append(AngularVelocityDrive("drive", joint="J1", omega=omega))
    return model


def midspan_deflection(rod_body, q_e):
    """Transverse (y) elastic deflection of the rod's mid-span node relative to the chord
    between the two interface markers, body frame [m]; ``q_e`` (n_t, n_q)."""
    pts = np.asarray(rod_body.points)
    A = rod_body.marker("hole_A")
    B = rod_body.marker("hole_B")
    mid = 0.5 * (A.R + B.R)
    node = nearest_node(pts, mid)
    u_mid = q_e @ np.asarray(rod_body.modes[node]).T
    u_A = q_e @ np.asarray(A.Phi).T
    u_B = q_e @ np.asarray(B.Phi).T
    return u_mid[..., 1] - 0.5 * (u_A[..., 1] + u_B[..., 1])
