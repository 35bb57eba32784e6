"""The small case the CLI tests run: a 1 m steel arm on a pin under gravity (rigid, a
compound pendulum released horizontally), with a tip marker."""

ARM = """
[model]
name = "{name}"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "arm"
type = "rigid"
shape = "box"
size = [1.0, 0.05, 0.05]
density = 7850.0
com = [0.5, 0.0, 0.0]
markers = {{ tip = {{ at = [1.0, 0.0, 0.0] }} }}

[[joints]]
name = "pin"
type = "revolute"
first = "ground"
second = "arm"
at = [0.0, 0.0, 0.0]
axis = "z"

[solver]
t_end = {t_end}
dt = 1e-3
"""


def arm_case(name: str = "arm", t_end: float = 0.05) -> str:
    """The text of the arm case named ``name`` running to ``t_end`` [s]."""
    return ARM.format(name=name, t_end=t_end)
