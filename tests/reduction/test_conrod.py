"""Craig--Bampton end to end on the shipped connecting rod (tet10, curved holes)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from flexmbs.reduction import C_r, G_e, G_r, I, InterfaceSpec, ReductionSettings, c
from flexmbs.reduction import mass_matrix, reduce_model

from .conftest import MESHES, STEEL


@lru_cache(maxsize=None)
def _conrod():
    from flexmbs.fe.assemble import assemble
    from flexmbs.io.mesh import read_mesh
    return assemble(read_mesh(MESHES / "conrod_tet10.msh"), STEEL)


def _tet10_volume(points: np.ndarray, cells: np.ndarray) -> float:
    """Volume of isoparametric tet10 cells (meshio/VTK node order) by a degree-3 exact
    rule of our own (det J is cubic), independent of scikit-fem."""
    # Keast 5-point rule (degree 3) on the unit tetrahedron, weights sum to 1/6
    a, b = 0.5, 1.0 / 6.0
    xi = np.array([[0.25, 0.25, 0.25], [a, b, b], [b, a, b], [b, b, a], [b, b, b]])
    w = np.array([-4.0 / 5.0, 9.0 / 20.0, 9.0 / 20.0, 9.0 / 20.0, 9.0 / 20.0]) / 6.0
    vol = 0.0
    for (r, s, t), wg in zip(xi, w):
        L = np.array([1.0 - r - s - t, r, s, t])
        dL = np.array([[-1.0, -1.0, -1.0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
        # VTK tet10: corners 0-3, edges (0,1) (1,2) (0,2) (0,3) (1,3) (2,3)
        dN = [(4 * L[i] - 1) * dL[i] for i in range(4)]
        for i, j in ((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)):
            dN.append(4 * (L[i] * dL[j] + L[j] * dL[i]))
        J = np.einsum("eai,aj->eij", points[cells], np.array(dN))
        vol += wg * np.abs(np.linalg.det(J)).sum()
    return vol


def _plate_area() -> float:
    """Analytic outline of meshes/make_meshes.py::conrod: two bosses (R = 0.025) joined by
    a 0.4 x 0.02 web, minus two holes (r = 0.01)."""
    R, r, d, half = 0.025, 0.01, 0.4, 0.01
    y = np.linspace(-half, half, 20001)
    overlap = np.trapz(np.sqrt(R**2 - y**2), y)   # web inside one boss
    return 2 * np.pi * R**2 + d * 2 * half - 2 * overlap - 2 * np.pi * r**2


@pytest.mark.parametrize("kind,frame", [("rbe2", "interface:hole_A"),
                                        ("rbe3", "interface:hole_A"),
                                        ("rbe2", "mean_axis"), ("rbe3", "mean_axis")])
def test_conrod_craig_bampton(kind, frame):
    fe = _conrod()
    itfs = (InterfaceSpec("hole_A", kind), InterfaceSpec("hole_B", kind))
    body = reduce_model(fe, ReductionSettings(n_modes=6, interfaces=itfs, frame=frame),
                        name="rod")
    n_q = len(body.omega)
    assert n_q == 6 + (6 if frame != "mean_axis" else 12) - (0 if frame != "mean_axis" else 6)
    assert np.all(np.isfinite(body.omega)) and np.all(body.omega > 0)
    f = body.omega / (2 * np.pi)
    assert f.min() > 10.0                              # no rigid content left
    # mass = rho * volume of the mesh (own quadrature) and of the drawing (curved holes)
    vol = _tet10_volume(np.asarray(fe.mesh.points), np.asarray(fe.mesh.cells))
    assert body.m == pytest.approx(STEEL.rho * vol, rel=1e-10)
    assert vol == pytest.approx(_plate_area() * 0.01, rel=2e-3)
    # centre of mass on the axis of symmetry y = 0, mid-thickness z = 0.005, x = 0.2
    np.testing.assert_allclose(c(body, np.zeros(n_q)), [0.2, 0.0, 0.005], atol=1e-6)
    # THEORY §2.8.7 identities by finite differences
    rng = np.random.default_rng(3)
    q = rng.standard_normal(n_q) * 1e-3 / np.sqrt(body.m)
    qd = rng.standard_normal(n_q)
    h = 1e-5

    def ddt(fun):
        return (fun(q + h * qd) - fun(q - h * qd)) / (2 * h)

    Id, Gr = ddt(lambda x: I(body, x)), G_r(body, q, qd)
    assert np.abs(Id - 0.5 * (Gr + Gr.T)).max() <= 1e-7 * np.abs(Id).max()
    Crd = ddt(lambda x: C_r(body, x))
    assert np.abs(G_e(body, qd) - 2 * Crd).max() <= 1e-7 * np.abs(Crd).max()
    np.testing.assert_allclose(body.m * ddt(lambda x: c(body, x)), body.C_t.T @ qd,
                               rtol=1e-7, atol=1e-9 * np.sqrt(body.m) * np.abs(qd).max())
    Mfull = mass_matrix(body, q)
    np.testing.assert_allclose(Mfull, Mfull.T, atol=1e-12 * np.abs(Mfull).max())
    assert np.linalg.eigvalsh(Mfull).min() > 0
    np.testing.assert_allclose(body.M_e, np.eye(n_q), atol=1e-9)
    np.testing.assert_allclose(body.K_e, np.diag(body.omega**2), atol=1e-8 * body.omega.max()**2)
    if frame == "mean_axis":
        assert np.abs(body.C_t).max() < 1e-10 * np.sqrt(body.m)
