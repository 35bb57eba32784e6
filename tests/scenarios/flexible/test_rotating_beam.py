"""Rotating cantilever: flap and lag frequencies with geometric (centrifugal) stiffening.

Reference: Wright, Smith, Thresher & Wang, "Vibration modes of centrifugally stiffened
beams", J. Appl. Mech. 49 (1982) 197-202, uniform beam, hub radius 0: with
``lam = Omega / sqrt(EI / (m L^4))`` (``m`` mass per length) the first flapwise frequency
``w1 / sqrt(EI / (m L^4)) = 3.516 (lam = 0), 7.360 (lam = 6), 13.170 (lam = 12)``.  The
in-plane (lag) frequency of the same beam in the rotating frame satisfies
``w_lag^2 = w_flap^2 - Omega^2`` (e.g. Hodges & Rutkowski, AIAA J. 19 (1981) 1459).

Model: steel square beam 2 m x 20 mm x 20 mm (L/h = 100), hex27 20x1x1, Craig–Bampton
with the clamp as frame, 8 fixed-interface modes plus the inertial static modes
(THEORY §8.1), revolute to ground with ``AngularVelocityDrive``; relative equilibrium by
``steady_state``, then ``linearize`` / ``modes``; Campbell table over ``lam``.
"""
import numpy as np
import pytest
from flexcase_models import (
    STEEL, box_beam_mesh, nearest_node, reduce_cb, rotating_beam_model,
)

from flexmbs.post import campbell, linearize, modes, steady_state

L, H = 2.0, 0.02
EI = STEEL.E * H**4 / 12
M_L = STEEL.rho * H * H
W0 = np.sqrt(EI / (M_L * L**4))                      # [rad/s]
WRIGHT = {0: 3.516, 6: 7.360, 12: 13.170}


@pytest.fixture(scope="module")
def beam(tmp_path_factory):
    mesh = box_beam_mesh(tmp_path_factory.mktemp("rot") / "beam.msh", (L, H, H), (20, 1, 1))
    with_static = reduce_cb(mesh, STEEL, 8, static_modes=True, name="beam")
    without = reduce_cb(mesh, STEEL, 8, static_modes=False, name="beam")
    return with_static, without


def classify(body, res):
    """'flap' (out of plane, z) or 'lag' (in plane, y) from the tip displacement."""
    tip = nearest_node(body.points, (L, H / 2, H / 2))
    kinds = []
    for k in range(res.shapes.shape[1]):
        u = body.modes[tip] @ res.shapes[7:, k]
        kinds.append("flap" if abs(u[2]) > abs(u[1]) else "lag")
    return kinds


def first(body, Omega, **kw):
    asm = rotating_beam_model(body, Omega, **kw).assemble()
    st = steady_state(asm)
    res = modes(linearize(asm, st), n_modes=6)
    kinds = classify(body, res)
    w = 2 * np.pi * res.frequencies
    return w[kinds.index("flap")], w[kinds.index("lag")], st


@pytest.mark.parametrize("lam", [0, 6, 12])
def test_wright_flap_and_lag(beam, lam):
    body = beam[0]
    Omega = lam * W0
    w_flap, w_lag, st = first(body, Omega)
    assert w_flap / W0 == pytest.approx(WRIGHT[lam], rel=0.02)
    assert w_lag**2 == pytest.approx(w_flap**2 - Omega**2, rel=0.02)
    # the steady state stretches the beam (static modes carry it) and is consistent
    assert st.qd[7:] == pytest.approx(0.0)
    if lam:
        assert np.abs(st.q[7:]).max() > 0


def test_no_stiffening_without_static_modes(beam):
    """THEORY §8.1: a basis without axial content shows (almost) no stiffening; the
    stiffening=False body shows none at all."""
    _, without = beam
    Omega = 12 * W0
    w_flap, _, _ = first(without, Omega)
    assert w_flap / W0 < 0.5 * WRIGHT[12]
    w_flap_lin, _, _ = first(beam[0], Omega, stiffening=False)
    assert w_flap_lin / W0 < 0.5 * WRIGHT[12]


def test_campbell_table(beam):
    body = beam[0]
    lams = np.array([0.0, 3.0, 6.0, 9.0, 12.0])
    table = campbell(lambda Om: rotating_beam_model(body, Om), lams * W0, n_modes=4,
                     name="Omega [rad/s]")
    assert table.frequencies.shape == (5, 4)
    # the flap frequency (2nd lowest at speed, tied at rest) increases monotonically
    flap = np.nanmax(table.frequencies[:, :2], axis=1)
    assert np.all(np.diff(flap) > 0)
    assert 2 * np.pi * flap[-1] / W0 == pytest.approx(13.170, rel=0.02)
    assert len(table.rows()) == 5


def test_plot_campbell(beam, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    from flexmbs.post import CampbellTable, plot_campbell
    t = CampbellTable(np.array([0.0, 10.0]), np.array([[1.0, 2.0], [1.5, 3.0]]),
                      np.zeros((2, 2)), "Omega [rad/s]")
    ax = plot_campbell(t)
    ax.figure.savefig(tmp_path / "campbell.png")
    assert (tmp_path / "campbell.png").stat().st_size > 0
