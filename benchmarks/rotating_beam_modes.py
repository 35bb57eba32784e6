"""Rotating cantilever: stiffened flap and lag frequencies against the basis size (not a test).

The beam of ``cases/rotating_beam_modes`` (steel 1 m x 20 mm x 20 mm,
``pendulum_hex27_25x1x1``, clamped face ``pin`` as frame, revolute at the face centre plus
``AngularVelocityDrive``), Craig–Bampton with ``n_modes`` fixed-interface modes plus the
inertial static modes, K2/K3; ``steady_state`` then ``linearize`` / ``modes``.  Errors
against Wright et al., J. Appl. Mech. 49 (1982) 197-202 (flap ``w / sqrt(EI/(m L^4))
= 3.516, 7.360, 13.170`` at ``lam = 0, 6, 12``) and the lag reference
``sqrt(w_flap^2 - lam^2)`` (Hodges & Rutkowski 1981).  ``--full-fe`` adds the full
finite-element model of the same mesh: Newton on the Green–Lagrange force for the
relative equilibrium, then the gyroscopic eigenproblem of its tangent.

    python benchmarks/rotating_beam_modes.py              # table (a few seconds)
    python benchmarks/rotating_beam_modes.py --series     # steady state at lam = 2..12
    python benchmarks/rotating_beam_modes.py --full-fe    # plus the full-FE reference
    python benchmarks/rotating_beam_modes.py --fixture    # the 2 m beam of test_rotating_beam
    python benchmarks/rotating_beam_modes.py --drop-tol 0 --modes 8,24,40   # all 12 static
"""
from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scenarios" / "flexible"))

L, H = 1.0, 0.02
WRIGHT = {0: 3.516, 6: 7.360, 12: 13.170}
N_MODES = (8, 12, 16, 24)


