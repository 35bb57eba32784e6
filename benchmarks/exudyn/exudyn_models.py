"""Exudyn side of the side-by-side benchmark: rebuild one flexmbs model in Exudyn from the
data our side exported, time ``SolveDynamic`` and print one JSON line.

Runs in the separate venv made by ``make_env.sh`` (exudyn, numpy, scipy only; no flexmbs):

    benchmarks/.exudyn-venv/bin/python benchmarks/exudyn/exudyn_models.py MODEL.npz

The ``.npz`` comes from ``flexmbs_models.build`` (its docstring lists the keys; SI units).
Flexible bodies go through Exudyn's own pipeline, fed with our matrices:
``FEMinterface`` (our node positions, consistent M and K) ->
``ComputeHurtyCraigBamptonModes`` (RBE2, our interface node sets and weights, the frame
interface first so that its rigid-body motion is excluded) -> ``ObjectFFRFreducedOrderInterface``
-> ``AddObjectFFRFreducedOrder`` (C++ terms, gravity by ``LoadMassProportional``);
joints on ``MarkerSuperElementRigid`` markers.  A model that places one reduction several
times (``spatial_linkage_7x20``) reduces once and adds one ``ObjectFFRFreducedOrder`` per
body at its pose; its joints come from the exported joint table (``joints_from_table``).
Solver: generalized-alpha with the step, end time and rho_inf of the file, Exudyn's
default modified Newton and dense LU.

``--gravity nodal`` (a check, not for timing): gravity on flexible bodies as the consistent
nodal forces ``F = M g`` (one ``LoadForceVector`` per node) instead of Exudyn's
``LoadMassProportional``, whose moment on the reduced body's frame uses the undeformed
centre of mass (not conservative once the body deforms; cf. ``UFforceFFRFreducedOrder``
in exudyn/FEM.py, where the frame's gravity moment is ``G^T (chiU~ m A^T g)``).

``--relative-tolerance TOL``: Newton's ``relativeTolerance`` [-] instead of Exudyn's default
1e-8; ``--ladder TOL,TOL,...``: one run per tolerance in this process, printed as
``{"ladder": [{"tolerance", "key", "steps_per_s", "newton_per_step"}, ...]}`` (a failed
run has ``"key": null``), for the best-peer rule of ``compare.py``.

Output (JSON): steps, wall time of ``Assemble`` + ``SolveDynamic`` [s], steps/s, Newton
iterations and Jacobian updates (from the stored solver), the key output at t_end, the
HCB eigenfrequencies [Hz] and the exudyn version.
"""
from __future__ import annotations

import json
import time

import numpy as np
import scipy.sparse as sp

import exudyn as exu
import exudyn.itemInterface as eii
from exudyn.FEM import FEMinterface, HCBstaticModeSelection, ObjectFFRFreducedOrderInterface
from exudyn.rigidBodyUtilities import RigidBodyInertia

Z = [0.0, 0.0, 1.0]


def rigid(mbs, d, prefix, gravity):
    """Rigid body from our data: node at the body origin, com offset, inertia at the com."""
    inertia = RigidBodyInertia(mass=float(d[f"{prefix}_m"]), inertiaTensor=d[f"{prefix}_I_S"],
                               com=d[f"{prefix}_com"], inertiaTensorAtCOM=True)
    return mbs.CreateRigidBody(inertia=inertia, referencePosition=d[f"{prefix}_r0"],
                               referenceRotationMatrix=d[f"{prefix}_R0"],
                               initialVelocity=d[f"{prefix}_v0"],
                               initialAngularVelocity=d[f"{prefix}_omega0"],
                               gravity=list(gravity), show=False)


