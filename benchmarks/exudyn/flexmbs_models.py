"""Our side of the Exudyn comparison: the six benchmark models in flexmbs, and the data
(``.npz``) from which ``exudyn_models.py`` rebuilds the same models in Exudyn.

Runs in the flexmbs venv.  Every model is defined once here; the exported file holds what
Exudyn needs to build the identical model (SI units):

* rigid bodies: mass ``m`` [kg], inertia about the centre of mass ``I_S`` [kg m^2], centre
  of mass ``com`` [m] (body frame), initial pose ``r0`` [m], ``R0`` and velocities ``v0``
  [m/s] (of the body origin), ``omega0`` [rad/s], taken from the flexmbs objects;
* flexible bodies: node positions ``X`` [m], our consistent mass ``M`` and stiffness ``K``
  (CSR, renumbered to Exudyn's dof ``3 i + k`` of node ``i`` in direction ``k``), the
  interface node sets with our tributary-area weights and reference points ``R`` [m]
  (the frame interface first), the number of fixed-interface modes, material ``E`` [Pa],
  ``nu``, ``rho`` [kg/m^3];
* joints (positions [m], axis z), gravity [m/s^2], loads [N m], the node or body point of
  the key output;
* ``spatial_linkage_7x20`` (``spatial_linkage.py``): one reduced link exported once
  (prefix ``link``), each body's pose ``{body}_r0`` [m], ``{body}_R0``, and the joint
  table ``joint_kind``, ``joint_first``/``joint_second`` (body or ``ground``),
  ``joint_first_itf``/``joint_second_itf`` (interface), ``joint_at`` [m] and ``joint_R``
  (inertial joint frame from flexmbs' resolved markers).

Definitions chosen so that both codes can do them (see ``NOTES``): the flexible bodies
use the linear elastic force ``K_e q_e`` (Exudyn's reduced bodies have no geometric
stiffening), and the slider-crank is driven by a constant crank torque from rest
(a prescribed crank speed needs a user function on an Exudyn joint's offset, so its
timing would include Python callbacks).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
T_END, H, RHO_INF = 1.0, 1e-3, 0.9
G = (0.0, -9.81, 0.0)
NAMES = ("rigid_pendulum", "rigid_fourbar", "cantilever_10", "flexible_pendulum_8",
         "flexible_slider_crank_12", "spatial_linkage_7x20")
#: the models with flexible bodies
FLEXIBLE = NAMES[2:]

NOTES = {
    "rigid_pendulum": "rod 1.0 x 0.02 x 0.02 m steel, pinned at one end (z), horizontal "
                      "start at rest, gravity -y; key: tip position (x, y) [m]",
    "rigid_fourbar": "crank/coupler/rocker/ground 0.1/0.4/0.3/0.35 m, 4 revolutes (z), crank "
                     "30 deg at 6 rad/s, gravity -y; flexmbs drops the 3 redundant rows, "
                     "Exudyn's last revolute keeps only x, y (the same 17 independent "
                     "constraints); key: crank tip (x, y) [m]",
    "cantilever_10": "beam_hex27_20x2x2 steel, 10 fixed-interface modes, RBE2 clamp fixed, "
                     "gravity -y from rest, no geometric stiffening; key: tip-centre "
                     "deflection u_y [m]",
    "flexible_pendulum_8": "pendulum_hex27_25x1x1 (1.0 x 0.02 x 0.02 m) steel, 8 modes, "
                           "revolute at the RBE2 pin, horizontal start, gravity -y, no "
                           "geometric stiffening; key: tip-centre position (x, y) [m]",
    "flexible_slider_crank_12": "rigid crank 0.1 m, rod 0.4 x 0.01 x 0.01 m hex27 20x1x1 "
                                "(6 constraint + 6 fixed-interface modes, RBE2 ends), "
                                "slider 0.0756 kg; 0.1 N m crank torque from rest at the "
                                "outer dead centre, no gravity (flexmbs' own benchmark drives "
                                "the crank at 150 rad/s), no geometric stiffening; "
                                "key: slider x [m]",
    "spatial_linkage_7x20": "spatial_linkage.py: crank (revolute about y) driving three "
                            "rockers (revolutes) through three couplers (universal at the "
                            "crank pin, spherical at the rocker tip), 3 closed RUSR loops, "
                            "10 joints; 7 links from one 0.4 x 0.02 x 0.02 m steel hex27 "
                            "mesh, 20 modes each (6 constraint + 14 fixed-interface), "
                            "no geometric stiffening; released from rest, gravity -y; "
                            "key: coupler_1 mid-span node (x, y, z) [m]",
}


def _imports():
    sys.path.insert(0, str(ROOT / "tests" / "scenarios" / "flexible"))
    sys.path.insert(0, str(ROOT / "tests" / "system"))


def rigid_data(prefix: str, body) -> dict:
    """The rigid body's data, read from the flexmbs object."""
    return {f"{prefix}_m": body.m, f"{prefix}_I_S": body.I_S, f"{prefix}_com": body.com,
            f"{prefix}_r0": body.r0, f"{prefix}_R0": body.R0, f"{prefix}_v0": body.v0,
            f"{prefix}_omega0": body.omega0}


