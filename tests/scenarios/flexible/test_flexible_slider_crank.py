"""Flexible slider-crank: rigid crank, Craig–Bampton connecting rod, rigid slider.

The crank (a = 0.1 m) is driven at 150 rad/s; the steel rod is ``meshes/conrod_tet10.msh``
(pins 0.4 m apart, RBE2 interfaces ``hole_A``, ``hole_B``, frame at hole A, plus the
inertial static modes).  Checks:

* slider position against the rigid-mechanism closed form
  ``x_B = a cos(phi) + sqrt(l^2 - a^2 sin^2(phi))`` (any kinematics text, e.g.
  Shabana, *Computational Dynamics*, 2010, slider-crank), to the elastic scale;
* the rod's mid-span deflection (relative to the chord of the two pins, body frame)
  converges as fixed-interface modes are added (the sequence 2/4/8/12 modes over three
  revolutions is in ``benchmarks/flexible_steps.py --crank`` and docs/validation_flexible.md);
  the size matches the Euler–Bernoulli mid-span deflection ``5 q0 l^4 / (768 EI)`` of a
  pinned-pinned web under the triangular transverse inertia load that peaks at the
  crank pin, ``q0 = rho A a omega^2``, within a factor 2.
"""
import numpy as np
import pytest
from flexcase_models import MESHES, STEEL, midspan_deflection, reduce_cb, slider_crank_model

import flexmbs as fm
from flexmbs.io.mesh import read_mesh

OMEGA, A_CRANK, L_ROD = 150.0, 0.1, 0.4
REV = 2 * np.pi / OMEGA


@pytest.fixture(scope="module")
def runs():
    mesh = read_mesh(MESHES / "conrod_tet10.msh")
    out = {}
    for n in (2, 4):
        # low stresses: the linear elastic force suffices (K2, K3 cost n_q^4 here)
        body = reduce_cb(mesh, STEEL, n, interfaces=("hole_A", "hole_B"), name="rod",
                         stiffening=False)
        res = fm.simulate(slider_crank_model(body, stiffening=False), REV / 2, 2e-4,
                          rho_inf=0.8)
        out[n] = (body, res)
    return out


def test_slider_follows_rigid_kinematics(runs):
    body, res = runs[4]
    phi = OMEGA * res.t
    x_ref = A_CRANK * np.cos(phi) + np.sqrt(L_ROD**2 - (A_CRANK * np.sin(phi))**2)
    R_A = body.marker("hole_A").R
    x = res.body_q("slider")[:, 0] - (R_A[0] - A_CRANK)
    assert np.abs(x - x_ref).max() < 5e-5          # elastic rod shortening ~ 1e-5 m


def test_midspan_deflection_converges_in_modes(runs):
    peaks = {}
    for n, (body, res) in runs.items():
        d = midspan_deflection(body, res.body_q("rod")[:, 7:])
        assert np.all(np.isfinite(d))
        peaks[n] = np.abs(d).max()
    assert peaks[4] == pytest.approx(peaks[2], rel=0.05)
    # Euler-Bernoulli order of magnitude: web 20 x 10 mm, in-plane bending
    w, t = 0.02, 0.01
    q = STEEL.rho * w * t * A_CRANK * OMEGA**2
    d_eb = 5 * q * L_ROD**4 / (768 * STEEL.E * t * w**3 / 12)
    assert 0.5 * d_eb < peaks[4] < 2.0 * d_eb


def test_midspan_deflection_converges_in_mesh():
    """Mesh refinement (convergence as reference): the shipped conrod meshes, 2,864 and
    17,432 tet10 nodes, 4 Craig-Bampton modes, one crank revolution at 150 rad/s: peak
    mid-span deflection 0.48483 mm and 0.48519 mm (0.07 % apart)."""
    rev = 2 * np.pi / OMEGA
    peaks = []
    for name in ("conrod_tet10.msh", "conrod_tet10_fine.msh"):
        body = reduce_cb(read_mesh(MESHES / name), STEEL, 4, interfaces=("hole_A", "hole_B"),
                         name="rod", stiffening=False)
        res = fm.simulate(slider_crank_model(body, stiffening=False), rev, 2e-4, rho_inf=0.8)
        peaks.append(np.abs(midspan_deflection(body, res.body_q("rod")[:, 7:])).max())
    assert peaks[1] == pytest.approx(peaks[0], rel=0.01)
    assert 3e-4 < peaks[1] < 7e-4