def reduced(d, prefix):
    """Exudyn's HCB reduction of our FE data: ``(fem, cms, interface nodes, weights)``."""
    X = np.asarray(d[f"{prefix}_X"], float)
    n = 3 * len(X)
    fem = FEMinterface()
    fem.nodes = {"Position": X}
    fem.massMatrix = sp.csr_matrix((d[f"{prefix}_M_data"], d[f"{prefix}_M_indices"],
                                    d[f"{prefix}_M_indptr"]), shape=(n, n))
    fem.stiffnessMatrix = sp.csr_matrix((d[f"{prefix}_K_data"], d[f"{prefix}_K_indices"],
                                         d[f"{prefix}_K_indptr"]), shape=(n, n))
    n_itf = len(d[f"{prefix}_interfaces"])
    nodes = [np.asarray(d[f"{prefix}_itf{j}_nodes"], int) for j in range(n_itf)]
    weights = [np.asarray(d[f"{prefix}_itf{j}_weights"], float) for j in range(n_itf)]
    fem.ComputeHurtyCraigBamptonModes(boundaryNodesList=[list(v) for v in nodes],
                                      nEigenModes=int(d[f"{prefix}_n_modes"]),
                                      useSparseSolver=True,
                                      computationMode=HCBstaticModeSelection.RBE2,
                                      boundaryNodesWeights=weights)
    return fem, ObjectFFRFreducedOrderInterface(fem), nodes, weights


def place(mbs, red, gravity, nodal_gravity=False, r0=(0.0, 0.0, 0.0), R0=None):
    """One FFRF body of the reduction ``red`` at ``r0`` [m], ``R0``: returns
    (object, [interface markers])."""
    fem, cms, nodes, weights = red
    obj = cms.AddObjectFFRFreducedOrder(mbs, positionRef=list(r0),
                                        rotationMatrixRef=[] if R0 is None else np.asarray(R0),
                                        gravity=[0.0] * 3 if nodal_gravity else list(gravity))
    if nodal_gravity and np.any(gravity):
        F = (fem.massMatrix @ np.tile(gravity, len(fem.nodes["Position"]))).reshape(-1, 3)
        for j in np.flatnonzero(np.abs(F).sum(axis=1)):        # F = M g [N], inertial
            mk = mbs.AddMarker(eii.MarkerSuperElementPosition(
                bodyNumber=obj["oFFRFreducedOrder"], meshNodeNumbers=[int(j)],
                weightingFactors=[1.0]))
            mbs.AddLoad(eii.LoadForceVector(markerNumber=mk, loadVector=list(F[j])))
    markers = [mbs.AddMarker(eii.MarkerSuperElementRigid(
        bodyNumber=obj["oFFRFreducedOrder"], meshNodeNumbers=v, weightingFactors=w,
        visualization={"show": False, "showMarkerNodes": False}))
        for v, w in zip(nodes, weights, strict=True)]
    return obj["oFFRFreducedOrder"], markers


def flexible(mbs, d, prefix, gravity, nodal_gravity=False):
    """FFRF reduced body from our FE data: returns (object, [interface markers], fem)."""
    red = reduced(d, prefix)
    return (*place(mbs, red, gravity, nodal_gravity), red[0])


def joints_from_table(mbs, d, ground, markers):
    """The joints of the exported table: ``markers[body][interface]`` on flexible
    bodies, a new ground marker at the joint point.  Revolute about the frame's z;
    universal as a generic joint locking the rotation about the frame's z: Exudyn's
    equation with only the x rotation locked is ``t_y0 . t_z1 = 0``, so its frame is
    ours with the columns (z, x, y), making ``t_y0`` our cross axis x_P and ``t_z1``
    our y_Q."""
    for k, kind in enumerate(d["joint_kind"]):
        at, R = np.asarray(d["joint_at"][k], float), np.asarray(d["joint_R"][k], float)
        sides = []
        for body, itf in ((d["joint_first"][k], d["joint_first_itf"][k]),
                          (d["joint_second"][k], d["joint_second_itf"][k])):
            sides.append(mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=ground, localPosition=at))
                         if str(body) == "ground" else markers[str(body)][str(itf)])
        if kind == "revolute":
            mbs.CreateRevoluteJoint(itemNumbers=sides, axis=R[:, 2], show=False)
        elif kind == "spherical":
            mbs.CreateSphericalJoint(itemNumbers=sides, show=False)
        elif kind == "universal":
            mbs.CreateGenericJoint(itemNumbers=sides, rotationMatrixAxes=R[:, [2, 0, 1]],
                                   constrainedAxes=[1, 1, 1, 1, 0, 0], show=False)
        else:
            raise SystemExit(f"exudyn_models: joint '{d['joint_name'][k]}': unknown kind "
                             f"'{kind}'")


