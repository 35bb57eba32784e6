"""The TOML case format: every section, key, type, unit and default.

One table of :class:`Key` per section (and per ``type`` for bodies, drives, forces,
sensors and time functions).  The loader validates against these tables and
``docs/case_format.md`` is generated from them (:func:`markdown_tables`), so the format,
its checks and its documentation cannot drift apart.  Which types exist, and in which
order they are documented, comes from the registry of kinds (:mod:`flexmbs.case.kinds`);
each type's table here must match one registered class.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flexmbs.case import kinds
from flexmbs.forces.contact import FRICTION_MODELS
from flexmbs.integrate.settings import DEFAULTS

REQUIRED = object()   #: marker default: the key must be given


@dataclass(frozen=True)
class Key:
    """One key: ``kind`` is the value type checked by the loader (see ``loader._CHECKS``),
    ``unit`` its SI unit ("-" for none), ``default`` (``REQUIRED``/``None`` = not set),
    ``check`` an extra condition ("positive", "nonneg", "unit_interval"), ``choices``."""

    name: str
    kind: str
    unit: str = "-"
    default: object = None
    doc: str = ""
    choices: tuple = ()
    check: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


def _table(*keys: Key) -> dict[str, Key]:
    return {k.name: k for k in keys}


def _per_kind(registry: Mapping[str, type], tables: dict[str, dict]) -> dict[str, dict]:
    """``tables`` (type -> keys), checked to hold one table per registered kind.  The
    loader names the types in the order of ``tables``."""
    missing = [f"{k} ({registry[k].__name__})" for k in registry if k not in tables]
    unknown = [k for k in tables if k not in registry]
    if missing or unknown:
        raise ValueError("case schema: registered kinds without a table of keys: "
                         f"{', '.join(missing) or 'none'}; tables of unregistered kinds: "
                         f"{', '.join(unknown) or 'none'}")
    return tables


# -- [model] ------------------------------------------------------------------------------
MODEL = _table(
    Key("name", "str", default=None, doc="model name (default: the case file's folder name, "
        "or its stem for a file not called case.toml)"),
    Key("gravity", "vec3", "m/s^2", (0.0, 0.0, 0.0), "gravitational acceleration, inertial"),
    Key("description", "str", default="", doc="free text, printed by `flexmbs check`"),
    Key("formulation", "str", default="absolute", doc="equations of motion: absolute "
        "(descriptor form in body coordinates), relative (joint coordinates of the tree, "
        "cut joints as constraints, non-recursive formalism) or recursive (the same with "
        "recursive Newton-Euler); relative and recursive take rigid and flexible bodies "
        "(their modal coordinates as joint coordinates) and force "
        "elements without internal states (docs/relative.md)",
        choices=("absolute", "relative", "recursive")),
)

# -- [[bodies]] -------------------------------------------------------------------------------
BODY_TYPES = tuple(kinds.BODIES)
BODY_COMMON = _table(
    Key("name", "name", default=REQUIRED, doc="unique body name (not 'ground')"),
    Key("type", "str", default=REQUIRED, doc="body type", choices=BODY_TYPES),
    Key("position", "vec3", "m", (0.0, 0.0, 0.0), "initial position of the body origin"),
    Key("velocity", "vec3", "m/s", (0.0, 0.0, 0.0), "initial velocity of the body origin"),
)
_POSE = (
    Key("orientation", "orientation", "-", None, "initial orientation: a 3x3 rotation matrix "
        "(body axes as columns; one orthonormal to 1e-4, e.g. entries rounded to 5 "
        "digits, is replaced by the nearest rotation) or a table `{axis = \"z\" | [x, y, z], angle = rad}`; "
        "default identity"),
    Key("angular_velocity", "vec3", "rad/s", (0.0, 0.0, 0.0),
        "initial angular velocity, inertial components"),
)
BODY = {
    "rigid": _table(
        *_POSE,
        Key("shape", "str", default=None, doc="solid of uniform density instead of `m` and "
            "`inertia`", choices=("box", "cylinder", "sphere")),
        Key("density", "float", "kg/m^3", None, "density of `shape`", check="positive"),
        Key("size", "vec3", "m", None, "box edge lengths along body x, y, z", check="positive"),
        Key("radius", "float", "m", None, "cylinder or sphere radius", check="positive"),
        Key("length", "float", "m", None, "cylinder length", check="positive"),
        Key("axis", "str", default="z", doc="cylinder axis (body axis)", choices=("x", "y", "z")),
        Key("large_shape", "bool", default=False, doc="`true`: a `shape` larger than 20 m is "
            "meant (no warning that its sizes look like millimetres)"),
        Key("m", "float", "kg", None, "mass (without `shape`)", check="positive"),
        Key("inertia", "inertia", "kg m^2", None, "inertia about the centre of mass, body axes: "
            "[Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] (I_xy = -int x y dm) or 3x3"),
        Key("com", "vec3", "m", (0.0, 0.0, 0.0), "centre of mass in the body frame"),
        Key("markers", "markers", "-", {}, "named markers: `name = {at = [x, y, z], "
            "axis = \"z\" | [x, y, z]}` in the body frame (m); `axis` is the marker z axis"),
    ),
    "point_mass": _table(
        Key("m", "float", "kg", REQUIRED, "mass", check="positive"),
    ),
    "flexible": _table(
        *_POSE,
        Key("mesh", "path", default=None, doc="solid mesh (gmsh .msh, .vtu, .inp), relative to "
            "the case file; preprocessed and cached automatically"),
        Key("body_file", "path", default=None, doc="a reduced-body file made by `flexmbs "
            "preprocess` (instead of `mesh`)"),
        Key("material", "material", default=None, doc="named material (steel, aluminium, "
            "aluminium_kane, ...) or `{E = Pa, nu = -, rho = kg/m^3}`; required with `mesh`, "
            "except an Abaqus .inp with its own *MATERIAL (which a given one must equal)"),
        Key("modes", "int", default=None, doc="number of free-free or fixed-interface modes; "
            "required with `mesh`", check="positive"),
        Key("interfaces", "interfaces", default=(), doc="mesh node sets that become markers: "
            "\"NAME\" or \"NAME:rbe2\" / \"NAME:rbe3\" (Craig-Bampton when given)"),
        Key("frame", "str", default="mean_axis", doc="reference-frame condition: mean_axis "
            "or interface:NAME"),
        Key("method", "str", default="auto", doc="auto: free-free modes without interfaces, "
            "Craig-Bampton with them; free_free: free-free modes also with interfaces, "
            "which are then rbe3 markers on the free body (mean_axis frame only)",
            choices=("auto", "free_free")),
        Key("residual_flexibility", "bool", default=False, doc="store the residual stress "
            "modes of every interface: the von Mises output then adds the static correction "
            "of the joint and force loads at the interfaces (docs/stresses.md)"),
        Key("static_modes", "bool", default=False, doc="add the inertial static modes "
            "(for geometric stiffening under large rotation rates)"),
        Key("modal_derivatives", "int", default=0, doc="add the static modal derivatives of "
            "the lowest N basis vectors (all pairs): needed for geometric stiffening of "
            "slender bodies bending by more than ~1 % of their length (docs/stiffening.md)",
            check="nonneg"),
        Key("derivative_axis", "str", default="", doc="take the N vectors that move mainly "
            "along this axis: \"x\", \"y\", \"z\" (empty: the first N)",
            choices=("", "x", "y", "z")),
        Key("damping", "float", "-", 0.0, "modal damping ratio zeta of every mode, stored "
            "in the body file at preprocessing (`damping_ratios` or `rayleigh_*` replace it "
            "at run time)", check="nonneg"),
        # structural damping chosen at simulation time (replaces the body file's D_e)
        Key("damping_ratios", "floats", "-", None, "damping ratio zeta_k of each eigenmode "
            "of the body with its frame held (one per elastic coordinate, lowest first): "
            "D_e = M_e Psi diag(2 zeta_k omega_k) Psi^T M_e at simulation time; replaces "
            "`damping` without preprocessing again", check="nonneg"),
        Key("rayleigh_alpha", "float", "1/s", None, "Rayleigh damping D_e = alpha M_e + "
            "beta K_e (zeta_k = alpha / (2 omega_k) + beta omega_k / 2) at simulation time, "
            "replaces `damping`; a missing one of alpha, beta is 0", check="nonneg"),
        Key("rayleigh_beta", "float", "s", None, "stiffness-proportional Rayleigh "
            "coefficient beta (see `rayleigh_alpha`)", check="nonneg"),
        Key("stiffening", "bool", default=True, doc="geometric stiffening (K2, K3 computed in "
            "preprocessing and used in the body)"),
        Key("unit", "str", default="m", doc="length unit of the mesh file", choices=("m", "mm")),
        Key("eigensolver", "str", default="auto", doc="eigensolver of preprocessing",
            choices=("auto", "scipy", "slepc", "slepc-amg", "lobpcg")),
    ),
}

# -- [[joints]] -------------------------------------------------------------------------------
JOINT_TYPES = tuple(kinds.JOINTS)
JOINT = _table(
    Key("name", "name", default=REQUIRED, doc="unique joint name"),
    Key("type", "str", default=REQUIRED, doc="joint type", choices=JOINT_TYPES),
    Key("first", "ref", default=REQUIRED, doc="side P: \"ground\", \"BODY\" or \"BODY.MARKER\""),
    Key("second", "ref", default=REQUIRED, doc="side Q: \"ground\", \"BODY\" or \"BODY.MARKER\""),
    Key("at", "vec3", "m", None, "joint point in the initial configuration, inertial "
        "(default: the position of the marker side)"),
    Key("axis", "axis", "-", None, "joint z axis, inertial: \"x\", \"-y\", ... or [x, y, z] "
        "(default: the marker's z axis)"),
    Key("pitch", "float", "m/turn", None, "helical joints only: advance per turn"),
    # coupling joints and lower pairs with two frames (flexmbs.constraints.two_point)
    Key("second_at", "vec3", "m", None, "distance, gear, rack_pinion, point_on_curve, "
        "curve_on_curve, point_on_surface: point of side Q, inertial, initial configuration "
        "(default: `at`, or the marker of Q)"),
    Key("second_axis", "axis", "-", None, "z axis of side Q, inertial: the second wheel's "
        "axis (gear), the rack's direction of travel (rack_pinion, normal to `axis`), the "
        "cylinder's axis (cylinder_on_plane, required, in the plane); default `axis`"),
    Key("length", "float", "m", None, "distance only: link length (default: the initial "
        "distance)", check="positive"),
    Key("teeth", "ints", "-", None, "gear only (required): tooth counts [z_P, z_Q]; "
        "theta_Q = -(z_P / z_Q) theta_P relative to the carrier (+ with `internal`)"),
    Key("internal", "bool", default=False, doc="gear only: the second wheel is a ring gear "
        "(the wheels turn the same way)"),
    Key("module", "float", "m", None, "gear only: module m (pitch radius m z / 2), for the "
        "tooth forces", check="positive"),
    Key("pressure_angle", "float", "rad", 0.3490658503988659, "gear only: pressure angle "
        "(20 deg), for the radial tooth force"),
    Key("radius", "float", "m", None, "rack_pinion only (required): pitch radius; rack "
        "advance along `second_axis` = radius x pinion turn about `axis` (negative: "
        "reversed)"),
    Key("curve", "str", default="polar", doc="point_on_curve only: the curve in P's x-y "
        "plane, radius over polar angle (a disc cam's pitch curve) or y over x",
        choices=("polar", "graph")),
    Key("curve_x", "floats", "rad | m", None, "point_on_curve, curve_on_curve (required): "
        "increasing samples of the polar angle (less than one turn) or of x, of P's curve"),
    Key("curve_y", "floats", "m", None, "point_on_curve, curve_on_curve (required): radii "
        "or heights at `curve_x` (a C2 cubic spline through them, periodic for polar)"),
    Key("second_curve_x", "floats", "rad", None, "curve_on_curve only (required): polar "
        "angles of Q's curve about Q (less than one turn)"),
    Key("second_curve_y", "floats", "m", None, "curve_on_curve only (required): radii of "
        "Q's curve at `second_curve_x` (a roller: all equal)"),
    Key("surface_x", "floats", "m", None, "point_on_surface only (required): increasing "
        "grid x of the height field z = f(x, y) in P's frame (at least 4)"),
    Key("surface_y", "floats", "m", None, "point_on_surface only (required): increasing "
        "grid y (at least 4)"),
    Key("surface_z", "grid", "m", None, "point_on_surface only (required): heights, one "
        "row per `surface_x`, one column per `surface_y` (a C2 bicubic spline through them)"),
    Key("friction", "friction", "see docs/friction.md", None, "revolute, prismatic, "
        "cylindrical, spherical: Coulomb friction with the normal force from the joint "
        "reaction, a table `{mu_s = -, mu_k = -}` (required) with optional `v_s` [m/s] "
        "Stribeck velocity, `c_v` [N s/m] viscous coefficient, `pin_radius` [m] (required "
        "for revolute, cylindrical, spherical; not for prismatic), `preload` [N] added normal force, "
        "`from_reaction` (bool, default true; false: N = preload, a bearing torque "
        "mu pin_radius preload), `stiction_deformation` [m] (1e-5), `stiction_velocity` "
        "[m/s] (1e-3), `bristle_damping` [s/m] (2 mu_s / stiction_velocity); adds the force "
        "element `JOINT-friction` (docs/friction.md); clearance_revolute: the pin's Coulomb "
        "friction `{mu_s, mu_k, v_s, c_v}` only, by the law `friction_model` "
        "(docs/contact.md)"),
    Key("c", "float", "m", None, "clearance_revolute only (required): radial clearance of the "
        "pin (second) in the hole (first, its axis `axis`)", check="nonneg"),
    Key("R", "float", "m", 0.0, "clearance_revolute only: pin radius (lever of the friction)",
        check="nonneg"),
    Key("law", "contact_law", "N/m^n, -, -, m/s", None, "clearance_revolute only "
        "(required): radial contact law `{K = ..., n = 1.5, e = ...}` (docs/contact.md)"),
    Key("v_eps", "float", "m/s", 1e-4, "clearance_revolute only: friction regularisation "
        "speed (friction_model \"regularised\")", check="positive"),
    Key("friction_model", "str", default=FRICTION_MODELS[1], doc="clearance_revolute only: "
        "tangential law of the pin's `friction`, \"regularised\" (the default here: viscous "
        "below `v_eps`) or \"bristle\" (LuGre bristles, z_s = 1e-5 m, v_st = 1e-3 m/s: "
        "true sticking, a pin pressed by F_n holds a torque below mu_s F_n R); "
        "docs/contact.md", choices=FRICTION_MODELS),
)
#: joint keys meaningful only for some types (the loader refuses them elsewhere)
JOINT_ONLY = {"second_at": ("distance", "gear", "rack_pinion", "point_on_curve",
                            "curve_on_curve", "point_on_surface"),
              "second_axis": ("gear", "rack_pinion", "cylinder_on_plane"),
              "length": ("distance",), "teeth": ("gear",), "internal": ("gear",),
              "module": ("gear",), "pressure_angle": ("gear",), "radius": ("rack_pinion",),
              "curve": ("point_on_curve",), "curve_x": ("point_on_curve", "curve_on_curve"),
              "curve_y": ("point_on_curve", "curve_on_curve"),
              "second_curve_x": ("curve_on_curve",), "second_curve_y": ("curve_on_curve",),
              "surface_x": ("point_on_surface",), "surface_y": ("point_on_surface",),
              "surface_z": ("point_on_surface",), "c": ("clearance_revolute",),
              "R": ("clearance_revolute",), "law": ("clearance_revolute",),
              "v_eps": ("clearance_revolute",), "friction_model": ("clearance_revolute",),
              "friction": ("revolute", "prismatic", "cylindrical", "spherical",
                           "clearance_revolute")}
#: joint keys that add a force element for the joint (not a field of the joint class;
#: a clearance_revolute's ``friction`` is its field)
JOINT_ELEMENTS = ("friction",)
#: keys of a joint's ``friction`` table: (kind checked by the loader, required)
FRICTION_KEYS = {"mu_s": ("float", True), "mu_k": ("float", True), "v_s": ("float", False),
                 "c_v": ("float", False), "pin_radius": ("float", False),
                 "preload": ("float", False), "from_reaction": ("bool", False),
                 "stiction_deformation": ("float", False),
                 "stiction_velocity": ("float", False), "bristle_damping": ("float", False)}
#: the keys of a ``friction`` table a clearance_revolute takes (a FrictionLaw's)
LAW_FRICTION_KEYS = ("mu_s", "mu_k", "v_s", "c_v")

# -- time functions (drive values and loads) ------------------------------------------------
FUNCTION_TYPES = tuple(kinds.FUNCTIONS)
FUNCTION = _per_kind(kinds.FUNCTIONS, {
    "constant": _table(Key("value", "value", "unit of the quantity", REQUIRED, "f = value")),
    "ramp": _table(Key("rate", "value", "unit/s", REQUIRED, "slope"),
                   Key("f0", "value", "unit", 0.0, "value at t0"),
                   Key("t0", "float", "s", 0.0, "start time: f = f0 + rate (t - t0)")),
    "polynomial": _table(Key("coeffs", "floats", "unit/s^k", REQUIRED,
                             "f = sum_k c_k t^k, lowest power first")),
    "sine": _table(Key("amplitude", "value", "unit", REQUIRED, "amplitude"),
                   Key("omega", "float", "rad/s", REQUIRED, "circular frequency"),
                   Key("phase", "float", "rad", 0.0, "phase"),
                   Key("offset", "value", "unit", 0.0,
                       "f = offset + amplitude sin(omega t + phase)")),
    "spin_up": _table(Key("Omega", "float", "rad/s", REQUIRED, "final rate"),
                      Key("T", "float", "s", REQUIRED, "spin-up time (Kane et al. 1987)",
                          check="positive"),
                      Key("theta0", "float", "rad", 0.0, "initial angle")),
})

# -- [[drives]] ---------------------------------------------------------------------------------
DRIVE_TYPES = tuple(kinds.DRIVES)
DRIVE_COMMON = _table(
    Key("name", "name", default=REQUIRED, doc="unique drive name"),
    Key("type", "str", default=REQUIRED, doc="drive type", choices=DRIVE_TYPES),
    Key("joint", "str", default=REQUIRED, doc="name of the driven joint"),
    Key("feed", "str", default=None, doc="sensor component \"SENSOR.COMPONENT\" whose "
        "reading y adds ratio (y - y0) to the prescribed coordinate (e.g. \"angle_A.c_z\" "
        "for theta = ratio theta_A); a position-level sensor: position, orientation with "
        "output xyz or matrix, face_displacement"),
    Key("ratio", "float", "(rad or m)/(rad or m)", 1.0,
        "gain of the fed reading (with feed)"),
    Key("y0", "float", "rad or m", None, "reading at which the feed adds nothing (with feed; "
        "default: the initial reading)"),
)
DRIVE = _per_kind(kinds.DRIVES, {
    "angle": _table(Key("angle", "function", "rad", REQUIRED,
                        "prescribed angle of Q about z_P: number or time function")),
    "angular_velocity": _table(
        Key("omega", "float", "rad/s", REQUIRED, "constant rate: phi = phi0 + omega t"),
        Key("phi0", "float", "rad", None, "angle at t = 0 (default: the initial angle)")),
    "displacement": _table(Key("s", "function", "m", REQUIRED,
                               "prescribed displacement of Q along z_P: number or time function")),
    "velocity": _table(
        Key("v", "float", "m/s", REQUIRED, "constant speed: s = s0 + v t"),
        Key("s0", "float", "m", None, "displacement at t = 0 (default: the initial one)")),
})

# -- [[forces]] -----------------------------------------------------------------------------------
FORCE_TYPES = tuple(kinds.FORCES)
FORCE_COMMON = _table(
    Key("name", "name", default=REQUIRED, doc="unique force-element name"),
    Key("type", "str", default=REQUIRED, doc="force-element type", choices=FORCE_TYPES),
)
_JOINT_REF = Key("joint", "str", default=REQUIRED, doc="name of the joint it acts on")
_P2P_SIDES = (
    Key("first", "ref", default=REQUIRED, doc="side P: \"ground\", \"BODY\", \"BODY.MARKER\""),
    Key("second", "ref", default=REQUIRED, doc="side Q"),
    Key("first_at", "vec3", "m", None, "attachment point of P, inertial, initial "
        "configuration (default: the marker or body origin)"),
    Key("second_at", "vec3", "m", None, "attachment point of Q (as `first_at`)"),
)
_CONTACT = (
    Key("law", "contact_law", "N/m^n, -, -, m/s", REQUIRED, "normal law `{K = ..., n = 1.5, "
        "e = ..., v_min = 1e-3}`: F = K delta^n (Hertz), times (1 + chi delta_dot) with "
        "`e` (Hunt-Crossley, chi such that one impact has the restitution e); docs/contact.md"),
    Key("friction", "friction_law", "-, -, m/s, s/m", None, "Coulomb friction "
        "`{mu_s = ..., mu_k = ..., v_s = 0}` (Stribeck speed v_s; c_v is not used by "
        "contacts; default: none), by the law `friction_model`"),
    Key("friction_model", "str", default="bristle", doc="tangential law of `friction`: "
        "\"bristle\" (LuGre bristles with states: true sticking, friction work reported) "
        "or \"regularised\" (viscous below `v_eps`: a loaded contact creeps); "
        "docs/contact.md", choices=FRICTION_MODELS),
    Key("stiction_deformation", "float", "m", 1e-5, "bristle only: bristle deflection z_s "
        "at the static limit (sigma0 = mu_s / z_s)", check="positive"),
    Key("stiction_velocity", "float", "m/s", 1e-3, "bristle only: Stribeck velocity when "
        "the law has none; bristle damping and step limit h <= z_s / (2 v_st)",
        check="positive"),
    Key("bristle_damping", "float", "s/m", None, "bristle only: sigma1 per unit normal "
        "force (default 2 mu_s / stiction_velocity)", check="nonneg"),
    Key("v_eps", "float", "m/s", 1e-4, "regularised only: sliding speed regularising the "
        "friction direction", check="positive"),
)
#: the keys of a hydraulic cylinder (docs/control.md), the valve apart
_CYLINDER = (
    Key("first", "ref", default=REQUIRED, doc="barrel side P"),
    Key("second", "ref", default=REQUIRED, doc="rod side Q; stroke x = |PQ| - l0"),
    Key("first_at", "vec3", "m", None, "attachment point of P (as for spring_damper)"),
    Key("second_at", "vec3", "m", None, "attachment point of Q"),
    Key("A1", "float", "m^2", REQUIRED, "piston area (chamber 1, grows with x)",
        check="positive"),
    Key("A2", "float", "m^2", REQUIRED, "annulus area (chamber 2)", check="positive"),
    Key("V01", "float", "m^3", REQUIRED, "chamber 1 volume at x = 0", check="positive"),
    Key("V02", "float", "m^3", REQUIRED, "chamber 2 volume at x = 0", check="positive"),
    Key("beta", "float", "Pa", 1.5e9, "oil bulk modulus", check="positive"),
    Key("p10", "float", "Pa", 0.0, "initial pressure, chamber 1"),
    Key("p20", "float", "Pa", 0.0, "initial pressure, chamber 2"),
    Key("l0", "float", "m", None, "|PQ| at x = 0 (default: initial distance)",
        check="nonneg"),
    Key("C_d", "float", "-", 0.7, "discharge coefficient", check="nonneg"),
    Key("w", "float", "m^2", 0.0, "valve opening area at u = 1", check="nonneg"),
    Key("p_s", "float", "Pa", 0.0, "supply pressure"),
    Key("p_t", "float", "Pa", 0.0, "tank pressure"),
    Key("rho", "float", "kg/m^3", 850.0, "oil density", check="positive"),
    Key("dp_r", "float", "Pa", 1e5, "regularisation of the orifice law near dp = 0",
        check="positive"),
    Key("x_min", "float", "m", float("-inf"), "stroke end (cushion beyond)"),
    Key("x_max", "float", "m", float("inf"), "stroke end (cushion beyond)"),
    Key("k_c", "float", "N/m", 0.0, "end cushion stiffness", check="nonneg"),
    Key("b", "float", "N s/m", 0.0, "viscous friction of the seals: F = ... - b xd",
        check="nonneg"))
_VALVE = Key("valve", "function", "-", 0.0, "valve opening u in [-1, 1] (u > 0: supply to "
             "chamber 1): number or time function")
#: the PID law of a servo cylinder's valve (flexmbs/forces/servo.py)
_SERVO = (
    Key("measure", "str", default=REQUIRED, doc="measured y: \"SENSOR.COMPONENT\" (a column "
        "of the sensor, e.g. \"boom_angle.z\")"),
    Key("rate", "str", default=None, doc="measured rate yd (\"SENSOR.COMPONENT\"); default: "
        "derivative filtered with T_f"),
    Key("reference", "function", "rad | m", REQUIRED, "reference r: number or time function"),
    Key("Kp", "float", "1/rad | 1/m", REQUIRED, "proportional gain: valve opening per unit "
        "error (u > 0 extends the cylinder)"),
    Key("Ki", "float", "1/(rad s) | 1/(m s)", 0.0, "integral gain"),
    Key("Kd", "float", "s/rad | s/m", 0.0, "derivative gain"),
    Key("T_f", "float", "s", 0.0, "derivative filter time constant (no rate feed)",
        check="nonneg"),
    Key("e0", "float", "rad | m", 0.0, "initial error (filter start: no kick)"),
    Key("u_max", "float", "-", 1.0, "valve saturation: |u| <= u_max <= 1", check="positive"))

FORCE = _per_kind(kinds.FORCES, {
    "spring_damper": _table(
        *_P2P_SIDES,
        Key("k", "float", "N/m", 0.0, "stiffness", check="nonneg"),
        Key("d", "float", "N s/m", 0.0, "damping", check="nonneg"),
        Key("l0", "float", "m", None, "free length (default: initial distance)",
            check="nonneg")),
    "rotational_spring": _table(
        _JOINT_REF,
        Key("k", "float", "N m/rad", 0.0, "torsion stiffness", check="nonneg"),
        Key("d", "float", "N m s/rad", 0.0, "torsion damping", check="nonneg"),
        Key("angle0", "float", "rad", 0.0, "free angle")),
    "bushing": _table(
        Key("first", "ref", default=REQUIRED, doc="side P (its axes are the bushing axes)"),
        Key("second", "ref", default=REQUIRED, doc="side Q"),
        Key("K", "vec6", "N/m (x3), N m/rad (x3)", (0.0,) * 6, "stiffnesses along/about P axes"),
        Key("D", "vec6", "N s/m (x3), N m s/rad (x3)", (0.0,) * 6, "dampings")),
    "force": _table(
        Key("at", "ref", default=REQUIRED, doc="\"BODY\" or \"BODY.MARKER\""),
        Key("point", "vec3", "m", None, "point of application, inertial, initial "
            "configuration (default: the marker or body origin)"),
        Key("force", "function", "N", REQUIRED, "[Fx, Fy, Fz] or a time function with "
            "vector values"),
        Key("frame", "str", default="inertial", doc="components of `force`",
            choices=("inertial", "body"))),
    "torque": _table(
        Key("at", "ref", default=REQUIRED, doc="\"BODY\" or \"BODY.MARKER\""),
        Key("torque", "function", "N m", REQUIRED, "[Mx, My, Mz] or a time function"),
        Key("frame", "str", default="inertial", doc="components of `torque`",
            choices=("inertial", "body"))),
    "joint_stop": _table(
        _JOINT_REF,
        Key("coordinate", "coordinate", "-", 0, "joint coordinate: name (\"angle\", "
            "\"displacement\", ...) or index"),
        Key("lower", "float", "rad | m", float("-inf"), "lower limit"),
        Key("upper", "float", "rad | m", float("inf"), "upper limit"),
        Key("k", "float", "N/m | N m/rad", 0.0, "contact stiffness", check="nonneg"),
        Key("d", "float", "N s/m | N m s/rad", 0.0, "contact damping", check="nonneg"),
        Key("smoothing", "float", "m | rad", 0.0, "width of the smoothed engagement",
            check="nonneg")),
    # nonlinear force laws: one-sided springs and force-deflection curves
    "rope": _table(
        *_P2P_SIDES,
        Key("k", "float", "N/m", 0.0, "stiffness while taut (l > l0)", check="nonneg"),
        Key("d", "float", "N s/m", 0.0, "damping, acts only while taut", check="nonneg"),
        Key("l0", "float", "m", None, "free (slack) length (default: initial distance)",
            check="nonneg"),
        Key("smoothing", "float", "m", 0.0, "width of the C1 engagement (0: force C0, "
            "kink at l0)", check="nonneg")),
    "compression_spring": _table(
        *_P2P_SIDES,
        Key("k", "float", "N/m", 0.0, "stiffness while compressed (l < l0)", check="nonneg"),
        Key("d", "float", "N s/m", 0.0, "damping, acts only while compressed",
            check="nonneg"),
        Key("l0", "float", "m", None, "free length (default: initial distance)",
            check="nonneg"),
        Key("smoothing", "float", "m", 0.0, "width of the C1 engagement (0: force C0, "
            "kink at l0)", check="nonneg")),
    "nonlinear_spring": _table(
        *_P2P_SIDES,
        Key("deflection", "floats", "m", REQUIRED, "table of deflections s = l - l0, "
            "strictly increasing"),
        Key("force", "floats", "N", REQUIRED, "tension F(s) at each deflection: monotone "
            "cubic (PCHIP) between, linear beyond the table"),
        Key("k", "float", "N/m", 0.0, "linear stiffness in parallel", check="nonneg"),
        Key("d", "float", "N s/m", 0.0, "damping", check="nonneg"),
        Key("l0", "float", "m", None, "free length (default: initial distance)",
            check="nonneg")),
    "nonlinear_rotational_spring": _table(
        _JOINT_REF,
        Key("angle", "floats", "rad", REQUIRED, "table of deflections phi - angle0, "
            "strictly increasing"),
        Key("moment", "floats", "N m", REQUIRED, "restoring moment at each deflection: "
            "monotone cubic (PCHIP) between, linear beyond the table"),
        Key("k", "float", "N m/rad", 0.0, "linear torsion stiffness in parallel",
            check="nonneg"),
        Key("d", "float", "N m s/rad", 0.0, "torsion damping", check="nonneg"),
        Key("angle0", "float", "rad", 0.0, "free angle")),
    # -- force elements with internal states and controllers (docs/control.md) --
    "linear_actuator": _table(
        Key("first", "ref", default=REQUIRED, doc="side P: \"ground\", \"BODY\", \"BODY.MARKER\""),
        Key("second", "ref", default=REQUIRED, doc="side Q (pushed away from P by F > 0)"),
        Key("first_at", "vec3", "m", None, "attachment point of P (as for spring_damper)"),
        Key("second_at", "vec3", "m", None, "attachment point of Q"),
        Key("command", "function", "N", REQUIRED, "commanded force F_cmd: number or time "
            "function"),
        Key("tau", "float", "s", REQUIRED, "lag: F' = (F_cmd - F) / tau", check="positive"),
        Key("F0", "float", "N", 0.0, "initial force (state F)")),
    "hydraulic_cylinder": _table(*_CYLINDER, _VALVE),
    "servo_cylinder": _table(*_CYLINDER, *_SERVO),
    "pid": _table(
        _JOINT_REF,
        Key("coordinate", "str", default=None, doc="actuated joint coordinate (default: the "
            "joint's first, \"angle\" or \"displacement\")"),
        Key("measure", "str", default=REQUIRED, doc="measured y: \"SENSOR.COMPONENT\" "
            "(a column of the sensor, e.g. \"angle.z\")"),
        Key("rate", "str", default=None, doc="measured rate yd (\"SENSOR.COMPONENT\"); "
            "default: derivative filtered with T_f"),
        Key("reference", "function", "rad | m", REQUIRED, "reference r: number or time "
            "function"),
        Key("Kp", "float", "N m/rad | N/m", REQUIRED, "proportional gain"),
        Key("Ki", "float", "N m/(rad s) | N/(m s)", 0.0, "integral gain"),
        Key("Kd", "float", "N m s/rad | N s/m", 0.0, "derivative gain"),
        Key("T_f", "float", "s", 0.0, "derivative filter time constant (no rate feed)",
            check="nonneg"),
        Key("e0", "float", "rad | m", 0.0, "initial error (filter start: no kick)")),
    "state_space_controller": _table(
        _JOINT_REF,
        Key("coordinate", "str", default=None, doc="actuated joint coordinate"),
        Key("feeds", "feeds", default=REQUIRED, doc="measured y: [\"SENSOR.COMPONENT\", ...]"),
        Key("references", "floats", "rad | m", REQUIRED, "constant references r, one per "
            "feed: w = r - y"),
        Key("A", "matrix", "1/s", REQUIRED, "z' = A z + B w ([] for no states)"),
        Key("B", "matrix", "-", REQUIRED, "input matrix"),
        Key("C", "matrix", "-", REQUIRED, "u = C z + D w (one row)"),
        Key("D", "matrix", "N m/rad | N/m", REQUIRED, "feedthrough (one row)"),
        Key("z0", "floats", "-", None, "initial states (default zero)")),
    "sampled_state_space_controller": _table(
        _JOINT_REF,
        Key("coordinate", "str", default=None, doc="actuated joint coordinate"),
        Key("feeds", "feeds", default=REQUIRED, doc="measured y: [\"SENSOR.COMPONENT\", ...]"),
        Key("period", "float", "s", REQUIRED, "sampling period T: ticks t0 + k T, output held "
            "between them (zero-order hold)", check="positive"),
        Key("references", "floats", "rad | m", REQUIRED, "constant references, one per feed"),
        Key("A_d", "matrix", "-", REQUIRED, "x_{k+1} = A_d x_k + B_d w_k ([] for no states)"),
        Key("B_d", "matrix", "-", REQUIRED, "input matrix"),
        Key("C_d", "matrix", "-", REQUIRED, "u_k = C_d x_k + D_d w_k (one row)"),
        Key("D_d", "matrix", "N m/rad | N/m", REQUIRED, "feedthrough (one row)"),
        Key("x0", "floats", "-", None, "initial discrete states (default zero)")),
    # contact (docs/contact.md): the integrator lands on the impacts
    "sphere_plane_contact": _table(
        Key("first", "ref", default=REQUIRED, doc="side P: the plane (its marker axes)"),
        Key("second", "ref", default=REQUIRED, doc="side Q: the sphere centre"),
        Key("first_at", "vec3", "m", None, "a point of the plane, inertial, initial "
            "configuration (default: the marker or body origin)"),
        Key("second_at", "vec3", "m", None, "sphere centre (as `first_at`)"),
        Key("R", "float", "m", 0.0, "sphere radius (0: a point)", check="nonneg"),
        Key("normal", "str", default="z", doc="axis of P normal to the plane, pointing "
            "to the free side", choices=("x", "y", "z")),
        *_CONTACT),
    "sphere_sphere_contact": _table(
        *_P2P_SIDES,
        Key("R_P", "float", "m", 0.0, "radius of the sphere at P", check="nonneg"),
        Key("R_Q", "float", "m", 0.0, "radius of the sphere at Q", check="nonneg"),
        *_CONTACT),
    "pin_in_hole_contact": _table(
        Key("first", "ref", default=REQUIRED, doc="side P: the hole centre, its z axis the "
            "hole axis"),
        Key("second", "ref", default=REQUIRED, doc="side Q: the pin centre"),
        Key("first_at", "vec3", "m", None, "hole centre, inertial, initial configuration "
            "(with a body side; the hole axis is then inertial z)"),
        Key("second_at", "vec3", "m", None, "pin centre (as `first_at`)"),
        Key("c", "float", "m", REQUIRED, "radial clearance (hole radius - pin radius)",
            check="nonneg"),
        Key("R", "float", "m", 0.0, "pin radius (lever of the friction)", check="nonneg"),
        *_CONTACT),
    "face_contact": _table(
        Key("first", "ref", default=REQUIRED, doc="the flexible body \"BODY\" whose face "
            "is hit"),
        Key("face", "str", default=REQUIRED, doc="named flat face (facet set) of `first`, "
            "taken as its mean plane moving with its mean elastic displacement"),
        Key("second", "ref", default=REQUIRED, doc="side Q: the sphere centre"),
        Key("second_at", "vec3", "m", None, "sphere centre, inertial, initial configuration"),
        Key("R", "float", "m", 0.0, "sphere radius (0: a point)", check="nonneg"),
        *_CONTACT),
    "deformed_face_contact": _table(
        Key("first", "ref", default=REQUIRED, doc="the flexible body \"BODY\" whose face "
            "is hit"),
        Key("face", "str", default=REQUIRED, doc="named face (facet set) of `first`, flat "
            "or curved, taken as its triangles moving with the elastic deformation "
            "(nearest facet, its local normal; friction on the facet's material point)"),
        Key("second", "ref", default=REQUIRED, doc="side Q: the sphere centre"),
        Key("second_at", "vec3", "m", None, "sphere centre, inertial, initial configuration"),
        Key("R", "float", "m", 0.0, "sphere radius (0: a point)", check="nonneg"),
        *_CONTACT),
})

# -- [[sensors]] -----------------------------------------------------------------------------------
SENSOR_TYPES = tuple(kinds.SENSORS)
SENSOR_COMMON = _table(
    Key("name", "name", default=REQUIRED, doc="unique sensor name"),
    Key("type", "str", default=REQUIRED, doc="measured quantity", choices=SENSOR_TYPES),
    Key("first", "ref", default=REQUIRED, doc="marker measured (alone) or measured from"),
    Key("second", "ref", default=None, doc="marker measured relative to `first`"),
    Key("frame", "str", default="inertial", doc="components in", choices=("inertial", "first",
                                                                          "second")),
)
SENSOR = _per_kind(kinds.SENSORS, {
    "position": {}, "angular_velocity": {}, "angular_acceleration": {},
    "velocity": _table(Key("derivative", "str", default="inertial", doc="time derivative "
                           "taken in the inertial frame or in `frame`",
                           choices=("inertial", "frame"))),
    "acceleration": _table(Key("derivative", "str", default="inertial", doc="as for velocity",
                               choices=("inertial", "frame"))),
    "orientation": _table(Key("output", "str", default="rotvec", doc="rotation vector, Cardan "
                              "angles x-y-z or the 9 matrix entries",
                              choices=("rotvec", "xyz", "matrix"))),
    "face_displacement": _table(Key("face", "str", default=REQUIRED, doc="named face (facet "
                                    "set) of the flexible body `first`: its mean elastic "
                                    "displacement [m] in the body frame")),
})

# -- [solver], [output], [analysis] ------------------------------------------------------------------
SOLVER = _table(
    Key("integrator", "str", default=DEFAULTS.method, doc="generalized-alpha or PETSc TS",
        choices=("genalpha", "ts")),
    Key("t_end", "float", "s", REQUIRED, "end time", check="positive"),
    Key("dt", "float", "s", REQUIRED, "time step (initial step if adaptive)", check="positive"),
    Key("t0", "float", "s", DEFAULTS.t0, "start time", check="nonneg"),
    Key("rho_inf", "float", "-", DEFAULTS.rho_inf, "spectral radius at infinite frequency (1: no "
        "numerical damping)", check="unit_interval"),
    Key("adaptive", "bool", default=DEFAULTS.adaptive, doc="error-controlled step size"),
    Key("rtol", "float", "-", DEFAULTS.rtol, "relative error tolerance (adaptive, ts)", check="positive"),
    Key("atol", "float", "-", DEFAULTS.atol, "absolute error tolerance (adaptive, ts)", check="positive"),
    Key("petsc_options", "options", "-", {}, f"PETSc options without the `{DEFAULTS.options_prefix}` prefix, e.g. "
        "`{ pc_factor_mat_solver_type = \"mumps\" }`; command-line options win"),
)
OUTPUT = _table(
    Key("directory", "path_out", default=None, doc="output folder relative to the case "
        "file (default: `results/` in the working directory, so that a run never writes "
        "into the case's folder unless told; `flexmbs run --out` wins)"),
    Key("dt", "float", "s", None, "output interval (default: every step)", check="positive"),
    Key("xdmf", "bool", default=True, doc="XDMF + HDF5 time series of the flexible bodies "
        "and of the whole mechanism (`<case>_mechanism.xdmf`: every body, joint and sensor)"),
    Key("xdmf_dt", "float", "s", None, "interval of the XDMF frames (default: every output "
        "step)", check="positive"),
    Key("plots", "bool", default=True, doc="PNG plots of sensors, joints and energy"),
)
ANALYSIS = _table(
    Key("type", "str", default=REQUIRED, doc="analysis instead of a time simulation: "
        "eigenvalues of the linearised system, or the static equilibrium under the loads",
        choices=("modal", "static")),
    Key("n_modes", "int", "-", 6, "number of eigenvalues reported (modal)", check="positive"),
    Key("load_steps", "int", "-", DEFAULTS.load_steps, "loads applied in this many equal increments "
        "(static; more for strongly nonlinear models)", check="positive"),
    Key("state", "str", default="initial", doc="linearise about the consistent initial "
        "state or the steady state of a steadily driven system (relative equilibrium)",
        choices=("initial", "steady")),
)

# -- [[constraints]]: velocity (nonholonomic) constraints A(q, t) qd + a(q, t) = 0 ----------
CONSTRAINT_TYPES = tuple(kinds.CONSTRAINTS)
CONSTRAINT_COMMON = _table(
    Key("name", "name", default=REQUIRED, doc="unique constraint name"),
    Key("type", "str", default=REQUIRED, doc="velocity-constraint type (docs/nonholonomic.md)",
        choices=CONSTRAINT_TYPES),
)
_PLANE = Key("plane", "ref", default="ground", doc="the plane: \"ground\", \"BODY\" or "
             "\"BODY.MARKER\" (its x-y plane; z axis = normal)")
CONSTRAINT = _per_kind(kinds.CONSTRAINTS, {
    "rolling": _table(
        _PLANE,
        Key("disc", "ref", default=REQUIRED, doc="the disc: \"BODY\" or \"BODY.MARKER\" at its "
            "centre, z axis = the disc's axis; rolls without slip and touches the plane (a "
            "normal-contact joint NAME.contact is added)"),
        Key("radius", "float", "m", REQUIRED, "disc radius", check="positive"),
    ),
    "rim_rolling": _table(
        _PLANE,
        Key("wheel", "ref", default=REQUIRED, doc="the elastic wheel: \"BODY\", a flexible "
            "body; the material point of its deformed rim lowest along the plane's normal "
            "has no velocity relative to the plane (two rows: the friction force) and "
            "touches it (a normal-contact joint NAME.contact is added)"),
        Key("rim", "str", default="rim", doc="the rim: an interface or face of the wheel's "
            "body file whose nodes form a ring about `axis` (in one plane normal to it, "
            "at distinct angles, evenly spaced or not: docs/nonholonomic.md)"),
        Key("axis", "vec3", "-", (0.0, 0.0, 1.0), "the wheel's axis in its body frame"),
    ),
    "knife_edge": _table(
        _PLANE,
        Key("edge", "ref", default=REQUIRED, doc="the edge: \"BODY.MARKER\" (or \"BODY\") "
            "with the blade along its x axis; no sideways velocity (keep it on the plane "
            "with a joint, e.g. planar)"),
    ),
    "velocity": _table(
        Key("first", "ref", default=REQUIRED, doc="side P: \"BODY\" or \"BODY.MARKER\""),
        Key("second", "ref", default=REQUIRED, doc="side Q: \"BODY\" or \"BODY.MARKER\""),
        Key("ratio", "float", "-", 1.0, "z_P . omega_P = ratio z_Q . omega_Q (angular "
            "velocities about the markers' z axes)"),
    ),
})

# -- [[hotspots]]: stress points of flexible bodies (post-processing) ----------------------------
HOTSPOT = _table(
    Key("name", "name", default=REQUIRED, doc="unique hot-spot name (its stress history is "
        "written by time simulations, not by an `[analysis]`)"),
    Key("body", "str", default=REQUIRED, doc="name of a flexible body"),
    Key("node_set", "str", default=None, doc="named node set of the body's mesh, or one of "
        "its interfaces (give this or `point`)"),
    Key("point", "vec3", "m", None, "a point in the body's mesh coordinates, snapped to the "
        "nearest mesh node (give this or `node_set`)"),
    Key("sn_curve", "sn_curve", "Pa, -, -", None, "Basquin S-N curve `{S_ref = Pa, N_ref = "
        "cycles, m = slope}`: N = N_ref (S / S_ref)^-m cycles to failure at stress range S "
        "[Pa]; adds the rainflow count and Miner damage sum of each node"),
)

SECTIONS = {"model": MODEL, "bodies": None, "joints": None, "constraints": None,
            "drives": None, "forces": None,
            "sensors": None, "hotspots": None, "solver": SOLVER, "output": OUTPUT, "analysis": ANALYSIS,
            "sweep": None}   # [sweep] is read by `flexmbs sweep` (flexmbs.parallel), ignored by run
ARRAYS = ("bodies", "joints", "constraints", "drives", "forces", "sensors", "hotspots")


# -- documentation ---------------------------------------------------------------------------------
def _fmt_default(k: Key) -> str:
    if k.required:
        return "**required**"
    if k.default is None:
        return "–"
    if isinstance(k.default, bool):
        return str(k.default).lower()
    if isinstance(k.default, str):
        return f'"{k.default}"' if k.default else '""'
    if isinstance(k.default, tuple):
        return "[" + ", ".join(f"{v:g}" for v in k.default) + "]" if k.default else "[]"
    if isinstance(k.default, dict):
        return "{}"
    return f"{k.default:g}" if isinstance(k.default, float) else str(k.default)


def markdown_table(keys: dict[str, Key]) -> str:
    rows = ["| key | type | unit | default | meaning |", "|---|---|---|---|---|"]
    for k in keys.values():
        doc = k.doc + (" (one of " + ", ".join(f"`{c}`" for c in k.choices) + ")"
                       if k.choices else "")
        rows.append(f"| `{k.name}` | {k.kind} | {k.unit} | {_fmt_default(k)} | {doc} |")
    return "\n".join(rows)


def markdown_tables() -> str:
    """Every table of the format, as Markdown (pasted into docs/case_format.md)."""
    out = ["### `[model]`", markdown_table(MODEL),
           "### `[[bodies]]`: all types", markdown_table(BODY_COMMON)]
    out += [s for t in BODY_TYPES for s in (f"#### `type = \"{t}\"`", markdown_table(BODY[t]))]
    out += ["### `[[joints]]`", markdown_table(JOINT),
            "### `[[constraints]]`: all types", markdown_table(CONSTRAINT_COMMON)]
    out += [s for t in CONSTRAINT_TYPES
            for s in (f"#### `type = \"{t}\"`", markdown_table(CONSTRAINT[t]))]
    out += ["### `[[drives]]`: all types", markdown_table(DRIVE_COMMON)]
    out += [s for t in DRIVE_TYPES for s in (f"#### `type = \"{t}\"`", markdown_table(DRIVE[t]))]
    out += ["### Time functions `{type = ...}`"]
    out += [s for t in FUNCTION_TYPES
            for s in (f"#### `type = \"{t}\"`", markdown_table(FUNCTION[t]))]
    out += ["### `[[forces]]`: all types", markdown_table(FORCE_COMMON)]
    out += [s for t in FORCE_TYPES for s in (f"#### `type = \"{t}\"`", markdown_table(FORCE[t]))]
    out += ["### `[[sensors]]`: all types", markdown_table(SENSOR_COMMON)]
    out += [s for t in SENSOR_TYPES if SENSOR[t]
            for s in (f"#### `type = \"{t}\"`", markdown_table(SENSOR[t]))]
    out += ["### `[[hotspots]]`", markdown_table(HOTSPOT)]
    out += ["### `[solver]`", markdown_table(SOLVER), "### `[output]`", markdown_table(OUTPUT),
            "### `[analysis]`", markdown_table(ANALYSIS)]
    return "\n\n".join(out) + "\n"
