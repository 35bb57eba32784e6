"""The fast outputs of a recorded state against their references: a second formulation of
the same quantities.

* reactions from the entries of the active ``G`` (``-G_j^T lam_j`` on the body of ``Q``,
  all joints in one sum, :mod:`flexmbs.system.output_point`) against the jets of every
  joint re-evaluated (:func:`flexmbs.system.outputs.reactions`);
* joint coordinates of value-only frames against the frame jets;
* the rigid bodies' energies summed at once against body by body;
* the compiled kernels of the reaction wrenches and the rigid bodies' energies
  (:mod:`flexmbs.system.output_point_kernel`, :mod:`flexmbs.bodies.rigid_set_kernel`)
  against their numpy references;
* the rows of one state (:meth:`ConstraintRows.at_state`: one compiled pass) against the
  block-by-block ``G``, ``g_t`` and every row's value;
* the minimum-norm velocity projection by a Cholesky factor of ``G G^T`` against the SVD
  least squares, and its fallback on rank-deficient rows.

On the rigid slider-crank (a drive: ``g_t != 0``; some rows inactive), a flexible
pendulum pinned by a joint whose second marker is the ground (the wrench is then taken
on the first marker's body, negated) and the slider-crank with a point-mass slider.
"""
import numpy as np
import pytest
from test_dense_rows import _flexible_pendulum, _point_mass_slider_crank
from test_slider_crank import model as slider_crank

import flexmbs as fm
import flexmbs.compiled
from flexmbs.integrate.consistent import lstsq, minimum_norm, project_velocities
from flexmbs.system import outputs
from flexmbs.system.assembly import AssembledSystem
from flexmbs.system.output_point import OutputPoint
from flexmbs.system.output_rows import RowsAt


def _ground_second():
    """The flexible pendulum with the pin's markers swapped (``Q`` on the ground)."""
    m = _flexible_pendulum()
    beam = m.bodies[0]
    return fm.System(gravity=(0, -9.81, 0)).add(
        fm.Revolute("pin", beam["pin"], fm.ground, axis="z"))


MODELS = {"slider_crank": lambda: slider_crank()[0], "flexible_pendulum": _flexible_pendulum,
          "ground_second": _ground_second, "point_mass": _point_mass_slider_crank}


def _state(which):
    asm = AssembledSystem(MODELS[which]())
    if which == "slider_crank":
        active = np.arange(asm.n_rows_all) % 5 != 3          # some rows inactive,
        active[[i for i, lab in enumerate(asm.row_labels) if "drive" in lab]] = True
        asm.active = active                                   # the drive's not
    rng = np.random.default_rng(7)
    q = asm.initial_q() + 1e-2 * rng.normal(size=asm.n_q)
    qd = rng.normal(size=asm.n_q)
    lam = 100.0 * rng.normal(size=asm.n_lam)
    return asm, q, qd, lam, 0.37


def _close(a, b, rel=1e-12):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.abs(a - b).max(initial=0.0) <= rel * max(1.0, np.abs(b).max(initial=0.0))


def _within(a, b, tol):
    """``max |a - b| <= tol`` (an absolute bound, e.g. relative to the largest wrench)."""
    return np.abs(np.asarray(a, float) - np.asarray(b, float)).max(initial=0.0) <= tol


@pytest.mark.parametrize("which", sorted(MODELS))
def test_reactions_from_G_equal_the_jets(which):
    asm, q, _, lam, t = _state(which)
    point = OutputPoint(asm.layout, asm.constraint_rows, asm.model.joints)
    ref = outputs.reactions(asm.constraint_rows, q, lam, t)
    # the one-pass rows (dense G, stacked frames when compiled) and a CSR G without frames
    rows = asm.constraint_rows
    sparse = RowsAt(rows.constraint_jacobian(q, t), np.zeros(asm.n_lam), None, None)
    for fast in (point.reactions(q, lam, t), point.reactions(q, lam, t, at=sparse)):
        assert set(fast) == set(ref)
        scale = max(np.abs(np.concatenate(w)).max() for w in ref.values())
        assert scale > 1.0                              # not a test of zeros
        for name, (f, m) in ref.items():     # (a block whose rows are all inactive: 0)
            assert _within(fast[name][0], f, 1e-12 * scale) and \
                _within(fast[name][1], m, 1e-12 * scale), name


@pytest.mark.parametrize("which", sorted(MODELS))
def test_joint_coordinates_and_energy_equal_the_reference(which):
    asm, q, qd, _, t = _state(which)
    point = OutputPoint(asm.layout, asm.constraint_rows, asm.model.joints)
    ref = outputs.joint_coordinates(asm.layout, asm.model.joints, q)
    fast = point.joint_coordinates(q, t)
    assert set(fast) == set(ref) and ref
    for name in ref:
        assert _close(fast[name], ref[name], 1e-14), name
    e_ref = outputs.energy(asm.layout, asm.forces, q, qd, t)
    e_fast = point.energy(asm.forces, q, qd, t)
    assert set(e_fast) == set(e_ref)
    scale = max(abs(v) for v in e_ref.values())
    for k in e_ref:
        assert abs(e_fast[k] - e_ref[k]) <= 1e-13 * scale, k