def build(mbs, d, nodal_gravity=False):
    """Add the model of ``d`` to ``mbs``; return ``key() -> list`` (output at t_end)."""
    name = str(d["name"])
    g = np.asarray(d["gravity"], float)
    ground = mbs.CreateGround()
    body_pos = exu.OutputVariableType.Position

    if name == "rigid_pendulum":
        rod = rigid(mbs, d, "rod", g)
        mbs.CreateRevoluteJoint(itemNumbers=[ground, rod], position=d["pin"], axis=Z, show=False)
        return (lambda: list(mbs.GetObjectOutputBody(rod, body_pos,
                                                     localPosition=d["tip"])[:2]), {})

    if name == "rigid_fourbar":
        crank, coupler, rocker = (rigid(mbs, d, k, g) for k in ("crank", "coupler", "rocker"))
        mbs.CreateRevoluteJoint(itemNumbers=[ground, crank], position=d["A"], axis=Z, show=False)
        mbs.CreateRevoluteJoint(itemNumbers=[crank, coupler], position=d["B"], axis=Z, show=False)
        mbs.CreateRevoluteJoint(itemNumbers=[coupler, rocker], position=d["C"], axis=Z,
                                show=False)
        # the planar loop closes with 3 redundant rows; keep only the in-plane translation
        # at D (flexmbs' rank test removes exactly D's z, z.x, z.y rows)
        mbs.CreateGenericJoint(itemNumbers=[rocker, ground], position=d["D"],
                               constrainedAxes=[1, 1, 0, 0, 0, 0], show=False)
        return (lambda: list(mbs.GetObjectOutputBody(crank, body_pos,
                                                     localPosition=d["tip"])[:2]), {})

    if name in ("cantilever_10", "flexible_pendulum_8"):
        beam, (m_itf,), fem = flexible(mbs, d, "beam", g, nodal_gravity)
        R = np.asarray(d["beam_itf0_R"], float)
        m_g = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=ground, localPosition=R))
        if str(d["joint"]) == "fixed":
            mbs.CreateGenericJoint(itemNumbers=[m_g, m_itf], constrainedAxes=[1] * 6, show=False)
        else:
            mbs.CreateRevoluteJoint(itemNumbers=[m_g, m_itf], axis=Z, show=False)
        tip = int(d["tip_node"])
        X_tip = np.asarray(d["beam_X"])[tip]

        def key():
            p = mbs.GetObjectOutputSuperElement(beam, body_pos, meshNodeNumber=tip)
            if str(d["joint"]) == "fixed":
                return [float(p[1] - X_tip[1])]
            return list(p[:2])
        return key, {"hcb_hz": list(fem.GetEigenFrequenciesHz())}

    if name == "flexible_slider_crank_12":
        crank = rigid(mbs, d, "crank", g)
        slider = rigid(mbs, d, "slider", g)
        rod, (m_A, m_B), fem = flexible(mbs, d, "rod", g, nodal_gravity)
        R_A, R_B = (np.asarray(d[f"rod_itf{j}_R"], float) for j in (0, 1))
        mbs.CreateRevoluteJoint(itemNumbers=[ground, crank], position=d["pivot"], axis=Z,
                                show=False)
        m_tip = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=crank, localPosition=d["crank_tip"]))
        mbs.CreateRevoluteJoint(itemNumbers=[m_tip, m_A], axis=Z, show=False)
        mbs.CreateRevoluteJoint(itemNumbers=[m_B, slider], axis=Z, show=False)
        mbs.CreatePrismaticJoint(itemNumbers=[ground, slider], position=R_B, axis=[1, 0, 0],
                                 show=False)
        m_crank = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=crank, localPosition=[0, 0, 0]))
        mbs.AddLoad(eii.LoadTorqueVector(markerNumber=m_crank, loadVector=d["torque"]))
        return (lambda: [float(mbs.GetObjectOutputBody(slider, body_pos)[0])],
                {"hcb_hz": list(fem.GetEigenFrequenciesHz()), "R_A": list(R_A)})

    if name == "spatial_linkage_7x20":
        # one reduction (our M, K, interfaces), placed at each body's pose
        red = reduced(d, "link")
        itfs = [str(i) for i in d["link_interfaces"]]
        objs, markers = {}, {}
        for b in (str(b) for b in d["bodies"]):
            objs[b], mks = place(mbs, red, g, nodal_gravity, d[f"{b}_r0"], d[f"{b}_R0"])
            markers[b] = dict(zip(itfs, mks, strict=True))
        joints_from_table(mbs, d, ground, markers)
        obj, node = objs[str(d["key_body"])], int(d["key_node"])
        return (lambda: list(mbs.GetObjectOutputSuperElement(obj, body_pos,
                                                             meshNodeNumber=node)),
                {"hcb_hz": list(red[0].GetEigenFrequenciesHz())})
    raise SystemExit(f"exudyn_models: unknown model '{name}'")