def flexible_data(prefix: str, fe, body, n_modes: int, interfaces) -> dict:
    """FE matrices, nodes and interfaces of a reduced body (interfaces in basis order)."""
    perm = np.asarray(fe.dof_of_node).ravel()        # Exudyn's dof 3 i + k is our perm[3 i + k]
    out = {f"{prefix}_X": np.asarray(fe.mesh.points, float), f"{prefix}_n_modes": n_modes,
           f"{prefix}_interfaces": np.array(interfaces),
           f"{prefix}_E": fe.material.E, f"{prefix}_nu": fe.material.nu,
           f"{prefix}_rho": fe.material.rho}
    for key, A in (("M", fe.M), ("K", fe.K)):
        A = A.tocsr()[perm][:, perm].tocsr()
        A.sort_indices()
        out.update({f"{prefix}_{key}_data": A.data, f"{prefix}_{key}_indices": A.indices,
                    f"{prefix}_{key}_indptr": A.indptr})
    markers = {mk.name: mk for mk in body.markers}
    for j, name in enumerate(interfaces):
        mk = markers[name]
        out.update({f"{prefix}_itf{j}_nodes": mk.nodes, f"{prefix}_itf{j}_weights": mk.weights,
                    f"{prefix}_itf{j}_R": mk.R})
    return out


def _reduce(mesh, n_modes, interfaces, name, stiffening=False):
    """Craig--Bampton with RBE2 interfaces, frame = first interface, as
    ``tests/scenarios/flexible/flexcase_models.reduce_cb`` (``K2``, ``K3`` only with
    ``stiffening``)."""
    from flexmbs.fe.assemble import assemble
    from flexmbs.fe.material import material_from_name
    from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model
    fe = assemble(mesh, material_from_name("steel"))
    settings = ReductionSettings(n_modes=n_modes,
                                 interfaces=tuple(InterfaceSpec(i, "rbe2") for i in interfaces),
                                 frame=f"interface:{interfaces[0]}", static_modes=False,
                                 stiffening=stiffening)
    return fe, reduce_model(fe, settings, name=name)


def _node_position(res, fbody, node):
    """Inertial position of mesh node ``node`` at the last output: r + A (X + Phi q_e)."""
    q = res.body_q(fbody.name)[-1]
    b = fbody.body
    return q[:3] + fbody.A(q) @ (np.asarray(b.points)[node] + np.asarray(b.modes)[node] @ q[7:])


def _nearest(points, x):
    return int(np.argmin(np.linalg.norm(np.asarray(points) - np.asarray(x, float), axis=1)))


