"""Case keys of the structural damping chosen at simulation time (``damping_ratios``,
``rayleigh_alpha``, ``rayleigh_beta`` of a flexible body) and of the nonlinear force laws.

References: the built body's ``D_e`` equals the closed form ``alpha M_e + beta K_e`` of its
own reduced matrices, and per-mode ratios give ``Psi^T D_e Psi = diag(2 zeta omega)``
on the eigenvectors of ``(K_e, M_e)`` (scipy); mistakes are one line naming the key
(``flexmbs check`` exits 2).
"""
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla

from flexmbs.case import build, load_case
from flexmbs.cli.main import main
from flexmbs.errors import CaseError
from flexmbs.io.bodyfile import save_body

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bodies"))
from flexcases import beam_cb

CASE = """
[[bodies]]
name = "beam"
type = "flexible"
body_file = "beam.h5"
{extra}

[[joints]]
name = "clamp"
type = "fixed"
first = "ground"
second = "beam.clamp"

[solver]
t_end = 0.01
dt = 1e-3
"""


@pytest.fixture(scope="module")
def body_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("body") / "beam.h5"
    save_body(path, beam_cb(3, damping=0.02))
    return path


def _case(tmp_path, body_file, extra):
    (tmp_path / "beam.h5").write_bytes(body_file.read_bytes())
    path = tmp_path / "case.toml"
    path.write_text(CASE.format(extra=extra))
    return path


def test_rayleigh_and_modal_keys_make_the_damping(tmp_path, body_file):
    red = beam_cb(3, damping=0.02)
    beam = build(load_case(_case(tmp_path, body_file, "rayleigh_alpha = 3.0\n"
                                 "rayleigh_beta = 2e-5"))).flexible["beam"]
    np.testing.assert_allclose(beam.D_e, 3.0 * red.M_e + 2e-5 * red.K_e, rtol=1e-12)
    zeta = np.linspace(0.01, 0.09, red.n_q)
    beam = build(load_case(_case(tmp_path, body_file, "damping_ratios = ["
                                 + ", ".join(f"{z:.17g}" for z in zeta) + "]"))).flexible["beam"]
    lam, Psi = sla.eigh(red.K_e, red.M_e)
    np.testing.assert_allclose(Psi.T @ beam.D_e @ Psi, np.diag(2 * zeta * np.sqrt(lam)),
                               rtol=1e-9, atol=1e-9 * np.sqrt(lam).max())
    default = build(load_case(_case(tmp_path, body_file, ""))).flexible["beam"]
    assert np.array_equal(default.D_e, red.D_e)            # the body file's


@pytest.mark.parametrize("extra, needles", [
    ("damping_ratios = [0.01, 0.02]", ["bodies[0].damping_ratios", "expected 9 ratios",
                                       "got 2"]),
    ("damping_ratios = [0.01]\nrayleigh_beta = 1e-4", ["bodies[0].damping_ratios",
                                                       "got both"]),
    ("rayleigh_alpha = -1.0", ["bodies[0].rayleigh_alpha", "a value >= 0 [1/s]"]),
])
def test_damping_key_mistakes_are_one_line(tmp_path, capsys, body_file, extra, needles):
    path = _case(tmp_path, body_file, extra)
    assert main(["check", str(path)]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if "error" in x]
    assert len(err) == 1 and path.name in err[0], err
    for n in needles:
        assert n in err[0], (n, err)
    with pytest.raises(CaseError):
        build(load_case(path))


FORCE = """
[[bodies]]
name = "m"
type = "point_mass"
m = 1.0
position = [1.0, 0.0, 0.0]

[solver]
t_end = 0.01
dt = 1e-3

[[forces]]
name = "f"
{force}
"""


@pytest.mark.parametrize("force, needles", [
    ('type = "nonlinear_spring"\nfirst = "ground"\nsecond = "m"\ndeflection = [0.0, 0.0]\n'
     'force = [0.0, 1.0]', ["forces[0]", "NonlinearSpring 'f'", "increase strictly"]),
    ('type = "nonlinear_spring"\nfirst = "ground"\nsecond = "m"\ndeflection = [0.0, 1.0]\n'
     'force = [0.0, 1.0, 2.0]', ["forces[0]", "got 2 and 3"]),
    ('type = "nonlinear_rotational_spring"\njoint = "x"\nangle = [0.0]\nmoment = [0.0]',
     ["forces[0].joint"]),
    ('type = "rope"\nfirst = "ground"\nsecond = "m"\nsmoothing = -1.0',
     ["forces[0].smoothing", "a value >= 0 [m]"]),
    ('type = "nonlinear_spring"\nfirst = "ground"\nsecond = "m"\nforce = [0.0, 1.0]',
     ["forces[0].deflection", "missing required key"]),
])
def test_force_law_mistakes_are_one_line(tmp_path, capsys, force, needles):
    path = tmp_path / "case.toml"
    path.write_text(FORCE.format(force=force))
    assert main(["check", str(path)]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if "error" in x]
    assert len(err) == 1, err
    for n in needles:
        assert n in err[0], (n, err)
