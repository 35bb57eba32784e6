"""Recovery of positions, displacements and stresses on a spinning bar.

Reference (closed form, e.g. Timoshenko & Goodier, *Theory of Elasticity*, rotating
bar): a bar of length L clamped at the axis and spinning at Omega carries the axial
stress ``sigma(x) = rho Omega^2 (L^2 - x^2) / 2`` and stretches by
``u(x) = rho Omega^2 (L^2 x - x^3 / 3) / (2 E)``, so ``u(L) = rho Omega^2 L^3 / (3 E)``
(small strain; the beam's steady state from ``steady_state``).
"""
import numpy as np
import pytest
from flexcase_models import STEEL, box_beam_mesh, reduce_cb, rotating_beam_model

from flexmbs.post import (
    deformed_positions, displacements, elastic_displacements, nodal_stress, steady_state,
    von_mises_stress,
)

L, H, OMEGA = 2.0, 0.02, 60.0


@pytest.fixture(scope="module")
def spinning(tmp_path_factory):
    mesh = box_beam_mesh(tmp_path_factory.mktemp("bar") / "bar.msh", (L, H, H), (20, 1, 1))
    body = reduce_cb(mesh, STEEL, 6, static_modes=True, name="bar")
    asm = rotating_beam_model(body, OMEGA).assemble()
    st = steady_state(asm)
    return body, asm, st


def test_axial_extension(spinning):
    body, asm, st = spinning
    q_b = st.q[asm.body_slices["beam"]]
    u = elastic_displacements(body, q_b[7:])
    x = np.asarray(body.points)[:, 0]
    ref = STEEL.rho * OMEGA**2 * (L**2 * x - x**3 / 3) / (2 * STEEL.E)
    tip = x > L - 1e-9
    assert u[tip, 0].mean() == pytest.approx(STEEL.rho * OMEGA**2 * L**3 / (3 * STEEL.E),
                                             rel=0.01)
    assert np.allclose(u[:, 0], ref, atol=0.02 * ref.max())
    # inertial positions: frame pose + A (X + u); the inertial displacement is A u
    pos = deformed_positions(body, q_b)
    A = asm.bodies[0].A(q_b)
    assert np.allclose(pos, q_b[:3] + (np.asarray(body.points) + u) @ A.T)
    assert np.allclose(displacements(body, q_b), u @ A.T)
    q_ref = q_b.copy()
    q_ref[7:] = 0.0
    assert np.allclose(displacements(body, q_b, q_ref), u @ A.T)
    # time series shapes
    qq = np.stack([q_b, q_ref])
    assert deformed_positions(body, qq).shape == (2, len(x), 3)


def test_axial_stress_and_von_mises(spinning):
    body, asm, st = spinning
    q_e = st.q[asm.body_slices["beam"]][7:]
    s = nodal_stress(body, q_e)
    x = np.asarray(body.points)[:, 0]
    ref = STEEL.rho * OMEGA**2 * (L**2 - x**2) / 2
    inner = (x > 0.2 * L) & (x < 0.8 * L)            # away from the clamp's Poisson constraint
    assert np.allclose(s[inner, 0], ref[inner], rtol=0.03, atol=0.01 * ref.max())
    vm = von_mises_stress(body, q_e)
    assert np.allclose(vm[inner], ref[inner], rtol=0.03, atol=0.01 * ref.max())
    assert von_mises_stress(body, np.stack([q_e, 2 * q_e])).shape == (2, len(x))