def build(name: str, tmp: str | Path, stiffening: bool = False):
    """``(model, data, key)``: the flexmbs model, the dict exported for Exudyn and
    ``key(result) -> list`` giving the key output at ``T_END``.  ``stiffening``: the
    flexible bodies with geometric stiffening (``K2``, ``K3``), which Exudyn's reduced
    bodies do not have; for the cost of stiffening only, not for the side by side."""
    import flexmbs as fm
    from flexmbs.kinematics.rotation import A_of
    _imports()
    data = {"name": np.array(name), "t_end": T_END, "h": H, "rho_inf": RHO_INF,
            "gravity": np.array(G)}

    def point(res, body, s):
        q = res.body_q(body.name)[-1]
        return (q[:3] + A_of(q[3:7]) @ np.asarray(s, float))[:2].tolist()

    if name == "rigid_pendulum":
        rod = fm.RigidBody.box("rod", (1.0, 0.02, 0.02), 7850.0, com=(0.5, 0, 0))
        model = fm.System(gravity=G, name=name).add(
            fm.Revolute("pin", fm.ground, rod, at=(0, 0, 0), axis="z"))
        data.update(rigid_data("rod", rod), pin=np.zeros(3), tip=np.array([1.0, 0, 0]))
        return model, data, lambda res: point(res, rod, (1.0, 0, 0))

    if name == "rigid_fourbar":
        from fourbar import B_, build as fourbar
        model, (crank, coupler, rocker) = fourbar(np.deg2rad(30.0), 6.0, "RRRR")
        B = np.asarray(coupler.r0)
        C = B + np.asarray(coupler.R0) @ np.array([B_, 0, 0])
        for k, b in (("crank", crank), ("coupler", coupler), ("rocker", rocker)):
            data.update(rigid_data(k, b))
        data.update(A=np.zeros(3), B=B, C=C, D=np.asarray(rocker.r0),
                    tip=np.array([np.linalg.norm(B), 0, 0]))
        return model, data, lambda res: point(res, crank, (np.linalg.norm(B), 0, 0))

    if name in ("cantilever_10", "flexible_pendulum_8"):
        from flexmbs.io.mesh import read_mesh
        cant = name == "cantilever_10"
        mesh = read_mesh(ROOT / "meshes" / ("beam_hex27_20x2x2.msh" if cant
                                            else "pendulum_hex27_25x1x1.msh"))
        itf = "clamp" if cant else "pin"
        n_modes = 10 if cant else 8
        fe, body = _reduce(mesh, n_modes, (itf,), "beam", stiffening)
        beam = fm.FlexibleBody("beam", body, stiffening=stiffening)
        X = np.asarray(mesh.points)
        tip = _nearest(X, (X[:, 0].max(), 0.5 * X[:, 1].max(), 0.5 * X[:, 2].max()))
        model = fm.System(gravity=G, name=name)
        if cant:
            model.add(fm.Fixed("clamp", fm.ground, beam["clamp"]))
        else:
            model.add(fm.Revolute("pin", fm.ground, beam["pin"], axis="z"))
        data.update(flexible_data("beam", fe, body, n_modes, (itf,)), tip_node=tip,
                    joint=np.array("fixed" if cant else "revolute"))
        if cant:
            return model, data, lambda res: [float(_node_position(res, beam, tip)[1] - X[tip, 1])]
        return model, data, lambda res: _node_position(res, beam, tip)[:2].tolist()

    if name == "flexible_slider_crank_12":
        from flexcase_models import box_beam_mesh
        mesh = box_beam_mesh(Path(tmp) / "rod.msh", (0.4, 0.01, 0.01), (20, 1, 1),
                             faces=("hole_A", "hole_B"))
        fe, body = _reduce(mesh, 6, ("hole_A", "hole_B"), "rod", stiffening)
        model, slider, extra = slider_crank_torque(body, stiffening=stiffening)
        data.update(flexible_data("rod", fe, body, 6, ("hole_A", "hole_B")), **extra)
        data["gravity"] = np.zeros(3)
        return model, data, lambda res: [float(res.body_q("slider")[-1][0])]

    if name == "spatial_linkage_7x20":
        return _spatial_linkage(tmp, data, stiffening)
    raise SystemExit(f"unknown model '{name}'; known: {', '.join(NAMES)}")


def _spatial_linkage(tmp, data, stiffening=False):
    """``spatial_linkage.py``: one reduced link placed seven times; exported once (prefix
    ``link``) with each body's pose ``{body}_r0``, ``{body}_R0`` and the joint table."""
    import spatial_linkage as sl
    fe, body = _reduce(sl.link_mesh(tmp), sl.N_MODES, ("hole_A", "hole_B"), "link",
                       stiffening)
    model, bodies = sl.build(body, gravity=G, stiffening=stiffening)
    X = np.asarray(body.points)
    mid = _nearest(X, 0.5 * (np.asarray(body.marker("hole_A").R)
                             + np.asarray(body.marker("hole_B").R)))
    data.update(flexible_data("link", fe, body, sl.N_MODES, ("hole_A", "hole_B")),
                **sl.joint_table(model), bodies=np.array(list(bodies)), key_body="coupler_1",
                key_node=mid)
    for name, b in bodies.items():
        data.update({f"{name}_r0": b.r0, f"{name}_R0": b.R0})
    return model, data, lambda res: _node_position(res, bodies["coupler_1"], mid).tolist()


