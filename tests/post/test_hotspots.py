"""Hot spots: principal stresses, von Mises, rainflow count and Miner damage.

References: ASTM E1049-85 (2017), section 5.4.4 and its Fig. 6 / Table 4, the worked
rainflow example of the load history -2, 1, -3, 5, -1, 3, -4, 4, -2 (ranges 3, 4, 6, 8, 9
with counts 0.5, 1.5, 0.5, 1.0, 0.5, counted by hand in the standard); Miner's rule with
a Basquin curve in closed form; the von Mises stress of the principal stresses as a
second formulation of the Voigt formula; Mohr's circle for a plane stress state."""
import numpy as np
import pytest

from flexmbs.fe.stress import von_mises
from flexmbs.post.hotspots import (
    HotSpot, SNCurve, miner_damage, nearest_node, principal_stresses, rainflow_cycles,
    signed_von_mises, stress_history,
)
from flexmbs.post.recovery import nodal_stress

ASTM_HISTORY = [-2.0, 1.0, -3.0, 5.0, -1.0, 3.0, -4.0, 4.0, -2.0]
ASTM_TABLE = {3.0: 0.5, 4.0: 1.5, 6.0: 0.5, 8.0: 1.0, 9.0: 0.5}


def test_rainflow_matches_the_astm_e1049_hand_count():
    S, n = rainflow_cycles(ASTM_HISTORY)
    assert dict(zip(S.tolist(), n.tolist(), strict=True)) == ASTM_TABLE


def test_miner_damage_of_the_astm_history_in_closed_form():
    """D = sum n_j S_j^m / C with the hand-counted cycles (stresses in MPa * 1e6)."""
    sn = SNCurve(C=1e12 * (1e6) ** 3, m=3.0)
    D = miner_damage(np.array(ASTM_HISTORY) * 1e6, sn)
    ref = sum(n * S ** 3 for S, n in ASTM_TABLE.items()) / 1e12
    assert D == pytest.approx(ref, rel=1e-12)


def test_constant_amplitude_damage_is_n_over_N():
    """n full cycles of amplitude S_a: D = n (2 S_a)^m / C; S-N curve through a point:
    N(S_ref) = N_ref."""
    sn = SNCurve.through(S_ref=2e8, N_ref=2e6, m=5.0)
    assert sn.cycles_to_failure(2e8) == pytest.approx(2e6, rel=1e-12)
    S_a, n = 1.5e8, 40
    signal = S_a * np.cos(np.pi * np.arange(2 * n + 1))      # +S_a, -S_a, ..., +S_a
    assert miner_damage(signal, sn) == pytest.approx(n * (2 * S_a) ** 5 / sn.C, rel=1e-12)
    assert miner_damage(np.full(10, S_a), sn) == 0.0          # no cycle, no damage


def test_sn_curve_refuses_nonpositive_constants():
    with pytest.raises(ValueError, match="C > 0"):
        SNCurve(C=-1.0, m=3.0)


def test_principal_stresses_of_plane_stress_by_mohrs_circle():
    """sxx = 80, syy = -20, sxy = 30 MPa: s = 30 +- sqrt(50^2 + 30^2), s_zz = 0."""
    sig = np.array([80.0, -20.0, 0.0, 0.0, 0.0, 30.0]) * 1e6
    R = np.hypot(50.0, 30.0)
    assert principal_stresses(sig) == pytest.approx(np.array([30 + R, 0.0, 30 - R]) * 1e6)


def test_von_mises_of_principal_stresses_equals_the_voigt_formula():
    rng = np.random.default_rng(3)
    sig = rng.normal(size=(50, 6)) * 1e7
    s1, s2, s3 = np.moveaxis(principal_stresses(sig), -1, 0)
    ref = np.sqrt(0.5 * ((s1 - s2) ** 2 + (s2 - s3) ** 2 + (s3 - s1) ** 2))
    assert von_mises(sig) == pytest.approx(ref, rel=1e-12)
    assert np.all(s1 >= s2) and np.all(s2 >= s3)


def test_signed_von_mises_follows_the_dominant_principal_stress():
    """Uniaxial tension / compression: +|s|, -|s| (von Mises of uniaxial stress is |s|)."""
    sig = np.array([[120e6, 0, 0, 0, 0, 0], [-120e6, 0, 0, 0, 0, 0], [0, 0, -5e6, 0, 0, 0]])
    assert signed_von_mises(sig) == pytest.approx([120e6, -120e6, -5e6])


def test_nearest_node_snaps_to_the_closest_grid_point():
    g = np.linspace(0.0, 1.0, 11)
    X = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    i = nearest_node(X, [0.31, 0.68, 0.96])
    assert X[i] == pytest.approx([0.3, 0.7, 1.0])


class _Body:
    """A reduced body with random stress modes (only what recovery reads)."""

    def __init__(self, rng, N=30, n_q=4):
        self.name = "b"
        self.points = rng.normal(size=(N, 3))
        self.stress_modes = rng.normal(size=(N, 6, n_q)) * 1e8
        self.modes = rng.normal(size=(N, 3, n_q))


def test_history_equals_the_recovered_field_at_its_nodes():
    """Second formulation: the whole nodal field S q_e of post.recovery at the nodes."""
    rng = np.random.default_rng(7)
    body = _Body(rng)
    t = np.linspace(0.0, 0.1, 25)
    q_e = rng.normal(size=(25, 4)) * 1e-3
    spot = HotSpot("h", "b", [3, 17, 29], SNCurve.through(2e8, 2e6, 5.0))
    h = stress_history(spot, body, t, q_e)
    full = nodal_stress(body, q_e)
    assert h.stress == pytest.approx(full[:, [3, 17, 29]], rel=1e-12)
    assert h.von_mises == pytest.approx(von_mises(full)[:, [3, 17, 29]], rel=1e-12)
    assert h.principal.shape == (25, 3, 3) and h.damage.shape == (3,)
    k = int(np.argmax(h.damage))
    assert h.damage[k] == pytest.approx(miner_damage(signed_von_mises(full[:, spot.nodes[k]]),
                                                     spot.sn_curve))
    assert h.worst_node == spot.nodes[np.argmax(von_mises(full)[:, spot.nodes].max(axis=0))]


def test_history_refuses_node_ids_outside_the_mesh():
    body = _Body(np.random.default_rng(1))
    with pytest.raises(ValueError, match=r"hot spot 'h': node ids must lie in 0\.\.29"):
        stress_history(HotSpot("h", "b", [30]), body, [0.0], np.zeros((1, 4)))
