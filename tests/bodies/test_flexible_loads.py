"""Face pressure on a flexible body (THEORY §2.6, h_p).

References: for the rigid (RBE2) tip face of the Craig-Bampton cantilever the pressure
resultant is the single force ``-p F_n`` at the face centroid, i.e. the tip marker,
so ``FacePressure`` must give the generalized force of an ``ExternalForce`` of that value
(in body axes) at the tip marker (virtual work, along |e| = 1, at q_e = 0 where the
reference normals are exact); tangent by central differences.
"""
from __future__ import annotations

import numpy as np
import pytest
from flexcases import beam_cb, context, random_unit_e

import flexmbs as fm
from flexmbs.constraints.drives import Ramp
from flexmbs.forces.external import ExternalForce


@pytest.fixture(scope="module")
def beam():
    return fm.FlexibleBody("beam", beam_cb(3))


def test_tip_face_area_and_normal(beam):
    face = next(f for f in beam.body.faces if f.name == "tip")
    assert np.allclose(face.F_n, [0.01, 0.0, 0.0], atol=1e-12)      # 0.1 x 0.1 m, normal +x
    assert np.allclose(face.F_m, np.cross([1.0, 0.05, 0.05], face.F_n), atol=1e-12)


def test_pressure_equals_resultant_force_at_tip(beam):
    p = 2.0e5
    fp = fm.FacePressure("p", body=beam, face="tip", p=p)
    assert fp.problems() == []
    ef = ExternalForce("F", at=beam["tip"], force=(-p * 0.01, 0.0, 0.0), frame="body")
    rng = np.random.default_rng(4)
    mk = fp.resolve()[0]
    x = np.concatenate([rng.normal(size=3), random_unit_e(rng), np.zeros(beam.n_q), [0.1]])
    xd = np.append(np.zeros(len(x) - 1), 1.0)
    Qp = fp.contribution(context([mk], x, xd)).Q
    Qf = ef.contribution(context([beam["tip"]], x, xd)).Q
    assert np.allclose(Qp[7:-1], Qf[7:-1], rtol=1e-9, atol=1e-9 * np.abs(Qf).max())
    for _ in range(4):
        dq = np.append(rng.normal(size=len(x) - 1), 0.0)
        dq[3:7] -= (dq[3:7] @ x[3:7]) * x[3:7]
        assert Qp @ dq == pytest.approx(Qf @ dq, rel=1e-9, abs=1e-9 * np.abs(Qf).max())


def test_pressure_tangent(beam):
    """dQ/dx (including the time column for p(t) = 1e5 + 3e6 t) by central differences."""
    fp = fm.FacePressure("p", body=beam, face="tip", p=Ramp(rate=3e6, f0=1e5))
    mk = fp.resolve()[0]
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.normal(size=3), random_unit_e(rng), 1e-3 * rng.normal(size=beam.n_q),
                        [0.2]])
    xd = np.append(rng.normal(size=len(x) - 1), 1.0)
    c = fp.contribution(context([mk], x, xd))
    h = 1e-6
    dQ = np.stack([(fp.contribution(context([mk], x + h * u, xd, 1)).Q
                    - fp.contribution(context([mk], x - h * u, xd, 1)).Q) / (2 * h)
                   for u in np.eye(len(x))], axis=1)
    assert np.allclose(c.dQ_dx, dQ, atol=1e-7 * np.abs(dQ).max())
    assert np.allclose(c.dQ_dxd, 0.0)


def test_pressure_problems(beam):
    assert "no face 'lid'" in fm.FacePressure("p", body=beam, face="lid", p=1.0).problems()[0]
    rigid = fm.RigidBody.box("box", (1, 1, 1), rho=1.0)
    assert "must be a FlexibleBody" in fm.FacePressure("p", body=rigid, face="tip").problems()[0]


def test_pressure_in_a_simulation(beam):
    """Clamped cantilever: a tip-face pressure and the equal resultant force at the tip
    marker give the same motion (2 ms, 20 steps); the loaded body joins the model."""
    from flexmbs.constraints.fixed import Fixed
    runs = []
    for load in (fm.FacePressure("p", body=beam, face="tip", p=-1e6),
                 ExternalForce("F", at=beam["tip"], force=(1e6 * 0.01, 0.0, 0.0), frame="body")):
        model = fm.System()
        model.add(beam, Fixed("clamp", fm.ground, beam["clamp"]), load)
        runs.append(fm.simulate(model, 2e-3, 1e-4, rho_inf=0.9).body_q("beam"))
    assert np.abs(runs[0][-1, 7:]).max() > 0
    assert np.allclose(runs[0], runs[1], rtol=1e-8, atol=1e-12)
    model = fm.System().add(fm.FacePressure("p", body=beam, face="tip", p=1.0))
    assert model.bodies == [beam]                              # added through the load
