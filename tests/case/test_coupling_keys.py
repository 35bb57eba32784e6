"""Case-file keys of the coupling joints (gear, rack_pinion, distance) and the two-frame
lower pairs: a gear train from TOML builds the same joint as the API, and each mistake is
one line naming the file and key path (``flexmbs check`` exits 2)."""
import pytest
from check_error import assert_check_error

from flexmbs.case import build, load_case
from flexmbs.cli.main import main
from flexmbs.constraints.gear import GearPair
from flexmbs.simulate import prepare

GEARS = """
[[bodies]]
name = "pinion"
type = "rigid"
shape = "cylinder"
radius = 0.04
length = 0.02
density = 7850.0

[[bodies]]
name = "wheel"
type = "rigid"
shape = "cylinder"
radius = 0.1
length = 0.02
density = 7850.0
position = [0.0, 0.14, 0.0]

[[joints]]
name = "R1"
type = "revolute"
first = "ground"
second = "pinion"
at = [0.0, 0.0, 0.0]
axis = "z"

[[joints]]
name = "R2"
type = "revolute"
first = "ground"
second = "wheel"
at = [0.0, 0.14, 0.0]
axis = "z"

[[joints]]
name = "mesh"
type = "gear"
first = "pinion"
second = "wheel"
at = [0.0, 0.0, 0.0]
axis = "z"
second_at = [0.0, 0.14, 0.0]
teeth = [20, 50]
module = 0.004

[[drives]]
name = "spin"
type = "angular_velocity"
joint = "R1"
omega = 10.0

[solver]
t_end = 0.1
dt = 1e-3
"""


def test_gear_train_case_builds_the_gear_pair(tmp_path, capsys):
    path = tmp_path / "case.toml"
    path.write_text(GEARS)
    assert main(["check", str(path)]) == 0
    system = build(load_case(path)).system
    gear = next(j for j in system.joints if j.name == "mesh")
    assert type(gear) is GearPair and tuple(gear.teeth) == (20, 50) and not gear.internal
    assert gear.ratio == pytest.approx(-0.4)
    assert prepare(system).dof.mobility == 0         # 2 revolutes, gear, drive


MISTAKES = [
    ("gear key on a revolute", lambda s: s.replace('axis = "z"\n\n[[joints]]\nname = "R2"',
                                                   'axis = "z"\nteeth = [1, 2]\n\n[[joints]]\n'
                                                   'name = "R2"'),
     ["joints[0].teeth", 'only valid for type = "gear"']),
    ("non-integer teeth", lambda s: s.replace("teeth = [20, 50]", "teeth = [20, 50.5]"),
     ["joints[2].teeth", "expected an integer", "50.5"]),
    ("gear without teeth", lambda s: s.replace("teeth = [20, 50]\n", ""),
     ["joints[2]", "GearPair 'mesh'", "teeth must be two positive integers"]),
    ("wheels at one point", lambda s: s.replace("second_at = [0.0, 0.14, 0.0]",
                                                "second_at = [0.0, 0.0, 0.1]"),
     ["joints[2]", "along the first wheel's axis"]),
    ("negative module", lambda s: s.replace("module = 0.004", "module = -0.004"),
     ["joints[2].module", "positive"]),
    ("rack without radius", lambda s: s.replace('type = "gear"', 'type = "rack_pinion"')
     .replace("teeth = [20, 50]\nmodule = 0.004\n", 'second_axis = "x"\n'),
     ["joints[2]", "RackPinion 'mesh'", "radius must be"]),
    ("cam samples not increasing", lambda s: s.replace('type = "gear"', 'type = "point_on_curve"')
     .replace("teeth = [20, 50]\nmodule = 0.004\n", "curve_x = [0.0, 2.0, 1.0, 3.0]\n"
              "curve_y = [0.1, 0.1, 0.1, 0.1]\n"),
     ["joints[2]", "PointOnCurve 'mesh'", "strictly increasing"]),
    ("ragged surface grid", lambda s: s.replace('type = "gear"', 'type = "point_on_surface"')
     .replace("teeth = [20, 50]\nmodule = 0.004\n", "surface_x = [0.0, 1.0, 2.0, 3.0]\n"
              "surface_y = [0.0, 1.0, 2.0, 3.0]\nsurface_z = [[0.0, 0.0], [0.0]]\n"),
     ["joints[2].surface_z", "rectangular array"]),
    ("cam curve type", lambda s: s.replace("teeth = [20, 50]", 'curve = "spiral"'),
     ["joints[2].curve", "one of polar, graph"]),
]


@pytest.mark.parametrize("name, edit, needles", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_coupling_mistakes_are_one_line(tmp_path, capsys, name, edit, needles):
    path = tmp_path / "case.toml"
    path.write_text(edit(GEARS))
    assert_check_error(path, capsys, needles, file_name_only=True)