def settings(d, relative_tolerance=None):
    """Generalized-alpha over ``t_end`` with step ``h``, modified Newton; its relative
    tolerance ``newton.relativeTolerance`` [-] if given (Exudyn's default: 1e-8)."""
    ss = exu.SimulationSettings()
    ti = ss.timeIntegration
    ti.endTime = float(d["t_end"])
    ti.numberOfSteps = int(round(float(d["t_end"]) / float(d["h"])))
    ti.generalizedAlpha.spectralRadius = float(d["rho_inf"])
    ti.newton.useModifiedNewton = True
    if relative_tolerance is not None:
        ti.newton.relativeTolerance = float(relative_tolerance)
    ti.verboseMode = 0
    ss.solution.file.write = False
    return ss


def run(path: str, nodal_gravity: bool = False, relative_tolerance=None) -> dict:
    d = dict(np.load(path, allow_pickle=False))
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    key, info = build(mbs, d, nodal_gravity)
    ss = settings(d, relative_tolerance)
    t0 = time.perf_counter()
    mbs.Assemble()
    ok = mbs.SolveDynamic(ss)
    wall = time.perf_counter() - t0
    if not ok:
        raise SystemExit(f"exudyn_models: SolveDynamic failed for {d['name']}")
    it = mbs.sys["dynamicSolver"].it
    steps = int(ss.timeIntegration.numberOfSteps)
    return {"model": str(d["name"]), "steps": steps, "wall_s": wall,
            "steps_per_s": steps / wall, "newton_per_step": it.newtonStepsCount / steps,
            "jacobians": int(it.newtonJacobiCount), "key": [float(v) for v in key()],
            "exudyn": exu.__version__, "n_ode2": int(mbs.systemData.ODE2Size()),
            "gravity": "nodal" if nodal_gravity else "mass-proportional",
            "relative_tolerance": ss.timeIntegration.newton.relativeTolerance, **info}


def ladder(path: str, tolerances) -> dict:
    """One untimed-for-the-table run per Newton relative tolerance (same process):
    ``{"ladder": [{"tolerance", "key", "steps_per_s", "newton_per_step"}, ...]}``; a
    tolerance at which ``SolveDynamic`` fails gets ``"key": null``."""
    rows = []
    for tol in tolerances:
        try:
            r = run(path, relative_tolerance=tol)
        except (SystemExit, RuntimeError) as exc:
            rows.append({"tolerance": tol, "key": None, "error": str(exc)})
            continue
        rows.append({"tolerance": tol, "key": r["key"], "steps_per_s": r["steps_per_s"],
                     "newton_per_step": r["newton_per_step"]})
    return {"ladder": rows, "exudyn": exu.__version__}


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("npz", help="model data written by flexmbs_models.py")
    ap.add_argument("--gravity", choices=("mass-proportional", "nodal"),
                    default="mass-proportional")
    ap.add_argument("--relative-tolerance", type=float, default=None,
                    help="Newton relative tolerance [-] (default: Exudyn's, 1e-8)")
    ap.add_argument("--ladder", default=None,
                    help="comma-separated Newton relative tolerances: one run each")
    args = ap.parse_args()
    if args.ladder:
        print(json.dumps(ladder(args.npz, [float(t) for t in args.ladder.split(",")])))
    else:
        print(json.dumps(run(args.npz, args.gravity == "nodal", args.relative_tolerance)))
