"""Contact with a named face of a flexible body (flexmbs.forces.face_contact): a ball
pressed by F = 1 kN against the tip face of a clamped steel bar 1.0 x 0.1 x 0.1 m.

References: the same load as a uniform pressure F/A on the face (``fm.FacePressure``, a
second formulation through the face integrals ``F_q = int Phi^T n dA``: the mean
displacement agrees to 1e-6), the bar formula ``u = -F L / (E A)`` (within 5 %: a
uniform end traction is not in the reduced basis, whose Ritz response is 2.9 % stiff
here; a load through the tip's RBE3 marker is within 0.4 %), and Hertz's offset
``delta = (F / K)^(2/3)``; static equilibrium (``fm.static_equilibrium``, the contact's
held state kept).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.forces.face_contact import FaceContact
from flexmbs.reduction import InterfaceSpec, ReductionSettings, reduce_model

from .conftest import beam_fe

F, K, R, L, E, AREA = 1000.0, 1e9, 0.02, 1.0, 210e9, 0.01


@pytest.fixture(scope="module")
def bar():
    body = reduce_model(beam_fe("hex27", (20, 2, 2)), ReductionSettings(
        n_modes=6, interfaces=(InterfaceSpec("clamp"), InterfaceSpec("tip", "rbe3")),
        frame="interface:clamp", static_modes=True, stiffening=False))
    return FlexibleBody("bar", body)


def pressed(bar, face="tip"):
    ball = fm.PointMass("ball", m=1.0, r0=(L + R - 1e-5, 0.05, 0.05))
    return fm.System().add(
        bar, ball, fm.Fixed("clamp", fm.ground, bar["clamp"]),
        fm.Cylindrical("guide", fm.ground, ball, at=(L + R, 0.05, 0.05), axis="x"),
        fm.ExternalForce("push", at=ball, force=(-F, 0.0, 0.0)),
        FaceContact("c", first=bar, second=ball, face=face, R=R,
                    law=fm.ContactLaw(K=K, n=1.5, e=0.8)))


def tip_mean(bar, asm, q) -> np.ndarray:
    faces = {f.name: f for f in bar.body.faces}
    return faces["tip"].Phi_c @ q[asm.body_slices["bar"]][7:]


def test_ball_pressed_on_the_tip_face_of_a_bar(bar):
    model = pressed(bar)
    eq = fm.static_equilibrium(model)
    asm = model.assemble()
    q = np.asarray(eq.q)
    u_tip = tip_mean(bar, asm, q)
    direct = fm.System().add(bar, fm.Fixed("clamp", fm.ground, bar["clamp"]),
                             fm.FacePressure("p", body=bar, face="tip", p=F / AREA))
    q2 = np.asarray(fm.static_equilibrium(direct).q)
    assert u_tip == pytest.approx(tip_mean(bar, direct.assemble(), q2), rel=1e-6, abs=1e-15)
    assert u_tip[0] == pytest.approx(-F * L / (E * AREA), rel=5e-2)
    x_ball = q[asm.body_slices["ball"]][0]
    assert x_ball == pytest.approx(L + u_tip[0] + R - (F / K) ** (2 / 3), abs=1e-9)
    assert asm.event_gaps(q, np.zeros_like(q), 0.0)[2][0] == pytest.approx(F, rel=1e-9)


def test_face_contact_problems(bar):
    ball = fm.PointMass("ball", m=1.0)
    probs = FaceContact("c", first=bar, second=ball, face="nope",
                        law=fm.ContactLaw(K=1.0)).problems()
    assert len(probs) == 1 and "no face 'nope'" in probs[0] and probs[0].startswith(
        "FaceContact 'c': ")