def slider_crank_torque(rod_body, *, torque=0.1, a=0.1, slider_mass=0.0756,
                        stiffening=False):
    """Rigid crank (steel bar ``a`` x 10 x 10 mm) pivoted at ``R_A - (a, 0, 0)``, flexible
    rod from ``hole_A`` to ``hole_B``, rigid slider (20 mm cube, ``slider_mass`` [kg]) on
    the x axis through ``R_B``; a constant torque ``torque`` [N m] about z on the crank;
    at rest at the outer dead centre at t = 0, no gravity.  The joints are those of
    ``flexcase_models.slider_crank_model``."""
    import flexmbs as fm
    R_A = np.asarray(rod_body.marker("hole_A").R)
    R_B = np.asarray(rod_body.marker("hole_B").R)
    pivot = R_A - np.array([a, 0.0, 0.0])
    crank = fm.RigidBody.box("crank", (a, 0.01, 0.01), 7850.0, com=(a / 2, 0, 0), r0=pivot)
    rod = fm.FlexibleBody("rod", rod_body, stiffening=stiffening)
    slider = fm.RigidBody.box("slider", (0.02, 0.02, 0.02), slider_mass / 8e-6, r0=R_B.copy())
    model = fm.System(name="slider_crank_torque")
    model.add(fm.Revolute("J1", fm.ground, crank, at=tuple(pivot), axis="z"),
              fm.Revolute("J2", crank, rod["hole_A"], axis="z"),
              fm.Revolute("J3", rod["hole_B"], slider, axis="z"),
              fm.Prismatic("J4", fm.ground, slider, at=tuple(R_B), axis="x"),
              fm.ExternalTorque("drive", at=crank, torque=(0.0, 0.0, torque)))
    extra = {**rigid_data("crank", crank), **rigid_data("slider", slider), "pivot": pivot,
             "crank_tip": np.array([a, 0.0, 0.0]), "torque": np.array([0.0, 0.0, torque])}
    return model, slider, extra


def _timed(model, newton_rtol=None) -> tuple:
    """``(result, wall time [s])`` of one run over ``T_END``; ``newton_rtol``: the
    integrator's Newton tolerance (default: ``DEFAULTS.newton_rtol``)."""
    import time

    import flexmbs as fm
    opts = None if newton_rtol is None else {"newton_rtol": float(newton_rtol)}
    t0 = time.perf_counter()
    res = fm.simulate(model, T_END, H, rho_inf=RHO_INF, output_dt=T_END,
                      integrator_options=opts)
    return res, time.perf_counter() - t0


def _warm_up(model) -> float:
    """Time [s] of a five-step run: the first simulate of a process loads the compiled
    kernels from numba's cache (compiles them once after a fresh clone); reported apart,
    as Exudyn's import of its compiled module is not in its time either."""
    import time

    import flexmbs as fm
    t0 = time.perf_counter()
    fm.simulate(model, 5 * H, H, rho_inf=RHO_INF, output_dt=5 * H)
    return time.perf_counter() - t0


def run(name: str, tmp: str | Path, export: str | Path | None = None,
        newton_rtol: float | None = None, stiffening: bool = False) -> dict:
    """Build ``name``, write its data to ``export`` (npz), simulate and time it (after a
    five-step warm-up whose time is returned as ``warmup_s``) with the Newton tolerance
    ``newton_rtol`` [-] (default: flexmbs's) and geometric stiffening on or off."""
    import logging

    from flexmbs.integrate.settings import DEFAULTS
    logging.disable(logging.WARNING)
    model, data, key = build(name, tmp, stiffening)
    if export:
        np.savez(export, **data)
    warmup = _warm_up(model)
    res, wall = _timed(model, newton_rtol)
    st = res.stats
    return {"model": name, "steps": st.steps, "wall_s": wall, "steps_per_s": st.steps / wall,
            "warmup_s": warmup,
            "newton_per_step": st.newton_iterations / st.steps, "key": key(res),
            "note": NOTES[name], "stiffening": stiffening,
            "newton_rtol": DEFAULTS.newton_rtol if newton_rtol is None else newton_rtol,
            "redundant": list(getattr(res.dof, "redundant", []) or [])}


def ladder(name: str, tmp: str | Path, tolerances) -> dict:
    """One run of ``name`` per Newton tolerance ``newton_rtol`` (one process, one warm-up):
    ``{"ladder": [{"tolerance", "key", "steps_per_s", "newton_per_step"}, ...]}``; a
    tolerance at which the run does not complete gets ``"key": null``."""
    import logging
    logging.disable(logging.WARNING)
    model, _, key = build(name, tmp)
    _warm_up(model)
    from flexmbs.errors import ConvergenceError, DivergenceError
    rows = []
    for tol in tolerances:
        try:
            res, wall = _timed(model, tol)
        except (ConvergenceError, DivergenceError) as exc:
            rows.append({"tolerance": tol, "key": None, "error": str(exc)})
            continue
        st = res.stats
        rows.append({"tolerance": tol, "key": key(res), "steps_per_s": st.steps / wall,
                     "newton_per_step": st.newton_iterations / st.steps})
    return {"ladder": rows}
