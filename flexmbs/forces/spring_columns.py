"""Columns of the per-element tables of the compiled force elements
(:mod:`flexmbs.forces.spring_kernel`, :mod:`flexmbs.forces.spring_reference`), and which
elements they cover (:func:`kind_code`).

``sp_int`` (k, 5) int64, one row per element:

    kind (``AXIAL``, ``ANGLE``, ``BUSHING``, ``FORCE``), marker P, marker Q (indices into
    the stacked frames ``C``, ``D``; Q unused by ``FORCE``), first and one-past-last row
    of the element's force-deflection curve in ``sp_tab`` (equal: no curve)

``sp_par`` (k, 18) float64: stiffnesses from ``P_K``, dampings from ``P_D``, unloaded
measures from ``P_S0`` (six of each for a bushing, one otherwise):

    AXIAL     k [N/m], d [N s/m], l0 [m]
    ANGLE     k [N m/rad], d [N m s/rad], angle0 [rad]
    BUSHING   K (6) [N/m x3, N m/rad x3], D (6) [N s/m x3, N m s/rad x3], s0 (6) [m, rad]
    FORCE     F (3) [N] in ``[0:3]``, frame in ``[3]`` (0: inertial components, 1: P's
              axes)

``sp_tab`` (T, 3) float64: the curves' knots ``s_i`` [m or rad], values ``F_i`` [N or
N m] and PCHIP slopes ``F'_i`` (:class:`~flexmbs.forces.curves.TabulatedCurve`).
"""
from __future__ import annotations

from flexmbs.forces.bushing import Bushing
from flexmbs.forces.curves import TabulatedCurve
from flexmbs.forces.external import ExternalForce
from flexmbs.forces.nonlinear_spring import NonlinearRotationalSpring, NonlinearSpring
from flexmbs.forces.rotational_spring import RotationalSpringDamper
from flexmbs.forces.spring_damper import PointToPointSpringDamper

AXIAL, ANGLE, BUSHING, FORCE = range(4)
I_KIND, I_MP, I_MQ, I_TAB0, I_TAB1 = range(5)
N_INT = 5
P_K, P_D, P_S0 = 0, 6, 12
P_FRAME = 3
N_PAR = 18

#: joints whose "angle" coordinate is ``atan2(y_P . x_Q, x_P . x_Q)``
ANGLE_JOINTS = ("revolute", "cylindrical")


def kind_code(element) -> int | None:
    """The kernel's kind of ``element``, or None when the element stays on the Python
    path (other classes, curves given as Python functions, torsion springs on joints
    whose angle is not ``atan2(y_P . x_Q, x_P . x_Q)``)."""
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
    return None