@pytest.mark.parametrize("which", sorted(MODELS))
def test_compiled_output_kernels_equal_their_references(which, monkeypatch):
    asm, q, qd, lam, t = _state(which)
    point = OutputPoint(asm.layout, asm.constraint_rows, asm.model.joints)
    rows = asm.constraint_rows
    sparse = RowsAt(rows.constraint_jacobian(q, t), np.zeros(asm.n_lam), None, None)
    got = {}
    for kernels in ("compiled", "reference"):
        monkeypatch.setattr(flexmbs.compiled, "KERNELS", kernels)
        got[kernels] = (point.reactions(q, lam, t), point.reactions(q, lam, t, at=sparse),
                        point.rigid.energies(q, qd, asm.layout.gravity))
    (dense, csr, (T, V)), (dense_ref, csr_ref, (T_ref, V_ref)) = got["compiled"], \
        got["reference"]
    scale = max(np.abs(np.concatenate(w)).max() for w in dense_ref.values())
    assert scale > 1.0                                  # not a test of zeros
    for fast, ref in ((dense, dense_ref), (csr, csr_ref)):
        assert set(fast) == set(ref)
        for name, (f, m) in ref.items():
            assert _within(fast[name][0], f, 1e-14 * scale) and \
                _within(fast[name][1], m, 1e-14 * scale), name
    if len(point.rigid.m):
        assert abs(T_ref) + abs(V_ref) > 0.0
    assert abs(T - T_ref) <= 1e-14 * max(abs(T_ref), abs(V_ref)) and \
        abs(V - V_ref) <= 1e-14 * max(abs(T_ref), abs(V_ref))


@pytest.mark.parametrize("which", sorted(MODELS))
def test_rows_of_one_state_equal_the_blockwise_rows(which):
    asm, q, qd, _, t = _state(which)
    rows = asm.constraint_rows
    at = rows.at_state(q, t)
    G = at.G.toarray() if hasattr(at.G, "toarray") else at.G
    parts = rows.rows(q, t, 2)                      # the blockwise jets, order 2
    G_ref = np.zeros((asm.n_lam, asm.n_q))
    r0 = 0
    for bi, V, D, _ in parts:
        G_ref[r0:r0 + len(V), asm.blocks[bi].idx] = D[:, :-1]
        r0 += len(V)
    g_t_ref = np.concatenate([D[:, -1] for _, _, D, _ in parts])
    assert _close(G, G_ref, 1e-13)
    assert _close(at.g_t, g_t_ref, 1e-13)
    if which == "slider_crank":
        assert np.abs(g_t_ref).max() > 1.0             # the drive's rate: not a zero test
    if at.g_all is not None:
        assert _close(at.g_all, rows.rows_all(q, qd, t)[0], 1e-13)
    assert rows.at_state(q, t) is at                    # one evaluation per state


@pytest.mark.parametrize("which", sorted(MODELS))
def test_cholesky_projection_equals_least_squares(which):
    asm, q, qd, _, t = _state(which)
    by_cholesky = project_velocities(asm, q, qd, t)
    by_svd = project_velocities(asm, q, qd, t, method="lstsq")
    assert _close(by_cholesky, by_svd, 1e-12)
    G = asm.constraint_jacobian(q, t).toarray()
    g_t = asm.constraint_time_derivative(q, t)
    if np.linalg.matrix_rank(G) < G.shape[0]:
        return        # redundant rows (no rank test here): the least squares fallback
    assert np.abs(G @ by_cholesky + g_t).max() <= 1e-12 * np.abs(G @ qd + g_t).max()
    # with fixed entries: the change only over the others
    fixed = [0, 1]
    part = project_velocities(asm, q, qd, t, fixed=fixed)
    assert np.array_equal(part[fixed], qd[fixed])
    assert _close(part, project_velocities(asm, q, qd, t, fixed=fixed, method="lstsq"), 1e-10)


def test_minimum_norm_falls_back_on_dependent_rows():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(4, 9))
    b = rng.normal(size=4)
    x = minimum_norm(A, b)
    assert _close(A @ x, b, 1e-13)
    assert _close(x, A.T @ np.linalg.solve(A @ A.T, b), 1e-12)  # minimum norm: in range(A^T)
    # a row repeated: G G^T singular, the least squares minimum-norm solution
    Ar = np.vstack([A, A[1]])
    br = np.append(b, b[1])
    assert _close(minimum_norm(Ar, br), lstsq(Ar, br), 1e-12)
    assert _close(minimum_norm(Ar, br), x, 1e-10)
