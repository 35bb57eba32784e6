"""Abaqus decks read as Abaqus means them (flexmbs.io.abaqus_deck): element names mapped
to formulations or refused in one line by name, the deck's *MATERIAL used (in the units
of the mesh) and a conflicting --material refused with exit status 2."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.cli.main import main
from flexmbs.errors import MeshError
from flexmbs.io.abaqus_deck import read_deck
from flexmbs.io.mesh import read_mesh

HEX = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1.0]])
#: C3D20 mid-edge nodes 9..20: bottom 12 23 34 41, top 56 67 78 85, vertical 15 26 37 48
HEX20_EDGES = ((0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
               (0, 4), (1, 5), (2, 6), (3, 7))
WEDGE = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1.0]])
STEEL_MM = ["*SOLID SECTION, ELSET=PART, MATERIAL=STEEL", "*MATERIAL, NAME=STEEL",
            "*ELASTIC", "210000., 0.3", "*DENSITY", "7.85e-9"]


def deck(tmp_path, X, abaqus_type, tail=STEEL_MM, name="part.inp"):
    lines = ["*HEADING", "*NODE"] + [f"{i + 1}, {x}, {y}, {z}" for i, (x, y, z) in
                                     enumerate(np.asarray(X) * 10.0)]
    lines += [f"*ELEMENT, TYPE={abaqus_type}, ELSET=PART",
              "1, " + ", ".join(str(i + 1) for i in range(len(X)))]
    path = tmp_path / name
    path.write_text("\n".join(lines + list(tail)) + "\n")
    return path


def _one_line(msg: str, *needles: str) -> None:
    assert "\n" not in msg
    for n in needles:
        assert n in msg, f"{n!r} not in {msg!r}"


@pytest.mark.parametrize("abaqus_type, why", [
    ("C3D8R", "reduced integration with hourglass control"),
    ("C3D8I", "incompatible modes"), ("C3D8H", "hybrid"), ("C3D10M", "modified tetrahedron"),
    ("C3D15", "15-node wedge is not provided by scikit-fem"),
    ("C3D5", "pyramid is not provided by scikit-fem")])
def test_unsupported_abaqus_elements_refused_by_name(tmp_path, abaqus_type, why):
    """Refused in one line naming the file, the line, the Abaqus element and why; meshio
    would have read C3D8R and C3D8I as plain hexahedra."""
    k = {"C3D15": 15, "C3D5": 5, "C3D10M": 10}.get(abaqus_type, 8)
    X = np.random.default_rng(0).random((k, 3))
    with pytest.raises(MeshError) as err:
        read_mesh(deck(tmp_path, X, abaqus_type))
    _one_line(str(err.value), "part.inp", "*ELEMENT (line", f"element type {abaqus_type} is "
              "not supported", why, "expected one of C3D4, C3D10, C3D8, C3D20, C3D20R, C3D6")


def test_c3d20_and_c3d6_read_as_hex20_and_wedge6(tmp_path):
    """C3D20 (Abaqus node order = meshio's hexahedron20) and C3D6 read with the volume
    of the unit cube (10 mm) and of the half cube: rho V from the deck's steel."""
    X20 = np.vstack([HEX] + [0.5 * (HEX[a] + HEX[b]) for a, b in HEX20_EDGES])
    for X, kind, V in ((X20, "C3D20", 1e-6), (WEDGE, "C3D6", 0.5e-6)):
        mesh = read_mesh(deck(tmp_path, X, kind), scale=1e-3)
        assert mesh.cell_type == {"C3D20": "hex20", "C3D6": "wedge6"}[kind]
        assert mesh.formulation == "full"
        from flexmbs.fe.assemble import assemble
        from flexmbs.fe.material import resolve_material
        fe = assemble(mesh, resolve_material(None, mesh.material, mesh.source))
        assert fe.M.sum() / 3 == pytest.approx(7850.0 * V, rel=1e-12)


def test_material_in_units_of_the_mesh(tmp_path):
    """N-mm-t deck: E 210000 MPa -> 2.1e11 Pa, rho 7.85e-9 t/mm^3 -> 7850 kg/m^3; the same
    deck in metres keeps the numbers."""
    path = deck(tmp_path, HEX, "C3D8")
    d = read_deck(path, scale=1e-3)
    assert d.element_types == ("C3D8",) and d.formulations == {"hex8": "bbar"}
    assert (d.material.name, d.material.nu) == ("STEEL", 0.3)
    assert d.material.E == pytest.approx(2.1e11, rel=1e-15)
    assert d.material.rho == pytest.approx(7850.0, rel=1e-12)
    assert read_deck(path).material.E == 210000.0


@pytest.mark.parametrize("tail, needles", [
    (["*MATERIAL, NAME=STEEL", "*ELASTIC", "210000., 0.3"], ["*MATERIAL 'STEEL'",
                                                            "expected an *DENSITY option"]),
    (["*MATERIAL, NAME=STEEL", "*ELASTIC, TYPE=ENGINEERING CONSTANTS", "1, 2, 3",
      "*DENSITY", "1"], ["*ELASTIC (line", "TYPE=ENGINEERING CONSTANTS is not supported"]),
    (["*MATERIAL, NAME=STEEL", "*ELASTIC", "210000., 0.3, 20.", "200000., 0.3, 300.",
      "*DENSITY", "7.85e-9"], ["expected one data line", "found 2"]),
    (["*MATERIAL, NAME=STEEL", "*ELASTIC", "two hundred, 0.3", "*DENSITY", "1"],
     ["expected E, nu as numbers, found two hundred, 0.3"]),
    (["*SOLID SECTION, ELSET=A, MATERIAL=STEEL", "*SOLID SECTION, ELSET=B, MATERIAL=ALU",
      "*MATERIAL, NAME=STEEL", "*ELASTIC", "1, 0.3", "*DENSITY", "1",
      "*MATERIAL, NAME=ALU", "*ELASTIC", "1, 0.3", "*DENSITY", "1"],
     ["2 materials ['ALU', 'STEEL']", "expected one material per part"]),
    (["*SOLID SECTION, ELSET=PART, MATERIAL=TITANIUM"],
     ["names material 'TITANIUM', which has no *MATERIAL definition"]),
    (["*DENSITY", "1"], ["*DENSITY (line", "expected it inside a *MATERIAL definition"]),
])
def test_material_mistakes_in_one_line(tmp_path, tail, needles):
    with pytest.raises(MeshError) as err:
        read_mesh(deck(tmp_path, HEX, "C3D8", tail=tail))
    _one_line(str(err.value), "part.inp", *needles)


def _cli(argv, capsys):
    rc = main(argv)
    return rc, capsys.readouterr()


def test_cli_uses_the_deck_material_and_refuses_a_conflict(tmp_path, capsys):
    """`flexmbs preprocess part.inp` without --material takes the deck's steel; with
    --material aluminium it stops with one line naming both and exit status 2; with the
    same values (steel) it runs."""
    X = np.array([[i, y, z] for i in range(4) for y, z in ((0, 0), (1, 0), (1, 1), (0, 1))],
                 float)
    cells = [[4 * e + k for k in (0, 4, 5, 1, 3, 7, 6, 2)] for e in range(3)]
    lines = ["*NODE"] + [f"{i + 1}, {x * 10}, {y * 10}, {z * 10}" for i, (x, y, z)
                         in enumerate(X)]
    lines += ["*ELEMENT, TYPE=C3D8, ELSET=PART"]
    lines += [f"{e + 1}, " + ", ".join(str(c + 1) for c in cell) for e, cell in
              enumerate(cells)]
    lines += STEEL_MM
    path = tmp_path / "bar.inp"
    path.write_text("\n".join(lines) + "\n")
    base = ["preprocess", str(path), "--unit", "mm", "--modes", "2", "--no-stiffening"]
    rc, cap = _cli(base + ["--material", "aluminium", "-o", str(tmp_path / "a.h5")], capsys)
    assert rc == 2
    err = [ln for ln in cap.err.splitlines() if "error" in ln]
    assert len(err) == 1 and "Traceback" not in cap.err
    _one_line(err[0], "--material: aluminium (E=7e+10 Pa", "conflicts with *MATERIAL 'STEEL'",
              "bar.inp", "E=2.1e+11 Pa, nu=0.3, rho=7850 kg/m^3")
    assert not (tmp_path / "a.h5").exists()
    rc, cap = _cli(base + ["-o", str(tmp_path / "b.h5")], capsys)
    assert rc == 0, cap.err
    assert "steel" in cap.out.lower() and "7850" in cap.out
    rc, cap = _cli(base + ["--material", "steel", "-o", str(tmp_path / "c.h5")], capsys)
    assert rc == 0, cap.err


def test_two_formulations_of_one_kind_refused(tmp_path):
    """C3D20 and C3D20R in one part would be one hex20 block with two stiffness rules."""
    X = np.vstack([HEX] + [0.5 * (HEX[a] + HEX[b]) for a, b in HEX20_EDGES])
    lines = ["*NODE"] + [f"{i + 1}, {x}, {y}, {z}" for i, (x, y, z) in enumerate(X)]
    lines += ["*ELEMENT, TYPE=C3D20, ELSET=A", "1, " + ", ".join(map(str, range(1, 21))),
              "*ELEMENT, TYPE=C3D20R, ELSET=B", "2, " + ", ".join(map(str, range(1, 21)))]
    path = tmp_path / "part.inp"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(MeshError) as err:
        read_deck(path)
    _one_line(str(err.value), "part.inp", "*ELEMENT (line", "element type C3D20R and C3D20 "
              "are both hex20 with different formulations")
