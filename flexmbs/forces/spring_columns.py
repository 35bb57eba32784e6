"""Columns of the per-element tables of the compiled force elements
(:mod:`flexmbs.forces.spring_kernel`, :mod:`flexmbs.forces.spring_reference`), and which
elements they cover (:func:`kind_code`).

``sp_int`` (k, 5) int64, one row per element:

    kind (``AXIAL``, ``ANGLE``, ``BUSHING``, ``FORCE``, ``AXIAL_STOP``, ``ANGLE_STOP``,
    ``SLIDE_STOP``), marker P, marker Q (indices into
    the stacked frames ``C``, ``D``; Q unused by ``FORCE``), first and one-past-last row
    of the element's force-deflection curve in ``sp_tab`` (equal: no curve)

``sp_par`` (k, 18) float64: stiffnesses from ``P_K``, dampings from ``P_D``, unloaded
measures from ``P_S0`` (six of each for a bushing, one otherwise):

    AXIAL     k [N/m], d [N s/m], l0 [m]
    ANGLE     k [N m/rad], d [N m s/rad], angle0 [rad]
    BUSHING   K (6) [N/m x3, N m/rad x3], D (6) [N s/m x3, N m s/rad x3], s0 (6) [m, rad]
    FORCE     F (3) [N] in ``[0:3]``, frame in ``[3]`` (0: inertial components, 1: P's
              axes)

and the one-sided laws (:func:`flexmbs.forces.stops.stop_law`) on the distance ``l``
(``AXIAL_STOP``: :class:`~flexmbs.forces.one_sided.Rope`, ``lower = -inf``, ``upper =
l0``; :class:`~flexmbs.forces.one_sided.CompressionSpring`, ``lower = l0``, ``upper =
inf``), on the joint angle ``atan2(y_P . x_Q, x_P . x_Q)`` (``ANGLE_STOP``) or on the
joint displacement ``a_k^P . (p_Q - p_P)`` (``SLIDE_STOP``) of a
:class:`~flexmbs.forces.stops.JointStop`: stiffness ``k`` in ``P_K``, contact damping
``d`` in ``P_D``, the limits in ``P_LOWER``, ``P_UPPER`` (+-inf: none), the smoothing
width ``w`` in ``P_W`` and P's axis ``k`` (0, 1, 2) in ``P_AXIS`` (``SLIDE_STOP``).

``sp_tab`` (T, 3) float64: the curves' knots ``s_i`` [m or rad], values ``F_i`` [N or
N m] and PCHIP slopes ``F'_i`` (:class:`~flexmbs.forces.curves.TabulatedCurve`).
"""
from __future__ import annotations

from flexmbs.forces.bushing import Bushing
from flexmbs.forces.curves import TabulatedCurve
from flexmbs.forces.external import ExternalForce
from flexmbs.forces.nonlinear_spring import NonlinearRotationalSpring, NonlinearSpring
from flexmbs.forces.one_sided import CompressionSpring, Rope
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.spring_damper import PointToPointSpringDamper
from flexmbs.forces.stops import JointStop

AXIAL, ANGLE, BUSHING, FORCE, AXIAL_STOP, ANGLE_STOP, SLIDE_STOP = range(7)
#: the kinds with the one-sided law of :func:`flexmbs.forces.stops.stop_law`
STOPS = (AXIAL_STOP, ANGLE_STOP, SLIDE_STOP)
I_KIND, I_MP, I_MQ, I_TAB0, I_TAB1 = range(5)
N_INT = 5
P_K, P_D, P_S0 = 0, 6, 12
P_FRAME = 3
P_LOWER, P_UPPER, P_W, P_AXIS = 12, 13, 14, 15
N_PAR = 18

#: joints whose "angle" coordinate is ``atan2(y_P . x_Q, x_P . x_Q)``
ANGLE_JOINTS = ("revolute", "cylindrical")
#: (joint kind, coordinate name) -> P's axis ``k`` of the joint coordinates
#: ``a_k^P . (p_Q - p_P)`` (:func:`flexmbs.kinematics.relative.offset_along`)
SLIDE_COORDINATES = {("prismatic", "displacement"): 2, ("cylindrical", "displacement"): 2,
                     ("planar", "x"): 0, ("planar", "y"): 1}
#: (joint kind, coordinate name) of the angles ``atan2(y_P . x_Q, x_P . x_Q)``
#: (:func:`flexmbs.kinematics.relative.rotation_angle`)
ANGLE_COORDINATES = (("revolute", "angle"), ("cylindrical", "angle"), ("planar", "angle"))


def stop_coordinate(stop) -> tuple[int, int] | None:
    """``(kind, axis)`` of the coordinate a :class:`~flexmbs.forces.stops.JointStop`
    limits (axis: P's, of a ``SLIDE_STOP``; else 0), or None for other coordinates."""
    names = tuple(getattr(stop.joint, "coordinate_names", ()))
    try:
        name = names[stop.coordinate_index()]
    except (IndexError, ValueError):
        return None
    key = (getattr(stop.joint, "kind", None), name)
    if key in ANGLE_COORDINATES:
        return ANGLE_STOP, 0
    if key in SLIDE_COORDINATES:
        return SLIDE_STOP, SLIDE_COORDINATES[key]
    return None


def kind_code(element) -> int | None:
    """The kernel's kind of ``element``, or None when the element stays on the Python
    path (other classes, curves given as Python functions, torsion springs on joints
    whose angle is not ``atan2(y_P . x_Q, x_P . x_Q)``, stops on joint coordinates other
    than those of :func:`stop_coordinate`)."""
    cls = type(element)
    if cls is PointToPointSpringDamper or (
            cls is NonlinearSpring and isinstance(element.curve(), TabulatedCurve)):
        return AXIAL
    if cls is RotationalSpringDamper or (
            cls is NonlinearRotationalSpring and isinstance(element.curve(), TabulatedCurve)):
        names = tuple(getattr(element.joint, "coordinate_names", ()))
        ok = "angle" not in names or getattr(element.joint, "kind", None) in ANGLE_JOINTS
        return ANGLE if ok else None
    if cls is Bushing:
        return BUSHING
    if cls is ExternalForce:
        return FORCE
    if cls is Rope or cls is CompressionSpring:
        return AXIAL_STOP
    if cls is JointStop:
        found = stop_coordinate(element)
        return None if found is None else found[0]
    return None