class _NewtonCount(logging.Handler):
    """Counts the residual evaluations that ``steady_state`` logs at DEBUG level."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.n = 0

    def emit(self, record):
        self.n += "iteration" in record.getMessage()


def _w0():
    from flexcase_models import STEEL
    return np.sqrt(STEEL.E * H**4 / 12 / (STEEL.rho * H * H * L**4))


def spinning(body, lam):
    import flexmbs as fm
    from flexmbs.bodies.flexible import FlexibleBody
    from flexmbs.constraints.drives import AngularVelocityDrive
    Omega = lam * _w0()
    beam = FlexibleBody("beam", body, omega0=(0.0, 0.0, Omega))
    model = fm.System(name="rotating_beam_modes")
    model.add(fm.Revolute("hub", fm.ground, beam["pin"], axis="z"))
    model.drives.append(AngularVelocityDrive("drive", joint="hub", omega=Omega))
    return model.assemble()


def flap_and_lag(body, asm, state):
    """First flap (z) and lag (y) frequencies / sqrt(EI/(m L^4)), classified by the tip."""
    from flexcase_models import nearest_node

    from flexmbs.post import linearize, modes
    res = modes(linearize(asm, state), n_modes=6)
    w = 2 * np.pi * res.frequencies / _w0()
    tip = nearest_node(body.points, (L, H / 2, H / 2))
    u = np.array([body.modes[tip] @ res.shapes[7:, k] for k in range(len(w))])
    flap = np.abs(u[:, 2]) > np.abs(u[:, 1])
    return w[flap][0], w[~flap][0]


def reduced_table(lams, counter, n_modes=N_MODES):
    from flexcase_models import MESHES, STEEL, reduce_cb

    from flexmbs.errors import ConvergenceError
    from flexmbs.io.mesh import read_mesh
    from flexmbs.post import steady_state
    mesh = read_mesh(MESHES / "pendulum_hex27_25x1x1.msh")
    print(f"{'n_modes':>7}{'n_q':>5}{'static':>7}{'lam':>5}{'flap':>9}{'lag':>8}"
          f"{'flap err':>10}{'lag err':>9}{'Newton':>8}{'time':>8}")
    for n in n_modes:
        body = reduce_cb(mesh, STEEL, n, interfaces=("pin",), name="beam")
        for lam in lams:
            asm = spinning(body, lam)
            counter.n = 0
            t0 = time.perf_counter()
            try:
                st = steady_state(asm)
            except ConvergenceError as exc:
                print(f"{n:>7}{body.K_e.shape[0]:>5}{body.provenance['n_static_modes']:>7}"
                      f"{lam:>5}  {exc}")
                continue
            dt = time.perf_counter() - t0
            flap, lag = flap_and_lag(body, asm, st)
            err = ""
            if lam in WRIGHT:
                ref_lag = np.sqrt(WRIGHT[lam] ** 2 - lam**2)
                err = (f"{100 * (flap / WRIGHT[lam] - 1):>+9.2f}%"
                       f"{100 * (lag / ref_lag - 1):>+8.2f}%")
            else:
                err = f"{'':>19}"
            print(f"{n:>7}{body.K_e.shape[0]:>5}{body.provenance['n_static_modes']:>7}"
                  f"{lam:>5}{flap:>9.4f}{lag:>8.4f}{err}{counter.n - 1:>8}{dt:>7.2f}s")


def full_fe_table(lams):
    """Full-FE relative equilibrium ``f(u) = Omega^2 M P (X - c + u)`` (``P`` drops z,
    ``c`` the centre of the clamped face) by Newton with the Green–Lagrange tangent, then
    ``(s^2 M + s 2 Omega M J + K_T(u) - Omega^2 M P) v = 0`` by shift-invert Arnoldi."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    from flexcase_models import MESHES, STEEL, nearest_node

    from flexmbs.fe.assemble import assemble
    from flexmbs.fe.stress import green_lagrange_internal_force, green_lagrange_tangent
    from flexmbs.io.mesh import read_mesh
    mesh = read_mesh(MESHES / "pendulum_hex27_25x1x1.msh")
    fe = assemble(mesh, STEEL)
    M, X, dofs = sp.csr_matrix(fe.M), np.asarray(mesh.points), np.asarray(fe.dof_of_node)
    n = M.shape[0]
    clamp = np.unique(np.asarray(mesh.facet_sets["pin"]).ravel())
    free = np.setdiff1d(np.arange(n), dofs[clamp].ravel())
    x0 = np.zeros(n)
    x0[dofs.ravel()] = (X - X[clamp].mean(axis=0)).ravel()
    P = np.zeros(n)
    P[dofs[:, :2].ravel()] = 1.0
    MP = M @ sp.diags(P)
    J = sp.csr_matrix((np.tile([-1.0, 1.0], len(X)), (dofs[:, :2].ravel(),
                                                        dofs[:, [1, 0]].ravel())), (n, n))
    tip = dofs[nearest_node(X, (L, H / 2, H / 2))]
    print(f"{'full FE':>7}{'dofs':>7}{'lam':>5}{'flap':>9}{'lag':>8}{'flap err':>10}{'lag err':>9}")
    for lam in lams:
        Om = lam * _w0()
        u = np.zeros(n)
        for _ in range(50):
            r = green_lagrange_internal_force(fe, u) - Om**2 * (MP @ (x0 + u))
            if np.abs(r[free]).max() <= 1e-9 * max(1.0, Om**2 * np.abs(MP @ x0).max()):
                break
            KT = (green_lagrange_tangent(fe, u) - Om**2 * MP)[free][:, free]
            u[free] -= spla.spsolve(KT.tocsc(), r[free])
        KT = (green_lagrange_tangent(fe, u) - Om**2 * MP)[free][:, free]
        Mf, Cf = M[free][:, free], (2 * Om * M @ J)[free][:, free]
        nf = free.size
        A = sp.bmat([[None, sp.eye(nf)], [-KT, -Cf]], format="csc")
        B = sp.bmat([[sp.eye(nf), None], [None, Mf]], format="csc")
        lu = spla.splu(A)
        op = spla.LinearOperator(A.shape, matvec=lambda x, lu=lu, B=B: lu.solve(B @ x))
        try:
            mu, V = spla.eigs(op, k=16, which="LM", ncv=80, tol=1e-10)
        except spla.ArpackNoConvergence as exc:     # converged pairs are kept
            mu, V = exc.eigenvalues, exc.eigenvectors
        s = 1.0 / mu
        keep = s.imag > 1e-6
        s, V = s[keep], V[:nf, keep]
        order = np.argsort(np.abs(s))
        w = np.abs(s[order]) / _w0()
        U = np.zeros((n, len(order)), complex)
        U[free] = V[:, order]
        flap = np.abs(U[tip[2]]) > np.abs(U[tip[1]])
        f, g = (w[0], w[0]) if lam == 0 else (w[flap][0], w[~flap][0])  # tied at rest
        ref_lag = np.sqrt(WRIGHT[lam] ** 2 - lam**2)
        print(f"{'':>7}{free.size:>7}{lam:>5}{f:>9.4f}{g:>8.4f}"
              f"{100 * (f / WRIGHT[lam] - 1):>+9.2f}%{100 * (g / ref_lag - 1):>+8.2f}%")


