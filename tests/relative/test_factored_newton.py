"""A recursive run's Newton solver holds Python objects in PETSc (a shell matrix and a
Python preconditioner, ``flexmbs/integrate/_shell.py``).  An integrator that is never
destroyed (the exported ``GeneralizedAlpha`` used directly, or a run interrupted by
Ctrl-C) must still let the process exit cleanly: before, PETSc's finalisation at exit
touched the released Python objects and the process died with SEGV (exit code 59)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
from flexmbs.relative.dae import RelativeDAE
from flexmbs.integrate import GeneralizedAlpha, consistent_initial_conditions
from tests.relative.models import four_bar
dae = RelativeDAE(four_bar().validate(), "recursive")
q0 = dae.initial_q(); dae.drop_redundant(q0)
init = consistent_initial_conditions(dae, q0, dae.initial_qd(), 0.0)
integ = GeneralizedAlpha(dae, rho_inf=0.9)
integ.run(init.q, init.qd, init.qdd, init.lam, 0.0, 0.02, h=2e-3)
assert integ.newton.snes.getKSP().getPC().getType() == "python"   # the factored route
print("done, not destroyed")
"""


@pytest.mark.parametrize("interrupted", [False, True])
def test_an_integrator_never_destroyed_exits_cleanly(interrupted):
    script = SCRIPT
    if interrupted:                     # Ctrl-C inside the Newton matrix of a step
        script = script.replace("integ.run(", "import flexmbs.relative.dae as D\n"
                                "calls = [0]\n"
                                "orig = D.RelativeDAE.newton_factor\n"
                                "def stop(self, *a):\n"
                                "    calls[0] += 1\n"
                                "    if calls[0] == 2: raise KeyboardInterrupt\n"
                                "    return orig(self, *a)\n"
                                "D.RelativeDAE.newton_factor = stop\n"
                                "try:\n    integ.run(")
        script = script.replace("h=2e-3)\n", "h=2e-3)\nexcept KeyboardInterrupt:\n"
                                "    print('interrupted')\n", 1)
        script = script.replace('assert integ.newton', '# assert integ.newton')
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert ("interrupted" if interrupted else "done, not destroyed") in out.stdout


def test_linear_solver_options_are_reported_unused(caplog):
    """The recursive formulation solves its Newton matrix itself: a PETSc linear-solver
    option cannot act on it, so the run says so in one line (and still runs, with the
    same result as without the option) instead of ignoring it silently."""
    import logging

    import numpy as np

    import flexmbs as fm
    from tests.relative.models import four_bar

    def run(**kw):
        model = four_bar()
        model.formulation = "recursive"
        return fm.simulate(model, 0.05, 2e-3, output_dt=0.01, **kw)

    plain = run()
    with caplog.at_level(logging.WARNING, logger="flexmbs.integrate"):
        given = run(petsc_options={"ksp_type": "gmres", "pc_type": "jacobi"})
    said = [r.getMessage() for r in caplog.records if "not used" in r.getMessage()]
    assert len(said) == 1 and "ksp_type" in said[0] and "pc_type" in said[0]
    assert np.array_equal(plain.q, given.q)


def test_a_singular_factor_is_a_newton_failure(monkeypatch):
    """A factor whose solve fails (numpy's LinAlgError: singular) gives a non-finite
    Newton increment, so the run ends as a convergence failure with its one-line
    reason, not with numpy's traceback."""
    import numpy as np

    import flexmbs as fm
    from flexmbs.relative import dae as relative_dae
    from tests.relative.models import four_bar

    class Singular:
        def solve(self, rhs):
            raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(relative_dae.RelativeDAE, "newton_factor",
                        lambda self, *a: Singular())
    model = four_bar()
    model.formulation = "recursive"
    with pytest.raises(fm.ConvergenceError):
        fm.simulate(model, 0.01, 2e-3)


def test_a_singular_joint_block_is_an_arithmetic_failure():
    """Euler parameters of a joint at zero make its local saddle singular: the factor
    says so as a FloatingPointError (which Newton reports as a failed matrix in one
    line), not numpy's LinAlgError."""
    import numpy as np

    from flexmbs.relative.dae import RelativeDAE
    from flexmbs.relative.kinematics import forward
    from flexmbs.relative.newton_factor import SchurFactor
    from tests.relative.models import spherical_chain

    dae = RelativeDAE(spherical_chain(3).validate(), "recursive")
    beta = dae.initial_q()
    beta[dae.tree.e_rows[1]] = 0.0
    kin = forward(dae.tree, beta, np.zeros(dae.n_q))
    with pytest.raises(FloatingPointError, match="singular joint block"):
        SchurFactor(dae.tree, kin, beta, np.zeros((0, dae.n_q)), 1.0)
