"""Materials: validation, Lamé constants, Voigt elasticity."""
import numpy as np
import pytest

from flexmbs.fe.material import MATERIALS, Material, material_from_name


def test_lame_and_voigt():
    """lam = E nu/((1+nu)(1-2nu)), mu = E/(2(1+nu)); C inverts the compliance
    S = [1/E, -nu/E ...; 1/G shear] (engineering shears)."""
    m = Material(E=210e9, nu=0.3, rho=7850.0, name="steel")
    assert m.lam == pytest.approx(210e9 * 0.3 / (1.3 * 0.4))
    assert m.mu == pytest.approx(210e9 / 2.6)
    S = np.zeros((6, 6))
    S[:3, :3] = -m.nu / m.E
    np.fill_diagonal(S[:3, :3], 1 / m.E)
    S[3:, 3:] = np.eye(3) / m.mu
    np.testing.assert_allclose(m.C @ S, np.eye(6), atol=1e-12)


@pytest.mark.parametrize("kw, key", [({"E": -1.0}, "E"), ({"nu": 0.5}, "nu"),
                                     ({"nu": -1.0}, "nu"), ({"rho": 0.0}, "rho")])
def test_validation(kw, key):
    args = {"E": 1e9, "nu": 0.3, "rho": 1000.0, "name": "foam"} | kw
    with pytest.raises(ValueError, match=rf"Material 'foam': {key} must be"):
        Material(**args)


def test_library():
    assert material_from_name("steel") is MATERIALS["steel"]
    kane = material_from_name("aluminium_kane")
    assert (kane.E, kane.nu, kane.rho) == (6.8952e10, 0.3, 2766.67)
    with pytest.raises(ValueError, match="did you mean 'aluminium'"):
        material_from_name("aluminum")


def test_resolve_material_from_the_mesh_file():
    """The mesh file's material is used when none is given, or when the given one has
    the same E, nu, rho; a different one, or none at all, is one line naming both."""
    from types import SimpleNamespace

    from flexmbs.fe.material import resolve_material
    deck = SimpleNamespace(name="STEEL", E=2.1e11, nu=0.3, rho=7850.0 * (1 + 1e-12))
    own = resolve_material(None, deck, "part.inp")
    assert (own.E, own.nu, own.name) == (2.1e11, 0.3, "STEEL")
    assert resolve_material(material_from_name("steel"), deck, "part.inp") == own
    with pytest.raises(ValueError) as err:
        resolve_material(material_from_name("aluminium"), deck, "part.inp",
                         "bodies.rod.material")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("bodies.rod.material: aluminium (E=7e+10 Pa")
    assert "conflicts with *MATERIAL 'STEEL' of the mesh 'part.inp'" in msg
    assert "E, nu, rho differ" in msg
    with pytest.raises(ValueError, match=r"--material: expected a material; the mesh "
                                         r"'beam.msh' defines none"):
        resolve_material(None, None, "beam.msh")
    with pytest.raises(ValueError, match=r"\*MATERIAL 'BAD': Material 'BAD': nu must be"):
        resolve_material(None, SimpleNamespace(name="BAD", E=1.0, nu=0.7, rho=1.0), "p.inp")