def fixture_table():
    """Campbell data of the 2 m x 20 mm x 20 mm beam of ``test_rotating_beam.py`` (hex27
    20x1x1, 8 modes): with the static modes and K2/K3, without static modes, and with
    ``stiffening=False``."""
    import tempfile

    from flexcase_models import STEEL, box_beam_mesh, nearest_node, reduce_cb, rotating_beam_model

    from flexmbs.post import linearize, modes, steady_state
    Lf = 2.0
    w0 = np.sqrt(STEEL.E * H**4 / 12 / (STEEL.rho * H * H * Lf**4))
    with tempfile.TemporaryDirectory() as tmp:
        mesh = box_beam_mesh(Path(tmp) / "beam.msh", (Lf, H, H), (20, 1, 1))
    bodies = {s: reduce_cb(mesh, STEEL, 8, static_modes=s, name="beam") for s in (True, False)}
    print(f"2 m beam, 8 modes + {bodies[True].provenance['n_static_modes']} static modes")
    print(f"{'lam':>5}{'Wright':>8}{'flap':>9}{'lag':>8}{'sqrt(f^2-l^2)':>15}"
          f"{'no static':>11}{'no K2/K3':>10}")

    def first(body, lam, **kw):
        asm = rotating_beam_model(body, lam * w0, **kw).assemble()
        res = modes(linearize(asm, steady_state(asm)), n_modes=6)
        tip = nearest_node(body.points, (Lf, H / 2, H / 2))
        u = np.array([body.modes[tip] @ res.shapes[7:, k] for k in range(6)])
        flap = np.abs(u[:, 2]) > np.abs(u[:, 1])
        w = 2 * np.pi * res.frequencies / w0
        return w[flap][0], w[~flap][0]

    for lam in (0, 3, 6, 9, 12):
        f, g = first(bodies[True], lam)
        f0, _ = first(bodies[False], lam)
        f1, _ = first(bodies[True], lam, stiffening=False)
        ref = f"{WRIGHT[lam]:>8.3f}" if lam in WRIGHT else f"{'-':>8}"
        print(f"{lam:>5}{ref}{f:>9.4f}{g:>8.4f}{np.sqrt(f * f - lam * lam):>15.4f}"
              f"{f0:>11.4f}{f1:>10.4f}")


def main(argv):
    counter = _NewtonCount()
    log = logging.getLogger("flexmbs.post.linearize")
    log.setLevel(logging.DEBUG)
    log.addHandler(counter)
    log.propagate = False
    lams = (2, 4, 6, 8, 10, 12) if "--series" in argv else (0, 6, 12)
    if "--drop-tol" in argv:
        import flexmbs.reduction.modes as modes_module
        modes_module.STATIC_DROP_TOL = float(argv[argv.index("--drop-tol") + 1])
    n_modes = N_MODES
    if "--modes" in argv:
        n_modes = tuple(int(k) for k in argv[argv.index("--modes") + 1].split(","))
    reduced_table(lams, counter, n_modes)
    if "--full-fe" in argv:
        full_fe_table((0, 6, 12))
    if "--fixture" in argv:
        fixture_table()


if __name__ == "__main__":
    main(sys.argv[1:])
