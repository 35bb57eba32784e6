"""A case whose flexible body is an Abaqus deck with its own *MATERIAL: the material may
be left out (the deck's is used, in the units of the body), a different one is refused
in one line naming the case key (exit status 2)."""
from __future__ import annotations

import numpy as np

from flexmbs.cli.main import main

STEEL_MM = ["*SOLID SECTION, ELSET=PART, MATERIAL=STEEL", "*MATERIAL, NAME=STEEL",
            "*ELASTIC", "210000., 0.3", "*DENSITY", "7.85e-9"]


def _deck(path):
    """A 30 x 10 x 10 mm C3D8 bar (3 elements) with node set END at x = 0."""
    X = np.array([[i, y, z] for i in range(4) for y, z in ((0, 0), (1, 0), (1, 1), (0, 1))],
                 float) * 10.0
    cells = [[4 * e + k for k in (0, 4, 5, 1, 3, 7, 6, 2)] for e in range(3)]
    lines = ["*NODE"] + [f"{i + 1}, {x}, {y}, {z}" for i, (x, y, z) in enumerate(X)]
    lines += ["*ELEMENT, TYPE=C3D8, ELSET=PART"]
    lines += [f"{e + 1}, " + ", ".join(str(c + 1) for c in cell) for e, cell in
              enumerate(cells)]
    lines += ["*NSET, NSET=END", "1, 2, 3, 4"] + STEEL_MM
    path.write_text("\n".join(lines) + "\n")


def _case(tmp_path, material_line: str):
    _deck(tmp_path / "bar.inp")
    case = tmp_path / "case.toml"
    case.write_text(f"""[model]
name = "bar"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "bar"
type = "flexible"
mesh = "bar.inp"
unit = "mm"
{material_line}
modes = 2
interfaces = ["END"]
frame = "interface:END"

[[joints]]
name = "pin"
type = "revolute"
first = "ground"
second = "bar.END"
axis = "z"

[solver]
t_end = 0.004
dt = 1e-3

[output]
dt = 2e-3
""")
    return case


def test_case_takes_the_deck_material(tmp_path, capsys):
    from flexmbs.io.bodyfile import load_body

    case = _case(tmp_path, "")
    rc = main(["run", str(case), "--out", str(tmp_path / "out"),
               "--body-dir", str(tmp_path / "bodies")])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    (body_file,) = (tmp_path / "bodies").glob("bar-*.h5")
    body = load_body(body_file)
    assert body.material["E"] == 2.1e11 and abs(body.material["rho"] - 7850.0) < 1e-9
    assert abs(body.m - 7850.0 * 3e-6) < 1e-15


def test_case_material_conflict_is_one_line(tmp_path, capsys):
    case = _case(tmp_path, 'material = "aluminium"')
    rc = main(["run", str(case), "--out", str(tmp_path / "out"),
               "--body-dir", str(tmp_path / "bodies")])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert rc == 2 and "Traceback" not in err and len(lines) == 1, err
    assert "case.toml: bodies[0].material: aluminium (E=7e+10 Pa" in lines[0]
    assert "conflicts with *MATERIAL 'STEEL'" in lines[0] and "bar.inp" in lines[0]
