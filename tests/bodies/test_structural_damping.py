"""Rayleigh and per-mode damping of a flexible body, chosen at simulation time.

Reference: the eigenvalue analysis of the linearised multibody DAE
(:func:`flexmbs.post.linearize.modes`, a second formulation: the complex eigenvalues of the
assembled tangent ``(K, C, M)`` of the whole model projected on the joint's null space)
of a Craig-Bampton cantilever clamped at its frame interface.  Its damping ratios must
equal the specified ``zeta_k`` (modal damping) and the closed form
``alpha / (2 omega) + beta omega / 2`` (Rayleigh, e.g. Chopra, *Dynamics of
Structures*, §11.4) at the linearised natural frequencies, to 1e-8.  The reduction
orthonormalises its Craig-Bampton basis, but a body file need not be modal: the
construction is also checked on a coupled random pair ``(K_e, M_e)`` against the
state-space eigenvalues of ``M qdd + D qd + K q = 0`` (scipy).
"""
from __future__ import annotations

import numpy as np
import pytest
from flexcases import beam_cb

import flexmbs as fm
from flexmbs.bodies.damping import ModalDamping, RayleighDamping, reduced_modes
from flexmbs.bodies.flexible import FlexibleBody
from flexmbs.post import equilibrium, linearize, modes


def _clamped_modes(body):
    model = fm.System().add(body, fm.Fixed("clamp", fm.ground, body["clamp"]))
    asm = model.assemble()
    return modes(linearize(asm, equilibrium(asm)))


def test_default_keeps_the_body_file_damping():
    red = beam_cb(3, damping=0.02)
    body = FlexibleBody("beam", red)
    assert np.array_equal(body.D_e, red.D_e)
    assert not np.any(FlexibleBody("beam", red, damping=False).D_e)


def test_per_mode_ratios_are_the_linearised_ratios():
    red = beam_cb(3, damping=0.02)            # the file's zeta = 0.02 must be overridden
    n = red.n_q
    zeta = np.linspace(0.01, 0.2, n)
    body = FlexibleBody("beam", red, structural_damping=ModalDamping(zeta))
    assert body.problems() == []
    res = _clamped_modes(body)
    assert res.frequencies.size == n
    omega, _ = reduced_modes(red.M_e, red.K_e)
    # undamped frequencies: |s| = omega_k for a modal D_e
    assert res.frequencies == pytest.approx(omega / (2 * np.pi), rel=1e-8)
    assert res.damping_ratios == pytest.approx(zeta, abs=1e-8)


def test_ratio_as_a_function_of_frequency():
    red = beam_cb(3)
    law = lambda f: 0.01 + 1e-6 * f          # noqa: E731
    res = _clamped_modes(FlexibleBody("beam", red, structural_damping=ModalDamping(law)))
    assert res.damping_ratios == pytest.approx(0.01 + 1e-6 * res.frequencies, abs=1e-8)


def test_rayleigh_ratios():
    red = beam_cb(3)
    omega, _ = reduced_modes(red.M_e, red.K_e)
    # ratios of about 2 % at the lowest and the highest mode
    w1, w2 = omega[0], omega[-1]
    beta = 2 * 0.02 / (w1 + w2)
    alpha = beta * w1 * w2
    spec = RayleighDamping(alpha=alpha, beta=beta)
    res = _clamped_modes(FlexibleBody("beam", red, structural_damping=spec))
    w = 2 * np.pi * res.frequencies           # |s| = omega_k (proportional damping)
    assert w == pytest.approx(omega, rel=1e-8)
    assert res.damping_ratios == pytest.approx(alpha / (2 * w) + beta * w / 2, abs=1e-8)
    assert res.damping_ratios[0] == pytest.approx(0.02, abs=1e-8)
    assert res.damping_ratios[-1] == pytest.approx(0.02, abs=1e-8)


def test_problems_name_the_body():
    red = beam_cb(3)
    bad = FlexibleBody("beam", red, structural_damping=ModalDamping((0.01, 0.02)))
    assert any("'beam'" in p and f"({red.n_q}), got 2" in p for p in bad.problems())
    neg = FlexibleBody("beam", red, structural_damping=RayleighDamping(alpha=-1.0))
    assert any("alpha must be finite and >= 0 [1/s], got -1.0" in p for p in neg.problems())


def test_modal_construction_on_coupled_coordinates():
    rng = np.random.default_rng(3)
    n = 5
    A = rng.normal(size=(n, n))
    M = A @ A.T + n * np.eye(n)
    B = rng.normal(size=(n, n))
    K = 1e4 * (B @ B.T + np.eye(n))
    zeta = np.array([0.3, 0.01, 0.05, 0.1, 0.02])
    D = ModalDamping(zeta).D_e(M, K)
    assert np.allclose(D, D.T) and np.linalg.eigvalsh(D).min() > -1e-9 * np.abs(D).max()
    Z, E = np.zeros((n, n)), np.eye(n)
    s = np.linalg.eigvals(np.linalg.solve(np.block([[E, Z], [Z, M]]),
                                          np.block([[Z, E], [-K, -D]])))
    s = s[s.imag > 0]
    s = s[np.argsort(np.abs(s))]
    omega = np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real))
    assert np.abs(s) == pytest.approx(omega, rel=1e-10)
    assert -s.real / np.abs(s) == pytest.approx(zeta, abs=1e-10)
    R = RayleighDamping(alpha=2.0, beta=1e-3)
    s = np.linalg.eigvals(np.linalg.solve(np.block([[E, Z], [Z, M]]),
                                          np.block([[Z, E], [-K, -R.D_e(M, K)]])))
    s = s[s.imag > 0]
    s = s[np.argsort(np.abs(s))]
    assert -s.real / np.abs(s) == pytest.approx(2.0 / (2 * omega) + 1e-3 * omega / 2, abs=1e-10)


def test_residual_and_energy_bookkeeping_use_the_new_matrix(kernels):
    """With the frame at rest the elastic rows of the residual change by exactly
    ``D_e qd_e`` when ``qd_e`` is switched on (the velocity terms all carry ``omega'``),
    on both kernel backends; the energy summary names the body as damped."""
    from flexmbs.post.energy import energy_exchanges
    red = beam_cb(3)
    spec = RayleighDamping(alpha=3.0, beta=2e-5)
    body = FlexibleBody("beam", red, structural_damping=spec)
    n = red.n_q
    q = np.concatenate([[0.1, 0.2, 0.3], [1.0, 0.0, 0.0, 0.0], 1e-4 * np.arange(1, n + 1)])
    qd0 = np.zeros(7 + n)
    qd = qd0.copy()
    qd[7:] = np.linspace(-1.0, 1.0, n)
    qdd, g = np.zeros(7 + n), np.zeros(3)
    diff = body.residual(q, qd, qdd, g) - body.residual(q, qd0, qdd, g)
    ref = (3.0 * red.M_e + 2e-5 * red.K_e) @ qd[7:]
    np.testing.assert_allclose(diff[7:], ref, rtol=1e-10, atol=1e-12 * np.abs(ref).max())
    model = fm.System().add(body)
    assert [str(x) for x in energy_exchanges(model)] == \
        ["body 'beam' (structural damping D_e qd_e)"]
